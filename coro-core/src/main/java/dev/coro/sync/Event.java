package dev.coro.sync;

import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A resettable one-shot signal that carries a value (seed 002's {@code event<T>}): tasks wait for it
 * with {@link #await()}, a thread with {@link #awaitBlocking()}; {@link #set(Object)} wakes them all.
 *
 * <p><b>Semantics.</b>
 * <ul>
 *   <li>A wait that starts after {@code set} does not suspend: it completes at once with the value.</li>
 *   <li>Setting twice: the first {@code set} wins; a second {@code set} before a {@link #reset()}
 *       returns {@code false} and changes nothing (waiters never see two values for one set).</li>
 *   <li>{@code reset()} makes a set event unset again, for later waits. Resetting an event that is
 *       not set (for example while waiters wait) does nothing and returns {@code false}: those
 *       waiters keep waiting for the next {@code set}.</li>
 * </ul>
 *
 * <p><b>Where waiters resume.</b> A waiting task resumes on its own scheduler: inline (through a
 * trampoline) when the setting thread already runs that scheduler, otherwise by submission. The
 * blocking door parks only the calling thread (only the virtual thread, on a virtual thread).
 *
 * <p><b>Cancellation.</b> A cancelled wait completes on the cancelled channel and unregisters at once;
 * the event keeps nothing of it (its memory is reclaimed in amortized O(1)). Cancellation racing
 * {@code set} has one winner: the wait ends either with the value or cancelled.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions before a successful {@code set}
 * happen-before every wait that returns its value.
 *
 * {@snippet :
 * Event<String> ready = new Event<>();
 * Task<Integer> length = ready.await().map(String::length);   // suspends until set
 * ready.set("hello");                                          // wakes every waiter
 * assert ready.isSet() && length.join() == 5;
 * }
 *
 * @param <T> the value type
 */
public final class Event<T> {
    /* Implementation overview.
     *
     * 1. Representation. current (volatile Promise): the cell of the present set/reset epoch.
     *    The cell is the seed-000 word of the seed's lock-free event: its waiter head is
     *    unset-no-waiters (null) / the head of a waiter list / set (FIRED), and its result CAS is
     *    the set (see Completion's overview).
     *
     * 2. Transitions.
     *    set(v):  cell pending -> completed with v       result CAS, then fire   setter
     *    await:   read current; wait on that cell (completes at once if it is set)
     *    reset:   current c (completed) -> new pending cell   CAS current        resetter
     *
     * 3. Linearization points. set: the cell's result CAS (a set that finds it taken linearizes at
     *    that read). reset: the CAS of current (a reset that finds the cell pending linearizes at
     *    that read). await: the read of current together with the cell's own point (Completion).
     *
     * 4. Invariants. I1: current only ever moves from a completed cell to a fresh pending one, so
     *    a waiter registered on a pending cell is resumed by the set of that cell, never lost.
     *    I2: each cell is completed at most once, so no waiter sees two values.
     *
     * 5. Memory ordering. current is volatile; a reader of a new cell sees it fully constructed.
     *    The cell's own orderings (release at the result CAS, acquire on read) carry the value.
     *
     * 6. Progress: lock-free.
     * 7. Cancellation: a cancelled wait removes its node from the cell (SignalList.remove); one
     *    winner against set through the waiter's AsyncStep CAS.
     * 8. Resumption: through the waiter's AsyncStep, on its own scheduler (Resume.dispatch).
     * 9. References: seed 002, lock-free event (kUnsetNoWaiter / list head / kSet).
     */

    private volatile Promise<T> current = new Promise<>();
    private final Task<T> await = Task.defer(() -> current.task());

    /** Creates an event that is not set. */
    public Event() {}

    /**
     * Sets the event and wakes every waiter with {@code value}.
     *
     * @param value the value (may be null)
     * @return {@code true} if this call set the event; {@code false} if it was already set
     */
    public boolean set(T value) {
        return current.complete(value);
    }

    /**
     * Sets the event with a null value: the void form, for {@code Event<Void>}.
     *
     * @return {@code true} if this call set the event; {@code false} if it was already set
     */
    public boolean set() {
        return set(null);
    }

    /**
     * Returns a task that waits until the event is set and completes with its value; at once if it is
     * set when the task runs. The task may be started any number of times.
     *
     * @return the waiting task
     */
    public Task<T> await() {
        return await;
    }

    /**
     * Blocks the calling thread until the event is set, and returns its value. Interrupting the
     * thread cancels the wait.
     *
     * @return the value
     * @throws java.util.concurrent.CancellationException if the thread is interrupted while waiting
     */
    public T awaitBlocking() {
        return await.join();
    }

    /**
     * Makes a set event unset again, so that later waits suspend.
     *
     * @return {@code true} if this call reset the event; {@code false} if it was not set
     */
    public boolean reset() {
        Promise<T> c = current;
        return c.isDone() && CURRENT.compareAndSet(this, c, new Promise<T>());
    }

    /**
     * Returns whether the event is set.
     *
     * @return whether set
     */
    public boolean isSet() {
        return current.isDone();
    }

    @Override
    public String toString() {
        return isSet() ? "Event[set]" : "Event[unset]";
    }

    private static final VarHandle CURRENT;

    static {
        try {
            CURRENT = MethodHandles.lookup().findVarHandle(Event.class, "current", Promise.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
