package dev.coro.bench;

import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * spawn-join: start {@link #tasks} trivial tasks on a two-worker pool and wait for all of them.
 *
 * <p>One operation is the whole batch. In every implementation a root task already running on the
 * pool does the spawning (so the spawner is one of the two workers, not a third thread), each child
 * increments a shared {@link LongAdder}, the benchmark thread blocks until everything has ended, and
 * then checks that the adder counted exactly {@link #tasks}: a run that loses or skips children
 * fails instead of looking fast.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class SpawnJoin {
    /** Children per operation: the item count the comparison table divides by. */
    @Param({"200000"})
    public int tasks;

    private final LongAdder counter = new LongAdder();
    private final Runnable child = counter::increment;
    private Task<Void> coroRoot;

    /** Builds the Coro root task once (tasks are reusable descriptions; each join runs it anew). */
    @Setup(Level.Trial)
    public void setup() {
        Task<Void> coroChild = Task.fromRunnable(child);
        int n = tasks;
        coroRoot = Pools.Coro.spawnAll(n, coroChild);
    }

    /**
     * Coro: a root task started on the pool opens {@code Scope.childOf(ctx)}, spawns the children and
     * returns {@code scope.join()}; the benchmark thread {@code join()}s the root.
     *
     * @param coro the pool
     * @return the number of children that ran
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        counter.reset();
        coro.join(coroRoot, "SpawnJoin.coro");
        return check();
    }

    /**
     * ForkJoinPool + CompletableFuture: a root {@code supplyAsync} on the pool calls
     * {@code runAsync(child, pool)} for every child (local-queue pushes, as Coro's spawns are) and
     * returns {@code allOf(...)}; the benchmark thread joins it.
     *
     * @param fjp the pool
     * @return the number of children that ran
     */
    @Benchmark
    public long fjp(Pools.ForkJoin fjp) {
        counter.reset();
        int n = tasks;
        Watchdog.begin("SpawnJoin.fjp");
        try {
            CompletableFuture.supplyAsync(() -> {
                CompletableFuture<?>[] children = new CompletableFuture<?>[n];
                for (int i = 0; i < n; i++) {
                    children[i] = CompletableFuture.runAsync(child, fjp.pool);
                }
                return CompletableFuture.allOf(children);
            }, fjp.pool).thenCompose(all -> all).join();
        } finally {
            Watchdog.end();
        }
        return check();
    }

    /**
     * Virtual threads: a root virtual thread opens {@code Executors.newVirtualThreadPerTaskExecutor()},
     * starts one virtual thread per child and closes the executor (which waits for them all); the
     * benchmark thread joins the root. Two carrier threads.
     *
     * @param vt checks the carrier count
     * @return the number of children that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long virtualThreads(Pools.Virtual vt) throws InterruptedException {
        counter.reset();
        int n = tasks;
        Pools.Virtual.runAll(n, child, "SpawnJoin.virtualThreads");
        return check();
    }

    /**
     * kotlinx.coroutines: {@code runBlocking(dispatcher) { repeat(n) { launch { ... } } }} on
     * {@code Dispatchers.Default.limitedParallelism(2)}, which in the fork is the two-thread Default
     * scheduler itself.
     *
     * @param kx the dispatcher
     * @return the number of children that ran
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        counter.reset();
        Watchdog.begin("SpawnJoin.kotlinx");
        try {
            KotlinxPeers.kotlinxSpawnJoin(tasks, kx.dispatcher, counter);
        } finally {
            Watchdog.end();
        }
        return check();
    }

    /**
     * Reactor: {@code Flux.range(0, n).flatMap(i -> Mono.fromCallable(child).subscribeOn(s))} with
     * flatMap's default concurrency (256 children in flight), counted, the whole pipeline subscribed
     * on the same parallel scheduler; the benchmark thread blocks on the count.
     *
     * @param reactor the scheduler
     * @return the number of children that ran
     */
    @Benchmark
    public long reactor(Pools.Reactor reactor) {
        counter.reset();
        Long emitted;
        Watchdog.begin("SpawnJoin.reactor");
        try {
            emitted = Flux.range(0, tasks)
                    .flatMap(i -> Mono.fromCallable(() -> {
                        child.run();
                        return i;
                    }).subscribeOn(reactor.scheduler))
                    .count()
                    .subscribeOn(reactor.scheduler)
                    .block();
        } finally {
            Watchdog.end();
        }
        if (emitted == null || emitted != tasks) {
            throw new IllegalStateException("reactor emitted " + emitted + " of " + tasks);
        }
        return check();
    }

    private long check() {
        long ran = counter.sum();
        if (ran != tasks) {
            throw new IllegalStateException("ran " + ran + " children, expected " + tasks);
        }
        return ran;
    }
}
