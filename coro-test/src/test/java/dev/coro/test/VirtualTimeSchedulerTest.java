package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link VirtualTimeScheduler}: time moves only when told, timers fire in order and never early. */
class VirtualTimeSchedulerTest {
    private final VirtualTimeScheduler vt = VirtualTimeScheduler.create();
    private final List<String> log = new ArrayList<>();

    private Runnable note(String what) {
        return () -> log.add(what + "@" + vt.nanoTime() / 1_000_000);
    }

    @Test
    void startsAtZeroAndRunsNothingUntilAsked() {
        assertEquals(0, vt.nanoTime());
        vt.execute(note("a"));
        assertEquals(List.of(), log);
        assertEquals(1, vt.queuedTasks());
        assertEquals(1, vt.runUntilIdle());
        assertEquals(List.of("a@0"), log);
        assertEquals(0, vt.runUntilIdle());
    }

    @Test
    void runUntilIdleRunsWorkThatWorkSubmitsInFifoOrderWithoutMovingTime() {
        vt.execute(() -> {
            log.add("first");
            vt.execute(() -> {
                log.add("third");
                vt.execute(() -> log.add("fifth"));
            });
            vt.execute(() -> log.add("fourth"));
        });
        vt.execute(() -> log.add("second"));
        vt.schedule(note("timer"), Duration.ofMillis(1));
        assertEquals(5, vt.runUntilIdle());
        assertEquals(List.of("first", "second", "third", "fourth", "fifth"), log);
        assertEquals(0, vt.nanoTime());
        assertEquals(1, vt.pendingTimers());
    }

    @Test
    void timersFireInDueOrderThenScheduleOrderAndNeverEarly() {
        vt.schedule(note("c"), Duration.ofMillis(30));
        vt.schedule(note("a1"), Duration.ofMillis(10));
        vt.schedule(note("b"), Duration.ofMillis(20));
        vt.schedule(note("a2"), Duration.ofMillis(10));
        assertEquals(4, vt.pendingTimers());
        assertEquals(10_000_000, vt.nextDueTime());
        vt.advanceBy(Duration.ofNanos(9_999_999));
        assertEquals(List.of(), log, "one nanosecond early is early");
        vt.advanceBy(Duration.ofNanos(1));
        assertEquals(List.of("a1@10", "a2@10"), log);
        vt.advanceTo(Duration.ofMillis(100).toNanos());
        assertEquals(List.of("a1@10", "a2@10", "b@20", "c@30"), log);
        assertEquals(100_000_000, vt.nanoTime());
        assertEquals(0, vt.pendingTimers());
        assertEquals(Long.MAX_VALUE, vt.nextDueTime());
    }

    /** An absolute timer fires at its deadline, whenever it was registered; a passed one at once. */
    @Test
    void scheduleAtFiresAtTheDeadlineItself() {
        vt.advanceTo(5_000_000);
        vt.scheduleAt(note("at12"), 12_000_000);
        vt.scheduleAt(note("passed"), 1_000_000); // due now: at the next run
        assertEquals(5_000_000, vt.nextDueTime()); // the passed one, due now
        vt.runUntilIdle();
        assertEquals(List.of("passed@5"), log);
        vt.advanceBy(Duration.ofNanos(6_999_999));
        assertEquals(List.of("passed@5"), log, "one nanosecond early is early");
        vt.advanceBy(Duration.ofNanos(1));
        assertEquals(List.of("passed@5", "at12@12"), log);
        assertThrows(NullPointerException.class, () -> vt.scheduleAt(null, 0));
    }

    @Test
    void workCausedByATimerRunsAtThatTimersTimeBeforeLaterTimers() {
        vt.schedule(() -> {
            note("t10")
                    .run();
            vt.execute(note("caused by t10"));
            vt.schedule(note("t10+5"), Duration.ofMillis(5)); // nested: due inside the same advance
            vt.schedule(note("t10+0"), Duration.ZERO); // due now: fires in this step
        }, Duration.ofMillis(10));
        vt.schedule(note("t12"), Duration.ofMillis(12));
        int ran = vt.advanceBy(Duration.ofMillis(20));
        assertEquals(List.of("t10@10", "caused by t10@10", "t10+0@10", "t12@12", "t10+5@15"), log);
        assertEquals(5, ran);
        assertEquals(20_000_000, vt.nanoTime());
    }

    @Test
    void aTimerDueNowFiresAfterTheQueuedWorkWithoutAdvancing() {
        vt.schedule(note("timer"), Duration.ZERO);
        vt.execute(note("queued"));
        assertEquals(2, vt.runUntilIdle());
        assertEquals(List.of("queued@0", "timer@0"), log);
        assertEquals(0, vt.nanoTime());
    }

    @Test
    void cancelRemovesATimerAtOnce() {
        Cancellable a = vt.schedule(note("a"), Duration.ofMillis(10));
        Cancellable b = vt.schedule(note("b"), Duration.ofMillis(10));
        assertEquals(2, vt.pendingTimers());
        assertTrue(a.cancel());
        assertEquals(1, vt.pendingTimers());
        assertFalse(a.cancel(), "only once");
        vt.advanceBy(Duration.ofMillis(10));
        assertEquals(List.of("b@10"), log);
        assertFalse(b.cancel(), "already fired");
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void aTimerCanCancelAnotherDueAtTheSameTime() {
        AtomicReference<Cancellable> second = new AtomicReference<>();
        AtomicReference<Boolean> cancelled = new AtomicReference<>();
        vt.schedule(() -> cancelled.set(second.get().cancel()), Duration.ofMillis(5)); // a timeout...
        second.set(vt.schedule(note("second"), Duration.ofMillis(5))); // ...racing a completion
        vt.advanceBy(Duration.ofMillis(10));
        assertTrue(cancelled.get(), "timers fire one at a time: the second had not fired yet");
        assertEquals(List.of(), log);
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void advanceUntilIdleJumpsFromTimerToTimer() {
        vt.schedule(() -> {
            note("day").run();
            vt.schedule(note("day+1h"), Duration.ofHours(1));
        }, Duration.ofDays(1));
        vt.execute(note("now"));
        assertEquals(3, vt.advanceUntilIdle());
        assertEquals(List.of("now@0", "day@86400000", "day+1h@90000000"), log);
        assertEquals(Duration.ofHours(25).toNanos(), vt.nanoTime());
    }

    @Test
    void advanceUntilIdleStopsARunawayTimerAtTheStepLimit() {
        Runnable[] tick = new Runnable[1];
        tick[0] = () -> vt.schedule(tick[0], Duration.ofMillis(1));
        vt.schedule(tick[0], Duration.ofMillis(1));
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> vt.advanceUntilIdle(100));
        assertTrue(e.getMessage().contains("100 steps"), e.getMessage());
        assertEquals(100_000_000, vt.nanoTime());
        assertEquals(1, vt.pendingTimers());
    }

    @Test
    void failuresAreRethrownAfterTheRunWithLaterOnesSuppressed() {
        IllegalStateException first = new IllegalStateException("first");
        vt.execute(() -> {
            throw first;
        });
        vt.execute(note("still runs"));
        vt.schedule(() -> {
            throw new IllegalArgumentException("second");
        }, Duration.ofMillis(1));
        vt.schedule(note("still fires"), Duration.ofMillis(2));
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> vt.advanceBy(Duration.ofMillis(5)));
        assertSame(first, thrown);
        assertEquals(1, thrown.getSuppressed().length);
        assertTrue(thrown.getSuppressed()[0] instanceof IllegalArgumentException);
        assertEquals(List.of("still runs@0", "still fires@2"), log);
        assertEquals(5_000_000, vt.nanoTime(), "time advanced as asked");
        assertEquals(0, vt.runUntilIdle(), "and the scheduler is usable again");
    }

    @Test
    void isCurrentOnlyInsideARunMethodOnItsThread() throws Exception {
        assertFalse(vt.isCurrent());
        AtomicReference<Boolean> inside = new AtomicReference<>();
        AtomicReference<Boolean> otherThread = new AtomicReference<>();
        vt.execute(() -> {
            inside.set(vt.isCurrent());
            Thread t = new Thread(() -> otherThread.set(vt.isCurrent()));
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        vt.runUntilIdle();
        assertTrue(inside.get());
        assertFalse(otherThread.get());
        assertFalse(vt.isCurrent());
    }

    @Test
    void runMethodsAreNotReentrant() {
        AtomicReference<Throwable> nested = new AtomicReference<>();
        vt.execute(() -> {
            try {
                vt.runUntilIdle();
            } catch (Throwable t) {
                nested.set(t);
            }
        });
        vt.runUntilIdle();
        assertTrue(nested.get() instanceof IllegalStateException);
    }

    @Test
    void submissionsFromOtherThreadsAreQueued() throws Exception {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int k = 0; k < 1000; k++) {
                    vt.execute(() -> {});
                    vt.schedule(() -> {}, Duration.ofMillis(k)).cancel();
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(0, vt.pendingTimers());
        assertEquals(4000, vt.runUntilIdle());
    }

    @Test
    void shutdownRejectsNewWorkKeepsWhatIsQueuedAndDropsPendingTimers() {
        vt.execute(note("queued"));
        Cancellable timer = vt.schedule(note("timer"), Duration.ofMillis(1));
        Cancellable dueNow = vt.schedule(note("due now"), Duration.ZERO);
        vt.shutdown();
        assertTrue(vt.isShutdown());
        assertEquals(0, vt.pendingTimers(), "dropped at once, like the pool's and the loop's");
        assertEquals(1, vt.queuedTasks());
        assertFalse(timer.cancel(), "a dropped timer is not pending");
        assertFalse(dueNow.cancel());
        assertThrows(RejectedExecutionException.class, () -> vt.execute(() -> {}));
        assertThrows(RejectedExecutionException.class, () -> vt.schedule(() -> {}, Duration.ZERO));
        assertThrows(RejectedExecutionException.class, () -> vt.schedule(() -> {}, 1, TimeUnit.SECONDS));
        vt.advanceBy(Duration.ofMillis(1));
        assertEquals(List.of("queued@0"), log, "queued work ran; no dropped timer did");
    }

    /** A timer task that is told when it is dropped, recording the thread that tells it. */
    private final class Droppable implements Runnable, Cancellable {
        final String name;
        final List<String> told = new ArrayList<>();

        Droppable(String name) {
            this.name = name;
        }

        @Override
        public void run() {
            log.add(name + " ran");
        }

        @Override
        public boolean cancel() {
            told.add(Thread.currentThread().getName());
            return true;
        }
    }

    @Test
    void shutdownTellsEachDroppedCancellableTimerTaskOnceOnTheCallingThread() {
        Droppable later = new Droppable("later");
        Droppable muchLater = new Droppable("much later");
        vt.schedule(later, Duration.ofMillis(5));
        vt.schedule(muchLater, 1, TimeUnit.HOURS);
        Droppable cancelledFirst = new Droppable("cancelled first");
        vt.schedule(cancelledFirst, Duration.ofMillis(1)).cancel();
        vt.shutdown();
        vt.shutdown(); // idempotent: nothing is told twice
        String me = Thread.currentThread().getName();
        assertEquals(List.of(me), later.told);
        assertEquals(List.of(me), muchLater.told);
        assertEquals(List.of(), cancelledFirst.told, "a timer cancelled through its handle is not dropped");
        vt.advanceUntilIdle();
        assertEquals(List.of(), log, "no dropped timer ran");
    }

    @Test
    void aDelayWaitingOnTheSchedulerCompletesCancelledAtShutdown() {
        CompletableFuture<String> seen = Task.delay(Duration.ofSeconds(1))
                .outcome().map(o -> o.getClass().getSimpleName()).startOn(vt).toCompletableFuture();
        vt.runUntilIdle();
        assertEquals(1, vt.pendingTimers());
        assertFalse(seen.isDone());
        vt.shutdown();
        assertEquals("Cancelled", seen.join(), "ended cancelled, not never");
    }

    @Test
    void shutdownReportsWhatADroppedTaskThrowsAfterTellingThemAll() {
        RuntimeException first = new RuntimeException("first");
        RuntimeException second = new RuntimeException("second");
        Droppable quiet = new Droppable("quiet");
        class Throwing implements Runnable, Cancellable {
            final RuntimeException e;

            Throwing(RuntimeException e) {
                this.e = e;
            }

            @Override
            public void run() {}

            @Override
            public boolean cancel() {
                throw e;
            }
        }
        vt.schedule(new Throwing(first), Duration.ofMillis(1));
        vt.schedule(quiet, Duration.ofMillis(2));
        vt.schedule(new Throwing(second), Duration.ofMillis(3));
        RuntimeException thrown = assertThrows(RuntimeException.class, vt::shutdown);
        assertSame(first, thrown);
        assertEquals(List.of(second), List.of(thrown.getSuppressed()));
        assertEquals(1, quiet.told.size(), "every dropped task is told");
        assertTrue(vt.isShutdown());
    }

    @Test
    void scheduleWithATimeUnitFiresAtTheSameInstantAsWithADuration() {
        vt.schedule(note("unit"), 3, TimeUnit.MILLISECONDS);
        vt.schedule(note("duration"), Duration.ofMillis(3));
        vt.schedule(note("negative"), -1, TimeUnit.DAYS);
        vt.advanceBy(Duration.ofMillis(2));
        assertEquals(List.of("negative@0"), log);
        vt.advanceBy(Duration.ofMillis(1));
        assertEquals(List.of("negative@0", "unit@3", "duration@3"), log, "same due time: in scheduling order");
        assertEquals("unit", assertThrows(NullPointerException.class, () -> vt.schedule(() -> {}, 1, null)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class,
                () -> vt.schedule(null, 1, TimeUnit.SECONDS)).getMessage());
    }

    @Test
    void badInput() {
        assertEquals("task", assertThrows(NullPointerException.class, () -> vt.execute(null)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class, () -> vt.schedule(null, Duration.ZERO)).getMessage());
        assertEquals("delay", assertThrows(NullPointerException.class, () -> vt.schedule(() -> {}, null)).getMessage());
        assertEquals("delta", assertThrows(NullPointerException.class, () -> vt.advanceBy(null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> vt.advanceBy(Duration.ofNanos(-1)));
        vt.advanceBy(Duration.ofMillis(5));
        assertThrows(IllegalArgumentException.class, () -> vt.advanceTo(4_999_999));
        assertThrows(IllegalArgumentException.class, () -> vt.advanceUntilIdle(0));
        assertThrows(IllegalArgumentException.class, () -> vt.advanceBy(Duration.ofSeconds(Long.MAX_VALUE)));
        vt.schedule(note("negative delay means now"), Duration.ofMillis(-3));
        vt.runUntilIdle();
        assertEquals(List.of("negative delay means now@5"), log);
        Cancellable never = vt.schedule(() -> {}, Duration.ofSeconds(Long.MAX_VALUE)); // saturates
        assertEquals(Long.MAX_VALUE, vt.nextDueTime());
        assertTrue(never.cancel());
    }

    @Test
    void describesItself() {
        vt.execute(() -> {});
        vt.schedule(() -> {}, Duration.ofMillis(1));
        assertEquals("VirtualTimeScheduler[now=0ns, queued=1, timers=1]", vt.toString());
    }
}
