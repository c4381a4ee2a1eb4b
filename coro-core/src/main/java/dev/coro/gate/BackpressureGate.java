package dev.coro.gate;

import dev.coro.internal.Blocking;
import dev.coro.internal.PermitLane;
import dev.coro.task.Task;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A gate that admits upstream work only as far as downstream has asked for it (one of P4215's future
 * gates): a fast producer joined to a slow consumer, a poller that must not fetch more than the
 * processing stage can take, the demand side of a Reactive Streams {@code request(n)}.
 *
 * <p><b>Admission rule.</b> Downstream calls {@link #grant(long) grant(n)}; each admission spends one
 * grant, for good: leaving gives nothing back (downstream grants again when it has taken the
 * result, as a subscriber requests more). So the admissions never exceed the grants, and the work
 * admitted but not yet finished never exceeds the grants minus the work finished. Grants accumulate,
 * saturating at {@link Long#MAX_VALUE} (which, as in {@link java.util.concurrent.Flow.Subscription#request},
 * means unbounded demand) without overflow.
 *
 * <p><b>Fairness.</b> Strictly FIFO: grants go to waiters in the order they reached the gate, and a
 * newcomer takes a grant only when nobody waits (no barging).
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if a grant is
 * available and nobody waits; otherwise they complete on the cancelled channel without queueing and
 * without running the work.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and spends no grant: the grant goes to the next waiter, or stays available. If the
 * admission won the race, the work runs.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread that grants already runs that scheduler, otherwise by submission. An operation
 * admitted at once continues on the thread that asked.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and every
 * later acquisition completes cancelled without running its work; admitted work runs to its end.
 * Grants after close change nothing. {@link #closeAndCheck()} never finds admitted work to complain
 * of: admissions are spent, not held.
 *
 * <p><b>Bad input.</b> {@code grant(n)} with {@code n <= 0}: {@link IllegalArgumentException} (as
 * Reactive Streams rule 3.9 asks); a null task or body: {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, a grant and an
 * admission are one atomic instruction each. Actions before a {@code grant} happen-before the
 * admission that spends it.
 *
 * {@snippet :
 * BackpressureGate demand = new BackpressureGate();
 * // producer: each item waits for the consumer's demand
 * Task<Void> produce = demand.within(fetchNext().flatMap(queue::put));
 * // consumer: asks for more as it takes
 * demand.grant(16);                       // room for 16 in flight
 * // ... after consuming one item:
 * demand.grant(1);
 * }
 */
public final class BackpressureGate extends AdmissionGate implements Gate {
    /* Rule: PermitLane.granted() (PermitLane overview, part 9): a lane that starts empty, grows by
     * grant(n) with saturation, and whose admissions are spent (within has no exit). */

    private final Door door;

    /** Creates an open gate with no grants: the first admission waits for {@link #grant(long)}. */
    public BackpressureGate() {
        super(PermitLane.granted());
        this.door = new Door(null, 1);
    }

    /**
     * Grants {@code n} more admissions: the waiters queued first are admitted at once, in order; the
     * rest accumulate (saturating at {@link Long#MAX_VALUE}: unbounded). After close, it admits nobody.
     *
     * @param n the admissions granted
     * @throws IllegalArgumentException if {@code n <= 0}
     */
    public void grant(long n) {
        if (n <= 0) {
            throw new IllegalArgumentException("n must be positive (a grant of zero or less is a bug), got " + n);
        }
        lane().grant(n);
    }

    /**
     * Returns a task that waits for a grant, spends it, then runs {@code work}. It ends with
     * {@code work}'s outcome, or completes cancelled without running it (and without spending a grant)
     * if the wait is cancelled or the gate is closed.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        return door.spendThen(work);
    }

    /**
     * Returns a task that runs {@code work} only if a grant is available and nobody waits (spending
     * it); otherwise it completes on the cancelled channel without queueing and without running
     * {@code work}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(Task<T> work) {
        return door.trySpendThen(work);
    }

    /**
     * Returns a task that waits for a grant, spends it, and completes with an {@link Admission} whose
     * exit does nothing (the grant is spent). Prefer {@link #within(Task)}.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquire() {
        return door.acquireSpent();
    }

    /**
     * Returns a task that spends a grant and completes with an {@link Admission} if one is available
     * and nobody waits, and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return door.tryAcquireSpent();
    }

    /**
     * Blocks the calling thread until a grant is available (parking only the virtual thread on a
     * virtual thread), spends it, runs {@code body} and returns its value:
     * {@code within(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(Callable<? extends T> body) {
        Blocking.checkAllowed(BackpressureGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(Task.<T>fromCallable(body)).join();
    }

    /**
     * Returns the grants not yet spent: a snapshot for monitoring, exact when no operation is
     * granting or entering; near {@link Long#MAX_VALUE} once the demand is unbounded (a grant that
     * saturated it, less the admissions since).
     *
     * @return the grants available
     */
    public long available() {
        return lane().freePermits();
    }

    private PermitLane lane() {
        return (PermitLane) engine;
    }

    @Override
    public String toString() {
        return "BackpressureGate[available=" + available() + (isClosed() ? ", closed]" : "]");
    }
}
