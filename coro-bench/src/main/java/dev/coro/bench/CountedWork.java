package dev.coro.bench;

import dev.coro.task.Task;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The work a gate benchmark admits, counted ({@link GateCapacity}, {@link GateBudget},
 * {@link GatePriority}): {@link #work} burns {@link Blackhole#consumeCPU} tokens and counts the run;
 * {@link #check} after every operation says that every run happened and that the gate (or peer)
 * under test has all its units free again.
 *
 * <p>Made in the benchmark's {@code @Setup}, once its parameters are set; not thread-safe to make,
 * safe to run from any number of threads.
 */
final class CountedWork {
    private final LongAdder ran = new LongAdder();
    /** {@link Blackhole#consumeCPU} of the tokens, then one count. */
    final Runnable work;
    private final long runs;
    private final String what;
    private final long units;

    /**
     * Work of {@code tokens} tokens, of which one operation runs {@code runs} (called {@code what} in
     * a failure: "tasks", "operations") through a gate of {@code units} units.
     */
    CountedWork(long tokens, long runs, String what, long units) {
        LongAdder counter = ran;
        this.work = () -> {
            Blackhole.consumeCPU(tokens);
            counter.increment();
        };
        this.runs = runs;
        this.what = what;
        this.units = units;
    }

    /** Zeroes the count: the start of an operation. */
    void reset() {
        ran.reset();
    }

    /**
     * Checks the operation that just ended: every run counted, and {@code available} (as read from
     * {@code source}) is all the units.
     *
     * @return the runs counted
     * @throws IllegalStateException if a run is missing or a unit was lost or given twice
     */
    long check(long available, String source) {
        long count = ran.sum();
        if (count != runs) {
            throw new IllegalStateException("ran " + count + " " + what + ", expected " + runs);
        }
        if (available != units) {
            throw new IllegalStateException(source + " is " + available + " after every one of the " + what
                    + " ended, expected " + units + ": a unit was lost or given twice");
        }
        return count;
    }

    /**
     * One Coro operation: resets the count, joins {@code root} on the pool (watched as {@code name}),
     * and checks it with {@code available} read afterwards.
     *
     * @return the runs counted
     */
    long join(Pools.Coro coro, Task<Void> root, String name, LongSupplier available, String source) {
        reset();
        coro.join(root, name);
        return check(available.getAsLong(), source);
    }
}
