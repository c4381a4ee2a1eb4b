package dev.coro.bench;

import dev.coro.bench.peers.KotlinxLoopPeers;
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
 * task-loop: the per-iteration cost of the task interpreter for the loop shapes users write, on the
 * benchmark thread with no pool (one {@code join()} per operation of {@link #n} iterations).
 *
 * <ul>
 *   <li>{@code coro}: {@code Task.loop(0, i -> i < n, i -> step(i).map(r -> r + 1))}, where the
 *       step is {@code Task.fromCallable(() -> i + zero)}: a loop whose body is a step that could
 *       wait but ends at once, and a map;</li>
 *   <li>{@code coroRepeat}: {@code Task.fromCallable(() -> ++counter).repeat(n)}, built once;</li>
 *   <li>{@code coroDeferLoop}: the loop written by hand as recursion through {@code defer} and
 *       {@code flatMap} (the shape {@code Task.loop} had before it became a node of its own), with
 *       the same body;</li>
 *   <li>{@code kotlinx}: {@code runBlocking { while (i < n) i = step(i) + 1 }}, where {@code step} is
 *       a suspending function that could suspend but returns at once ({@code i + zero}).</li>
 * </ul>
 * Each step adds {@code zero}, a volatile field that holds 0, so that no JIT folds a loop away.
 * Every operation checks its result.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class TaskLoop {
    /** Iterations per operation. */
    @Param({"100000"})
    public int n;

    /** Zero, read at each step (volatile: the JIT cannot fold the loops away). */
    private static volatile int zero;

    private long counter;
    private Task<Long> repeated;

    /** Builds the repeated task once (tasks are reusable descriptions). */
    @Setup(Level.Trial)
    public void setup() {
        repeated = Task.fromCallable(() -> ++counter).repeat(n);
    }

    /**
     * Coro: {@code Task.loop} over a step that ends at once, and a map.
     *
     * @return the last state
     */
    @Benchmark
    public int coro() {
        int count = n;
        return check(Task.loop(0, i -> i < count, i -> Task.fromCallable(() -> i + zero).map(r -> r + 1)).join());
    }

    /**
     * Coro: {@code task.repeat(n)} of a synchronous step.
     *
     * @return the counter
     */
    @Benchmark
    public long coroRepeat() {
        long before = counter;
        long after = repeated.join();
        if (after - before != n) {
            throw new IllegalStateException("repeat ran " + (after - before) + " times, expected " + n);
        }
        return after;
    }

    /**
     * Coro: the same loop as recursion through {@code defer} and {@code flatMap}.
     *
     * @return the last state
     */
    @Benchmark
    public int coroDeferLoop() {
        return check(deferLoop(0, n).join());
    }

    private static Task<Integer> deferLoop(int start, int count) {
        return Task.defer(() -> start < count
                ? Task.fromCallable(() -> start + zero).map(r -> r + 1).flatMap(next -> deferLoop(next, count))
                : Task.value(start));
    }

    /**
     * kotlinx.coroutines: a loop of suspending calls that return at once, in {@code runBlocking}.
     *
     * @return the last state
     */
    @Benchmark
    public int kotlinx() {
        return check(KotlinxLoopPeers.kotlinxLoop(n));
    }

    private int check(int last) {
        if (last != n) {
            throw new IllegalStateException("the loop ended at " + last + ", expected " + n);
        }
        return last;
    }
}
