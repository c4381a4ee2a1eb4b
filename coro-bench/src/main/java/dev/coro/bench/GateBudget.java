package dev.coro.bench;

import dev.coro.gate.BudgetGate;
import dev.coro.task.Task;
import java.util.SplittableRandom;
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
 * gate-budget: {@link #ops} operations, each holding a cost of 1 to 16 units (seeded) of a budget of
 * {@link #budget} while it does about a microsecond of work, on two workers; strict FIFO in both
 * implementations. One benchmark operation is the whole batch; the table divides by {@link #ops}.
 * After every operation all units must be free again.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX,
    Pools.PRE_TOUCH, Pools.QUIET_COMMANDS, Pools.WORK_APART})
public class GateBudget {
    /** Operations per benchmark operation: the item count the table divides by. */
    @Param({"100000"})
    public int ops;

    /** The budget's units. */
    @Param({"64"})
    public int budget;

    /** {@link Blackhole#consumeCPU} tokens of work per operation; 500 is about 1 us. */
    @Param({"500"})
    public long tokens;

    private CountedWork counted;
    private Runnable work;
    private int[] costOf;
    private BudgetGate gate;
    private Task<Void> coroRoot;
    private Task<Void> workAloneRoot;

    /** Draws the costs (1 to 16, seeded) and builds the work and the Coro root tasks. */
    @Setup(Level.Trial)
    public void setup() {
        counted = new CountedWork(tokens, ops, "operations", budget);
        work = counted.work;
        SplittableRandom random = new SplittableRandom(5);
        costOf = new int[ops];
        for (int i = 0; i < ops; i++) {
            costOf[i] = 1 + random.nextInt(16);
        }
        gate = new BudgetGate(budget);
        Task<Void> w = Task.fromRunnable(work);
        int[] c = costOf;
        BudgetGate g = gate;
        coroRoot = Pools.Coro.spawnEach(ops, i -> g.within(c[i % c.length], w));
        workAloneRoot = Pools.Coro.spawnAll(ops, w);
    }

    /**
     * Coro: a root task on the pool spawns {@code gate.within(cost, work)} per operation on one
     * {@code BudgetGate(budget)} and joins the scope.
     *
     * @param coro the pool
     * @return the operations that ran
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        return counted.join(coro, coroRoot, "GateBudget.coro", gate::available, "BudgetGate.available()");
    }

    /**
     * The work alone: the same spawns without the gate, on the same pool.
     *
     * @param coro the pool
     * @return the operations that ran
     */
    @Benchmark
    public long workAlone(Pools.Coro coro) {
        return counted.join(coro, workAloneRoot, "GateBudget.workAlone", () -> budget, "(no gate)");
    }

    /**
     * {@code java.util.concurrent.Semaphore(budget, true)} (fair: FIFO, as the gate):
     * one virtual thread per operation runs {@code acquire(cost); try { work } finally
     * { release(cost); }}. Two carriers.
     *
     * @param vt checks the carrier count
     * @return the operations that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long semaphoreFairVt(Pools.Virtual vt) throws InterruptedException {
        counted.reset();
        Semaphore semaphore = new Semaphore(budget, true);
        int[] c = costOf;
        Runnable r = work;
        Pools.Virtual.runEach(ops, i -> () -> {
            int cost = c[i % c.length];
            semaphore.acquireUninterruptibly(cost);
            try {
                r.run();
            } finally {
                semaphore.release(cost);
            }
        }, "GateBudget.semaphoreFairVt");
        return counted.check(semaphore.availablePermits(), "Semaphore.availablePermits()");
    }
}
