package dev.coro.bench;

import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * spawn-collect: spawn {@link #tasks} children that each return their index on a two-worker pool,
 * and collect every child's value in spawn order with {@code Task.whenAll(handles)} ({@link #coro}).
 * Against it: the scope's plain {@code join()}, values dropped ({@link #coroJoin}: the floor, what
 * collecting costs on top of), children that store their value into an array slot before a plain
 * join ({@link #coroJoinIntoArray}: collecting by hand), and ForkJoinPool + CompletableFuture.
 *
 * <p>One operation is the whole batch. A root task already running on the pool does the spawning; the
 * benchmark thread blocks until the root ends. The collecting runs check that the list holds every
 * index in order, so a run that loses or reorders values fails instead of looking fast. The peer is
 * ForkJoinPool + CompletableFuture collecting the same values with {@code allOf} then {@code join}.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class SpawnCollect {
    /** Children per operation. */
    @Param({"200000"})
    public int tasks;

    private Task<Void> joinRoot;
    private Task<List<Integer>> collectRoot;
    private Task<List<Integer>> arrayRoot;

    /** Builds the Coro root tasks once (each join runs one anew). */
    @Setup(Level.Trial)
    public void setup() {
        int n = tasks;
        joinRoot = Task.context().flatMap(ctx -> {
            dev.coro.task.Scope scope = dev.coro.task.Scope.childOf(ctx);
            for (int i = 0; i < n; i++) {
                int v = i;
                scope.spawn(Task.fromCallable(() -> v));
            }
            return scope.join();
        });
        collectRoot = Task.context().flatMap(ctx -> {
            dev.coro.task.Scope scope = dev.coro.task.Scope.childOf(ctx);
            List<Task<Integer>> handles = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int v = i;
                handles.add(scope.spawn(Task.fromCallable(() -> v)));
            }
            return Task.whenAll(handles);
        });
        arrayRoot = Task.context().flatMap(ctx -> {
            dev.coro.task.Scope scope = dev.coro.task.Scope.childOf(ctx);
            Integer[] values = new Integer[n];
            for (int i = 0; i < n; i++) {
                int v = i;
                scope.spawn(Task.fromCallable(() -> values[v] = v));
            }
            return scope.join().map(ignored -> List.of(values));
        });
    }

    /**
     * Coro, collecting by hand: each child stores its value in an array slot, and the root joins the
     * scope (the handles are dropped, so finished children are garbage at once).
     *
     * @param coro the pool
     * @return the number of values collected
     */
    @Benchmark
    public int coroJoinIntoArray(Pools.Coro coro) {
        Watchdog.begin("SpawnCollect.coroJoinIntoArray");
        List<Integer> values;
        try {
            values = arrayRoot.startOn(coro.pool).join();
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    /**
     * Coro, plain join: spawn the children into {@code Scope.childOf(ctx)} and return {@code scope.join()}.
     *
     * @param coro the pool
     * @return the number of children
     */
    @Benchmark
    public int coroJoin(Pools.Coro coro) {
        coro.join(joinRoot, "SpawnCollect.coroJoin");
        return tasks;
    }

    /**
     * Coro, collecting: spawn the children, keep their handles and return {@code Task.whenAll(handles)}.
     *
     * @param coro the pool
     * @return the number of values collected
     */
    @Benchmark
    public int coro(Pools.Coro coro) {
        Watchdog.begin("SpawnCollect.coro");
        List<Integer> values;
        try {
            values = collectRoot.startOn(coro.pool).join();
        } finally {
            Watchdog.end();
        }
        return check(values);
    }

    /**
     * ForkJoinPool + CompletableFuture: a root {@code supplyAsync} starts {@code supplyAsync(child)} for
     * every child, then {@code allOf}, then collects each child's {@code join()} in order.
     *
     * @param fjp the pool
     * @return the number of values collected
     */
    @Benchmark
    public int fjp(Pools.ForkJoin fjp) {
        int n = tasks;
        Watchdog.begin("SpawnCollect.fjp");
        List<Integer> values;
        try {
            values = CompletableFuture.supplyAsync(() -> {
                List<CompletableFuture<Integer>> children = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    int v = i;
                    children.add(CompletableFuture.supplyAsync(() -> v, fjp.pool));
                }
                return CompletableFuture.allOf(children.toArray(CompletableFuture<?>[]::new)).thenApply(ignored -> {
                    List<Integer> out = new ArrayList<>(n);
                    for (CompletableFuture<Integer> c : children) {
                        out.add(c.join());
                    }
                    return out;
                });
            }, fjp.pool).thenCompose(all -> all).join();
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
