package dev.coro.channel;

import dev.coro.internal.TaskDoors;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.Function;

/**
 * The {@link Emitter} of one run of a {@link Generator#create} body: turns each lazy emit into an
 * eager {@link GeneratorSink#accept} at the moment the emit task runs, and refuses emits that overlap
 * or come after the body's task has ended (the sinks behind it are confined to one fiber and one
 * value at a time).
 */
final class GeneratorEmitter<T> implements Emitter<T> {
    /* Implementation overview.
     *
     * 1. Representation. guard (volatile int): FREE (no emit running) or EMITTING (one emit between
     *    its start and the end of the task its sink returned). ended (volatile boolean): the body's
     *    task has ended; set once, never cleared.
     * 2. Transitions. guard FREE -> EMITTING: CAS at the start of an emit, by the producer (a failed
     *    CAS is the misuse, reported). guard EMITTING -> FREE: release store by the emit that holds
     *    it (I1: no other party writes it meanwhile), when its sink's task ends (at once for DONE
     *    and STOP). ended false -> true: volatile store at the end of the run.
     * 3. Linearization points: an emit's start is its CAS; the run's end is its store of ended; an
     *    emit whose read of ended (right after its CAS) sees true is after the end and refused.
     * 4. Invariants. I1: at most one emit of a run is between its CAS and its release, so the sinks
     *    behind the emitter see one value at a time (GeneratorSink's confinement). I2: ended never
     *    goes back to false, so every emit that starts after the end is refused.
     * 5. Memory ordering: the CAS is volatile (acquire); the release store publishes what the sinks
     *    did for this value to the next emit's CAS, which reads it. ended is volatile. The values
     *    themselves travel through the producer's own fiber (and, for a cursor, through its hand-off).
     * 6. Progress: wait-free (one CAS and one store per emit, no retry).
     * 7. Cancellation: a cancelled emit task ends through andFinally, which frees the guard.
     * 8. Resumption: none here (the sink's task resumes the producer).
     * 9. References: seed 004 (co_yield as co_await promise.yield_value(v)).
     */

    /** No emit of this run is running. */
    private static final int FREE = 0;
    /** An emit of this run is running. */
    private static final int EMITTING = 1;
    /** The task layer's door to a one-object deferred task. */
    private static final TaskDoors TASKS = TaskDoors.get();

    private final GeneratorSink<? super T> sink;
    private final Function<T, Task<Void>> deliver = this::deliver;
    private final Runnable release = this::release;
    private volatile int guard;
    private volatile boolean ended;
    /** The last wait a sink answered, and it with the guard's release: written under the guard. */
    private Task<Void> lastNext;
    private Task<Void> lastGuarded;

    GeneratorEmitter(GeneratorSink<? super T> sink) {
        this.sink = sink;
    }

    @Override
    public Task<Void> emit(T value) {
        Objects.requireNonNull(value, "value");
        @SuppressWarnings("unchecked")
        Task<Void> emit = (Task<Void>) TASKS.defer(deliver, value); // one object per emit
        return emit;
    }

    private Task<Void> deliver(T value) {
        if (!GUARD.compareAndSet(this, FREE, EMITTING)) {
            throw new IllegalStateException(
                    "emit: another emit of this generator run is still pending; emits must run one after another");
        }
        if (ended) { // I2
            release();
            throw new IllegalStateException(
                    "emit: this generator run has ended; an Emitter is valid only while the body's task runs");
        }
        Task<Void> next;
        try {
            next = sink.accept(value);
        } catch (Throwable e) {
            release();
            throw e;
        }
        if (next == Generator.DONE || next == Generator.STOP) {
            release();
            return next;
        }
        if (next != lastNext) { // a cursor answers every emit with the same wait: compose it once
            lastGuarded = next.andFinally(release);
            lastNext = next;
        }
        return lastGuarded;
    }

    /** The emit that holds the guard lets it go (I1: only it writes the guard meanwhile). */
    private void release() {
        GUARD.setRelease(this, FREE); // release: publishes the sinks' work to the next emit's CAS
    }

    /** The body's task has ended: later emits fail. */
    void end() {
        ended = true;
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
