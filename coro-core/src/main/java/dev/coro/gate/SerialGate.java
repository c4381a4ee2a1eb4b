package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.BargingLane;
import dev.coro.internal.PermitLane;
import dev.coro.internal.UnitCount;
import dev.coro.task.Task;
import java.util.Objects;

/**
 * A gate that admits one operation at a time (P4215's {@code serial_gate}): serialized cache updates,
 * or a connection on which one request and its response must finish before the next. Work enters
 * with {@link #within(dev.coro.task.Task)} and leaves when it completes, on every path, so the gate
 * cannot be left held.
 *
 * <p><b>Admission rule.</b> An operation is admitted when no admitted operation has yet to leave.
 *
 * <p><b>Fairness.</b> {@code new SerialGate()} is strictly FIFO: operations are admitted in the order
 * their acquisition reached the gate, and a newcomer never overtakes a queued waiter (no barging).
 * Every waiter is eventually admitted while admitted work completes and the gate stays open.
 *
 * <p>{@link #barging()} is not fair: an operation that leaves frees the gate and, if operations
 * wait, wakes the oldest one (one woken waiter at a time); until it runs and enters, any operation
 * that asks (a newcomer, the task whose work just left and asks again, a try) may enter first. A woken
 * waiter that finds the gate busy waits again, at the back of the line. So a task that passes the
 * gate in a loop keeps passing it without a hand-off, which is much faster under contention, but a
 * waiting operation can be overtaken any number of times while others keep entering, and may in
 * principle wait for ever. What it does promise: a free gate with an operation waiting for it is
 * always offered to the oldest such operation, so no wake-up is lost.
 *
 * <p><b>Try.</b> {@link #tryWithin(dev.coro.task.Task)} and {@link #tryAcquire()} admit only if
 * the gate is free and not being handed to a queued waiter (barging: only if it is free, waiters or
 * not); otherwise they complete on the cancelled channel without queueing and without running the
 * work.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and every
 * later acquisition completes cancelled without running its work; admitted work runs to its end.
 * Java has no destructor, so the destruction rule is {@link #closeAndCheck()}: it closes
 * and throws {@link IllegalStateException} if admitted work remains (separate from {@code close()},
 * which must be safe from any completion path while work still runs).
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and gives up its place; if the hand-off won the race, the work is admitted and leaves the
 * gate when it ends. The gate is never left held by nobody (one CAS decides). Barging: a waiter
 * cancelled after its wake-up still competes once; if it enters, its work's first step sees the
 * cancellation and the gate is left at once; a waiter woken before {@link #close()} does not enter
 * after it.
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
    /* Implementation overview: a rule on the one admission engine, the permit lane of one unit
     * (PermitLane's overview) or, for barging(), the barging lane (BargingLane's overview); the only
     * code of its own is the barging entry, built as AsyncMutex's is. acquire's (enterTask): the
     * lane's waiting door flatMapped by BargingLane.Competition, a woken waiter's one competition (B6,
     * which a flatMap function runs on every path), and the whole entry again if it lost. within's:
     * one guarded node over the lane's waiting door itself, whose exit frame's test
     * (BargingLane.entered) is that competition, run by the run loop on the door's value before
     * anything else; a lost competition runs the node again from the door. */

    /** For barging(): the lane's waiting door, which within enters by; null for FIFO. */
    private final Task<Object> wokenDoor;
    /** For barging(): the exit frame of within, with the woken waiter's competition; null for FIFO. */
    private final Object wokenExit;

    /** Creates an open, free gate that admits its waiters in FIFO order. */
    public SerialGate() {
        super(new PermitLane(1));
        this.wokenDoor = null;
        this.wokenExit = null;
    }

    private SerialGate(BargingLane lane) {
        super(lane);
        this.wokenDoor = Task.create(lane.waitingDoor());
        this.wokenExit = DOORS.exitFrame(() -> lane.release(1), lane::entered); // a woken waiter competes (B6)
    }

    /**
     * {@inheritDoc}
     *
     * <p>On a {@linkplain #barging() barging} gate, a woken waiter competes once for the gate before
     * its work runs; if it loses, it waits again at the back of the line (the class javadoc's fairness
     * paragraph).
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        if (wokenExit == null) {
            return super.within(work);
        }
        Objects.requireNonNull(work, "work");
        @SuppressWarnings("unchecked")
        Task<T> guarded = (Task<T>) DOORS.guarded(wokenDoor, work, wokenExit);
        return guarded;
    }

    /**
     * Creates an open, free gate that admits by competition instead of FIFO hand-off: an operation
     * that leaves frees the gate and wakes the oldest waiter, which then competes with any operation
     * that asks meanwhile. Not fair, and a waiter may be overtaken without bound: see the class
     * javadoc's fairness paragraph. Everything else (the doors, close, cancellation, bad input,
     * memory effects) is as for {@code new SerialGate()}.
     *
     * {@snippet :
     * SerialGate statsGate = SerialGate.barging(); // throughput over order
     * Task<Void> record = statsGate.within(Task.fromRunnable(() -> stats.add(sample)));
     * }
     *
     * @return a new open, free barging gate
     */
    public static SerialGate barging() {
        return new SerialGate(new BargingLane());
    }

    /**
     * Returns whether this gate admits by competition ({@link #barging()}) rather than in FIFO order.
     *
     * @return whether barging
     */
    public boolean isBarging() {
        return engine instanceof BargingLane;
    }

    @Override
    Task<Void> enterTask(Object tag) {
        AdmissionEngine e = engine;
        if (!(e instanceof BargingLane lane)) {
            return super.enterTask(tag);
        }
        BargingLane.Competition<Task<Void>> competition = lane.competition(Task.value(null));
        return competition.entry(Task.create(lane.waitingDoor()).flatMap(competition));
    }

    /**
     * Returns whether an operation is admitted (or the gate is being handed to a waiter): a snapshot
     * for monitoring, exact when no operation is entering or leaving the gate.
     *
     * @return whether admitted work is running
     */
    public boolean isBusy() {
        return ((UnitCount) engine).freePermits() == 0;
    }

    @Override
    public String toString() {
        return "SerialGate[" + (isBarging() ? "barging, " : "") + (isBusy() ? "busy" : "free")
                + (isClosed() ? ", closed]" : "]");
    }
}
