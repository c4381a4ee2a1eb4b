package dev.coro.bench;

import dev.coro.gate.RateGate;
import dev.coro.task.Task;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
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

/**
 * gate-rate: {@link #ops} admissions through a rate limiter of 10<sup>9</sup> permits per second
 * (one per nanosecond), so that the limiter itself, not its clock, is the limit; each admitted
 * operation increments a counter. Two workers. One benchmark operation is the whole batch; the table
 * divides by {@link #ops}.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class GateRate {
    /** Admissions per benchmark operation: the item count the table divides by. */
    @Param({"1000000"})
    public int ops;

    private final LongAdder ran = new LongAdder();
    private Task<Void> coroRoot;
    private Task<Void> workAloneRoot;

    /** Builds the gate and the Coro root tasks. */
    @Setup(Level.Trial)
    public void setup() {
        RateGate gate = new RateGate(1e9, 1);
        Task<Void> w = Task.fromRunnable(ran::increment);
        coroRoot = Pools.Coro.spawnAll(ops, gate.within(w));
        workAloneRoot = Pools.Coro.spawnAll(ops, w);
    }

    /**
     * Coro: a root task on the pool spawns {@code gate.within(work)} per admission on one
     * {@code RateGate(1e9)} and joins the scope.
     *
     * @param coro the pool
     * @return the admissions
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        ran.reset();
        coro.join(coroRoot, "GateRate.coro");
        return check();
    }

    /**
     * The work alone: the same spawns without the gate, on the same pool.
     *
     * @param coro the pool
     * @return the admissions
     */
    @Benchmark
    public long workAlone(Pools.Coro coro) {
        ran.reset();
        coro.join(workAloneRoot, "GateRate.workAlone");
        return check();
    }

    /**
     * Guava: one virtual thread per admission runs {@code limiter.acquire(); work} on
     * {@code RateLimiter.create(1e9)}. Two carriers.
     *
     * @param vt checks the carrier count
     * @return the admissions
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long guavaVt(Pools.Virtual vt) throws InterruptedException {
        ran.reset();
        com.google.common.util.concurrent.RateLimiter limiter = com.google.common.util.concurrent.RateLimiter.create(1e9);
        Pools.Virtual.runAll(ops, () -> {
            limiter.acquire();
            ran.increment();
        }, "GateRate.guavaVt");
        return check();
    }

    /**
     * Resilience4j: one virtual thread per admission runs {@code RateLimiter.waitForPermission(limiter);
     * work} on a limiter of 1,000 permits per microsecond (its refresh period's floor is a nanosecond;
     * 10<sup>9</sup> per second either way), waiting up to 10 s. Two carriers.
     *
     * @param vt checks the carrier count
     * @return the admissions
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long resilience4jVt(Pools.Virtual vt) throws InterruptedException {
        ran.reset();
        RateLimiter limiter = RateLimiter.of("bench", RateLimiterConfig.custom()
                .limitForPeriod(1_000).limitRefreshPeriod(Duration.ofNanos(1_000)).timeoutDuration(Duration.ofSeconds(10))
                .build());
        Pools.Virtual.runAll(ops, () -> {
            RateLimiter.waitForPermission(limiter);
            ran.increment();
        }, "GateRate.resilience4jVt");
        return check();
    }

    /**
     * The peers' own baseline: one virtual thread per operation running the work alone.
     *
     * @param vt checks the carrier count
     * @return the operations
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long vtWorkAlone(Pools.Virtual vt) throws InterruptedException {
        ran.reset();
        Pools.Virtual.runAll(ops, ran::increment, "GateRate.vtWorkAlone");
        return check();
    }

    private long check() {
        long count = ran.sum();
        if (count != ops) {
            throw new IllegalStateException("ran " + count + " admissions, expected " + ops);
        }
        return count;
    }
}
