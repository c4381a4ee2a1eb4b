package dev.coro.bench;

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
 * debug-overhead: what Coro's debug mode ({@code dev.coro.task.CoroDebug}: the task registry and the
 * assembly sites) costs on a chain of eight steps (four {@code map}, four {@code flatMap} each
 * returning a fresh {@code Task.value}), joined on the benchmark thread with no pool. Two JVMs, by
 * {@link #debug}: {@code off} (the default: the switch is a constant false, so the probes must cost
 * nothing) and {@code on} (the system property {@code coro.debug=true}, set before any task is built:
 * a stack walk per run and per node built). {@code run} interprets a chain built once;
 * {@code buildAndRun} builds the chain too, as code that composes per request does. Not in the
 * comparison table: read its JMH lines, {@code off} against {@code TaskOverhead} and against
 * {@code on}.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class DebugOverhead {
    /** off or on (see the class comment). */
    @Param({"off", "on"})
    public String debug;

    /** Read from a field so that the JIT cannot fold the computation away. */
    public int one = 1;

    private Task<Integer> chain;

    /** Sets the mode before any Coro task is built (the switch is read once), and builds the chain. */
    @Setup(Level.Trial)
    public void setup() {
        if (debug.equals("on")) {
            System.setProperty("coro.debug", "true");
        }
        chain = build();
    }

    private Task<Integer> build() {
        return Task.value(one)
                .map(x -> x + 1)
                .flatMap(x -> Task.value(x + 1))
                .map(x -> x + 1)
                .flatMap(x -> Task.value(x + 1))
                .map(x -> x + 1)
                .flatMap(x -> Task.value(x + 1))
                .map(x -> x + 1)
                .flatMap(x -> Task.value(x + 1));
    }

    /**
     * Joins the chain built once.
     *
     * @return one plus eight
     */
    @Benchmark
    public int run() {
        return check(chain.join());
    }

    /**
     * Builds the chain and joins it.
     *
     * @return one plus eight
     */
    @Benchmark
    public int buildAndRun() {
        return check(build().join());
    }

    private int check(int r) {
        if (r != one + 8) {
            throw new IllegalStateException("got " + r + ", expected " + (one + 8));
        }
        return r;
    }
}
