package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.io.EventLoop;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, item 6: the shutdown rule {@link Scheduler}'s javadoc states, checked on the
 * work-stealing pool and on the event loop side by side (coro-test checks its virtual-time
 * scheduler against the same rule): new work refused, accepted work run, pending timers dropped at
 * once and their cancellable tasks told once; and the two documented differences (execute from
 * the scheduler's own thread; the thread that drops the timers).
 */
class ShutdownRuleTest {

    /** One scheduler under test, with the operations the interface does not have. */
    private record Subject(String name, Scheduler scheduler, Runnable shutdown, Terminator awaitTermination,
            boolean acceptsOwnWorkAfterShutdown, boolean dropsTimersOnTheCallingThread) {}

    @FunctionalInterface
    private interface Terminator {
        boolean await(Duration timeout) throws InterruptedException;
    }

    private static Subject pool() {
        WorkStealingPool pool = WorkStealingPool.create(1, "shutdown-rule-pool");
        return new Subject("pool", pool, pool::shutdown, pool::awaitTermination, true, true);
    }

    private static Subject loop() {
        EventLoop loop = EventLoop.start("shutdown-rule-loop");
        return new Subject("loop", loop, loop::shutdown, loop::awaitTermination, false, false);
    }

    private static final List<Function<Void, Subject>> SUBJECTS = List.of(v -> pool(), v -> loop());

    /** A timer task told when dropped: records the thread that tells it, and whether it ran. */
    private static final class Droppable implements Runnable, Cancellable {
        final List<String> told = new CopyOnWriteArrayList<>();
        volatile boolean ran;

        @Override
        public void run() {
            ran = true;
        }

        @Override
        public boolean cancel() {
            told.add(Thread.currentThread().getName());
            return true;
        }
    }

    @Test
    void newWorkIsRefusedAndAcceptedWorkStillRuns() throws Exception {
        for (Function<Void, Subject> make : SUBJECTS) {
            Subject s = make.apply(null);
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<String> ran = new CopyOnWriteArrayList<>();
            s.scheduler().execute(() -> {
                started.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            started.await(); // the scheduler's only thread is busy: the next runnable stays queued
            s.scheduler().execute(() -> ran.add("queued"));
            s.shutdown().run();
            assertThrows(RejectedExecutionException.class, () -> s.scheduler().execute(() -> ran.add("late")), s.name());
            assertThrows(RejectedExecutionException.class,
                    () -> s.scheduler().schedule(() -> ran.add("late timer"), Duration.ZERO), s.name());
            assertThrows(RejectedExecutionException.class,
                    () -> s.scheduler().schedule(() -> ran.add("late timer"), 0, TimeUnit.SECONDS), s.name());
            release.countDown();
            assertTrue(s.awaitTermination().await(Duration.ofMinutes(1)), s.name());
            assertEquals(List.of("queued"), ran, s.name() + ": accepted work ran, refused work did not");
        }
    }

    @Test
    void pendingTimersAreDroppedAtOnceAndTheirCancellableTasksToldOnce() throws Exception {
        for (Function<Void, Subject> make : SUBJECTS) {
            Subject s = make.apply(null);
            Droppable inAnHour = new Droppable();
            Droppable inADay = new Droppable();
            Droppable cancelledFirst = new Droppable();
            Cancellable hour = s.scheduler().schedule(inAnHour, 1, TimeUnit.HOURS);
            Cancellable day = s.scheduler().schedule(inADay, Duration.ofDays(1));
            assertTrue(s.scheduler().schedule(cancelledFirst, Duration.ofMinutes(1)).cancel());
            String caller = Thread.currentThread().getName();
            s.shutdown().run();
            if (s.dropsTimersOnTheCallingThread()) {
                assertEquals(List.of(caller), inAnHour.told, s.name() + ": told before shutdown() returned, here");
                assertEquals(List.of(caller), inADay.told, s.name());
            }
            assertTrue(s.awaitTermination().await(Duration.ofMinutes(1)), s.name() + ": did not wait for the deadlines");
            for (Droppable d : List.of(inAnHour, inADay)) {
                assertEquals(1, d.told.size(), s.name() + ": told exactly once");
                assertFalse(d.ran, s.name() + ": a dropped timer never runs");
                if (!s.dropsTimersOnTheCallingThread()) {
                    assertEquals("shutdown-rule-loop", d.told.get(0), s.name() + ": told on the loop thread");
                }
            }
            assertFalse(hour.cancel(), s.name() + ": a dropped timer is no longer pending");
            assertFalse(day.cancel(), s.name());
            assertEquals(List.of(), cancelledFirst.told, s.name() + ": a timer cancelled through its handle is not told");
        }
    }

    @Test
    void aDelayOrTimeoutWaitingOnTheSchedulerEndsCancelledNotNever() throws Exception {
        for (Function<Void, Subject> make : SUBJECTS) {
            Subject s = make.apply(null);
            TaskHandle<Void> delay = Task.delay(1, TimeUnit.HOURS).start(s.scheduler());
            TaskHandle<Object> timeout = Task.never().timeout(Duration.ofHours(1)).start(s.scheduler());
            CountDownLatch suspended = new CountDownLatch(1);
            s.scheduler().execute(suspended::countDown); // one thread: runs after both have suspended
            suspended.await();
            s.shutdown().run();
            assertInstanceOf(Outcome.Cancelled.class, delay.outcome().join(), s.name());
            assertInstanceOf(Outcome.Cancelled.class, timeout.outcome().join(), s.name());
            assertTrue(s.awaitTermination().await(Duration.ofMinutes(1)), s.name());
        }
    }

    @Test
    void executeFromTheSchedulersOwnThreadAfterShutdownIsWhereTheyDiffer() throws Exception {
        for (Function<Void, Subject> make : SUBJECTS) {
            Subject s = make.apply(null);
            CompletableFuture<String> answer = new CompletableFuture<>();
            CompletableFuture<String> followUp = new CompletableFuture<>();
            s.scheduler().execute(() -> {
                s.shutdown().run();
                try {
                    s.scheduler().execute(() -> followUp.complete("ran"));
                    answer.complete("accepted");
                } catch (RejectedExecutionException e) {
                    answer.complete("refused");
                }
            });
            assertEquals(s.acceptsOwnWorkAfterShutdown() ? "accepted" : "refused", answer.get(), s.name());
            assertTrue(s.awaitTermination().await(Duration.ofMinutes(1)), s.name());
            assertEquals(s.acceptsOwnWorkAfterShutdown(), followUp.isDone(),
                    s.name() + ": accepted work runs before the scheduler terminates");
        }
    }
}
