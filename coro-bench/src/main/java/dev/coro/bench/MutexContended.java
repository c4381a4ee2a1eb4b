package dev.coro.bench;

import dev.coro.sync.AsyncMutex;
import dev.coro.task.Task;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
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
 * mutex-contended: {@link #tasks} tasks on a two-worker pool each take one mutex {@link #locks}
 * times and increment a plain {@code long} inside the critical section.
 *
 * <p>One operation is the whole batch ({@code tasks * locks} acquisitions, 1,000,000 by default); the
 * comparison table divides by that, so its {@code ns/item} is nanoseconds per lock. The counter is a
 * plain field, not atomic: only the lock protects it, so a lock that breaks exclusion loses
 * increments, and the check after every operation ({@code counter == tasks * locks}) fails.
 *
 * <p>Iterations are 2 s rather than the suite's 1 s: one operation takes from 15 ms (the
 * {@code synchronized} floor) to about a second (fair {@code ReentrantLock}), and a 1 s iteration
 * would hold a single operation of the slowest.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class MutexContended {
    /** Tasks (coroutines, virtual threads) per operation. */
    @Param({"1000"})
    public int tasks;

    /** Lock/increment/unlock rounds per task. The table's item count is {@code tasks * locks}. */
    @Param({"1000"})
    public int locks;

    /** The shared counter: a plain field, guarded only by the lock under test. */
    private long counter;

    private final AsyncMutex mutex = new AsyncMutex();
    private final AsyncMutex bargingMutex = AsyncMutex.barging();
    private Task<Void> coroRoot;
    private Task<Void> coroBargingRoot;
    private Task<Void> coroLoopRoot;
    private Task<Void> coroBargingLoopRoot;
    private Task<Void> coroRangeRoot;
    private Task<Void> coroBargingRangeRoot;

    /** Builds the Coro root task once (tasks are reusable descriptions; each join runs it anew). */
    @Setup(Level.Trial)
    public void setup() {
        Task<Void> worker = mutex.withLock(Task.fromRunnable(() -> counter++)).repeat(locks);
        int n = tasks;
        coroRoot = Pools.Coro.spawnAll(n, worker);
        Task<Void> bargingWorker = bargingMutex.withLock(Task.fromRunnable(() -> counter++)).repeat(locks);
        coroBargingRoot = Pools.Coro.spawnAll(n, bargingWorker);
        coroLoopRoot = Pools.Coro.spawnAll(n, lockInLoopBody(mutex));
        coroBargingLoopRoot = Pools.Coro.spawnAll(n, lockInLoopBody(bargingMutex));
        coroRangeRoot = Pools.Coro.spawnAll(n, lockInRangeBody(mutex));
        coroBargingRangeRoot = Pools.Coro.spawnAll(n, lockInRangeBody(bargingMutex));
    }

    /**
     * {@code locks} rounds of a {@code Task.loop} whose body builds its {@code withLock} anew. The
     * mutex is a local captured by the body, as the virtual threads' lock is: a read of this object's
     * field would miss in the cache every round, since {@link #counter} beside it is written under the
     * lock by the other worker.
     */
    private Task<Void> lockInLoopBody(AsyncMutex lock) {
        int m = locks;
        return Task.loop(0, i -> i < m, i -> lock.withLock(Task.fromRunnable(() -> counter++)).map(v -> i + 1))
                .then(Task.value(null));
    }

    /**
     * {@code locks} rounds of a {@code Task.forRange} whose body builds its {@code withLock} anew: the
     * counted loop without a boxed index or a {@code map} to step it. The mutex is a captured local.
     */
    private Task<Void> lockInRangeBody(AsyncMutex lock) {
        return Task.forRange(0, locks, i -> lock.withLock(Task.fromRunnable(() -> counter++)));
    }

    /** Runs a Coro root on the pool from a zero counter, then checks the count and that the lock is free. */
    private long joinCounting(Pools.Coro coro, Task<Void> root, AsyncMutex lock, String name) {
        counter = 0;
        coro.join(root, name);
        GuardedCount.requireFree(lock.isLocked(), lock.isBarging() ? "the barging mutex" : "the mutex", "locked");
        return GuardedCount.check(counter, tasks, locks);
    }

    /**
     * Coro: a root task started on the pool opens {@code Scope.childOf(ctx)} and spawns the tasks, each
     * {@code mutex.withLock(Task.fromRunnable(() -> counter++)).repeat(locks)} on one
     * {@link AsyncMutex}, and returns {@code scope.join()}; the benchmark thread joins the root.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        return joinCounting(coro, coroRoot, mutex, "MutexContended.coro");
    }

    /**
     * Coro's opt-in barging mutex: the same as {@link #coro} on {@code AsyncMutex.barging()}, which
     * frees the lock on unlock and wakes the oldest waiter to compete for it (not FIFO), the
     * discipline of {@link #vtReentrantUnfair}.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroBarging(Pools.Coro coro) {
        return joinCounting(coro, coroBargingRoot, bargingMutex, "MutexContended.coroBarging");
    }

    /**
     * Coro, the lock built in a loop's body, as code that cannot hoist it writes:
     * {@code Task.loop(0, i -> i < locks, i -> mutex.withLock(Task.fromRunnable(() -> counter++)).map(v -> i + 1))}
     * per task (each round builds its {@code withLock} task anew).
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroLoopBody(Pools.Coro coro) {
        return joinCounting(coro, coroLoopRoot, mutex, "MutexContended.coroLoopBody");
    }

    /**
     * The barging mutex in a loop's body: as {@link #coroLoopBody} on {@code AsyncMutex.barging()}.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroBargingLoopBody(Pools.Coro coro) {
        return joinCounting(coro, coroBargingLoopRoot, bargingMutex, "MutexContended.coroBargingLoopBody");
    }

    /**
     * Coro, the lock built in a counted loop's body:
     * {@code Task.forRange(0, locks, i -> mutex.withLock(Task.fromRunnable(() -> counter++)))} per task.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroRangeBody(Pools.Coro coro) {
        return joinCounting(coro, coroRangeRoot, mutex, "MutexContended.coroRangeBody");
    }

    /**
     * The barging mutex in a counted loop's body: as {@link #coroRangeBody} on
     * {@code AsyncMutex.barging()}.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroBargingRangeBody(Pools.Coro coro) {
        return joinCounting(coro, coroBargingRangeRoot, bargingMutex, "MutexContended.coroBargingRangeBody");
    }

    /**
     * kotlinx.coroutines: {@code runBlocking(dispatcher) { repeat(tasks) { launch { repeat(locks)
     * { mutex.withLock { counter++ } } } } }} on the two-thread Default scheduler (Kotlin,
     * {@code KotlinxMutexPeers.kt}).
     *
     * @param kx the dispatcher
     * @return the counter
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        return GuardedCount.kotlinxMutex(tasks, locks, kx, "MutexContended.kotlinx");
    }

    /**
     * Virtual threads, {@code new ReentrantLock(false)}: newcomers may barge ahead of parked waiters.
     *
     * @param vt checks the carrier count
     * @return the counter
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long vtReentrantUnfair(Pools.Virtual vt) throws InterruptedException {
        return virtualThreads(new ReentrantLock(false), "MutexContended.vtReentrantUnfair");
    }

    /**
     * Virtual threads, {@code new ReentrantLock(true)}: FIFO hand-over, like the Coro and kotlinx
     * mutexes.
     *
     * @param vt checks the carrier count
     * @return the counter
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long vtReentrantFair(Pools.Virtual vt) throws InterruptedException {
        return virtualThreads(new ReentrantLock(true), "MutexContended.vtReentrantFair");
    }

    /**
     * A root virtual thread opens {@code Executors.newVirtualThreadPerTaskExecutor()}, starts one
     * virtual thread per task (each {@code locks} x lock / increment / unlock) and closes the executor,
     * which waits for them; the benchmark thread joins the root. Two carriers.
     */
    private long virtualThreads(ReentrantLock lock, String name) throws InterruptedException {
        counter = 0;
        int n = tasks;
        int m = locks;
        Runnable worker = () -> {
            for (int j = 0; j < m; j++) {
                lock.lock();
                try {
                    counter++;
                } finally {
                    lock.unlock();
                }
            }
        };
        Pools.Virtual.runAll(n, worker, name);
        return GuardedCount.check(counter, tasks, locks);
    }

    /**
     * The floor: two platform threads, each {@code tasks * locks / 2} x {@code synchronized} increment
     * on one monitor. No tasks, no parking to speak of (the JVM spins before it inflates and parks);
     * the two threads are started and joined inside the operation (about 0.1 ms of a ~20 ms
     * operation).
     *
     * @return the counter
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long platformSynchronized() throws InterruptedException {
        counter = 0;
        long total = (long) tasks * locks;
        Object monitor = new Object();
        Thread[] threads = new Thread[Pools.WORKERS];
        Watchdog.begin("MutexContended.platformSynchronized");
        try {
            for (int t = 0; t < threads.length; t++) {
                long share = total / threads.length + (t < total % threads.length ? 1 : 0);
                threads[t] = Thread.ofPlatform().start(() -> {
                    for (long j = 0; j < share; j++) {
                        synchronized (monitor) {
                            counter++;
                        }
                    }
                });
            }
            for (Thread t : threads) {
                t.join();
            }
        } finally {
            Watchdog.end();
        }
        return GuardedCount.check(counter, tasks, locks);
    }
}
