package dev.coro.bench;

import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Uncontended overhead of one small composition, built and run on the benchmark thread with no pool:
 * a value, one {@code map}, a blocking {@code join}. One item per operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class TaskOverhead {
    /** Read from a field so that the JIT cannot fold the computation away. */
    public int one = 1;

    /**
     * Coro: {@code Task.value(one).map(x -> x + 1).join()}.
     *
     * @return two
     */
    @Benchmark
    public int coro() {
        return check(Task.value(one).map(x -> x + 1).join());
    }

    /**
     * {@code CompletableFuture.completedFuture(one).thenApply(x -> x + 1).join()}.
     *
     * @return two
     */
    @Benchmark
    public int completableFuture() {
        return check(CompletableFuture.completedFuture(one).thenApply(x -> x + 1).join());
    }

    private int check(int r) {
        if (r != one + 1) {
            throw new IllegalStateException("got " + r + ", expected " + (one + 1));
        }
        return r;
    }
}
