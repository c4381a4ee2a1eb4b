package dev.coro.bench;

import dev.coro.bench.peers.KotlinxGatePeers;
import dev.coro.gate.CapacityGate;
import dev.coro.task.Task;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * gate-capacity: {@link #tasks} tasks on two workers, each entering a capacity-{@link #permits} gate,
 * doing about a microsecond of work ({@link Blackhole#consumeCPU} of {@link #tokens} tokens) and
 * leaving.
 *
 * <p>One operation is the whole batch; the comparison table divides by {@link #tasks}, so its
 * {@code ns/item} is wall-clock nanoseconds per task with two workers running. The work is the same
 * {@code Runnable} in every implementation: the spin, then one increment of a shared {@link LongAdder}.
 * After every operation the adder must read exactly {@link #tasks} and the gate must have all its
 * permits free again.
 *
 * <p>{@link #workAlone} runs the same tasks with no gate on the Coro pool: a gate's overhead per task
 * is its {@code ns/item} minus that one (the table prints it). Since the runtimes also differ in what
 * a task costs without any gate, {@link #kotlinxWorkAlone} and {@link #vtWorkAlone} do the same on
 * kotlinx and on virtual threads, and the table prints each gate's overhead over its own runtime's
 * work alone too. {@link #workSerial} runs the work {@link #tasks} times in a plain loop on the
 * benchmark thread: its {@code ns/item} is the work's own duration, the calibration of
 * {@link #tokens} (about 1,000 ns).
 *
 * <p>With two workers and four permits the gate is rarely full (only admitted work that has been
 * handed over but not yet resumed holds a permit without running), so this measures the admission
 * path every task pays: the fast path and its release, under the two workers' contention on the gate.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX,
    Pools.PRE_TOUCH, Pools.QUIET_COMMANDS, Pools.WORK_APART})
public class GateCapacity {
    /** Tasks (coroutines, virtual threads) per operation: the item count the table divides by. */
    @Param({"100000"})
    public int tasks;

    /** The gate's capacity (permits, maximum concurrent calls). */
    @Param({"4"})
    public int permits;

    /** {@link Blackhole#consumeCPU} tokens of work per task; 500 is about 1 us on the bench machine. */
    @Param({"500"})
    public long tokens;

    private CountedWork counted;
    private Runnable work;
    private Task<Void> coroWork;
    private CapacityGate gate;
    private Task<Void> coroRoot;
    private Task<Void> workAloneRoot;

    /** Builds the work and the Coro root tasks once (tasks are reusable descriptions). */
    @Setup(Level.Trial)
    public void setup() {
        counted = new CountedWork(tokens, tasks, "tasks", permits);
        work = counted.work;
        coroWork = Task.fromRunnable(work);
        gate = new CapacityGate(permits);
        int n = tasks;
        Task<Void> w = coroWork;
        CapacityGate g = gate;
        // one within per task, as a caller gating each request writes it
        coroRoot = Pools.Coro.spawnEach(n, i -> g.within(w));
        workAloneRoot = Pools.Coro.spawnAll(n, w);
    }

    /**
     * Coro: a root task started on the pool opens {@code Scope.childOf(ctx)}, spawns
     * {@code gate.within(work)} per task on one {@code CapacityGate(permits)}, and returns
     * {@code scope.join()}; the benchmark thread joins the root.
     *
     * @param coro the pool
     * @return the tasks that ran
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        return counted.join(coro, coroRoot, "GateCapacity.coro", gate::available, "CapacityGate.available()");
    }

    /**
     * The work alone: the same tasks and spawns as {@link #coro} without the gate
     * ({@code scope.spawn(work)}), on the same pool.
     *
     * @param coro the pool
     * @return the tasks that ran
     */
    @Benchmark
    public long workAlone(Pools.Coro coro) {
        return counted.join(coro, workAloneRoot, "GateCapacity.workAlone", () -> permits, "(no gate)");
    }

    /**
     * The calibration: the work {@link #tasks} times in a loop on the benchmark thread (one thread,
     * no tasks): {@code ns/item} is the work's own duration.
     *
     * @return the tasks that ran
     */
    @Benchmark
    public long workSerial() {
        counted.reset();
        Runnable r = work;
        for (int i = 0; i < tasks; i++) {
            r.run();
        }
        return counted.check(permits, "(no gate)");
    }

    /**
     * kotlinx.coroutines: {@code runBlocking(dispatcher) { repeat(tasks) { launch {
     * semaphore.withPermit { work.run() } } } }} on one {@code Semaphore(permits)} (FIFO), the
     * two-thread Default scheduler (Kotlin, {@code KotlinxGatePeers.kt}).
     *
     * @param kx the dispatcher
     * @return the tasks that ran
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        counted.reset();
        int available;
        Watchdog.begin("GateCapacity.kotlinx");
        try {
            available = KotlinxGatePeers.kotlinxSemaphoreCapacity(tasks, permits, work, kx.dispatcher);
        } finally {
            Watchdog.end();
        }
        return counted.check(available, "Semaphore.availablePermits");
    }

    /**
     * The work alone on kotlinx: {@code runBlocking(dispatcher) { repeat(tasks) { launch {
     * work.run() } } }}, no semaphore.
     *
     * @param kx the dispatcher
     * @return the tasks that ran
     */
    @Benchmark
    public long kotlinxWorkAlone(Pools.Kotlinx kx) {
        counted.reset();
        Watchdog.begin("GateCapacity.kotlinxWorkAlone");
        try {
            KotlinxGatePeers.kotlinxWorkAlone(tasks, work, kx.dispatcher);
        } finally {
            Watchdog.end();
        }
        return counted.check(permits, "(no gate)");
    }

    /**
     * The work alone on virtual threads: one virtual thread per task runs the work, no semaphore. Two
     * carriers.
     *
     * @param vt checks the carrier count
     * @return the tasks that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long vtWorkAlone(Pools.Virtual vt) throws InterruptedException {
        virtualThreads(work, "GateCapacity.vtWorkAlone");
        return counted.check(permits, "(no gate)");
    }

    /**
     * Resilience4j: one virtual thread per task runs {@code bulkhead.executeRunnable(work)} on one
     * semaphore {@code Bulkhead} (maxConcurrentCalls = permits, maxWaitDuration 60 s, fair call
     * handling: its default). Two carriers.
     *
     * @param vt checks the carrier count
     * @return the tasks that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long bulkheadVt(Pools.Virtual vt) throws InterruptedException {
        Bulkhead bulkhead = Bulkhead.of("bench", BulkheadConfig.custom()
                .maxConcurrentCalls(permits)
                .maxWaitDuration(Duration.ofSeconds(60))
                .build());
        Runnable r = work;
        virtualThreads(() -> bulkhead.executeRunnable(r), "GateCapacity.bulkheadVt");
        return counted.check(bulkhead.getMetrics().getAvailableConcurrentCalls(), "Bulkhead available calls");
    }

    /**
     * {@code java.util.concurrent.Semaphore}: one virtual thread per task runs
     * {@code acquire(); try { work } finally { release(); }} on one {@code new Semaphore(permits)}
     * (the default: non-fair). Two carriers.
     *
     * @param vt checks the carrier count
     * @return the tasks that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long semaphoreVt(Pools.Virtual vt) throws InterruptedException {
        Semaphore semaphore = new Semaphore(permits);
        Runnable r = work;
        virtualThreads(() -> {
            semaphore.acquireUninterruptibly();
            try {
                r.run();
            } finally {
                semaphore.release();
            }
        }, "GateCapacity.semaphoreVt");
        return counted.check(semaphore.availablePermits(), "Semaphore.availablePermits()");
    }

    /**
     * A root virtual thread opens {@code Executors.newVirtualThreadPerTaskExecutor()}, starts one
     * virtual thread per task running {@code task}, and closes the executor, which waits for them;
     * the benchmark thread joins the root.
     */
    private void virtualThreads(Runnable task, String name) throws InterruptedException {
        counted.reset();
        int n = tasks;
        Pools.Virtual.runAll(n, task, name);
    }
}
