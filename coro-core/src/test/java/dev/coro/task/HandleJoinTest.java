package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The collecting join: {@link Task#whenAll(List)} (and whenAny, timeout) over spawn and run handles,
 * which Forks waits on directly, without a fiber per handle. Each test states a behaviour the fiber
 * form had, so the fast path changes nothing a caller can see.
 */
class HandleJoinTest {
    private final WorkStealingPool pool = WorkStealingPool.create(2, "handle-join-test");

    @AfterEach
    void closePool() {
        pool.close();
    }

    @Test
    void valuesComeInSpawnOrderWhateverOrderTheChildrenEndIn() {
        Scope scope = Scope.on(Scheduler.inline());
        List<Promise<Integer>> promises = new ArrayList<>();
        List<Task<Integer>> handles = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            Promise<Integer> p = new Promise<>();
            promises.add(p);
            handles.add(scope.spawn(p.task()));
        }
        promises.get(0).complete(0); // one ended before the join starts
        var all = Task.whenAll(handles).toCompletableFuture();
        for (int i = 99; i >= 1; i--) {
            assertFalse(all.isDone(), "child " + i + " is still running");
            promises.get(i).complete(i);
        }
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            expected.add(i);
        }
        assertEquals(expected, all.join());
        scope.joinBlocking();
    }

    @Test
    void twoHundredThousandChildrenOnAPoolCollectWithoutAStackOverflow() {
        int n = 200_000;
        List<Integer> values = Task.context().flatMap(ctx -> {
            Scope scope = Scope.childOf(ctx);
            List<Task<Integer>> handles = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                handles.add(scope.spawn(Task.fromCallable(() -> v)));
            }
            return Task.whenAll(handles);
        }).startOn(pool).join();
        assertEquals(n, values.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, values.get(i));
        }
    }

    @Test
    void theFirstFailureEndsTheJoinWithoutWaitingForTheOtherChildren() {
        Scope scope = Scope.supervisorOn(pool); // siblings go on after a failure
        RuntimeException boom = new RuntimeException("boom");
        Promise<Integer> slow = new Promise<>();
        Task<Integer> running = scope.spawn(slow.task());
        Task<Integer> failing = scope.spawn(Task.failure(boom));
        assertSame(boom, assertThrows(RuntimeException.class, () -> Task.whenAll(List.of(running, failing)).join()));
        // the join's waits were cancelled, the child itself goes on: it ends with its own value, not cancelled
        // (activeCount is no proof here: the failed child's result is seen before the scope counts it down)
        assertTrue(scope.activeCount() >= 1, "the slow child still counts");
        slow.complete(1);
        assertEquals(1, running.join());
        scope.close();
    }

    @Test
    void laterFailuresAreSuppressedOnTheFirstAsBefore() {
        Scope scope = Scope.supervisorOn(Scheduler.inline());
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b");
        List<Task<Object>> handles = List.of(scope.spawn(Task.failure(a)), scope.spawn(Task.failure(b)));
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> Task.whenAll(handles).join());
        assertSame(a, thrown, "both had failed when the join started: the first in list order decides");
        assertTrue(List.of(a.getSuppressed()).contains(b));
        scope.close();
    }

    @Test
    void cancellingTheJoinEndsItCancelledAndLeavesTheChildrenRunning() {
        Scope scope = Scope.on(pool);
        Promise<Integer> p = new Promise<>();
        List<Task<Integer>> handles = List.of(scope.spawn(p.task()), scope.spawn(Task.value(2)));
        TaskHandle<List<Integer>> join = Task.whenAll(handles).start(pool);
        join.cancel();
        assertInstanceOf(Outcome.Cancelled.class, join.outcome().join());
        assertEquals(2, handles.get(1).join());
        assertFalse(scope.isCancelled());
        assertTrue(scope.activeCount() >= 1, "the child waited on is still running (the other may not be counted down yet)");
        p.complete(1);
        assertEquals(List.of(1, 2), Task.whenAll(handles).join(), "the handles can be joined again");
        scope.close();
    }

    @Test
    void aJoinStartedUnderACancelledTokenEndsCancelledEvenOverEndedChildren() {
        Scope scope = Scope.on(Scheduler.inline());
        List<Task<Integer>> handles = List.of(scope.spawn(Task.value(1)));
        dev.coro.cancel.CancellationSource source = new dev.coro.cancel.CancellationSource();
        source.cancel();
        TaskHandle<List<Integer>> join = Task.whenAll(handles).start(Scheduler.inline(), source.token());
        assertInstanceOf(Outcome.Cancelled.class, join.outcome().join(),
                "as a fiber per handle would: its wait never starts");
    }

    @Test
    void aJoinOverEndedHandlesKeepsNullValuesAndEndsCancelledIfOneEndedCancelled() {
        Scope scope = Scope.on(Scheduler.inline()); // every child has ended before the join starts
        List<Task<Integer>> values = List.of(scope.spawn(Task.value(1)), scope.spawn(Task.value(null)),
                scope.spawn(Task.value(3)));
        assertEquals(java.util.Arrays.asList(1, null, 3), Task.whenAll(values).join(), "no node, values decoded");
        List<Task<Integer>> oneCancelled = List.of(scope.spawn(Task.value(1)), scope.spawn(Task.cancelled()),
                scope.spawn(Task.value(3)));
        assertThrows(CancellationException.class, () -> Task.whenAll(oneCancelled).join());
        RuntimeException boom = new RuntimeException("boom");
        Scope supervisor = Scope.supervisorOn(Scheduler.inline());
        List<Task<Integer>> oneFailed = List.of(supervisor.spawn(Task.value(1)), supervisor.spawn(Task.failure(boom)));
        assertSame(boom, assertThrows(RuntimeException.class, () -> Task.whenAll(oneFailed).join()));
    }

    @Test
    void joiningEndedHandlesOneByOneGivesEachOutcomeAsTheFullJoinDoes() {
        Scope scope = Scope.on(Scheduler.inline()); // every child has ended when its spawn returns
        Task<Integer> one = scope.spawn(Task.value(1));
        Task<Integer> none = scope.spawn(Task.value(null));
        Task<Integer> cancelled = scope.spawn(Task.cancelled());
        RuntimeException boom = new RuntimeException("boom");
        Task<Integer> failed = scope.spawn(Task.failure(boom)); // last: it cancels this fail-fast scope
        assertEquals(1, one.join());
        assertEquals(1, one.join(), "a handle can be joined again");
        assertEquals(null, none.join());
        assertThrows(CancellationException.class, cancelled::join);
        assertSame(boom, assertThrows(RuntimeException.class, failed::join));
        assertEquals(7, Task.value(7).join());
    }

    @Test
    void joiningAnEndedHandleUnderACancelledCallerEndsCancelledAsTheFullJoinDoes() {
        Scope scope = Scope.on(Scheduler.inline());
        Task<Integer> one = scope.spawn(Task.value(1));
        dev.coro.cancel.CancellationSource caller = new dev.coro.cancel.CancellationSource();
        java.util.concurrent.atomic.AtomicReference<Object> handle = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Object> value = new java.util.concurrent.atomic.AtomicReference<>();
        Task.onVirtualThread(() -> {
            caller.cancel(); // the body's own token: the join's wait is cancelled before it starts
            handle.set(outcomeOfJoin(one));
            value.set(outcomeOfJoin(Task.value(2))); // a value needs no wait: not cancelled
            return null;
        }).start(Scheduler.inline(), caller.token()).outcome().join();
        assertInstanceOf(CancellationException.class, handle.get());
        assertEquals(2, value.get());
        assertEquals(1, one.join(), "from a caller that is not cancelled, the same handle gives its value");
    }

    private static Object outcomeOfJoin(Task<?> task) {
        try {
            return task.join();
        } catch (CancellationException e) {
            return e;
        }
    }

    @Test
    void aCancelledChildMakesTheJoinCancelled() {
        Scope scope = Scope.on(pool);
        Promise<Integer> p = new Promise<>();
        List<Task<Integer>> handles = List.of(scope.spawn(p.task()), scope.spawn(Task.value(2)));
        var all = Task.whenAll(handles).toCompletableFuture();
        scope.cancel();
        assertThrows(CancellationException.class, all::join);
    }

    @Test
    void handlesAndOtherTasksMixAndOutcomeHandlesNeverFail() {
        Scope scope = Scope.on(pool);
        RuntimeException boom = new RuntimeException("boom");
        TaskHandle<Integer> run = Task.<Integer>failure(boom).start(pool);
        Task<Integer> spawned = scope.spawn(Task.fromCallable(() -> 1));
        List<Object> all = Task.<Object>whenAll(List.of(spawned, Task.fromCallable(() -> "plain"), run.outcome()))
                .join();
        assertEquals(List.of(1, "plain", new Outcome.Failure<Integer>(boom)), all);
        scope.close();
    }

    @Test
    void whenAnyAndTimeoutOverHandles() {
        Scope scope = Scope.on(pool);
        Promise<Integer> never = new Promise<>();
        Task<Integer> waiting = scope.spawn(never.task());
        Task<Integer> quick = scope.spawn(Task.value(7));
        assertEquals(7, Task.whenAny(List.of(waiting, quick)).join());
        assertInstanceOf(TimeoutException.class, assertThrows(java.util.concurrent.CompletionException.class,
                () -> waiting.timeout(Duration.ofMillis(1)).join()).getCause());
        assertEquals(1, scope.activeCount(), "timing out the wait left the child running");
        never.complete(3);
        assertEquals(3, waiting.join());
        scope.close();
    }

    @Test
    void aFailFastScopeOfManyChildrenCancelsTheRestAndTheJoinFailsOnce() {
        int n = 50_000;
        RuntimeException boom = new RuntimeException("boom");
        AtomicInteger cancelled = new AtomicInteger();
        Task<List<Object>> t = Task.context().flatMap(ctx -> {
            Scope scope = Scope.childOf(ctx);
            List<Task<Object>> handles = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                handles.add(scope.spawn(Task.never().andFinally(cancelled::incrementAndGet)));
            }
            handles.add(scope.spawn(Task.yieldNow().then(Task.failure(boom))));
            return Task.whenAll(handles).andFinally(() -> {}).transform(o -> scope.join().then(Task.fromOutcome(o)));
        });
        assertSame(boom, assertThrows(RuntimeException.class, () -> t.startOn(pool).join()));
        assertEquals(n, cancelled.get());
    }
}
