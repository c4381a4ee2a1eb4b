package dev.coro.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link AsyncMutex#barging()}: the fairness its javadoc states (a release frees the lock and wakes
 * the oldest waiter, one at a time; anyone may take the lock before the woken waiter runs; a woken
 * waiter that loses waits again at the back), no lost wake-up, cancellation, misuse and bad input.
 * Waiters run on a {@link StepScheduler}, whose queued resumptions the test runs one by one, so the
 * order of every step is explicit.
 */
public class BargingMutexTest {
    /** A scheduler that only queues: {@link #runNext()} runs the oldest submission. */
    public static final class StepScheduler implements Scheduler {
        private final ArrayDeque<Runnable> queue = new ArrayDeque<>();

        @Override
        public synchronized void execute(Runnable task) {
            queue.add(task);
        }

        /** Runs the oldest queued task; returns false if none was queued. */
        public boolean runNext() {
            Runnable r;
            synchronized (this) {
                r = queue.poll();
            }
            if (r == null) {
                return false;
            }
            r.run();
            return true;
        }

        public void runAll() {
            while (runNext()) {
                // each run may queue more
            }
        }

        public synchronized int queued() {
            return queue.size();
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            throw new UnsupportedOperationException("no timers here");
        }

        @Override
        public long nanoTime() {
            return 0;
        }

        @Override
        public boolean isCurrent() {
            return false;
        }
    }

    private final StepScheduler steps = new StepScheduler();

    /** Starts {@code task} on the step scheduler; it runs when the test runs the queue. */
    private <T> CompletableFuture<T> start(Task<T> task) {
        return task.startOn(steps).toCompletableFuture();
    }

    @Test
    void aNewcomerTakesAFreedLockAheadOfTheWokenWaiterWhichThenWaitsAgainAtTheBack() {
        AsyncMutex m = AsyncMutex.barging();
        assertTrue(m.isBarging());
        assertTrue(m.tryLock());
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> a = start(m.withLock(Task.fromRunnable(() -> order.add("a"))));
        steps.runAll(); // a queues behind the held lock
        CompletableFuture<Void> b = start(m.withLock(Task.fromRunnable(() -> order.add("b"))));
        steps.runAll(); // b queues behind a
        assertEquals(2, m.queueLength());

        m.unlock(); // frees the lock and wakes a (its resumption is queued on its scheduler)
        assertFalse(m.isLocked(), "barging: the release frees the lock instead of handing it over");
        assertEquals(1, steps.queued(), "one waiter woken, not both");
        assertTrue(m.tryLock(), "a newcomer takes the free lock ahead of the woken waiter");

        steps.runNext(); // a competes, loses, and waits again behind b
        assertFalse(a.isDone());
        assertEquals(0, steps.queued(), "nobody else woken while the lock is held");
        m.unlock(); // wakes b, now the oldest
        steps.runAll(); // b takes the lock, runs, unlocks and wakes a, which runs
        assertTrue(a.isDone() && b.isDone());
        assertEquals(List.of("b", "a"), order, "a lost once and went to the back");
        assertFalse(m.isLocked());
        assertEquals(0, m.queueLength());
    }

    @Test
    void aWokenWaiterTakesTheLockWhenNobodyBargesAndWaitersAreWokenOldestFirst() {
        AsyncMutex m = AsyncMutex.barging();
        assertTrue(m.tryLock());
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int id = i;
            runs.add(start(m.withLock(Task.fromRunnable(() -> order.add(id)))));
            steps.runAll();
        }
        m.unlock();
        steps.runAll();
        assertEquals(List.of(0, 1, 2, 3, 4), order, "with no barger, the oldest waiter is woken first each time");
        runs.forEach(f -> assertTrue(f.isDone()));
        assertFalse(m.isLocked());
    }

    @Test
    void aHolderThatLocksAgainInALoopKeepsTheLockWhileAWaiterIsWoken() {
        AsyncMutex m = AsyncMutex.barging();
        AtomicInteger inside = new AtomicInteger();
        assertTrue(m.tryLock());
        CompletableFuture<Void> waiter = start(m.withLock(Task.fromRunnable(inside::incrementAndGet)));
        steps.runAll();
        m.unlock(); // wakes the waiter
        for (int i = 0; i < 100; i++) { // the releasing thread barges every time: no hand-off
            assertTrue(m.tryLock(), "round " + i);
            m.unlock();
        }
        assertEquals(1, steps.queued(), "one wake-up for the hundred releases");
        steps.runAll();
        assertTrue(waiter.isDone());
        assertEquals(1, inside.get());
    }

    @Test
    void noWakeUpIsLostWhenTheWokenWaiterLosesAndTheHolderReleases() {
        AsyncMutex m = AsyncMutex.barging();
        assertTrue(m.tryLock());
        CompletableFuture<Void> a = start(m.lock());
        steps.runAll();
        m.unlock(); // wakes a
        assertTrue(m.tryLock()); // barges
        steps.runAll(); // a loses, waits again
        assertFalse(a.isDone());
        m.unlock(); // a is the only waiter and nobody is awake: woken again
        steps.runAll();
        assertTrue(a.isDone(), "the free lock was offered to the waiter");
        assertTrue(m.isLocked(), "a holds it");
        m.unlock();
        assertFalse(m.isLocked());
    }

    @Test
    void aQueuedWaiterCancelledLeavesNothingBehind() {
        AsyncMutex m = AsyncMutex.barging();
        assertTrue(m.tryLock());
        CompletableFuture<Void> a = start(m.lock());
        CompletableFuture<Void> b = start(m.lock());
        steps.runAll();
        assertTrue(a.cancel(false));
        assertTrue(a.isCancelled());
        m.unlock(); // a departed: b is woken
        steps.runAll();
        assertTrue(b.isDone() && !b.isCompletedExceptionally(), "b holds the lock");
        assertTrue(m.isLocked());
        m.unlock();
        assertFalse(m.isLocked());
        assertEquals(0, m.queueLength());
        assertTrue(m.tryLock(), "no registration of a was left to block a try");
        m.unlock();
    }

    @Test
    void aWaiterCancelledAfterItsWakeUpStillCompetesOnceAndNeverLeaksTheLock() {
        AsyncMutex m = AsyncMutex.barging();
        assertTrue(m.tryLock());
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Void> woken = start(m.withLock(Task.fromRunnable(ran::incrementAndGet)));
        CompletableFuture<Void> next = start(m.lock());
        steps.runAll();
        m.unlock(); // wakes the first; its resumption is queued
        woken.cancel(false); // its wait is over: the cancel reaches its task, not the wait
        steps.runAll(); // it competes once, takes the free lock, runs its body and unlocks, which wakes next
        assertEquals(1, ran.get());
        assertTrue(next.isDone() && !next.isCompletedExceptionally());
        assertTrue(m.isLocked(), "next holds it");
        m.unlock();
        assertFalse(m.isLocked());
    }

    @Test
    void aWokenWaiterThatLosesAfterItsTaskWasCancelledRegistersNothing() {
        AsyncMutex m = AsyncMutex.barging();
        assertTrue(m.tryLock());
        CompletableFuture<Void> a = start(m.lock());
        steps.runAll();
        m.unlock(); // wakes a
        assertTrue(m.tryLock()); // barges
        a.cancel(false); // a's task is cancelled while its resumption is queued
        steps.runAll(); // a loses; its next wait ends cancelled at its first step
        assertTrue(a.isCancelled());
        assertEquals(0, m.queueLength());
        m.unlock();
        assertFalse(m.isLocked());
        assertEquals(0, steps.queued(), "no waiter registered: nobody to wake");
        assertTrue(m.tryLock());
        m.unlock();
    }

    @Test
    void tenThousandTasksOnAPoolOfThreadsKeepExclusion() throws Exception {
        AsyncMutex m = AsyncMutex.barging();
        long[] counter = {0};
        Task<Void> worker = m.withLock(Task.fromRunnable(() -> counter[0]++)).repeat(100);
        try (dev.coro.scheduler.WorkStealingPool pool = dev.coro.scheduler.WorkStealingPool.create(2)) {
            List<CompletableFuture<Void>> runs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                runs.add(worker.startOn(pool).toCompletableFuture());
            }
            for (CompletableFuture<Void> f : runs) {
                f.get();
            }
        }
        assertEquals(100 * 100, counter[0]);
        assertFalse(m.isLocked());
        assertEquals(0, m.queueLength());
    }

    @Test
    void misuseAndBadInput() {
        AsyncMutex m = AsyncMutex.barging();
        IllegalStateException e = assertThrows(IllegalStateException.class, m::unlock);
        assertEquals("unlock: the mutex is not locked", e.getMessage());
        NullPointerException npe = assertThrows(NullPointerException.class, () -> m.withLock(null));
        assertEquals("body", npe.getMessage());
        assertEquals("AsyncMutex[barging, unlocked]", m.toString());
        assertTrue(m.tryLock());
        assertEquals("AsyncMutex[barging, locked]", m.toString());
        assertFalse(m.tryLock(), "not reentrant");
        m.unlock();
        assertFalse(new AsyncMutex().isBarging());
    }

    @Test
    void withLockReleasesOnEveryChannel() {
        AsyncMutex m = AsyncMutex.barging();
        assertEquals(1, m.withLock(Task.value(1)).join());
        assertFalse(m.isLocked());
        assertThrows(IllegalStateException.class, () -> m.withLock(Task.failure(new IllegalStateException())).join());
        assertFalse(m.isLocked());
        assertThrows(CancellationException.class, () -> m.withLock(Task.cancelled()).join());
        assertFalse(m.isLocked());
        try (AsyncMutex.Guard g = m.lockBlocking()) {
            assertTrue(m.isLocked());
        }
        assertFalse(m.isLocked());
    }
}
