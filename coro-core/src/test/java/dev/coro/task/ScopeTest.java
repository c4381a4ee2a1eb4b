package dev.coro.task;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
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
    void aScopeAtItsBoundOfRunningChildrenRefusesMoreNamingTheBoundAndStaysOpen() throws Exception {
        Scope scope = Scope.on(dev.coro.scheduler.Scheduler.inline());
        java.lang.reflect.Field state = Scope.class.getDeclaredField("state");
        state.setAccessible(true);
        long bound = (1L << 31) - 1;
        state.setLong(scope, bound); // as if 2^31 - 1 children were running (the count's bits are all set)
        IllegalStateException one = assertThrows(IllegalStateException.class, () -> scope.spawn(Task.value(1)));
        assertEquals("a scope counts at most 2147483647 running children: 2147483647 running, 1 more asked",
                one.getMessage());
        IllegalStateException two = assertThrows(IllegalStateException.class,
                () -> scope.spawnAll(List.of(Task.value(1), Task.value(2))));
        assertEquals("a scope counts at most 2147483647 running children: 2147483647 running, 2 more asked",
                two.getMessage());
        assertEquals(bound, state.getLong(scope), "nothing was counted, and the scope is not closed");
        assertFalse(scope.isClosed());
        state.setLong(scope, 0); // back to no child, so the scope can be left
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
    void closeRefusesNewSpawns() {
        Scope scope = Scope.on(pool);
        Task<Integer> child = scope.spawn(Task.value(3));
        scope.joinBlocking();
        scope.close();
        assertTrue(scope.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> scope.spawn(Task.value(1)));
        assertEquals("scope is closed: no new spawns", e.getMessage());
        assertEquals(3, child.join());
    }

    @Test
    void tryWithResourcesCancelsTheChildrenStillRunningAndWaitsForThemToEnd() throws Exception {
        Promise<Void> event = new Promise<>(); // never set: the children wait until cancelled
        CountDownLatch waiting = new CountDownLatch(3);
        AtomicInteger ended = new AtomicInteger();
        List<Task<Void>> handles = new ArrayList<>();
        Scope escaped;
        try (Scope scope = Scope.on(pool)) {
            escaped = scope;
            for (int i = 0; i < 3; i++) {
                handles.add(scope.spawn(Task.fromRunnable(waiting::countDown).then(event.task())
                        .andFinally(ended::incrementAndGet)));
            }
            assertTrue(waiting.await(10, SECONDS));
        }
        assertEquals(3, ended.get(), "every child had ended when close returned");
        assertEquals(0, escaped.activeCount());
        assertTrue(escaped.isClosed());
        assertTrue(escaped.isCancelled(), "close cancelled the scope, since children were running");
        for (Task<Void> h : handles) {
            assertThrows(CancellationException.class, h::join, "the child ended cancelled");
        }
        assertThrows(CancellationException.class, escaped::joinBlocking);
    }

    @Test
    void aBlockThatThrowsStillLeavesNoChildRunning() {
        AtomicInteger ended = new AtomicInteger();
        IllegalStateException body = new IllegalStateException("body");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> {
            try (Scope scope = Scope.on(pool)) {
                scope.spawn(Task.never().andFinally(ended::incrementAndGet));
                throw body;
            }
        });
        assertSame(body, thrown, "close added nothing to the block's exception");
        assertEquals(1, ended.get());
    }

    @Test
    void closeAfterJoinCancelsNothingAndIsIdempotent() {
        Scope scope = Scope.on(pool);
        Task<Integer> child = scope.spawn(Task.fromCallable(() -> 7));
        scope.joinBlocking();
        scope.close();
        scope.close();
        assertFalse(scope.isCancelled(), "nothing was running: close had nothing to cancel");
        scope.joinBlocking(); // still a null value, not cancelled
        assertEquals(7, child.join());
        assertEquals("Scope[active=0, closed]", scope.toString());
    }

    @Test
    void closeNeverThrowsAChildsFailureJoinDoes() throws Exception {
        RuntimeException boom = new RuntimeException("boom");
        Scope scope = Scope.on(pool);
        Task<Object> failing = scope.spawn(Task.failure(boom));
        scope.spawn(Task.never());
        assertInstanceOf(Outcome.Failure.class, failing.outcome().join());
        scope.close(); // the sibling was cancelled by the failure, or is by close: waits, throws nothing
        assertSame(boom, assertThrows(RuntimeException.class, scope::joinBlocking));
    }

    @Test
    void closeKeepsWaitingWhenInterruptedAndKeepsTheInterrupt() throws Exception {
        Scope scope = Scope.on(pool);
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger ended = new AtomicInteger();
        // a synchronous step: cancellation cannot end it, so close must wait for it to return
        scope.spawn(Task.fromCallable(() -> {
            started.countDown();
            release.await();
            return null;
        }).andFinally(ended::incrementAndGet));
        assertTrue(started.await(10, SECONDS));
        CompletableFuture<Boolean> interruptedAfter = new CompletableFuture<>();
        AtomicInteger endedWhenCloseReturned = new AtomicInteger(-1);
        Thread closer = Thread.ofPlatform().start(() -> {
            Thread.currentThread().interrupt(); // close must not stop waiting for this
            scope.close();
            endedWhenCloseReturned.set(ended.get());
            interruptedAfter.complete(Thread.currentThread().isInterrupted());
        });
        while (closer.getState() != Thread.State.WAITING && !interruptedAfter.isDone()) {
            Thread.onSpinWait(); // until the closer parks in close (it cannot return before release)
        }
        assertFalse(interruptedAfter.isDone(), "close returned while a child was running");
        release.countDown();
        assertTrue(interruptedAfter.get(10, SECONDS), "the interrupt status was kept");
        assertEquals(1, endedWhenCloseReturned.get(), "the child had ended when close returned");
        closer.join();
    }

    @Test
    void closeFromInsideOneOfItsChildrenIsRefusedAndChangesNothing() throws Exception {
        Scope scope = Scope.on(pool);
        Task<Throwable> child = scope.spawn(Task.onVirtualThread(() -> {
            try {
                scope.close();
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        }));
        Throwable refused = child.join();
        assertTrue(refused instanceof IllegalStateException, "refused: " + refused);
        assertEquals("close() called from inside a child of this scope would wait for itself: let the child end,"
                + " or cancel()", refused.getMessage());
        assertFalse(scope.isClosed());
        assertFalse(scope.isCancelled());

        // from a grandchild, through a scope made inside a child
        Task<Throwable> nested = scope.spawn(Task.context().flatMap(ctx -> {
            Scope inner = Scope.childOf(ctx);
            return inner.spawn(Task.onVirtualThread(() -> {
                try {
                    scope.close();
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            }));
        }));
        assertTrue(nested.join() instanceof IllegalStateException);
        scope.joinBlocking();
        scope.close(); // from outside: fine
        assertTrue(scope.isClosed());
    }

    @Test
    void closeOnAPoolWorkerWithChildrenRunningIsRefusedAndChangesNothing() throws Exception {
        Scope scope = Scope.on(pool);
        Promise<Void> release = new Promise<>();
        scope.spawn(release.task());
        Throwable refused = Task.fromCallable(() -> {
            try {
                scope.close(); // a plain method called from work on a worker, not a child of the scope
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        }).startOn(pool).toCompletableFuture().get(10, SECONDS);
        assertTrue(refused instanceof IllegalStateException, "refused: " + refused);
        assertTrue(refused.getMessage().startsWith("Scope.close would block thread"), refused.getMessage());
        assertFalse(scope.isClosed());
        assertFalse(scope.isCancelled());
        assertEquals(1, scope.activeCount());
        release.complete(null);
        scope.close(); // from a plain thread: waits for nothing left
        assertTrue(scope.isClosed());
        assertEquals(0, scope.activeCount());
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

    @Test
    void anEpochThatEndsWithNoJoinerKeepsItsJoinerListAndOneWithAJoinerFiresIt() throws Exception {
        java.lang.reflect.Field joiners = Scope.class.getDeclaredField("joiners");
        joiners.setAccessible(true);
        Scope scope = Scope.on(dev.coro.scheduler.Scheduler.inline());
        Object before = joiners.get(scope);
        for (int i = 0; i < 3; i++) { // each child ends inside its spawn: three epochs, nobody joining
            scope.spawn(Task.value(i));
        }
        assertSame(before, joiners.get(scope), "no list made or fired for an epoch nobody waited on");
        Promise<Integer> p = new Promise<>();
        scope.spawn(p.task());
        CompletableFuture<Void> join = scope.join().toCompletableFuture();
        assertFalse(join.isDone());
        p.complete(1); // the epoch ends with a joiner listed: the count-down replaces and fires the list
        join.join();
        assertFalse(before == joiners.get(scope), "the list the joiner waited on was replaced");
        assertTrue(((dev.coro.internal.SignalList) before).isFired(), "and fired");
    }
}
