package dev.coro.bench;

import dev.coro.gate.CapacityGate;
import dev.coro.sync.AsyncMutex;
import dev.coro.task.Task;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import jdk.jfr.Recording;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * jfr-overhead: what Coro's JFR wait event ({@code dev.coro.Wait}) costs on the two shapes where
 * tasks queue most: mutex-contended (1,000 tasks x 1,000 {@code withLock} increments on one
 * {@link AsyncMutex}) and gate-capacity (100,000 tasks, each {@code within} a {@code CapacityGate(4)}
 * around ~1 us of work), on the two-worker pool. Each runs in three JVMs, by {@link #events}:
 * {@code off} (the system property {@code coro.jfr=off}: no check at all, as a build without the
 * events), {@code disabled} (compiled in, no recording enables them: the default in production) and
 * {@code enabled} (a recording enables them at their default 20 ms threshold). ns per lock or task;
 * read the three rows of a shape against each other.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class JfrOverhead {
    /** off, disabled or enabled (see the class comment). */
    @Param({"off", "disabled", "enabled"})
    public String events;

    private long counter;
    private final LongAdder ran = new LongAdder();
    private AsyncMutex mutex;
    private CapacityGate gate;
    private Task<Void> mutexRoot;
    private Task<Void> capacityRoot;
    private Recording recording;

    /** Sets the mode before any Coro wait queues (the switch is read once), and builds the roots. */
    @Setup(Level.Trial)
    public void setup() {
        if (events.equals("off")) {
            System.setProperty("coro.jfr", "off");
        } else if (events.equals("enabled")) {
            recording = new Recording();
            recording.enable("dev.coro.Wait"); // its default threshold: 20 ms
            recording.setToDisk(false);
            recording.start();
        }
        mutex = new AsyncMutex();
        mutexRoot = Pools.Coro.spawnAll(1_000, mutex.withLock(Task.fromRunnable(() -> counter++)).repeat(1_000));
        gate = new CapacityGate(4);
        Task<Void> work = Task.fromRunnable(() -> {
            Blackhole.consumeCPU(500);
            ran.increment();
        });
        CapacityGate g = gate;
        capacityRoot = Pools.Coro.spawnEach(100_000, i -> g.within(work));
    }

    /** Stops the recording, if one runs. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (recording != null) {
            recording.close();
        }
    }

    /**
     * mutex-contended with the events {@link #events}: 1,000,000 locks per operation.
     *
     * @param coro the pool
     * @return the counter
     */
    @Benchmark
    public long mutexContended(Pools.Coro coro) {
        counter = 0;
        coro.join(mutexRoot, "JfrOverhead.mutexContended");
        if (counter != 1_000_000) {
            throw new IllegalStateException("counter " + counter + ", expected 1,000,000");
        }
        return counter;
    }

    /**
     * gate-capacity with the events {@link #events}: 100,000 tasks per operation.
     *
     * @param coro the pool
     * @return the tasks that ran
     */
    @Benchmark
    public long capacity(Pools.Coro coro) {
        ran.reset();
        coro.join(capacityRoot, "JfrOverhead.capacity");
        if (ran.sum() != 100_000) {
            throw new IllegalStateException("ran " + ran.sum() + ", expected 100,000");
        }
        return ran.sum();
    }
}
