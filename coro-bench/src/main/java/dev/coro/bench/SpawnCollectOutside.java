package dev.coro.bench;

import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * spawn-collect from outside: the shape users write (issue 16, first row). The benchmark thread, a
 * plain thread that is not one of the pool's workers, opens a {@link Scope} on a two-worker pool,
 * spawns {@link #tasks} children that each return their index, collects their values in spawn order
 * and waits for all of them. Each form is the one the README and javadoc teach:
 * <ul>
 *   <li>{@link #coro}: {@code scope.spawn} per child, keeping the handles, then
 *       {@code Task.whenAll(handles).join()};
 *   <li>{@link #coroJoinThenHandles}: the same spawns, then {@code scope.joinBlocking()} and
 *       {@code h.join()} per handle;
 *   <li>{@link #coroSpawnAll}: {@code scope.spawnAll(children).join()}, which collects without a
 *       handle per child;
 *   <li>{@link #fjp}: {@code CompletableFuture.supplyAsync(child, pool)} per child on a
 *       {@code ForkJoinPool(2)}, then {@code allOf(...).join()} and {@code join()} per future;
 *   <li>{@link #virtualThreads}: {@code newVirtualThreadPerTaskExecutor()}, {@code submit} per child,
 *       {@code get()} per future, two carriers.
 * </ul>
 *
 * <p>One operation is the whole batch, spawning included. Every form checks that the list holds every
 * index in order, so a run that loses or reorders values fails instead of looking fast.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class SpawnCollectOutside {
    /** Children per operation. */
    @Param({"200000"})
    public int tasks;

    /**
     * Coro, as the README teaches it: {@code scope.spawn} per child from this thread, then
     * {@code Task.whenAll(handles).join()}, in a try-with-resources scope.
     *
     * @param coro the pool
     * @return the number of values collected
     */
    @Benchmark
    public int coro(Pools.Coro coro) {
        int n = tasks;
        List<Integer> values;
        Watchdog.begin("SpawnCollectOutside.coro");
        try (Scope scope = Scope.on(coro.pool)) {
            List<Task<Integer>> handles = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                handles.add(scope.spawn(Task.fromCallable(() -> v)));
            }
            values = Task.whenAll(handles).join();
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    /**
     * Coro, waiting first and reading each handle after: {@code scope.spawn} per child, then
     * {@code scope.joinBlocking()} and {@code h.join()} per handle.
     *
     * @param coro the pool
     * @return the number of values collected
     */
    @Benchmark
    public int coroJoinThenHandles(Pools.Coro coro) {
        int n = tasks;
        List<Integer> values = new ArrayList<>(n);
        Watchdog.begin("SpawnCollectOutside.coroJoinThenHandles");
        try (Scope scope = Scope.on(coro.pool)) {
            List<Task<Integer>> handles = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                handles.add(scope.spawn(Task.fromCallable(() -> v)));
            }
            scope.joinBlocking();
            for (Task<Integer> h : handles) {
                values.add(h.join());
            }
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    /**
     * Coro, collecting without handles: {@code scope.spawnAll(children).join()}.
     *
     * @param coro the pool
     * @return the number of values collected
     */
    @Benchmark
    public int coroSpawnAll(Pools.Coro coro) {
        int n = tasks;
        List<Integer> values;
        Watchdog.begin("SpawnCollectOutside.coroSpawnAll");
        try (Scope scope = Scope.on(coro.pool)) {
            List<Task<Integer>> children = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                children.add(Task.fromCallable(() -> v));
            }
            values = scope.spawnAll(children).join();
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    /**
     * ForkJoinPool + CompletableFuture from this thread: {@code supplyAsync(child, pool)} per child,
     * {@code allOf(...).join()}, then {@code join()} per future in order.
     *
     * @param fjp the pool
     * @return the number of values collected
     */
    @Benchmark
    public int fjp(Pools.ForkJoin fjp) {
        int n = tasks;
        List<Integer> values = new ArrayList<>(n);
        Watchdog.begin("SpawnCollectOutside.fjp");
        try {
            List<CompletableFuture<Integer>> children = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                children.add(CompletableFuture.supplyAsync(() -> v, fjp.pool));
            }
            CompletableFuture.allOf(children.toArray(CompletableFuture<?>[]::new)).join();
            for (CompletableFuture<Integer> c : children) {
                values.add(c.join());
            }
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    /**
     * Virtual threads from this thread: {@code newVirtualThreadPerTaskExecutor()}, {@code submit} per
     * child, then {@code get()} per future in order; two carriers.
     *
     * @param vt checks the carrier count
     * @return the number of values collected
     * @throws InterruptedException if interrupted
     * @throws ExecutionException if a child failed
     */
    @Benchmark
    public int virtualThreads(Pools.Virtual vt) throws InterruptedException, ExecutionException {
        int n = tasks;
        List<Integer> values = new ArrayList<>(n);
        Watchdog.begin("SpawnCollectOutside.virtualThreads");
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> children = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                children.add(threads.submit(() -> v));
            }
            for (Future<Integer> f : children) {
                values.add(f.get());
            }
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    private int check(List<Integer> values) {
        if (values.size() != tasks) {
            throw new IllegalStateException("collected " + values.size() + " values, expected " + tasks);
        }
        for (int i = 0; i < tasks; i++) {
            if (values.get(i) != i) {
                throw new IllegalStateException("value " + i + " is " + values.get(i));
            }
        }
        return tasks;
    }
}
