package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class ScopeTest {
    private final WorkStealingPool pool = WorkStealingPool.create(2, "scope-test");

    @AfterEach
    void closePool() {
        pool.close();
    }

    @Test
    void joinWaitsForEveryChildIncludingQueuedOnes() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(2);
        Scope scope = Scope.on(pool);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 2; i++) { // occupy both workers, so the next children stay queued
            scope.spawn(Task.fromCallable(() -> {
                blocking.countDown();
                release.await();
                return ran.incrementAndGet();
            }));
        }
        blocking.await();
        for (int i = 0; i < 1000; i++) {
            scope.spawn(Task.fromCallable(ran::incrementAndGet));
        }
        assertEquals(1002, scope.activeCount());
        release.countDown();
        scope.joinBlocking();
        assertEquals(1002, ran.get());
        assertEquals(0, scope.activeCount());
    }

    @Test
    void spawnReturnsAHandleOnTheChildsOutcome() {
        Scope scope = Scope.on(pool);
        Task<Integer> handle = scope.spawn(Task.fromCallable(() -> 21).map(x -> x * 2));
        assertEquals(42, handle.join());
        assertEquals(42, handle.join(), "the handle can be awaited again without re-running the child");
        scope.joinBlocking();
    }

    @Test
    void theFirstFailureCancelsSiblingsAndIsReportedWithOthersSuppressed() {
        Scope scope = Scope.on(pool);
        Promise<Void> gate = new Promise<>();
        AtomicInteger cancelled = new AtomicInteger();
        for (int i = 0; i < 5; i++) {
            scope.spawn(Task.never().andFinally(cancelled::incrementAndGet));
        }
        RuntimeException first = new RuntimeException("first");
        RuntimeException second = new RuntimeException("second");
        scope.spawn(Task.failure(first));
        scope.spawn(gate.task().then(Task.failure(second)).withValue(Context.Key.named("k"), 1));
        RuntimeException thrown = assertThrows(RuntimeException.class, scope::joinBlocking);
        assertSame(first, thrown);
        assertEquals(5, cancelled.get(), "every sibling was cancelled and finished before join returned");
        assertTrue(scope.isCancelled());
    }

    @Test
    void laterFailuresAreSuppressedOnTheFirst() {
        Scope scope = Scope.on(pool);
        Promise<Void> both = new Promise<>();
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b");
        // both fail after the gate opens; whichever is first carries the other as suppressed
        scope.spawn(both.task().andFinally(() -> {
            throw a;
        }));
        scope.spawn(both.task().andFinally(() -> {
            throw b;
        }));
        both.complete(null);
        RuntimeException thrown = assertThrows(RuntimeException.class, scope::joinBlocking);
        RuntimeException other = thrown == a ? b : a;
        assertTrue(List.of(thrown.getSuppressed()).contains(other));
    }

    @Test
    void cancelCancelsChildrenAndJoinEndsCancelled() {
        Scope scope = Scope.on(pool);
        AtomicInteger cleaned = new AtomicInteger();
        for (int i = 0; i < 10; i++) {
            scope.spawn(Task.never().andFinally(cleaned::incrementAndGet));
        }
        scope.cancel();
        assertThrows(CancellationException.class, scope::joinBlocking);
        assertEquals(10, cleaned.get());
    }

    @Test
    void closeRefusesNewSpawnsButJoinStillWaits() {
        Scope scope = Scope.on(pool);
        Promise<Integer> p = new Promise<>();
        Task<Integer> child = scope.spawn(p.task());
        scope.close();
        assertTrue(scope.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> scope.spawn(Task.value(1)));
        assertEquals("scope is closed: no new spawns", e.getMessage());
        p.complete(3);
        scope.joinBlocking();
        assertEquals(3, child.join());
    }

    @Test
    void joinOfAnIdleScopeCompletesAtOnceAndScopesCanBeJoinedAgain() {
        Scope scope = Scope.on(pool);
        scope.joinBlocking();
        for (int round = 0; round < 100; round++) {
            Promise<Void> p = new Promise<>();
            scope.spawn(p.task());
            var join = scope.join().toCompletableFuture();
            assertFalse(join.isDone(), "round " + round + ": the child is still running");
            p.complete(null);
            join.join();
        }
    }

    @Test
    void scopedJoinsChildrenOnEveryPath() {
        AtomicInteger finished = new AtomicInteger();
        Task<Integer> sum = Scope.scoped(scope -> {
            Task<Integer> a = scope.spawn(Task.fromCallable(() -> 1));
            Task<Integer> b = scope.spawn(Task.fromCallable(() -> 2));
            scope.spawn(Task.delay(java.time.Duration.ofMillis(1)).andFinally(finished::incrementAndGet));
            return Task.whenAll(a, b, Integer::sum);
        }).startOn(pool);
        assertEquals(3, sum.join());
        assertEquals(1, finished.get(), "the fire-and-forget child finished before scoped completed");

        RuntimeException bodyError = new RuntimeException("body");
        AtomicInteger cleaned = new AtomicInteger();
        Task<Object> failing = Scope.scoped(scope -> {
            scope.spawn(Task.never().andFinally(cleaned::incrementAndGet));
            return Task.failure(bodyError);
        }).startOn(pool);
        assertSame(bodyError, assertThrows(RuntimeException.class, failing::join));
        assertEquals(1, cleaned.get(), "a failing body cancels and joins its children");
    }

    @Test
    void aFailingChildCancelsTheScopedBody() {
        RuntimeException childError = new RuntimeException("child");
        Task<Object> t = Scope.scoped(scope -> {
            scope.spawn(Task.failure(childError));
            return Task.never();
        }).startOn(pool);
        assertSame(childError, assertThrows(RuntimeException.class, t::join));
    }

    @Test
    void childrenSeeTheScopesContextValues() {
        Context.Key<String> key = Context.Key.named("tenant");
        Task<String> t = Scope.<String>scoped(scope -> scope.spawn(Task.context().map(c -> c.get(key))))
                .withValue(key, "acme").startOn(pool);
        assertEquals("acme", t.join());
    }

    @Test
    void badInput() {
        assertEquals("scheduler", assertThrows(NullPointerException.class, () -> Scope.on(null)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class, () -> Scope.on(pool).spawn(null)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> Scope.scoped(null)).getMessage());
    }

    @Test
    @Tag("stress")
    void concurrentSpawnersAndJoinersNeverSeeAnEarlyJoin() throws Exception {
        int rounds = Stress.scaled(200);
        for (int round = 0; round < rounds; round++) {
            Scope scope = Scope.on(pool);
            AtomicInteger done = new AtomicInteger();
            int children = 200;
            List<Thread> spawners = new ArrayList<>();
            CountDownLatch start = new CountDownLatch(1);
            for (int s = 0; s < 2; s++) {
                spawners.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                    for (int i = 0; i < children / 2; i++) {
                        scope.spawn(Task.yieldNow().then(Task.fromRunnable(done::incrementAndGet)));
                    }
                }));
            }
            start.countDown();
            for (Thread t : spawners) {
                t.join();
            }
            scope.joinBlocking(); // all spawns happened before this join began
            assertEquals(children, done.get(), "round " + round);
        }
    }
}
