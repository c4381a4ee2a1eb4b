package dev.coro.task;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Latches;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** {@link Scope#spawnAll}: values in order, failure and cancellation by the scope's policy, counting, misuse. */
class ScopeSpawnAllTest {
    private final WorkStealingPool pool = WorkStealingPool.create(2, "spawn-all-test");
    private final ConcurrentLinkedQueue<Throwable> reported = new ConcurrentLinkedQueue<>();

    @AfterEach
    void closePool() {
        pool.close();
    }

    private static List<Task<Integer>> indices(int n) {
        List<Task<Integer>> tasks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int v = i;
            tasks.add(Task.fromCallable(() -> v));
        }
        return tasks;
    }

    @Test
    void valuesComeInSpawnOrderAcrossManyChunks() {
        int n = 3 * Slots.CHUNK + 17; // several chunks and a short last one
        try (Scope scope = Scope.on(pool)) {
            List<Integer> values = scope.spawnAll(indices(n)).join();
            assertEquals(n, values.size());
            for (int i = 0; i < n; i++) {
                assertEquals(i, values.get(i));
            }
            assertTrue(values instanceof java.util.RandomAccess);
            assertThrows(UnsupportedOperationException.class, () -> values.set(0, 1));
            assertThrows(IndexOutOfBoundsException.class, () -> values.get(n));
        }
    }

    @Test
    void theTaskCanBeAwaitedAgainWithoutRerunningTheChildren() {
        AtomicInteger runs = new AtomicInteger();
        try (Scope scope = Scope.on(pool)) {
            Task<List<Integer>> all = scope.spawnAll(List.of(Task.fromCallable(runs::incrementAndGet),
                    Task.fromCallable(runs::incrementAndGet)));
            List<Integer> first = all.join();
            assertSame(first, all.join());
            assertEquals(2, runs.get());
            assertEquals(new LinkedHashSet<>(List.of(1, 2)), new LinkedHashSet<>(first));
        }
    }

    @Test
    void nullValuesAreKept() {
        try (Scope scope = Scope.on(pool)) {
            List<String> values = scope.spawnAll(List.of(Task.<String>value(null), Task.value("x"))).join();
            assertEquals(Arrays.asList(null, "x"), values);
        }
    }

    @Test
    void joinSeesTheBatchCompleteAndActiveCountHoldsItUntilTheLastChildEnds() throws Exception {
        Promise<Integer> last = new Promise<>();
        Scope scope = Scope.on(pool);
        Task<List<Integer>> all = scope.spawnAll(List.of(Task.value(1), last.task()));
        assertEquals(2, scope.activeCount());
        var pending = all.toCompletableFuture();
        assertFalse(pending.isDone());
        last.complete(2);
        scope.joinBlocking();
        assertTrue(pending.isDone(), "a join that returned saw the batch's task completed");
        assertEquals(List.of(1, 2), pending.get(10, SECONDS));
        assertEquals(0, scope.activeCount());
        scope.close();
    }

    @Test
    void anEmptyBatchSpawnsNothingAndEndsAtOnce() {
        Scope scope = Scope.on(pool);
        assertEquals(List.of(), scope.spawnAll(List.of()).join());
        assertEquals(0, scope.activeCount());
        scope.close();
        assertThrows(IllegalStateException.class, () -> scope.spawnAll(List.of()));
    }

    @Test
    void aFailFastScopesFirstFailureCancelsTheRestOfTheBatchAndTheScope() {
        RuntimeException boom = new RuntimeException("boom");
        AtomicInteger cancelled = new AtomicInteger();
        Scope scope = Scope.on(pool);
        List<Task<Object>> tasks = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            tasks.add(Task.never().andFinally(cancelled::incrementAndGet));
        }
        tasks.add(Task.failure(boom));
        Task<List<Object>> all = scope.spawnAll(tasks);
        assertSame(boom, assertThrows(RuntimeException.class, all::join));
        assertEquals(5, cancelled.get(), "the batch's task ends only once every child of it has ended");
        assertTrue(scope.isCancelled());
        assertSame(boom, assertThrows(RuntimeException.class, scope::joinBlocking));
        assertEquals(List.of(), failuresSuppressedBy(boom), "cancelled siblings are not failures");
        scope.close();
    }

    @Test
    void laterFailuresOfTheBatchAreSuppressedOnceEach() {
        for (boolean supervisor : new boolean[] {false, true}) {
            RuntimeException a = new RuntimeException("a");
            RuntimeException b = new RuntimeException("b");
            CountDownLatch both = new CountDownLatch(2); // neither fails before both run: no cancellation between
            Scope scope = supervisor ? Scope.supervisorOn(pool) : Scope.on(pool);
            Task<List<Object>> all = scope.spawnAll(List.of(
                    Task.fromRunnable(() -> { both.countDown(); Latches.await(both); }).then(Task.failure(a)),
                    Task.fromRunnable(() -> { both.countDown(); Latches.await(both); }).then(Task.failure(b))));
            RuntimeException first = assertThrows(RuntimeException.class, all::join);
            assertTrue(first == a || first == b, "one of the two: " + first);
            assertEquals(List.of(first == a ? b : a), failuresSuppressedBy(first), "supervisor=" + supervisor);
            scope.close();
        }
    }

    /** The suppressed errors of {@code e}, without the join sites that joins add. */
    private static List<Throwable> failuresSuppressedBy(Throwable e) {
        return Arrays.stream(e.getSuppressed()).filter(t -> !(t instanceof JoinSite)).toList();
    }

    @Test
    void aFailureOutsideTheBatchCancelsItAndTheBatchEndsCancelled() {
        RuntimeException outside = new RuntimeException("outside");
        Scope scope = Scope.on(pool);
        Task<List<Object>> all = scope.spawnAll(List.of(Task.never(), Task.never()));
        scope.spawn(Task.failure(outside));
        assertThrows(CancellationException.class, all::join);
        assertSame(outside, assertThrows(RuntimeException.class, scope::joinBlocking));
        scope.close();
    }

    @Test
    void cancellingTheScopeEndsTheBatchCancelled() throws Exception {
        CountDownLatch started = new CountDownLatch(2);
        Scope scope = Scope.on(pool);
        Task<List<Object>> all = scope.spawnAll(List.of(
                Task.fromRunnable(started::countDown).then(Task.never()),
                Task.fromRunnable(started::countDown).then(Task.never())));
        assertTrue(started.await(10, SECONDS));
        scope.cancel();
        assertThrows(CancellationException.class, all::join);
        assertThrows(CancellationException.class, scope::joinBlocking);
        scope.close();
    }

    @Test
    void cancellingAWaitOnTheBatchLeavesTheChildrenRunning() throws Exception {
        Promise<Integer> release = new Promise<>();
        Scope scope = Scope.on(pool);
        Task<List<Integer>> all = scope.spawnAll(List.of(release.task(), Task.value(7)));
        TaskHandle<List<Integer>> wait = all.start(pool);
        wait.cancel();
        assertTrue(wait.outcome().join() instanceof Outcome.Cancelled);
        assertFalse(scope.isCancelled());
        assertEquals(2, scope.activeCount(), "the children go on");
        release.complete(1);
        assertEquals(List.of(1, 7), all.join());
        scope.close();
    }

    @Test
    void aSupervisorsBatchFailsAloneAndIsNotReportedWhenAwaited() throws Throwable {
        collectingReports(() -> {
            RuntimeException a = new RuntimeException("a");
            Scope scope = Scope.supervisorOn(pool);
            Task<List<Integer>> all = scope.spawnAll(List.of(Task.failure(a), Task.value(2)));
            Task<Integer> sibling = scope.spawn(Task.value(3));
            scope.joinBlocking();
            assertFalse(scope.isCancelled());
            assertEquals(3, sibling.join());
            assertSame(a, assertThrows(RuntimeException.class, all::join));
            scope.close();
            assertTrue(reported.isEmpty(), "the batch's failure was observed");
        });
    }

    @Test
    void aSupervisorsBatchFailureNobodyAwaitedIsReportedAtClose() throws Throwable {
        collectingReports(() -> {
            RuntimeException a = new RuntimeException("a");
            Scope scope = Scope.supervisorOn(pool);
            scope.spawnAll(List.of(Task.failure(a), Task.value(2))); // the task is dropped
            scope.joinBlocking();
            assertTrue(reported.isEmpty(), "nothing is reported before close");
            scope.close();
            assertEquals(List.of(a), List.copyOf(reported));
        });
    }

    @Test
    void whenAllOverBatchesWaitsOnThemWithoutAFiberAndObservesThem() throws Throwable {
        collectingReports(() -> {
            Scope scope = Scope.supervisorOn(pool);
            RuntimeException a = new RuntimeException("a");
            Task<List<Integer>> good = scope.spawnAll(indices(10));
            Task<List<Integer>> bad = scope.spawnAll(List.of(Task.failure(a)));
            scope.joinBlocking();
            assertSame(a, assertThrows(RuntimeException.class, () -> Task.whenAll(List.of(good, bad)).join()));
            assertEquals(List.of(indices(10).size()), List.of(good.join().size()));
            scope.close();
            assertTrue(reported.isEmpty());
        });
    }

    @Test
    void aRefusingSchedulerFailsTheChildrenAndTheBatch() {
        WorkStealingPool closed = WorkStealingPool.create(1, "closed");
        closed.close();
        Scope scope = Scope.on(closed);
        Task<List<Integer>> all = scope.spawnAll(indices(3));
        assertTrue(assertThrows(RejectedExecutionException.class, all::join).getMessage().contains("shut down"));
        assertEquals(0, scope.activeCount());
        scope.close();
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsSpawned() {
        Scope scope = Scope.on(Scheduler.inline());
        assertEquals("tasks", assertThrows(NullPointerException.class, () -> scope.spawnAll(null)).getMessage());
        AtomicInteger ran = new AtomicInteger();
        List<Task<Integer>> withNull = Arrays.asList(Task.fromCallable(ran::incrementAndGet), null);
        assertEquals("tasks[1] is null",
                assertThrows(NullPointerException.class, () -> scope.spawnAll(withNull)).getMessage());
        assertEquals(0, ran.get());
        assertEquals(0, scope.activeCount());
        scope.close();
        assertEquals("scope is closed: no new spawns",
                assertThrows(IllegalStateException.class, () -> scope.spawnAll(indices(1))).getMessage());
    }

    @Test
    void spawnAllRacingCloseEitherCountsEveryChildOrNone() throws Exception {
        for (int round = 0; round < 200; round++) {
            Scope scope = Scope.on(pool);
            AtomicInteger ran = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            Thread spawner = Thread.ofPlatform().start(() -> {
                Latches.await(go);
                try {
                    scope.spawnAll(List.of(Task.fromRunnable(ran::incrementAndGet),
                            Task.fromRunnable(ran::incrementAndGet)));
                } catch (IllegalStateException refused) {
                    // closed first: nothing spawned
                }
            });
            go.countDown();
            scope.close();
            spawner.join(10_000);
            assertFalse(spawner.isAlive());
            int seen = ran.get();
            assertTrue(seen == 0 || seen == 2, "all or none of the batch ran before close returned: " + seen);
        }
    }

    @Test
    void batchesFromManyThreadsAtOnceEachGetTheirOwnValuesAndJoinWaitsForAll() throws Exception {
        int threads = 4;
        int batches = 50;
        int size = 500;
        Scope scope = Scope.on(pool);
        AtomicInteger ended = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> spawners = new ArrayList<>();
        ConcurrentLinkedQueue<Throwable> wrong = new ConcurrentLinkedQueue<>();
        for (int t = 0; t < threads; t++) {
            int base = t * 1_000_000;
            spawners.add(Thread.ofPlatform().start(() -> {
                Latches.await(go);
                for (int b = 0; b < batches; b++) {
                    List<Task<Integer>> tasks = new ArrayList<>(size);
                    for (int i = 0; i < size; i++) {
                        int v = base + b * size + i;
                        tasks.add(Task.fromCallable(() -> v).andFinally(ended::incrementAndGet));
                    }
                    List<Integer> values = scope.spawnAll(tasks).join();
                    for (int i = 0; i < size; i++) {
                        if (values.get(i) != base + b * size + i) {
                            wrong.add(new AssertionError("batch " + b + " of " + base + ": slot " + i + " is " + values.get(i)));
                            return;
                        }
                    }
                }
            }));
        }
        go.countDown();
        for (Thread t : spawners) {
            t.join();
        }
        assertTrue(wrong.isEmpty(), () -> wrong.peek().getMessage());
        scope.joinBlocking();
        assertEquals(threads * batches * size, ended.get());
        assertEquals(0, scope.activeCount());
        scope.close();
    }

    private void collectingReports(Executable body) throws Throwable {
        Thread th = Thread.currentThread();
        Thread.UncaughtExceptionHandler previous = th.getUncaughtExceptionHandler();
        th.setUncaughtExceptionHandler((t, e) -> reported.add(e));
        try {
            body.execute();
        } finally {
            th.setUncaughtExceptionHandler(previous);
        }
    }

}
