package dev.coro.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AsyncMutexTest {

    @Test
    void waitersCancelledWhileTheLockIsHeldForeverDoNotAccumulate() {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        List<CompletableFuture<Void>> old = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            old.add(mutex.lock().toCompletableFuture());
        }
        CompletableFuture<Void> newest = mutex.lock().toCompletableFuture();
        for (CompletableFuture<Void> f : old) { // never the newest: unlinked by the sweep, not by an unlock
            assertTrue(f.cancel(false));
        }
        assertTrue(EventTest.linkedWaiters(mutex) <= 2 + 64,
                "cancelled waiters were swept while the lock stayed held: " + EventTest.linkedWaiters(mutex));
        assertFalse(newest.isDone());
        mutex.unlock();
        newest.join(); // the live waiter got the lock
        assertTrue(mutex.isLocked());
        mutex.unlock();
        assertFalse(mutex.isLocked());
    }

    @Test
    void tryLockLockAndUnlock() {
        AsyncMutex m = new AsyncMutex();
        assertTrue(m.tryLock());
        assertTrue(m.isLocked());
        assertFalse(m.tryLock());
        CompletableFuture<Void> waiter = m.lock().toCompletableFuture();
        assertFalse(waiter.isDone());
        m.unlock();
        assertTrue(waiter.isDone(), "unlock handed the lock to the waiter");
        assertTrue(m.isLocked());
        assertFalse(m.tryLock(), "no barging: the waiter holds it");
        m.unlock();
        assertFalse(m.isLocked());
    }

    /**
     * The hand-off chain (AdmissionEngine part 8): W is admitted inside main's unlock, on main's own
     * thread, unlocks and asks again there; that second wait goes straight to the order's tail (I5's
     * exception) behind X. Cancelled while X holds, it must still report its departure, or X's
     * unlock would hand its unit to nobody and leave the mutex locked for ever.
     */
    @Test
    void aHolderThatWaitsAgainInsideTheHandOffAndIsCancelledLeavesTheMutexFree() {
        AsyncMutex m = new AsyncMutex();
        assertTrue(m.tryLock());
        CompletableFuture<Void> w = m.lock().then(Task.fromRunnable(m::unlock)).then(m.lock()).toCompletableFuture();
        CompletableFuture<Void> x = m.lock().toCompletableFuture();
        m.unlock(); // W runs inline: unlocks (X is handed the lock) and waits again behind X
        assertTrue(x.isDone(), "X holds the lock");
        assertFalse(w.isDone(), "W waits again, behind X");
        assertTrue(w.cancel(false));
        m.unlock(); // X leaves: W departed, so the lock is free
        assertFalse(m.isLocked(), "the departed waiter's unit went back to the count");
        assertTrue(m.tryLock());
        m.unlock();
    }

    /** The same chain with W's second wait admitted: the releases made on the owner's thread all land. */
    @Test
    void holdersResumedInsideTheHandOffReleaseAndWaitAgainInOrder() {
        AsyncMutex m = new AsyncMutex();
        assertTrue(m.tryLock());
        List<String> order = new ArrayList<>();
        Task<Void> twice = m.withLock(Task.fromRunnable(() -> order.add("w1")))
                .then(m.withLock(Task.fromRunnable(() -> order.add("w2"))));
        CompletableFuture<Void> w = twice.toCompletableFuture();
        CompletableFuture<Void> x = m.withLock(Task.fromRunnable(() -> order.add("x"))).toCompletableFuture();
        m.unlock();
        assertTrue(w.isDone() && x.isDone());
        assertEquals(List.of("w1", "x", "w2"), order, "W's second wait went behind X");
        assertFalse(m.isLocked());
    }

    @Test
    void unlockOfAnUnlockedMutexIsMisuse() {
        AsyncMutex m = new AsyncMutex();
        IllegalStateException e = assertThrows(IllegalStateException.class, m::unlock);
        assertEquals("unlock: the mutex is not locked", e.getMessage());
    }

    @Test
    void aThousandWaitersAcquireInArrivalOrder() {
        AsyncMutex m = new AsyncMutex();
        m.tryLock();
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            int id = i;
            runs.add(m.withLock(Task.fromRunnable(() -> order.add(id))).toCompletableFuture());
        }
        m.unlock();
        runs.forEach(CompletableFuture::join);
        for (int i = 0; i < 1000; i++) {
            assertEquals(i, order.get(i));
        }
        assertFalse(m.isLocked());
    }

    @Test
    void withLockReleasesOnEveryChannel() {
        AsyncMutex m = new AsyncMutex();
        assertEquals(1, m.withLock(Task.value(1)).join());
        assertFalse(m.isLocked());
        assertThrows(IllegalStateException.class, () -> m.withLock(Task.failure(new IllegalStateException())).join());
        assertFalse(m.isLocked());
        assertThrows(CancellationException.class, () -> m.withLock(Task.cancelled()).join());
        assertFalse(m.isLocked());
        CompletableFuture<Object> hanging = m.withLock(Task.never()).toCompletableFuture();
        assertTrue(m.isLocked());
        hanging.cancel(false);
        assertFalse(m.isLocked(), "a cancelled body released the lock");
    }

    /**
     * withLock is one guarded node: its unlock runs right after a body that ends at once, and as a
     * frame after a body that waits first. Both ways, on every channel, for both kinds of mutex: a
     * failing call, a deferred body whose builder fails, an unlock that fails (the body unlocked
     * itself: misuse) replacing a value, and suppressed into the body's own error.
     */
    @ParameterizedTest(name = "barging {0}, body waits first {1}")
    @CsvSource({"false, false", "false, true", "true, false", "true, true"})
    void withLockUnlocksAfterABodyThatEndsAtOnceOrWaitsFirstOnEveryChannel(boolean barging, boolean waitsFirst) {
        AsyncMutex m = barging ? AsyncMutex.barging() : new AsyncMutex();
        Task<Void> first = waitsFirst ? Task.yieldNow() : Task.value(null);
        IllegalStateException boom = new IllegalStateException("boom");

        assertEquals(7, m.withLock(first.then(Task.value(7))).join());
        assertFalse(m.isLocked());
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> m.withLock(first.then(Task.fromCallable(() -> {
                    throw boom;
                }))).join()));
        assertFalse(m.isLocked());
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> m.withLock(first.then(Task.defer(() -> {
                    throw boom;
                }))).join()));
        assertFalse(m.isLocked());

        IllegalStateException unlockFailed = assertThrows(IllegalStateException.class,
                () -> m.withLock(first.then(Task.fromRunnable(m::unlock))).join());
        assertEquals("unlock: the mutex is not locked", unlockFailed.getMessage());
        IllegalStateException bodyFailed = assertThrows(IllegalStateException.class,
                () -> m.withLock(first.then(Task.fromRunnable(() -> {
                    m.unlock();
                    throw boom;
                }))).join());
        assertSame(boom, bodyFailed);
        assertTrue(List.of(bodyFailed.getSuppressed()).stream()
                .anyMatch(e -> "unlock: the mutex is not locked".equals(e.getMessage())),
                "the unlock's error is suppressed");
        assertFalse(m.isLocked());
        assertTrue(m.tryLock(), "nothing left registered: the lock is free");
    }

    @Test
    void guardsReleaseOnceFromTasksAndThreads() {
        AsyncMutex m = new AsyncMutex();
        try (AsyncMutex.Guard g = m.lockBlocking()) {
            assertTrue(m.isLocked());
            g.close(); // closing twice releases once
        }
        assertFalse(m.isLocked());
        AsyncMutex.Guard g = m.lockGuard().join();
        assertTrue(m.isLocked());
        g.close();
        assertFalse(m.isLocked());
    }

    @Test
    void adjacentCancelledWaitersAreSkippedAndOrderIsKept() {
        AsyncMutex m = new AsyncMutex();
        m.tryLock();
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> waits = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            int id = i;
            waits.add(m.withLock(Task.fromRunnable(() -> order.add(id))).toCompletableFuture());
        }
        for (int i : new int[] {0, 3, 4, 5, 9}) { // the oldest, a run in the middle, the newest
            assertTrue(waits.get(i).cancel(false));
        }
        m.unlock();
        assertEquals(List.of(1, 2, 6, 7, 8), order);
        assertFalse(m.isLocked());
    }

    @Test
    void aWaiterWhoseTokenIsCancelledIsNotHandedTheLock() {
        AsyncMutex m = new AsyncMutex();
        m.tryLock();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Void> a = m.withLock(Task.fromRunnable(ran::incrementAndGet)).toCompletableFuture();
        CompletableFuture<Void> b = m.withLock(Task.fromRunnable(ran::incrementAndGet)).toCompletableFuture();
        a.cancel(false);
        m.unlock();
        b.join();
        assertEquals(1, ran.get());
        assertFalse(m.isLocked());
    }

    @Test
    void aHundredThousandWaitersThatUnlockInlineDoNotOverflowTheStack() {
        AsyncMutex m = new AsyncMutex();
        m.tryLock();
        AtomicInteger count = new AtomicInteger();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) { // inline scheduler: each hand-over resumes the waiter inline
            all.add(m.withLock(Task.fromRunnable(count::incrementAndGet)).toCompletableFuture());
        }
        m.unlock();
        all.forEach(CompletableFuture::join);
        assertEquals(100_000, count.get());
        assertFalse(m.isLocked());
    }

    @Test
    void aTaskWaitingOnASingleThreadSchedulerResumesOnThatThread() throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor(r -> new Thread(r, "the-one"));
        try {
            AsyncMutex m = new AsyncMutex();
            m.tryLock();
            CompletableFuture<String> where = m.withLock(Task.fromCallable(() -> Thread.currentThread().getName()))
                    .startOn(Scheduler.from(single)).toCompletableFuture();
            Thread.ofPlatform().name("unlocker").start(m::unlock).join();
            assertEquals("the-one", where.get());
        } finally {
            single.shutdown();
        }
    }

    /**
     * Regression: unlock read a waiter at the head, the waiter was cancelled and popped itself
     * (head back to LOCKED), and unlock's detach then got LOCKED where it expected a waiter stack
     * (ClassCastException). Found by unlockRacingCancelNeverLeavesTheMutexLockedWithNobody.
     */
    @Test
    void unlockAfterTheOnlyWaiterPoppedItselfReleasesTheLock() {
        AsyncMutex m = new AsyncMutex();
        m.tryLock();
        CompletableFuture<Void> w = m.lock().toCompletableFuture();
        assertTrue(w.cancel(false)); // pops itself: the state is LOCKED again
        m.unlock();
        assertFalse(m.isLocked());
    }

    @Test
    void badInput() {
        assertEquals("body", assertThrows(NullPointerException.class, () -> new AsyncMutex().withLock(null)).getMessage());
    }

    @Test
    @Tag("stress")
    void exactCounterUnder64TasksTimesTenThousandIncrements() {
        AsyncMutex m = new AsyncMutex();
        int[] counter = {0}; // plain field: only exclusion keeps it exact
        int tasks = 64;
        int increments = 10_000 * Stress.scale();
        try (WorkStealingPool pool = WorkStealingPool.create(2, "mutex-stress")) {
            Scope scope = Scope.on(pool);
            Task<Void> one = m.withLock(Task.fromRunnable(() -> counter[0]++));
            for (int t = 0; t < tasks; t++) {
                scope.spawn(one.repeat(increments));
            }
            scope.joinBlocking();
        }
        assertEquals(tasks * increments, counter[0]);
        assertFalse(m.isLocked());
    }

    @Test
    @Tag("stress")
    void unlockRacingCancelNeverLeavesTheMutexLockedWithNobody() throws Exception {
        int rounds = Stress.scaled(10_000);
        CyclicBarrier barrier = new CyclicBarrier(2);
        for (int round = 0; round < rounds; round++) {
            AsyncMutex m = new AsyncMutex();
            m.tryLock();
            AtomicInteger held = new AtomicInteger();
            CompletableFuture<Void> waiter = m.lock().map(v -> {
                held.incrementAndGet();
                return v;
            }).toCompletableFuture();
            Thread canceller = Thread.ofPlatform().start(() -> {
                await(barrier);
                waiter.cancel(false);
            });
            await(barrier);
            m.unlock();
            canceller.join();
            if (held.get() == 1) { // the hand-over won: the waiter holds the lock, release it for it
                assertTrue(m.isLocked(), "round " + round);
                m.unlock();
            }
            assertFalse(m.isLocked(), "round " + round + ": locked with nobody holding it");
            assertTrue(m.tryLock(), "round " + round);
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /**
     * A scope's token fires its registrations newest first. The newest here is a task whose
     * cancellation unlocks the mutex; the waiter queued before it is still unsettled when that unlock
     * hands the lock over, but its token has fired: it must be abandoned, not admitted
     * (AdmissionEngine part 7), so its work never runs and the lock ends free (found by mutation:
     * every state-checking test passed with an engine that admitted such a waiter).
     */
    @Test
    void anUnlockRunByTheScopesCancellationDoesNotHandTheLockToAWaiterOfThatScope() {
        AsyncMutex m = new AsyncMutex();
        assertTrue(m.tryLock());
        Scope scope = Scope.on(Scheduler.inline());
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Void> waiter = scope.spawn(m.withLock(Task.fromRunnable(ran::incrementAndGet)))
                .toCompletableFuture();
        scope.spawn(Task.<Void>create(c -> c.onCancel(m::unlock))); // registered after the waiter: fired first
        assertFalse(waiter.isDone());
        scope.cancel();
        assertEquals(0, ran.get(), "the waiter's scope was cancelled before the unlock: its work must not run");
        assertTrue(waiter.isCancelled() || waiter.isCompletedExceptionally(), "the waiter ended cancelled: " + waiter);
        assertFalse(m.isLocked());
    }
}
