package dev.coro.bench;

import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.channel.Generator;
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
 * generator: {@link #n} numbers through {@code map(x * 2)} and {@code filter(x % 3 == 0)}, summed on
 * the calling thread. Coro's {@code Generator.range} (a built-in source, pushed) and
 * {@code Generator.create} with a producer body as a user writes it (a counted loop of emits,
 * {@code Task.forRange}, as the javadoc teaches it; and a {@code Task.loop} carrying a boxed index),
 * each consumed by {@code forEach}. Peers: Kotlin's
 * {@code sequence {}} (synchronous) and kotlinx's {@code flow {}} (suspending) with the same
 * operators. Every run checks the sum.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class GeneratorPipeline {
    /** Numbers per operation. */
    @Param({"1000000"})
    public int n;

    /**
     * Coro: a built-in source pushed through the operators.
     *
     * @return the sum
     */
    @Benchmark
    public long coro() {
        long[] sum = {0};
        Generator.range(0, n).map(x -> x * 2).filter(x -> x % 3 == 0).forEach(x -> sum[0] += x).join();
        return check(sum[0]);
    }

    /**
     * Coro: a producer body ({@code Generator.create}) that is a counted loop of emits,
     * {@code Task.forRange(0, n, i -> out.emit(i))}: the form Kotlin's
     * {@code for (i in 0 until n) yield(i)} is in Coro.
     *
     * @return the sum
     */
    @Benchmark
    public long coroCreate() {
        int count = n;
        long[] sum = {0};
        Generator.<Integer>create(out -> Task.forRange(0, count, i -> out.emit(i)))
                .map(x -> x * 2).filter(x -> x % 3 == 0).forEach(x -> sum[0] += x).join();
        return check(sum[0]);
    }

    /**
     * Coro: a producer body whose loop carries its index as the state of a {@code Task.loop}
     * ({@code out.emit(i).map(e -> i + 1)}): a boxed index, a {@code map} node and its lambda per
     * element besides the emit.
     *
     * @return the sum
     */
    @Benchmark
    public long coroCreateLoop() {
        int count = n;
        long[] sum = {0};
        Generator.<Integer>create(out -> Task.loop(0, i -> i < count, i -> out.emit(i).map(e -> i + 1)))
                .map(x -> x * 2).filter(x -> x % 3 == 0).forEach(x -> sum[0] += x).join();
        return check(sum[0]);
    }

    /**
     * Kotlin's {@code sequence {}}.
     *
     * @return the sum
     */
    @Benchmark
    public long kotlinSequence() {
        return check(KotlinxPeers.kotlinSequenceSum(n));
    }

    /**
     * kotlinx's {@code flow {}} in {@code runBlocking}.
     *
     * @return the sum
     */
    @Benchmark
    public long kotlinxFlow() {
        return check(KotlinxPeers.kotlinFlowSum(n));
    }

    /** The sum every run must give, computed once (a loop over n that would add to every row's time). */
    private long expected;

    /** Computes {@link #expected}. */
    @Setup(Level.Trial)
    public void expect() {
        long e = 0;
        for (long x = 0; x < n; x++) {
            if (x * 2 % 3 == 0) {
                e += x * 2;
            }
        }
        expected = e;
    }

    private long check(long sum) {
        if (sum != expected) {
            throw new IllegalStateException("generator pipeline summed " + sum + ", expected " + expected);
        }
        return sum;
    }
}
