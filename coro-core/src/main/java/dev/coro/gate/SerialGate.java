package dev.coro.gate;

import dev.coro.internal.PermitLane;

/**
 * A gate that admits one operation at a time (P4215's {@code serial_gate}): serialized cache updates,
 * or a connection on which one request and its response must finish before the next. Work enters
 * with {@link #within(dev.coro.task.Task)} and leaves when it completes, on every path, so the gate
 * cannot be left held.
 *
 * <p><b>Admission rule.</b> An operation is admitted when no admitted operation has yet to leave.
 *
 * <p><b>Fairness.</b> Strictly FIFO: operations are admitted in the order their acquisition reached
 * the gate, and a newcomer never overtakes a queued waiter (no barging). Every waiter is eventually
 * admitted while admitted work completes and the gate stays open.
 *
 * <p><b>Try.</b> {@link #tryWithin(dev.coro.task.Task)} and {@link #tryAcquire()} admit only if
 * the gate is free and not being handed to a queued waiter; otherwise they complete on the cancelled channel without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and every
 * later acquisition completes cancelled without running its work; admitted work runs to its end.
 * Java has no destructor, so the destruction rule is {@link #closeAndCheck()}: it closes
 * and throws {@link IllegalStateException} if admitted work remains (separate from {@code close()},
 * which must be safe from any completion path while work still runs).
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and gives up its place; if the hand-off won the race, the work is admitted and leaves the
 * gate when it ends. The gate is never left held by nobody (one CAS decides).
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread whose work leaves the gate already runs that scheduler, otherwise by submission.
 * An operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> A null task or body: {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, entering and leaving
 * are one atomic instruction each. Actions of an operation before it leaves
 * the gate happen-before the actions of the next admitted operation.
 *
 * {@snippet :
 * SerialGate cacheGate = new SerialGate();
 * Task<Void> update = cacheGate.within(Task.fromRunnable(() -> cache.put(key, value)));
 * }
 */
public final class SerialGate extends SingleDoorGate {
    /** Creates an open, free gate. */
    public SerialGate() {
        super(new PermitLane(1));
    }

    /**
     * Returns whether an operation is admitted (or the gate is being handed to a waiter): a snapshot
     * for monitoring, exact when no operation is entering or leaving the gate.
     *
     * @return whether admitted work is running
     */
    public boolean isBusy() {
        return ((PermitLane) engine).freePermits() == 0;
    }

    @Override
    public String toString() {
        return "SerialGate[" + (isBusy() ? "busy" : "free") + (isClosed() ? ", closed]" : "]");
    }
}
