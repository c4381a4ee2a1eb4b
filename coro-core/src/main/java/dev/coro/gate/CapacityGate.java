package dev.coro.gate;

import dev.coro.internal.PermitLane;

/**
 * A gate that admits at most {@code capacity} operations at once (P4215's {@code capacity_gate}): an
 * asynchronous semaphore without a manual release, for bounding concurrent uploads, requests or
 * compressions. Work enters with {@link #within(dev.coro.task.Task)} and leaves when it completes.
 *
 * <p><b>Admission rule.</b> An operation is admitted while fewer than {@code capacity} admitted
 * operations have not yet left.
 *
 * <p><b>Fairness.</b> Strictly FIFO: waiters are admitted in the order their acquisition reached the
 * gate, and a newcomer never overtakes a queued waiter (no barging): a slot freed while a waiter is
 * queued goes to the oldest waiter, and a newcomer takes a free slot only when every queued waiter
 * already has one on its way. Every waiter is eventually
 * admitted while admitted work completes and the gate stays open.
 *
 * <p><b>Try.</b> {@link #tryWithin(dev.coro.task.Task)} and {@link #tryAcquire()} admit only if
 * a slot is free and no queued waiter is still owed one; otherwise they complete on the cancelled channel without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and every
 * later acquisition completes cancelled without running its work; admitted work runs to its end.
 * Java has no destructor, so the destruction rule (dropping a gate with outstanding work is
 * an error) is {@link #closeAndCheck()}: it closes and throws {@link IllegalStateException} if
 * admitted work remains. It is separate from {@code close()} because closing must be safe from any
 * completion path while work still runs; dropping the gate is a separate act, as in the paper.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel, gives up its place and takes no slot; if the hand-off won the race, the work is admitted
 * and its slot is given back when it ends. Either way no slot is lost (one CAS decides).
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread that frees the slot already runs that scheduler, otherwise by submission. An
 * operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> {@code capacity <= 0}: {@link IllegalArgumentException}; a null task or body:
 * {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, entering and leaving
 * are one atomic instruction each. Actions of an operation before it leaves
 * the gate happen-before the admission of the waiter that takes its slot.
 *
 * {@snippet :
 * CapacityGate serviceGate = new CapacityGate(8);
 * Task<Response> handled = serviceGate.within(handle(request));     // at most 8 at once
 * Task<Void> maybe = serviceGate.tryWithin(refreshSnapshot());       // cancelled if all 8 are busy
 * }
 */
public final class CapacityGate extends SingleDoorGate {
    /**
     * Creates an open gate with {@code capacity} free slots.
     *
     * @param capacity the most operations admitted at once
     * @throws IllegalArgumentException if {@code capacity <= 0}
     */
    public CapacityGate(int capacity) {
        super(new PermitLane(checkCapacity(capacity)));
    }

    /**
     * Returns the capacity.
     *
     * @return the most operations admitted at once
     */
    public int capacity() {
        return (int) lane().permits();
    }

    /**
     * Returns the number of free slots: a snapshot for monitoring, exact when no operation is
     * entering or leaving the gate.
     *
     * @return free slots, between 0 and the capacity
     */
    public int available() {
        return (int) lane().freePermits();
    }

    private PermitLane lane() {
        return (PermitLane) engine;
    }

    @Override
    public String toString() {
        return "CapacityGate[capacity=" + capacity() + ", available=" + available()
                + (isClosed() ? ", closed]" : "]");
    }
}
