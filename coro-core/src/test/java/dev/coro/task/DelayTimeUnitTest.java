package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Issue 14, item 5: {@link Task#delay(long, TimeUnit)}. */
class DelayTimeUnitTest {

    /** Records how each timer was asked for; holds timers until the test fires or cancels them. */
    private static final class UnitScheduler implements Scheduler {
        final List<String> calls = new ArrayList<>();
        final List<Runnable> held = new ArrayList<>();

        @Override
        public void execute(Runnable task) {
            Scheduler.inline().execute(task);
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            throw new AssertionError("the Duration overload was used for " + delay);
        }

        @Override
        public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
            calls.add(delay + " " + unit);
            held.add(task);
            return () -> {
                calls.add("cancelled");
                return held.remove(task);
            };
        }

        @Override
        public long nanoTime() {
            return 0;
        }

        @Override
        public boolean isCurrent() {
            return true;
        }
    }

    @Test
    void itSchedulesThroughTheTimeUnitOverloadAndCompletesWhenTheTimerFires() {
        UnitScheduler s = new UnitScheduler();
        TaskHandle<String> handle = Task.delay(250, TimeUnit.MILLISECONDS).then(Task.value("later")).start(s);
        assertEquals(List.of("250 MILLISECONDS"), s.calls);
        assertFalse(handle.isDone());
        s.held.remove(0).run();
        assertEquals("later", handle.join());
    }

    @Test
    void zeroOrNegativeCompletesAtOnceWithoutATimer() {
        UnitScheduler s = new UnitScheduler();
        for (long d : new long[] {0, -1, Long.MIN_VALUE}) {
            TaskHandle<Void> handle = Task.delay(d, TimeUnit.DAYS).start(s);
            assertTrue(handle.isDone());
        }
        assertEquals(List.of(), s.calls);
    }

    @Test
    void cancellingTheWaitCancelsTheTimer() {
        UnitScheduler s = new UnitScheduler();
        TaskHandle<Void> handle = Task.delay(1, TimeUnit.HOURS).start(s);
        assertTrue(handle.cancel());
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
        assertEquals(List.of("1 HOURS", "cancelled"), s.calls);
        assertEquals(List.of(), s.held, "the scheduler holds nothing of the cancelled wait");
    }

    @Test
    void onAPoolItWaitsAtLeastTheDelayAndIsDroppedAtShutdown() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(1, "delay-unit-test");
        long start = System.nanoTime();
        Task.delay(15, TimeUnit.MILLISECONDS).startOn(pool).join();
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(15), "never early");
        TaskHandle<Void> pending = Task.delay(1, TimeUnit.HOURS).start(pool);
        CountDownLatch suspended = new CountDownLatch(1);
        pool.execute(suspended::countDown); // one worker: runs after the delay has suspended
        suspended.await();
        pool.shutdown();
        assertInstanceOf(Outcome.Cancelled.class, pending.outcome().join(), "the dropped timer ends the wait cancelled");
        assertTrue(pool.awaitTermination(Duration.ofMinutes(1)));
        Outcome<Void> late = Task.delay(1, TimeUnit.SECONDS).startOn(pool).outcome().join();
        assertInstanceOf(RejectedExecutionException.class, ((Outcome.Failure<Void>) late).error(),
                "a delay started on a shut-down pool fails with its refusal");
    }

    @Test
    void aBlockingJoinWaitsOnTheJoiningThreadAndAnInterruptCancelsTheTimer() {
        long start = System.nanoTime();
        Task.delay(5, TimeUnit.MILLISECONDS).join(); // the joining thread's own scheduler, its TimeUnit overload
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(5), "never early");
        Thread.currentThread().interrupt();
        assertThrows(java.util.concurrent.CancellationException.class, () -> Task.delay(1, TimeUnit.HOURS).join());
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
    }

    @Test
    void aNullUnitIsRejectedByName() {
        assertEquals("unit", assertThrows(NullPointerException.class, () -> Task.delay(1, null)).getMessage());
        assertEquals("unit", assertThrows(NullPointerException.class, () -> Task.delay(0, null)).getMessage());
    }
}
