package dev.coro.bench;

import dev.coro.gate.SerialGate;
import dev.coro.sync.AsyncMutex;
import dev.coro.task.Task;
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
 * gate-serial: the serial gate under contention, in the shape of {@link MutexContended} (the same
 * parameters, iterations and check): {@link #tasks} tasks on a two-worker pool each pass one
 * {@link SerialGate} {@link #locks} times and increment a plain {@code long} inside, against Coro's
 * {@link AsyncMutex} and kotlinx's {@code Mutex} doing the same.
 *
 * <p>One operation is {@code tasks * locks} entries (1,000,000 by default); the table's
 * {@code ns/item} is nanoseconds per entry. The counter is a plain field guarded only by the gate or
 * lock under test, so a broken exclusion loses increments and the check after every operation fails;
 * the gate or mutex must also be free afterwards.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class GateSerial {
    /** Tasks (coroutines) per operation. */
    @Param({"1000"})
    public int tasks;

    /** Entries per task. The table's item count is {@code tasks * locks}. */
    @Param({"1000"})
    public int locks;

    /** The shared counter: a plain field, guarded only by the gate or lock under test. */
    private long counter;

    private final SerialGate gate = new SerialGate();
    private final AsyncMutex mutex = new AsyncMutex();
    private final SerialGate bargingGate = SerialGate.barging();
    private Task<Void> gateRoot;
    private Task<Void> mutexRoot;
    private Task<Void> bargingRoot;
    private Task<Void> bargingLoopRoot;

    /** Builds the Coro root tasks once (tasks are reusable descriptions; each join runs it anew). */
    @Setup(Level.Trial)
    public void setup() {
        Task<Void> increment = Task.fromRunnable(() -> counter++);
        gateRoot = root(gate.within(increment).repeat(locks));
        mutexRoot = root(mutex.withLock(increment).repeat(locks));
        bargingRoot = root(bargingGate.within(increment).repeat(locks));
        SerialGate local = bargingGate; // captured, as the virtual threads' lock is (MutexContended.lockInLoopBody)
        int m = locks;
        bargingLoopRoot = root(Task.loop(0, i -> i < m,
                i -> local.within(Task.fromRunnable(() -> counter++)).map(v -> i + 1)).then(Task.value(null)));
    }

    private Task<Void> root(Task<Void> worker) {
        return Pools.Coro.spawnAll(tasks, worker);
    }

    /**
     * Coro's serial gate: a root task started on the pool opens {@code Scope.childOf(ctx)}, spawns the
     * tasks, each {@code gate.within(Task.fromRunnable(() -> counter++)).repeat(locks)} on one
     * {@link SerialGate}, and returns {@code scope.join()}; the benchmark thread joins the root.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        return run(coro, gateRoot, "GateSerial.coro", () -> gate.isBusy(), "the serial gate", "busy");
    }

    /**
     * Coro's {@link AsyncMutex}: the same with {@code mutex.withLock(...)} in place of
     * {@code gate.within(...)} (as {@link MutexContended#coro}).
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroMutex(Pools.Coro coro) {
        return run(coro, mutexRoot, "GateSerial.coroMutex", () -> mutex.isLocked(), "the mutex", "locked");
    }

    /**
     * Coro's opt-in barging serial gate: the same as {@link #coro} on {@code SerialGate.barging()},
     * where work that leaves frees the gate and wakes the oldest waiter to compete for it (not FIFO).
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroBarging(Pools.Coro coro) {
        return run(coro, bargingRoot, "GateSerial.coroBarging", () -> bargingGate.isBusy(), "the barging serial gate", "busy");
    }

    /**
     * The barging serial gate in a loop's body, as code that cannot hoist it writes:
     * {@code Task.loop(0, i -> i < locks, i -> gate.within(Task.fromRunnable(() -> counter++)).map(v -> i + 1))}
     * per task (each round builds its {@code within} task anew; as {@link MutexContended#coroBargingLoopBody}).
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long coroBargingLoopBody(Pools.Coro coro) {
        return run(coro, bargingLoopRoot, "GateSerial.coroBargingLoopBody", () -> bargingGate.isBusy(), "the barging serial gate", "busy");
    }

    /**
     * Joins {@code root} on the pool, checks that the primitive is free afterwards and that the
     * counter counted every entry.
     */
    private long run(Pools.Coro coro, Task<Void> root, String name, java.util.function.BooleanSupplier held,
            String what, String heldWord) {
        counter = 0;
        coro.join(root, name);
        GuardedCount.requireFree(held.getAsBoolean(), what, heldWord);
        return GuardedCount.check(counter, tasks, locks);
    }

    /**
     * kotlinx.coroutines: {@code runBlocking(dispatcher) { repeat(tasks) { launch { repeat(locks)
     * { mutex.withLock { counter++ } } } } }} on the two-thread Default scheduler (the function of
     * {@link MutexContended#kotlinx}, {@code KotlinxMutexPeers.kt}).
     *
     * @param kx the dispatcher
     * @return the counter
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        return GuardedCount.kotlinxMutex(tasks, locks, kx, "GateSerial.kotlinx");
    }
}
