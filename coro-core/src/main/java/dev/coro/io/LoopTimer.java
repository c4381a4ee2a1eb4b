package dev.coro.io;

import dev.coro.cancel.Cancellable;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A timer of an {@link EventLoop}: the handle {@link EventLoop#schedule} returns, and the one object
 * the loop keeps for it: the heap entry, the node of a wheel slot's chain or owned list, and (when
 * it cannot go into the wheel from another thread) the inbox node that carries it to the loop.
 *
 * <p>It fires or is cancelled, exactly once: both take the task with one atomic exchange, so a timer
 * whose {@link #cancel()} returned true never runs, and a fired or cancelled timer keeps no reference
 * to its task.
 */
final class LoopTimer extends Inbox.Node implements Cancellable {
    /* Implementation overview.
     *
     * 1. Representation. task (volatile Runnable): the task while pending; null once fired,
     *    cancelled or dropped (terminal). deadline: loop-relative nanoseconds, final. index: where
     *    the loop holds it (below); seq: heap arrival order; prev, next: links of a chain or list.
     *      index >= 0       in the heap, at that slot                         (loop)
     *      NOT_HELD (-1)    not held: new, in the inbox, fired, removed        (loop, or the scheduler
     *                       before it pushes)
     *      INCOMING (-2)    in a wheel slot's pushed chain                      (set by the pusher
     *                       before its CAS; changed by the loop once it takes the chain)
     *      OWNED (-3)       in a wheel slot's list, owned by the loop           (loop)
     *      <= IN_RUN (-4)   in the loop's run (the sorted timers of one tick), at position
     *                       IN_RUN - index                                      (loop)
     *    told: pushers only (TimerWheel I4): whether the loop has been told of its wheel slot.
     * 2. Transitions. pending -> fired: the loop exchanges task for null, then runs it.
     *    pending -> cancelled: cancel() exchanges task for null (any thread), then removes the
     *    entry: at once on the loop thread, else through a removal node in the inbox.
     *    pending -> dropped: the terminating loop exchanges task for null and tells the task
     *    (EventLoop.drop).
     * 3. Linearization points. fire, cancel, drop: the getAndSet of task; isPending: its read.
     * 4. Invariants. I1 exactly one getAndSet returns the task. I2 a cancelled timer leaves the
     *    loop's structures: the removal node follows the timer's own insertion (an inbox push or a
     *    wheel push, both by threads ordered by happens-before before the cancel), or the loop
     *    removes it directly; the loop also skips a timer that is already cancelled whenever it
     *    takes one in (from the inbox, or from a wheel slot into the heap).
     * 5. Memory ordering. task is volatile, but its first write (in the constructor) is plain: like
     *    the other fields it is published by the inbox or wheel push (release) that hands the timer
     *    to the loop, and the handle reaches other threads only after that push; a timer scheduled
     *    on the loop thread stays there until handed over by some other publication. The rest is
     *    loop-confined.
     * 6. Progress. Wait-free (one exchange), apart from the inbox push (lock-free).
     * 7. Races. cancel vs fire vs drop: the exchange decides; the losers do nothing.
     * 8. Resumption. The loop runs the task itself, on the loop thread.
     * 9. References. The same one-exchange decision as dev.coro.scheduler.TimerThread.Timer.
     */

    /** index: held nowhere. */
    static final int NOT_HELD = -1;
    /** index: pushed into a wheel slot's chain, not yet taken by the loop. */
    static final int INCOMING = -2;
    /** index: in a wheel slot's list owned by the loop. */
    static final int OWNED = -3;
    /** index: in the loop's run at position 0; at position p it is {@code IN_RUN - p}. */
    static final int IN_RUN = -4;

    final EventLoop loop;
    /** When it is due, in the loop's relative nanoseconds. */
    final long deadline;
    /** Where the loop holds it: a heap slot, or NOT_HELD, INCOMING, OWNED, or a run position. */
    int index = NOT_HELD;
    /** Arrival order among equal deadlines in the heap; loop-confined. */
    long seq;
    /** The previous timer of an owned list (the list's last one, for its first); loop-confined. */
    LoopTimer prev;
    private volatile Runnable task;
    /**
     * Whether the loop has been told of this timer's wheel slot: its pusher did the park protocol
     * (dirty flag, wakeFor), or it was pushed behind a told timer of the same slot and tick
     * (TimerWheel I4). Written by pushers only (plain before the push's CAS, release after it), read
     * by later pushers (acquire); the loop never reads it.
     */
    private boolean told;

    LoopTimer(EventLoop loop, Runnable task, long deadline) {
        this.loop = loop;
        this.deadline = deadline;
        TASK.set(this, task); // plain, not a volatile store (a full fence): the push that hands the
                              // timer over publishes it (5)
    }

    /** The index of a timer at position {@code p} of the loop's run. */
    static int runIndex(int p) {
        return IN_RUN - p;
    }

    /** The run position of a timer whose index is {@code index} (at most {@link #IN_RUN}). */
    static int runPosition(int index) {
        return IN_RUN - index;
    }

    /** Takes the task for running (loop) or dropping: the one winner gets it, others null. */
    Runnable take() {
        return (Runnable) TASK.getAndSet(this, (Runnable) null);
    }

    /** Whether it has neither fired nor been cancelled. */
    boolean isPending() {
        return task != null;
    }

    /**
     * Prevents the run if the timer has not fired yet; the loop then forgets the timer.
     *
     * @return true if this call cancelled it; false if it had fired or been cancelled before
     */
    @Override
    public boolean cancel() {
        if (task == null || take() == null) {
            return false;
        }
        loop.timerCancelled(this);
        return true;
    }

    /** Whether the loop has been told of this pushed timer's slot (acquire: see {@link #told}). */
    boolean isTold() {
        return (boolean) TOLD.getAcquire(this);
    }

    /** Sets the told mark before the push's CAS publishes the timer (plain: the CAS releases it). */
    void setToldPlain(boolean value) {
        told = value;
    }

    /**
     * Marks the timer told, after its pusher woke the loop if needed: later pushes behind it in the
     * same slot need not tell the loop (release: orders the pusher's protocol before their reads).
     */
    void told() {
        TOLD.setRelease(this, true);
    }

    @Override
    public String toString() {
        return "LoopTimer[" + (isPending() ? "pending" : "done") + "]";
    }

    private static final VarHandle TASK;
    private static final VarHandle TOLD;

    static {
        try {
            TASK = MethodHandles.lookup().findVarHandle(LoopTimer.class, "task", Runnable.class);
            TOLD = MethodHandles.lookup().findVarHandle(LoopTimer.class, "told", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
