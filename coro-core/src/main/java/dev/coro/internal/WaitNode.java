package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One waiter, as the waiting primitives see it: a node that carries a waiting continuation and
 * settles exactly once, admitted (with a value), abandoned (cancelled) or rejected (with an error).
 * Settling it resumes the continuation on the scheduler it came from; a plain or virtual thread
 * waiting through a blocking door is that thread's own scheduler, so settling unparks it.
 *
 * <p>Two kinds of node exist. The task layer's suspension step: every {@code Completer} handed to a
 * {@code Task.create} body is a {@code WaitNode}, so a primitive queues the completer itself and
 * allocates no node of its own (the step's task is registered on its cancellation token once, not
 * per suspension: see the task layer's Fiber). And the clause of
 * a {@link Select}: one suspension waiting in several queues has one clause node in each, and the
 * clauses settle through the one suspension, so exactly one of them wins.
 *
 * <p>What the queues may use: {@link #below} and {@link #after} (the links of the queue that holds
 * the node; a node is queued in one queue at most once in its life), the {@linkplain #tag() tag}
 * (what the waiter asks for: a kind, a weight, a key, a priority, a deadline; opaque to the queue,
 * read by the primitive's rule), and the departure hook ({@link #cancelInto}): the node tells the
 * queue it is in, exactly once, when it ends without being admitted (cancelled by its token,
 * abandoned, rejected, or a select clause that lost), so the queue can unlink it and the primitive
 * can give back what the waiter had reserved.
 */
public abstract class WaitNode {
    /** What a queue is told when one of its nodes ends without being admitted. */
    public interface Departures {
        /**
         * {@code node} ended without being admitted, while queued (or before its queue learnt of
         * it); called once per node, on the thread that settled it. Must not block or throw.
         *
         * @param node the node
         */
        void departed(WaitNode node);
    }

    /** {@link #hook} once it has run (or will never run): terminal. */
    private static final Object HOOK_DONE = new Object();

    /**
     * In the intake stack: the next older node, or at the bottom the state the stack was pushed onto.
     * Written before the push publishes the node; later rewritten only by the queue's single sweeper
     * (to skip settled nodes).
     */
    volatile Object below;
    /** In a drained or ordered list: the next node. Written and read by the queue's owner only. */
    WaitNode after;
    /** What the waiter asks for; written before the push publishes the node (see {@link #tag()}). */
    private Object tag;
    /**
     * The departure hook: null, the {@link Departures} of the queue the node is in, a {@code Runnable}
     * set through a completer's {@code onCancel}, or {@link #HOOK_DONE}. Run once, by {@link #departed()}.
     */
    private volatile Object hook;

    /** Creates an unqueued node. */
    protected WaitNode() {}

    /**
     * Returns the tag: what the waiter asks for (a kind, a weight, a key, a priority, a deadline),
     * set by the primitive before the node is queued; null by default.
     *
     * @return the tag
     */
    public final Object tag() {
        return tag;
    }

    /**
     * Sets the tag; call it before the node is queued (the push publishes it).
     *
     * @param tag the tag
     */
    public final void tag(Object tag) {
        this.tag = tag;
    }

    /**
     * Admits the waiter: settles it with {@code value} and resumes it on its scheduler.
     *
     * @param value the value the waiter resumes with
     * @return whether this call settled the node (false: it was settled before)
     */
    public abstract boolean admit(Object value);

    /**
     * Admits the waiter as {@link #admit} does, but resumes it through its scheduler's queue, never
     * inline on the admitting thread, which keeps running: for a waker that frees room or offers an
     * element and goes on producing or consuming (a buffered channel). By default the same as
     * {@link #admit}.
     *
     * @param value the value the waiter resumes with
     * @return whether this call settled the node (false: it was settled before)
     */
    public boolean admitQueued(Object value) {
        return admit(value);
    }

    /**
     * Settles the waiter on the cancelled channel, resumes it, and runs the departure hook.
     *
     * @return whether this call settled the node
     */
    public abstract boolean abandon();

    /**
     * Settles the waiter on the cancelled channel as {@link #abandon()} does, saying why: a task's
     * step keeps {@code reason}, whose {@code toString()} becomes the message of the
     * {@code CancellationException} a join of the task throws (read only then). The channel is the
     * same: the task is cancelled. By default the reason is dropped.
     *
     * @param reason why (a closed primitive's description), or null for a plain abandon
     * @return whether this call settled the node
     */
    public boolean abandon(Object reason) {
        return abandon();
    }

    /**
     * Settles the waiter on the error channel with {@code error} (an expired wait), resumes it, and
     * runs the departure hook.
     *
     * @param error the error
     * @return whether this call settled the node
     */
    public abstract boolean reject(Throwable error);

    /**
     * Returns whether the node has been settled (admitted, abandoned, rejected or, for a select
     * clause, lost).
     *
     * @return whether settled
     */
    public abstract boolean isSettled();

    /**
     * Returns whether the waiter's cancellation token has fired (it may not be settled yet).
     *
     * @return whether cancellation was requested
     */
    public abstract boolean isCancelRequested();

    /**
     * Tells the node which queue to tell when it departs (see {@link Departures}); a queue calls it
     * right after the push that queued the node. If the node has departed already, tells the queue
     * at once.
     *
     * @param queue the queue the node is in
     * @throws IllegalStateException if a hook was set already
     */
    public final void cancelInto(Departures queue) {
        setHook(queue);
    }

    /**
     * Sets a departure hook (an {@code onCancel} action, or a queue); if the node has departed
     * already, runs it at once.
     *
     * @param action a {@code Runnable} or a {@link Departures}
     * @throws IllegalStateException if a hook was set already
     */
    protected final void setHook(Object action) {
        Object prev = HOOK.compareAndExchange(this, null, action);
        if (prev == HOOK_DONE) {
            run(action); // departed before the hook was set: it runs now, once
        } else if (prev != null) {
            throw new IllegalStateException("a departure hook was already set");
        }
    }

    /**
     * Runs the departure hook, once: a subclass calls it right after it settled the node other than
     * by admission (cancelled, abandoned, rejected, lost). A hook set later runs at once.
     */
    protected final void departed() {
        Object h = HOOK.getAndSet(this, HOOK_DONE);
        if (h != null && h != HOOK_DONE) {
            run(h);
        }
    }

    /**
     * Returns the departure hook now set (a queue's {@link Departures}, or an {@code onCancel}
     * action), or null if none is set or it has run: for the task dump only, read racily.
     *
     * @return the hook, or null
     */
    protected final Object hookForDump() {
        Object h = hook;
        return h == HOOK_DONE ? null : h;
    }

    private void run(Object action) {
        if (action instanceof Departures queue) {
            queue.departed(this);
        } else {
            ((Runnable) action).run();
        }
    }

    private static final VarHandle HOOK;

    static {
        try {
            HOOK = MethodHandles.lookup().findVarHandle(WaitNode.class, "hook", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
