package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Scheduler#from(Executor)}: hands work over, knows its own threads, timers via the timer thread. */
class ExecutorSchedulerTest {

    @Test
    void handsWorkToTheExecutorAndIsCurrentOnlyWhileRunningItsWork() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            Scheduler scheduler = Scheduler.from(executor);
            Scheduler sibling = Scheduler.from(executor); // another adapter over the same threads
            assertNotSame(scheduler, sibling);
            assertFalse(scheduler.isCurrent());
            AtomicReference<Boolean> mine = new AtomicReference<>();
            AtomicReference<Boolean> siblings = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            scheduler.execute(() -> {
                mine.set(scheduler.isCurrent());
                siblings.set(sibling.isCurrent());
                done.countDown();
            });
            done.await();
            assertTrue(mine.get());
            assertFalse(siblings.get());
            // the executor's thread, between tasks, is not "current"
            AtomicReference<Boolean> plain = new AtomicReference<>();
            CountDownLatch plainDone = new CountDownLatch(1);
            executor.execute(() -> {
                plain.set(scheduler.isCurrent());
                plainDone.countDown();
            });
            plainDone.await();
            assertFalse(plain.get());
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void nestedAdaptersOnADirectExecutorRestoreTheOuterOne() {
        Executor direct = Runnable::run;
        Scheduler outer = Scheduler.from(direct);
        Scheduler inner = Scheduler.from(direct);
        List<String> seen = new ArrayList<>();
        outer.execute(() -> {
            seen.add("outer:" + outer.isCurrent() + "," + inner.isCurrent());
            inner.execute(() -> seen.add("inner:" + outer.isCurrent() + "," + inner.isCurrent()));
            seen.add("back:" + outer.isCurrent() + "," + inner.isCurrent());
        });
        assertEquals(List.of("outer:true,false", "inner:false,true", "back:true,false"), seen);
        assertFalse(outer.isCurrent());
    }

    @Test
    void aSchedulerIsAdaptedToItself() {
        Scheduler inline = Scheduler.inline();
        assertSame(inline, Scheduler.from(inline));
    }

    @Test
    void rejectsNulls() {
        assertEquals("executor", assertThrows(NullPointerException.class, () -> Scheduler.from(null)).getMessage());
        Scheduler s = Scheduler.from(Runnable::run);
        assertEquals("task", assertThrows(NullPointerException.class, () -> s.execute(null)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class, () -> s.schedule(null, Duration.ZERO)).getMessage());
        assertEquals("delay", assertThrows(NullPointerException.class, () -> s.schedule(() -> {}, null)).getMessage());
    }

    @Test
    void aShutDownExecutorRejects() {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        Scheduler scheduler = Scheduler.from(executor);
        executor.shutdown();
        assertThrows(RejectedExecutionException.class, () -> scheduler.execute(() -> {}));
        assertThrows(RejectedExecutionException.class, () -> scheduler.schedule(() -> {}, Duration.ZERO));
    }

    @Test
    void aTimerRunsOnTheExecutorNeverEarly() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "the-executor"));
        try {
            Scheduler scheduler = Scheduler.from(executor);
            long delay = Duration.ofMillis(10).toNanos();
            AtomicReference<String> where = new AtomicReference<>();
            long[] firedAt = new long[1];
            CountDownLatch fired = new CountDownLatch(1);
            long start = scheduler.nanoTime();
            scheduler.schedule(() -> {
                firedAt[0] = scheduler.nanoTime();
                where.set(Thread.currentThread().getName() + ":" + scheduler.isCurrent());
                fired.countDown();
            }, Duration.ofNanos(delay));
            fired.await();
            assertTrue(firedAt[0] - start >= delay, "fired early");
            assertEquals("the-executor:true", where.get());
        } finally {
            executor.shutdownNow();
        }
    }

    @Test
    void aCancelledTimerNeverRunsAndATimerForAShutDownExecutorIsDropped() throws Exception {
        ExecutorService executor = Executors.newSingleThreadExecutor();
        Scheduler scheduler = Scheduler.from(executor);
        AtomicInteger ran = new AtomicInteger();
        Cancellable cancelled = scheduler.schedule(ran::incrementAndGet, Duration.ofDays(1));
        assertTrue(cancelled.cancel());
        assertFalse(cancelled.cancel());
        // a timer that comes due after the executor shut down is dropped, without noise
        List<Throwable> reported = new ArrayList<>();
        CountDownLatch handlerSet = new CountDownLatch(1);
        Scheduler.inline().schedule(() -> { // runs on the timer thread
            Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
            handlerSet.countDown();
        }, Duration.ZERO);
        handlerSet.await();
        CountDownLatch gate = new CountDownLatch(1);
        Scheduler.inline().schedule(() -> {
            try {
                gate.await(); // hold the timer thread while the executor shuts down
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, Duration.ZERO);
        scheduler.schedule(ran::incrementAndGet, Duration.ZERO);
        executor.shutdown();
        gate.countDown();
        CountDownLatch after = new CountDownLatch(1);
        Scheduler.inline().schedule(after::countDown, Duration.ZERO);
        after.await();
        assertEquals(0, ran.get());
        assertEquals(List.of(), reported);
        Scheduler.inline().schedule(() -> Thread.currentThread().setUncaughtExceptionHandler(null), Duration.ZERO);
    }
}
