package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The intake of every waiting primitive (seed 002's lock-free discipline): one state word that is
 * either a primitive-defined {@link Sentinel} or the newest queued {@link WaitNode}, the older ones
 * linked below it (LIFO, one CAS to join); whoever owns the primitive's next decision takes the whole
 * stack with one exchange and walks it into arrival order ({@link #drain}).
 *
 * <p>What the intake does, once for every primitive: queueing ({@link #push}), taking waiters in
 * arrival order, settling a taken batch ({@link #admitAll}, {@link #abandonAll}), and removing
 * departed waiters (a departed node that is the newest pops itself at once; others are unlinked by
 * the counted sweep it shares with {@link SignalList}, so departed nodes never accumulate beyond the
 * live count plus a constant, even when nobody takes). What a primitive decides: its sentinels (which
 * of them accept waiters) and when to take the stack. The admission engine ({@link AdmissionEngine})
 * uses OPEN and CLOSED and takes under its ownership; the {@code Event} keeps its whole state here
 * (UNSET accepts waiters, a set state refuses them: the value is there), and {@code set} takes.
 */
public final class WaitQueue extends SweptStack implements WaitNode.Departures, WaitSubject {
    /* Implementation overview.
     *
     * 1. Representation.
     *    state (volatile Object):
     *      Sentinel z    no queued waiter; z is the primitive's own state (OPEN, CLOSED, UNSET, Set...)
     *      WaitNode n    n is the newest queued waiter; n.below is the next older one, and so on down
     *                    to the Sentinel the first of them was pushed onto (the state "under" the stack)
     *    WaitNode.below: written by the pusher before the push CAS; later rewritten only by the
     *      sweeper, and only to skip settled nodes.
     *    WaitNode.after: the arrival-order link that drain builds; only the taker reads or writes it.
     *    The sweep's steering counts and try-lock: SweptStack.
     *
     * 2. Transitions.
     *    push:        z (accepts) | n  ->  m, m.below = z | n             CAS state      waiter
     *                 z (refuses)      ->  unchanged, push returns z
     *    sentinel:    z -> z'                                             CAS state      primitive
     *    take:        s -> z'  (s a sentinel or a stack)                  CAS/getAndSet  primitive
     *                 then drain walks the taken stack into arrival order, dropping settled nodes
     *    departure:   n -> n.below while n is settled and newest          CAS state      departing node
     *                 else counted dead (SweptStack.leftLinked), swept when due
     *
     * 3. Linearization points. push: the successful CAS (the waiter's place in line), or the read of
     *    a refusing sentinel. take: its CAS or exchange; every node pushed before it is in the taken
     *    stack, every node pushed after it is not. A node's admission or departure: the CAS of its
     *    own result word (WaitNode.admit / abandon / reject), not anything here.
     *
     * 4. Invariants.
     *    I1: every unsettled node pushed and not yet taken is reachable from state through below:
     *        pops and sweeps skip settled nodes only, and settled is terminal (SweptStack S1).
     *    I2: the bottom of a stack is the sentinel the stack was pushed onto, so popping the last
     *        waiter restores exactly the state under it.
     *    I3: a node is pushed at most once, and appears in at most one taken stack.
     *    I4: drain's result holds each unsettled node of the taken stack once, oldest first.
     *
     * 5. Memory ordering. state and below are volatile. The push CAS (release) publishes the node
     *    and what the waiter wrote before it (its tag); the take (acquire) makes them visible to the
     *    taker, which alone then writes `after`. The steering counts are plain (SweptStack part 5).
     *
     * 6. Progress. push, take and the departure pop are lock-free CAS loops; the sweep is a try-lock
     *    nobody waits for, O(1) amortized (SweptStack part 6).
     *
     * 7. Departures. A node learns its queue right after the push (WaitNode.cancelInto); when it
     *    ends without admission its departure hook calls departed(node) once: pop if newest, else
     *    count it dead and sweep when due; then the primitive's own Departures, if any (the engine
     *    counts what the waiter had reserved and decides again). Admission racing departure is
     *    decided by the node's own result CAS, so exactly one wins; the intake only unlinks.
     *    Races with the intake: pop vs take: one CAS on state decides; a taken settled node is
     *    dropped by drain. pop vs sweep, sweep vs take: both only skip settled nodes (I1); a sweeper
     *    that writes into a node just popped or taken leaves a settled node linked a little longer,
     *    never a live one unlinked. drain builds `after`, which the sweeper never touches.
     *
     * 8. Resumption: not here. admitAll and abandonAll settle each node (WaitNode.admit / abandon),
     *    which resumes it on its own scheduler: inline through the trampoline when the settling
     *    thread already runs that scheduler, so settling 100,000 waiters in a row does not grow the
     *    stack.
     *
     * 9. References. Seed 002 (the lock-free mutex's LIFO stack that the unlocker reverses into FIFO
     *    order, and the lock-free event's unset / waiters / set word); SweptStack; DESIGN
     *    principles 3, 5, 6.
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

    private final boolean sweepAtOnce;
    private final WaitNode.Departures onDeparted;
    private volatile Object state;
    /** For the task dump only ({@link #describedAs}): the primitive and its wait kind, or null. */
    private Described described;

    /** A primitive as the task dump names it: one reference in the queue, set once. */
    private record Described(String kind, Object subject) {}

    /**
     * Creates a queue in state {@code initial}.
     *
     * @param initial the primitive's first state
     */
    public WaitQueue(Sentinel initial) {
        this(initial, null, false);
    }

    /**
     * Creates a queue in state {@code initial} that tells {@code onDeparted}, on the departing
     * thread, about each queued waiter that ends without admission, after unlinking (or counting)
     * it, wherever the node is: in the stack or in a list a primitive took. A primitive whose decision
     * depends on its waiters (a gate's permits, a blocked head) uses it to decide again; it must not
     * block or throw.
     *
     * @param initial the primitive's first state
     * @param onDeparted what to tell after a queued waiter departed
     */
    public WaitQueue(Sentinel initial, WaitNode.Departures onDeparted) {
        this(initial, onDeparted, false);
    }

    /** For tests: {@code sweepAtOnce} sweeps at the first departed node that is not the newest. */
    WaitQueue(Sentinel initial, WaitNode.Departures onDeparted, boolean sweepAtOnce) {
        this.state = initial;
        this.onDeparted = onDeparted;
        this.sweepAtOnce = sweepAtOnce;
    }

    /**
     * Names the primitive whose waiters this queue holds, for the task dump ({@link WaitSubject}).
     * Call it while constructing the primitive, before the queue is shared.
     *
     * @param kind the wait kind's name ({@link WaitSubject#waitKind})
     * @param subject the primitive
     */
    public void describedAs(String kind, Object subject) {
        this.described = new Described(kind, subject);
    }

    @Override
    public String waitKind(WaitNode node) {
        Described d = described;
        return d == null ? "OTHER" : d.kind;
    }

    @Override
    public String waitDescription(WaitNode node) {
        Described d = described;
        return d == null ? "an unnamed wait queue" : WaitSubject.describe(d.subject);
    }

    /**
     * Returns the current state: a {@link Sentinel}, or the newest queued {@link WaitNode}.
     *
     * @return the state
     */
    public Object state() {
        return state;
    }

    /**
     * Returns whether the state is a stack of waiters.
     *
     * @return whether waiters are queued
     */
    public boolean hasWaiters() {
        return state instanceof WaitNode;
    }

    /**
     * Changes the state from {@code expect} (a sentinel or a stack) to {@code update}: a take if a
     * stack.
     *
     * @param expect the state expected
     * @param update the new state
     * @return whether the state was changed
     */
    public boolean casState(Object expect, Sentinel update) {
        return STATE.compareAndSet(this, expect, update);
    }

    /**
     * Sets the state to {@code update} and returns the previous one (a take if it was a stack).
     *
     * @param update the new state
     * @return the previous state
     */
    public Object exchange(Sentinel update) {
        return STATE.getAndSet(this, update);
    }

    /**
     * Queues {@code node} if the state accepts waiters. Returns null if it did, or the refusing
     * sentinel (the node is not queued; the caller acts on that state and may try again).
     *
     * @param node the waiter, not queued before
     * @return null, or the refusing sentinel
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
     * {@link #casState}) into arrival order, dropping settled nodes. Returns the oldest waiter, the
     * others following through {@link #next}; null if none. Only the taker calls it.
     *
     * @param taken the taken state
     * @return the oldest live waiter, or null
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
        leftDrained(live); // settled ones were counted by their own departure
        return oldest;
    }

    /**
     * Returns the waiter after {@code node} in a drained list, and unlinks it.
     *
     * @param node a node of a drained list
     * @return the next node, or null
     */
    public static WaitNode next(WaitNode node) {
        WaitNode next = node.after;
        node.after = null;
        return next;
    }

    /**
     * Admits every waiter of a taken stack with {@code value}, oldest first (the seed's event
     * setting its waiters); a waiter whose token has fired is abandoned instead. Only the taker calls
     * it.
     *
     * @param taken the taken state
     * @param value the value the waiters resume with
     */
    public void admitAll(Object taken, Object value) {
        for (WaitNode w = drain(taken); w != null; ) {
            WaitNode next = next(w);
            settle(w, value);
            w = next;
        }
    }

    /**
     * Settles one waiter that the caller has decided to admit: abandons it instead if its token has
     * fired (do not admit a task that is being cancelled). The one admit step every primitive uses.
     *
     * @param w the waiter
     * @param value the value it resumes with
     * @return whether it was admitted (false: abandoned, or settled before)
     */
    public static boolean settle(WaitNode w, Object value) {
        if (w.isCancelRequested()) {
            w.abandon();
            return false;
        }
        return w.admit(value);
    }

    /**
     * Abandons every waiter of a drained list, oldest first (a primitive that closes).
     *
     * @param first the oldest waiter of the list, or null
     */
    public static void abandonAll(WaitNode first) {
        abandonAll(first, null);
    }

    /**
     * Abandons every waiter of a drained list, oldest first, saying why ({@link WaitNode#abandon(Object)}).
     *
     * @param first the oldest waiter of the list, or null
     * @param reason why, or null
     */
    public static void abandonAll(WaitNode first, Object reason) {
        for (WaitNode w = first; w != null; ) {
            WaitNode next = next(w);
            w.abandon(reason);
            w = next;
        }
    }

    /** A queued node ended without admission (its departure hook): unlinks it (part 7). */
    @Override
    public void departed(WaitNode node) {
        Object s = state;
        if (s == node && STATE.compareAndSet(this, node, node.below)) {
            leftAtTop();
            popSettledHeads();
        } else {
            leftLinked(); // counted dead; swept when dead nodes outnumber the live estimate
        }
        if (onDeparted != null) {
            onDeparted.departed(node);
        }
    }

    private void popSettledHeads() {
        Object s = state;
        while (s instanceof WaitNode n && n.isSettled()) { // I1: settled nodes only
            Object below = n.below;
            if (!STATE.compareAndSet(this, n, below)) {
                return;
            }
            s = below; // not counted: its own departure counts it
        }
    }

    // ---- the stack as SweptStack sees it ----

    @Override
    int sweepSlack() {
        return sweepAtOnce ? 0 : SWEEP_SLACK;
    }

    @Override
    Object top() {
        return state;
    }

    @Override
    Object link(Object node) {
        return ((WaitNode) node).below;
    }

    @Override
    void setLink(Object node, Object next) {
        ((WaitNode) node).below = next;
    }

    @Override
    boolean isNode(Object o) {
        return o instanceof WaitNode;
    }

    @Override
    boolean isDead(Object node) {
        return ((WaitNode) node).isSettled();
    }

    /**
     * Returns the number of linked nodes in the stack, settled or not; for tests.
     *
     * @return the linked nodes
     */
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

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WaitQueue.class, "state", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
