package dev.coro.internal;

/**
 * One suspended waiter, as the {@link WaitQueue} engine sees it: a node that carries the waiting
 * continuation and the scheduler it came from, and that settles exactly once, either admitted (with a
 * value) or abandoned (cancelled). Settling it resumes the continuation on its scheduler through
 * {@link Resume}; a plain or virtual thread waiting through a blocking door is that thread's own
 * scheduler, so settling unparks it.
 *
 * <p>The task layer's suspension step is the only subclass: every {@code Completer} handed to a
 * {@code Task.create} body is a {@code WaitNode}, so a waiting primitive queues the completer itself
 * and allocates no node of its own. The node also extends {@link SignalList.Node}, so the same object
 * is the registration on the waiter's cancellation token: one object per suspension.
 *
 * <p>The two link fields belong to the queue that holds the node (see {@link WaitQueue}); a node is
 * queued at most once in its life.
 */
public abstract class WaitNode extends SignalList.Node {
    /**
     * In the intake stack: the next older node, or at the bottom the state the stack was pushed onto.
     * Written before the push publishes the node; later rewritten only by the queue's single sweeper
     * (to skip settled nodes).
     */
    volatile Object below;
    /** In a drained list: the next node in arrival order. Written and read by the queue's owner. */
    WaitNode after;
    /**
     * The waiter's kind, for a primitive that admits several kinds (a read-write gate's reader or
     * writer): written by the waiter before the push publishes the node, read by whoever takes it. A
     * byte, so it fits the step's alignment padding (the step stays 48 bytes).
     */
    private byte kind;

    /** Creates an unqueued node. */
    protected WaitNode() {}

    /** Returns the kind set by {@link #kind(int)}, 0 by default. */
    public final int kind() {
        return kind;
    }

    /**
     * Sets the waiter's kind, between 0 and 127; call it before the node is pushed (the push
     * publishes it).
     */
    public final void kind(int kind) {
        assert kind >= 0 && kind <= Byte.MAX_VALUE : kind;
        this.kind = (byte) kind;
    }

    /**
     * Admits the waiter: settles it with {@code value} and resumes it on its scheduler.
     *
     * @return whether this call settled the node (false: it was settled before, by cancellation)
     */
    public abstract boolean admit(Object value);

    /**
     * Settles the waiter on the cancelled channel and resumes it.
     *
     * @return whether this call settled the node
     */
    public abstract boolean abandon();

    /** Returns whether the node has been settled (admitted or abandoned). */
    public abstract boolean isSettled();

    /** Returns whether the waiter's cancellation token has fired (it may not be settled yet). */
    public abstract boolean isCancelRequested();

    /**
     * Tells the node which queue to tell when it is cancelled while queued. If it has already been
     * cancelled, tells the queue at once.
     */
    public abstract void cancelInto(WaitQueue queue);
}
