package dev.coro.io;

import dev.coro.cancel.Cancellable;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A timer of an {@link EventLoop}: the handle {@link EventLoop#schedule} returns, the heap entry,
 * and (when scheduled from another thread) the inbox node that carries it to the loop.
 *
 * <p>It fires or is cancelled, exactly once: both take the task with one atomic exchange, so a timer
 * whose {@link #cancel()} returned true never runs, and a fired or cancelled timer keeps no reference
 * to its task.
 */
final class LoopTimer extends Inbox.Node implements Cancellable {
    /* Implementation overview.
     *
     * 1. Representation. task (volatile Runnable): the task while pending; null once fired or
     *    cancelled (terminal). deadline: loop-relative nanoseconds, final. index, seq: the heap's,
     *    loop-confined (index -1 when not in the heap).
     * 2. Transitions. pending -> fired: the loop exchanges task for null, then runs it.
     *    pending -> cancelled: cancel() exchanges task for null (any thread), then removes the
     *    entry: at once on the loop thread, else through a removal node in the inbox.
     * 3. Linearization points. fire and cancel: the getAndSet of task; isPending: its read.
     * 4. Invariants. I1 exactly one getAndSet returns the task. I2 a cancelled timer leaves the
     *    heap: the removal node follows the timer's own insertion node in the inbox (both pushed by
     *    threads ordered by happens-before), or the loop removes it directly; the loop also skips an
     *    insertion whose timer is already cancelled.
     * 5. Memory ordering. task is volatile; the constructor's fields are published by the inbox
     *    push (release) or are loop-confined.
     * 6. Progress. Wait-free (one exchange), apart from the inbox push (lock-free).
     * 7. Races. cancel vs fire: the exchange decides; the loser does nothing.
     * 8. Resumption. The loop runs the task itself, on the loop thread.
     * 9. References. The same one-exchange decision as dev.coro.internal.TimerThread.Timer.
     */

    final EventLoop loop;
    /** When it is due, in the loop's relative nanoseconds. */
    final long deadline;
    /** Position in the heap, or -1; loop-confined. */
    int index = -1;
    /** Arrival order among equal deadlines; loop-confined. */
    long seq;
    private volatile Runnable task;

    LoopTimer(EventLoop loop, Runnable task, long deadline) {
        this.loop = loop;
        this.deadline = deadline;
        this.task = task;
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

    @Override
    public String toString() {
        return "LoopTimer[" + (isPending() ? "pending" : "done") + "]";
    }

    private static final VarHandle TASK;

    static {
        try {
            TASK = MethodHandles.lookup().findVarHandle(LoopTimer.class, "task", Runnable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
