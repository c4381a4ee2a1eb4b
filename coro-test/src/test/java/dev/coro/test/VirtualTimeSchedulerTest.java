package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
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
    void shutdownRejectsNewWorkButKeepsWhatIsQueued() {
        vt.execute(note("queued"));
        vt.schedule(note("timer"), Duration.ofMillis(1));
        vt.shutdown();
        assertTrue(vt.isShutdown());
        assertThrows(RejectedExecutionException.class, () -> vt.execute(() -> {}));
        assertThrows(RejectedExecutionException.class, () -> vt.schedule(() -> {}, Duration.ZERO));
        vt.advanceBy(Duration.ofMillis(1));
        assertEquals(List.of("queued@0", "timer@1"), log);
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
