package dev.coro.bench;

import dev.coro.gate.CircuitBreakerGate;
import dev.coro.task.Task;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
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
 * gate-breaker: {@link #ops} calls through a closed circuit breaker (a count window of 100 calls,
 * 50 %), each call's work incrementing a counter and succeeding, so the breaker stays closed and its
 * own cost (admission and verdict) is what is measured. Two workers. One benchmark operation is the
 * whole batch; the table divides by {@link #ops}.
 *
 * <p>Resilience4j measures slow calls by default (a clock read at each call's start and end);
 * {@link #coroTimed} turns that on for the gate as well (slow after 60 s, Resilience4j's default),
 * {@link #coro} leaves it off (the gate's default).
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class GateBreaker {
    /** Calls per benchmark operation: the item count the table divides by. */
    @Param({"1000000"})
    public int ops;

    private final LongAdder ran = new LongAdder();
    private Task<Void> coroRoot;
    private Task<Void> coroTimedRoot;
    private Task<Void> resilience4jOnCoroRoot;
    private Task<Void> workAloneRoot;
    private CircuitBreaker resilience4j;

    /** Builds the breakers and the Coro root tasks. */
    @Setup(Level.Trial)
    public void setup() {
        CircuitBreakerGate gate = CircuitBreakerGate.builder("bench").countWindow(100).failureRateThreshold(50).build();
        CircuitBreakerGate timed = CircuitBreakerGate.builder("bench-timed").countWindow(100).failureRateThreshold(50)
                .slowCallDuration(Duration.ofSeconds(60)).build();
        resilience4j = CircuitBreaker.of("bench", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED).slidingWindowSize(100)
                .failureRateThreshold(50).build());
        Task<Void> w = Task.fromRunnable(ran::increment);
        coroRoot = Pools.Coro.spawnAll(ops, gate.within(w));
        coroTimedRoot = Pools.Coro.spawnAll(ops, timed.within(w));
        resilience4jOnCoroRoot = Pools.Coro.spawnAll(ops, Task.fromRunnable(() -> resilience4j.executeRunnable(ran::increment)));
        workAloneRoot = Pools.Coro.spawnAll(ops, w);
    }

    /**
     * Coro: a root task on the pool spawns {@code gate.within(work)} per call on one closed
     * {@code CircuitBreakerGate} and joins the scope.
     *
     * @param coro the pool
     * @return the calls
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        ran.reset();
        coro.join(coroRoot, "GateBreaker.coro");
        return check();
    }

    /**
     * Coro measuring slow calls, as Resilience4j does by default.
     *
     * @param coro the pool
     * @return the calls
     */
    @Benchmark
    public long coroTimed(Pools.Coro coro) {
        ran.reset();
        coro.join(coroTimedRoot, "GateBreaker.coroTimed");
        return check();
    }

    /**
     * Resilience4j's breaker inside the same Coro tasks: each spawned task runs
     * {@code breaker.executeRunnable(work)} (it never blocks, so it needs no thread of its own).
     *
     * @param coro the pool
     * @return the calls
     */
    @Benchmark
    public long resilience4jOnCoro(Pools.Coro coro) {
        ran.reset();
        coro.join(resilience4jOnCoroRoot, "GateBreaker.resilience4jOnCoro");
        return check();
    }

    /**
     * Resilience4j as its users run it on Java 21: one virtual thread per call running
     * {@code breaker.executeRunnable(work)}. Two carriers.
     *
     * @param vt checks the carrier count
     * @return the calls
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long resilience4jVt(Pools.Virtual vt) throws InterruptedException {
        ran.reset();
        Pools.Virtual.runAll(ops, () -> resilience4j.executeRunnable(ran::increment), "GateBreaker.resilience4jVt");
        return check();
    }

    /**
     * The work alone: the same spawns without a breaker, on the same pool.
     *
     * @param coro the pool
     * @return the calls
     */
    @Benchmark
    public long workAlone(Pools.Coro coro) {
        ran.reset();
        coro.join(workAloneRoot, "GateBreaker.workAlone");
        return check();
    }

    /**
     * The virtual-thread peers' own baseline: one virtual thread per call running the work alone.
     *
     * @param vt checks the carrier count
     * @return the calls
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long vtWorkAlone(Pools.Virtual vt) throws InterruptedException {
        ran.reset();
        Pools.Virtual.runAll(ops, ran::increment, "GateBreaker.vtWorkAlone");
        return check();
    }

    private long check() {
        long count = ran.sum();
        if (count != ops) {
            throw new IllegalStateException("ran " + count + " calls, expected " + ops);
        }
        return count;
    }
}
