package dev.coro.channel;

import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * The {@link Emitter} of one run of a {@link Generator#create} body: turns each lazy emit into an
 * eager {@link GeneratorSink#accept} at the moment the emit task runs, and refuses emits that overlap
 * or come after the body's task has ended (the sinks behind it are confined to one fiber and one
 * value at a time).
 */
final class GeneratorEmitter<T> implements Emitter<T> {
    /* Implementation overview.
     *
     * 1. Representation. guard (volatile int): FREE (no emit running), EMITTING (one emit between
     *    its start and the end of the task its sink returned), ENDED (the body's task has ended;
     *    terminal).
     * 2. Transitions. FREE -> EMITTING: CAS at the start of an emit, by the producer (a failed CAS
     *    is the misuse, reported). EMITTING -> FREE: CAS when the sink's task ends (at once for
     *    DONE and STOP), so that it never overwrites ENDED. any -> ENDED: volatile store at the end
     *    of the run.
     * 3. Linearization points: an emit's start is its CAS; the run's end is its store.
     * 4. Invariants. I1: at most one emit of a run is between its start and its end, so the sinks
     *    behind the emitter see one value at a time (GeneratorSink's confinement).
     * 5. Memory ordering: volatile throughout; the guard only detects misuse, the values travel
     *    through the producer's own fiber (and, for a cursor, through its hand-off).
     * 6. Progress: wait-free (one CAS each way, no retry).
     * 7. Cancellation: a cancelled emit task ends through andFinally, which frees the guard.
     * 8. Resumption: none here (the sink's task resumes the producer).
     * 9. References: seed 004 (co_yield as co_await promise.yield_value(v)).
     */

    /** No emit of this run is running. */
    private static final int FREE = 0;
    /** An emit of this run is running. */
    private static final int EMITTING = 1;
    /** The run has ended: every emit fails. */
    private static final int ENDED = 2;

    private final GeneratorSink<? super T> sink;
    private final Runnable release = () -> GUARD.compareAndSet(this, EMITTING, FREE);
    private volatile int guard;
    /** The last wait a sink answered, and it with the guard's release: written under the guard. */
    private Task<Void> lastNext;
    private Task<Void> lastGuarded;

    GeneratorEmitter(GeneratorSink<? super T> sink) {
        this.sink = sink;
    }

    @Override
    public Task<Void> emit(T value) {
        Objects.requireNonNull(value, "value");
        return Task.defer(() -> deliver(value));
    }

    private Task<Void> deliver(T value) {
        int was = (int) GUARD.compareAndExchange(this, FREE, EMITTING);
        if (was != FREE) {
            throw new IllegalStateException(was == ENDED
                    ? "emit: this generator run has ended; an Emitter is valid only while the body's task runs"
                    : "emit: another emit of this generator run is still pending; emits must run one after another");
        }
        Task<Void> next;
        try {
            next = sink.accept(value);
        } catch (Throwable e) {
            release.run();
            throw e;
        }
        if (next == Generator.DONE || next == Generator.STOP) {
            release.run();
            return next;
        }
        if (next != lastNext) { // a cursor answers every emit with the same wait: compose it once
            lastGuarded = next.andFinally(release);
            lastNext = next;
        }
        return lastGuarded;
    }

    /** The body's task has ended: later emits fail. */
    void end() {
        guard = ENDED;
    }

    private static final VarHandle GUARD;

    static {
        try {
            GUARD = MethodHandles.lookup().findVarHandle(GeneratorEmitter.class, "guard", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
