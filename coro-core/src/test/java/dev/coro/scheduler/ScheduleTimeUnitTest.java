package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 14, item 5: {@link Scheduler#schedule(Runnable, long, TimeUnit)} on the core schedulers and by default. */
class ScheduleTimeUnitTest {
    private final WorkStealingPool pool = WorkStealingPool.create(1, "time-unit-test");
    private final ExecutorService executor = Executors.newSingleThreadExecutor();

    @AfterEach
    void close() throws InterruptedException {
        pool.close();
        executor.shutdown();
        assertTrue(executor.awaitTermination(1, TimeUnit.MINUTES));
    }

    private List<Scheduler> schedulers() {
        return List.of(pool, Scheduler.inline(), Scheduler.from(executor));
    }

    @Test
    void aTimerRunsOnceItsDelayHasPassedNeverEarly() throws Exception {
        for (Scheduler s : schedulers()) {
            CountDownLatch ran = new CountDownLatch(1);
            AtomicLong elapsed = new AtomicLong();
            long start = s.nanoTime();
            s.schedule(() -> {
                elapsed.set(s.nanoTime() - start);
                ran.countDown();
            }, 20, TimeUnit.MILLISECONDS);
            ran.await();
            assertTrue(elapsed.get() >= TimeUnit.MILLISECONDS.toNanos(20), s + " fired early: " + elapsed.get() + " ns");
        }
    }

    @Test
    void zeroAndNegativeDelaysRunAsSoonAsPossible() throws Exception {
        for (Scheduler s : schedulers()) {
            CountDownLatch ran = new CountDownLatch(3);
            s.schedule(ran::countDown, 0, TimeUnit.SECONDS);
            s.schedule(ran::countDown, -5, TimeUnit.DAYS);
            s.schedule(ran::countDown, Long.MIN_VALUE, TimeUnit.NANOSECONDS);
            ran.await();
        }
    }

    @Test
    void aDelayTooLongForNanosecondsSaturatesAndCanBeCancelled() {
        for (Scheduler s : schedulers()) {
            AtomicInteger runs = new AtomicInteger();
            Cancellable timer = s.schedule(runs::incrementAndGet, Long.MAX_VALUE, TimeUnit.DAYS);
            assertTrue(timer.cancel(), s + ": pending, so cancelled");
            assertFalse(timer.cancel(), "once");
            assertEquals(0, runs.get());
        }
    }

    @Test
    void aCancellableTimerTaskOnAPoolThatShutsDownIsDroppedAndToldOnce() {
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger told = new AtomicInteger();
        class Told implements Runnable, Cancellable {
            @Override
            public void run() {
                ran.incrementAndGet();
            }

            @Override
            public boolean cancel() {
                told.incrementAndGet();
                return true;
            }
        }
        Cancellable timer = pool.schedule(new Told(), 1, TimeUnit.HOURS);
        pool.shutdown();
        assertEquals(1, told.get(), "dropped at shutdown, as with a Duration");
        assertFalse(timer.cancel(), "a dropped timer is not pending");
        assertEquals(0, ran.get());
        assertThrows(RejectedExecutionException.class, () -> pool.schedule(() -> {}, 1, TimeUnit.SECONDS));
    }

    @Test
    void badInputIsRejectedByName() {
        for (Scheduler s : schedulers()) {
            assertEquals("task", assertThrows(NullPointerException.class,
                    () -> s.schedule(null, 1, TimeUnit.SECONDS)).getMessage(), s.toString());
            assertEquals("unit", assertThrows(NullPointerException.class,
                    () -> s.schedule(() -> {}, 1, null)).getMessage(), s.toString());
        }
    }

    /** A scheduler that implements only the Duration overload, to test the default method. */
    private static final class DurationOnly implements Scheduler {
        final List<Duration> delays = new ArrayList<>();

        @Override
        public void execute(Runnable task) {
            task.run();
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            delays.add(delay);
            return () -> false;
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
    void theDefaultConvertsToTheDurationOverloadSaturatingAndClampingAtZero() {
        DurationOnly s = new DurationOnly();
        s.schedule(() -> {}, 5, TimeUnit.MILLISECONDS);
        s.schedule(() -> {}, -3, TimeUnit.SECONDS);
        s.schedule(() -> {}, Long.MAX_VALUE, TimeUnit.DAYS);
        s.schedule(() -> {}, 2, TimeUnit.HOURS);
        assertEquals(List.of(Duration.ofMillis(5), Duration.ZERO, Duration.ofNanos(Long.MAX_VALUE), Duration.ofHours(2)),
                s.delays);
        assertEquals("task", assertThrows(NullPointerException.class,
                () -> s.schedule(null, 1, TimeUnit.SECONDS)).getMessage());
        assertEquals("unit", assertThrows(NullPointerException.class, () -> s.schedule(() -> {}, 1, null)).getMessage());
        assertEquals(4, s.delays.size(), "bad input never reaches the Duration overload");
    }
}
