package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.task.Task;
import java.util.concurrent.Callable;

/**
 * A gate with one kind of entry (serial, capacity, readiness, predicate, completion): the engine's
 * door for untagged waiters of weight 1, under the paper's names. Each subclass's javadoc states what
 * admission means for it.
 */
abstract class SingleDoorGate extends AdmissionGate implements Gate {
    private final Door door;

    SingleDoorGate(AdmissionEngine engine) {
        super(engine);
        this.door = new Door(null, 1);
    }

    /**
     * Returns a task that waits until this gate admits the caller and completes with the
     * {@link Admission}, whose {@link Admission#exit()} leaves the gate. Prefer {@link #within(Task)},
     * which exits on every completion path by construction. The task may be started any number of
     * times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing (its place in line is lost); if the admission won the race, it completes with the
     * admission, which must be exited. After {@link #close()} a run completes cancelled.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquire() {
        return door.acquire();
    }

    /**
     * Returns a task that completes with an {@link Admission} if this gate admits the caller
     * immediately, and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return door.tryAcquire();
    }

    /**
     * Returns a task that waits for admission, then runs {@code work}, then leaves the gate when
     * {@code work} completes on any channel (value, error or cancellation). If the wait is cancelled,
     * or the gate is closed, the task completes cancelled and {@code work} does not run; if the
     * cancellation comes once the admission is handed over, the admission is exited when
     * {@code work} ends (at once if {@code work} ends cancelled at its first step). The task ends with
     * {@code work}'s outcome.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        return door.within(work);
    }

    /**
     * Returns a task that runs {@code work} under this gate only if it is admitted immediately:
     * otherwise it completes on the cancelled channel, without queueing and without running
     * {@code work}. "Immediately" means: the rule allows it, no waiter is queued, and no other thread
     * is deciding an admission at that instant. An admitted {@code work} leaves the gate on every
     * completion path, as with {@link #within(Task)}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(Task<T> work) {
        return door.tryWithin(work);
    }

    /**
     * Blocks the calling thread until it is admitted (parking only the virtual thread on a virtual
     * thread), runs {@code body} on it, leaves the gate and returns the body's value: the blocking
     * door, {@code within(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of the body
     *     (an unchecked one is rethrown as is)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(Callable<? extends T> body) {
        return door.call("call", body);
    }
}
