package dev.coro.scheduler;

import static dev.coro.Latches.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.internal.Durations;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The shared timer behind the pool, inline and executor schedulers ({@link TimerThread}). */
class TimerThreadTest {
    private static final Executor DIRECT = Runnable::run;

    @Test
    void convertsDelaysSaturating() {
        assertEquals(0, Durations.toNanos(Duration.ofMillis(-1)));
        assertEquals(0, Durations.toNanos(Duration.ZERO));
        assertEquals(1_000_000, Durations.toNanos(Duration.ofMillis(1)));
        assertEquals(Long.MAX_VALUE, Durations.toNanos(Duration.ofDays(365L * 1_000_000)));
        assertEquals(Long.MAX_VALUE, Durations.toNanos(Duration.ofSeconds(Long.MAX_VALUE)));
    }

    @Test
    void timersDueAtTheSameTimeFireInScheduleOrder() throws Exception {
        List<Integer> order = new ArrayList<>();
        CountDownLatch gate = new CountDownLatch(1);
        TimerThread.schedule(() -> await(gate), 0, DIRECT, null); // holds the timer thread
        CountDownLatch done = new CountDownLatch(5);
        for (int i = 0; i < 5; i++) {
            int id = i;
            TimerThread.schedule(() -> {
                order.add(id);
                done.countDown();
            }, 0, DIRECT, null);
        }
        gate.countDown();
        done.await();
        assertEquals(List.of(0, 1, 2, 3, 4), order);
    }

    @Test
    @Tag("stress")
    void fireAndCancelRaceWithExactlyOneWinner() throws Exception {
        int rounds = Stress.scaled(5_000);
        AtomicInteger ran = new AtomicInteger();
        int cancelled = 0;
        Set<TimerThread.Timer> registry = TimerThread.newRegistry();
        for (int i = 0; i < rounds; i++) {
            TimerThread.Timer t = TimerThread.schedule(ran::incrementAndGet, 0, DIRECT, registry);
            if (i % 3 != 0) {
                Thread.onSpinWait();
            }
            if (t.cancel()) {
                cancelled++;
            }
        }
        CountDownLatch drained = new CountDownLatch(1);
        TimerThread.schedule(drained::countDown, 0, DIRECT, null); // behind every timer above
        drained.await();
        assertEquals(rounds, ran.get() + cancelled);
        assertTrue(registry.isEmpty(), "fired and cancelled timers leave the registry");
    }

    @Test
    void aCancelledTimerKeepsNoReferenceToItsTask() {
        Object captured = new Object(); // a capturing lambda: a fresh object, not a cached constant
        Runnable task = () -> captured.hashCode();
        WeakReference<Runnable> ref = new WeakReference<>(task);
        TimerThread.Timer timer = TimerThread.schedule(task, Duration.ofDays(1).toNanos(), DIRECT, TimerThread.newRegistry());
        task = null;
        assertTrue(timer.isPending());
        assertTrue(timer.cancel());
        assertFalse(timer.isPending());
        for (int i = 0; i < 50 && ref.get() != null; i++) {
            System.gc();
        }
        assertNull(ref.get(), "the handle and the timer queue let the task go");
        assertFalse(timer.cancel());
    }

    @Test
    void cancelAllCancelsEveryTimerInTheRegistry() {
        Set<TimerThread.Timer> registry = TimerThread.newRegistry();
        AtomicInteger ran = new AtomicInteger();
        List<TimerThread.Timer> timers = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            timers.add(TimerThread.schedule(ran::incrementAndGet, Duration.ofDays(1).toNanos(), DIRECT, registry));
        }
        assertEquals(10, registry.size());
        TimerThread.cancelAll(registry);
        assertTrue(registry.isEmpty());
        for (TimerThread.Timer t : timers) {
            assertFalse(t.cancel());
        }
    }

    @Test
    void aFailingTargetIsReportedAndTheTimerThreadLivesOn() throws Exception {
        List<Throwable> reported = new ArrayList<>();
        CountDownLatch set = new CountDownLatch(1);
        TimerThread.schedule(() -> {
            Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
            set.countDown();
        }, 0, DIRECT, null);
        set.await();
        IllegalStateException boom = new IllegalStateException("boom");
        TimerThread.schedule(() -> {
            throw boom;
        }, 0, DIRECT, null);
        CountDownLatch after = new CountDownLatch(1);
        TimerThread.schedule(() -> {
            Thread.currentThread().setUncaughtExceptionHandler(null);
            after.countDown();
        }, 0, DIRECT, null);
        after.await();
        assertEquals(1, reported.size());
        assertSame(boom, reported.get(0));
    }
}
