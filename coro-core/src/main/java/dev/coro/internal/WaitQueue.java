package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The waiter-queue engine every waiting primitive shares (seed 002's lock-free discipline): one state
 * word that is either a primitive-defined {@link Sentinel} or the newest queued {@link WaitNode}, the
 * older ones linked below it (LIFO, one CAS to join); whoever owns the primitive's next decision takes
 * the whole stack with one exchange and walks it into arrival order ({@link #drain}).
 *
 * <p>What the engine does, once for every primitive: queueing ({@link #push}), taking waiters in
 * arrival order, and removing cancelled waiters (a cancelled node that is the newest pops itself at
 * once; others are unlinked by a counted sweep, so cancelled nodes never accumulate beyond the live
 * count plus a constant, even when nobody drains). Resuming a waiter is {@link WaitNode#admit}, which
 * hands its continuation to its own scheduler. What a primitive decides: its sentinels (which of them
 * accept waiters), and when to take the stack. The {@code AsyncMutex} uses UNLOCKED (refuses: take
 * the lock instead) and LOCKED (accepts), and its holder drains; the {@code Event} uses UNSET
 * (accepts) and a set state (refuses: the value is there), and {@code set} drains. The admission hook
 * for richer rules (gates) is the same: a sentinel that means "someone owns the decision", and that
 * owner drains and admits by its rule.
 */
public final class WaitQueue {
    /* Implementation overview.
     *
     * 1. Representation.
     *    state (volatile Object):
     *      Sentinel z    no queued waiter; z is the primitive's own state (UNLOCKED, LOCKED, UNSET...)
     *      WaitNode n    n is the newest queued waiter; n.below is the next older one, and so on down
     *                    to the Sentinel the first of them was pushed onto (the state "under" the stack)
     *    WaitNode.below: written by the pusher before the push CAS; later rewritten only by the sweeper,
     *      and only to skip settled nodes.
     *    WaitNode.after: the arrival-order link that drain builds; only the drainer reads or writes it.
     *    sweeping (volatile int): 0/1, the single-sweeper try-lock.
     *    deadCount, departed, liveAtLastSweep (plain ints): steering estimates for when to sweep:
     *      deadCount counts cancelled nodes that may still be linked; departed counts every node that
     *      left the live count since the last sweep (cancelled, popped or drained), so
     *      liveAtLastSweep - departed is a lower bound of the live nodes still linked (pushes only
     *      raise it). Found by the tests oldWaitersCancelledWhileTheNewestWaitsAreSweptNotKept and
     *      waitersCancelledWhileTheLockIsHeldForeverDoNotAccumulate: without counting cancellations
     *      as departures the estimate stayed at the past peak and no second sweep ever ran.
     *
     * 2. Transitions.
     *    push:        z (accepts) | n  ->  m, m.below = z | n             CAS state      waiter
     *                 z (refuses)      ->  unchanged, push returns z
     *    sentinel:    z -> z'                                             CAS state      primitive
     *    take:        s -> z'  (s a sentinel or a stack)                  CAS/getAndSet  primitive
     *                 then drain walks the taken stack into arrival order, dropping settled nodes
     *    cancel pop:  n -> n.below while n is settled and newest          CAS state      canceller
     *    sweep:       pred.below = first unsettled node below pred        volatile write sweeper
     *
     * 3. Linearization points. push: the successful CAS (the waiter's place in line), or the read of
     *    a refusing sentinel. take: its CAS or exchange; every node pushed before it is in the taken
     *    stack, every node pushed after it is not. A node's admission or cancellation: the CAS of its
     *    own result word (WaitNode.admit / abandon), not anything here.
     *
     * 4. Invariants.
     *    I1: every unsettled node pushed and not yet taken is reachable from state through below:
     *        pops and sweeps skip settled nodes only, and settled is terminal.
     *    I2: the bottom of a stack is the sentinel the stack was pushed onto, so popping the last
     *        waiter restores exactly the state under it.
     *    I3: a node is pushed at most once, and appears in at most one taken stack.
     *    I4: drain's result holds each unsettled node of the taken stack once, oldest first.
     *
     * 5. Memory ordering. state, below and sweeping are volatile. The push CAS (release) publishes the
     *    node and what the waiter wrote before; the take (acquire) makes them visible to the drainer,
     *    which alone then writes `after`. The counts are plain and racy on purpose: a lost update
     *    only moves a sweep earlier or later, and every sweep resets them from what it walked.
     *
     * 6. Progress. push, take and the cancel pop are lock-free CAS loops. The sweep is a try-lock
     *    that nobody waits for. Cost: a sweep runs when deadCount exceeds the live estimate
     *    (liveAtLastSweep - departed) plus SWEEP_SLACK, and walks live + dead nodes, so its walk is
     *    paid by the pushes and cancellations since the previous sweep: O(1) amortized.
     *
     * 7. Cancellation. A node learns its queue after the push (WaitNode.cancelInto); when its
     *    cancellation wins its result CAS it calls cancelled(node): pop if newest, else count it dead
     *    and sweep when the count says so; then it runs the primitive's onCancelled, if any (a gate
     *    decides again: see AdmissionGate). Cancellation racing admission is decided by the node's own
     *    result CAS, so exactly one wins; the engine only unlinks. Races with the engine:
     *    pop vs take: one CAS on state decides; a taken settled node is dropped by drain.
     *    pop vs sweep, sweep vs take: both only skip settled nodes (I1); a sweeper that writes into a
     *    node just popped or taken leaves a settled node linked a little longer, never a live one
     *    unlinked. Drain builds `after`, which the sweeper never touches.
     *
     * 8. Resumption: not here. A primitive admits the nodes drain returns (WaitNode.admit), which
     *    resumes each on its own scheduler through Resume: inline through the trampoline when the
     *    admitting thread already runs that scheduler, so admitting 100,000 waiters in a row does
     *    not grow the stack.
     *
     * 9. References. Seed 002 (the lock-free mutex's LIFO stack that the unlocker reverses into FIFO
     *    order, and the lock-free event's unset / waiters / set word); SignalList (the same removal
     *    and sweep rules); DESIGN principles 3, 5, 6.
     */

    /**
     * A state of a primitive in which no waiter is queued. Subclass it to carry data (an event's
     * value).
     */
    public static class Sentinel {
        private final String name;
        private final boolean acceptsWaiters;

        /**
         * Creates a sentinel.
         *
         * @param name its name, for toString
         * @param acceptsWaiters whether {@link #push} may queue a waiter on top of it
         */
        public Sentinel(String name, boolean acceptsWaiters) {
            this.name = name;
            this.acceptsWaiters = acceptsWaiters;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static final int SWEEP_SLACK = 32;

    private final int sweepSlack;
    private final Runnable onCancelled;
    private volatile Object state;
    private volatile int sweeping;
    private int deadCount; // plain: steering estimate (part 5)
    private int departed; // plain: nodes that left the live count (pop, cancel, drain) since the last sweep
    private int liveAtLastSweep; // plain: nodes the last sweep kept

    /**
     * Creates a queue in state {@code initial}.
     *
     * @param initial the primitive's first state
     */
    public WaitQueue(Sentinel initial) {
        this(initial, SWEEP_SLACK, null);
    }

    /**
     * Creates a queue in state {@code initial} that runs {@code onCancelled} on the cancelling thread
     * after each queued waiter's cancellation has been unlinked (or counted), wherever the node is:
     * in the stack or in a list a primitive took. A primitive whose decision depends on its waiters
     * (a gate's phase, a blocked head) uses it to decide again; it must not block or throw.
     *
     * @param initial the primitive's first state
     * @param onCancelled what to run after a queued waiter is cancelled
     */
    public WaitQueue(Sentinel initial, Runnable onCancelled) {
        this(initial, SWEEP_SLACK, onCancelled);
    }

    /** For tests: a slack of 0 sweeps at the first cancelled node that is not the newest. */
    WaitQueue(Sentinel initial, int sweepSlack) {
        this(initial, sweepSlack, null);
    }

    private WaitQueue(Sentinel initial, int sweepSlack, Runnable onCancelled) {
        this.state = initial;
        this.sweepSlack = sweepSlack;
        this.onCancelled = onCancelled;
    }

    /** Returns the current state: a {@link Sentinel}, or the newest queued {@link WaitNode}. */
    public Object state() {
        return state;
    }

    /** Returns whether the state is a stack of waiters. */
    public boolean hasWaiters() {
        return state instanceof WaitNode;
    }

    /** Changes the state from {@code expect} (a sentinel or a stack) to {@code update}: a take if a stack. */
    public boolean casState(Object expect, Sentinel update) {
        return STATE.compareAndSet(this, expect, update);
    }

    /** Sets the state to {@code update} and returns the previous one (a take if it was a stack). */
    public Object exchange(Sentinel update) {
        return STATE.getAndSet(this, update);
    }

    /**
     * Queues {@code node} if the state accepts waiters. Returns null if it did, or the refusing
     * sentinel (the node is not queued; the caller acts on that state and may try again).
     */
    public Sentinel push(WaitNode node) {
        Object s = state;
        for (;;) {
            if (s instanceof Sentinel z && !z.acceptsWaiters) {
                return z;
            }
            node.below = s;
            Object witness = STATE.compareAndExchange(this, s, node);
            if (witness == s) {
                node.cancelInto(this);
                return null;
            }
            s = witness;
        }
    }

    /**
     * Walks a taken stack (the old state returned by {@link #exchange} or read before a successful
     * {@link #casState}) into arrival order, dropping settled nodes. Returns the oldest waiter,
     * the others following through {@link #next}; null if none. Only the taker calls it.
     */
    public WaitNode drain(Object taken) {
        WaitNode oldest = null;
        int live = 0;
        for (Object o = taken; o instanceof WaitNode n; o = n.below) {
            if (!n.isSettled()) {
                n.after = oldest;
                oldest = n;
                live++;
            }
        }
        departed += live; // settled ones were counted by their own cancelled()
        return oldest;
    }

    /** Returns the waiter after {@code node} in a drained list, and unlinks it. */
    public static WaitNode next(WaitNode node) {
        WaitNode next = node.after;
        node.after = null;
        return next;
    }

    /**
     * Called by a queued node whose cancellation won its result CAS (see {@link WaitNode#cancelInto}):
     * unlinks it (part 7).
     */
    public void cancelled(WaitNode node) {
        unlink(node);
        if (onCancelled != null) {
            onCancelled.run();
        }
    }

    private void unlink(WaitNode node) {
        Object s = state;
        if (s == node) {
            if (STATE.compareAndSet(this, node, node.below)) {
                departed++;
                popSettledHeads();
                return;
            }
        }
        int dead = ++deadCount;
        int gone = ++departed; // it left the live count, wherever it is linked
        if (dead > liveAtLastSweep - gone + sweepSlack) {
            sweep();
        }
    }

    private void popSettledHeads() {
        Object s = state;
        while (s instanceof WaitNode n && n.isSettled()) { // I1: settled nodes only
            Object below = n.below;
            if (!STATE.compareAndSet(this, n, below)) {
                return;
            }
            s = below; // not counted: its own cancelled() counts it as departed
        }
    }

    /** Unlinks settled nodes below the head, unless another thread is sweeping; package-private for tests. */
    void sweep() {
        if (sweeping != 0 || !SWEEPING.compareAndSet(this, 0, 1)) {
            return;
        }
        try {
            deadCount = 0;
            departed = 0;
            int live = 0;
            Object s = state;
            if (s instanceof WaitNode pred) {
                live = 1;
                Object cur = pred.below;
                while (cur instanceof WaitNode n) {
                    if (n.isSettled()) {
                        Object succ = n.below;
                        while (succ instanceof WaitNode m && m.isSettled()) {
                            succ = m.below;
                        }
                        pred.below = succ; // I1: only settled nodes are skipped
                        cur = succ;
                    } else {
                        live++;
                        pred = n;
                        cur = n.below;
                    }
                }
            }
            liveAtLastSweep = live;
        } finally {
            sweeping = 0;
        }
    }

    /** Returns the number of linked nodes in the stack, settled or not; for tests. */
    public int linkedCount() {
        int count = 0;
        for (Object o = state; o instanceof WaitNode n; o = n.below) {
            count++;
        }
        return count;
    }

    @Override
    public String toString() {
        Object s = state;
        return "WaitQueue[" + (s instanceof WaitNode ? "waiters" : s) + "]";
    }

    private static final VarHandle STATE;
    private static final VarHandle SWEEPING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(WaitQueue.class, "state", Object.class);
            SWEEPING = lookup.findVarHandle(WaitQueue.class, "sweeping", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
