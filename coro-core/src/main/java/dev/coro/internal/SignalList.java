package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A lock-free set of registrations that fires exactly once: the completion word of a task and the
 * callback list of a cancellation token are both this structure.
 *
 * <p>{@link #add} registers a {@link Node}; {@link #fire} detaches every registered node in one
 * exchange and runs {@link Node#onFire} on each node that was still registered; {@link #remove}
 * takes a node back. Between a racing {@code fire} and {@code remove} of the same node exactly one
 * wins, decided by one CAS on the node's own state. With a single registered node this is the
 * completion handshake of seed 000: the waiter publishes itself with one atomic operation, the
 * completer takes it with one exchange, and each learns from the old value whether it must resume
 * the other.
 *
 * <p>Removed nodes are unlinked: at once when they are the newest node (together with the removed
 * nodes right below it, so that taking back every registration newer than the oldest live one
 * leaves exactly the live ones linked), otherwise by a sweep that runs when the count of
 * removed-but-linked nodes exceeds an estimate of the live count (the live count seen by the
 * previous sweep, less the removals since) plus a constant. So any sequence of adds and removes
 * keeps at most as many removed nodes linked as there are live ones, plus that constant (exactly
 * so when one thread works the list), and costs O(1) amortized.
 */
public class SignalList extends SweptStack {
    /* Implementation overview.
     *
     * 1. Representation.
     *    head (volatile SignalNode):
     *      null          empty, not fired
     *      FIRED         fired; terminal; add() refuses from now on
     *      n             the newest registered node; older nodes follow through n.listNext
     *    Node.listState (volatile int, SignalNode's): LIVE -> REMOVED (by remove) | LIVE -> NODE_FIRED
     *      (by fire). Terminal.
     *    Node.listNext (volatile, SignalNode's): the next older node; written before the node is
     *      published, later rewritten only by the single sweeper (to skip REMOVED nodes).
     *    A node is any SignalNode: a Node, or a task's run (Fiber) registered once on its token.
     *    The removal counts and the single-sweeper flag are SweptStack's (the counted sweep that
     *      WaitQueue shares): a removed node that is not the head stays linked until a sweep, which
     *      runs when such nodes outnumber an estimate of the live ones plus a constant.
     *
     * 2. Transitions.
     *    add:     head h (not FIRED) -> n, with n.listNext = h        CAS head          registrant
     *             head h (FIRED)      -> unchanged, add returns false
     *             head h (REMOVED)    -> h.listNext, first (pops it)      CAS head          registrant
     *    fire:    head h -> FIRED                                      getAndSet head    firer
     *             then each node: LIVE -> NODE_FIRED                    CAS state         firer
     *    remove:  head FIRED          -> unchanged, remove returns false (the firer owns the node)
     *             node LIVE -> REMOVED                                  CAS state         remover
     *             then head n -> n.listNext when n is the head          CAS head          remover
     *               and head h -> h.listNext while h is REMOVED         CAS head          remover
     *             SweptStack.leftAtTop if the head pop succeeded, else leftLinked (which may sweep)
     *    sweep:   SweptStack's: pred.listNext = first non-REMOVED node after pred (volatile write)
     *
     * 3. Linearization points.
     *    add:    the successful CAS of head (or the read of FIRED, which refuses).
     *    fire:   the getAndSet of head; a node registered before it fires, one after it is refused.
     *    remove: when it returns true, its read of head that found it not FIRED (the CAS of the
     *            node's state LIVE -> REMOVED follows; a fire between the two finds the node
     *            REMOVED and skips it, so the remove is ordered before that fire). When it returns
     *            false: the read of a non-LIVE state, the read of FIRED, or the failed CAS.
     *    isEmpty, isFired: their one volatile read of head (isEmpty is conservative: a removed node
     *            still linked makes the list non-empty).
     *
     * 4. Invariants.
     *    I1: every LIVE node registered before the last head write is reachable from head (or, after
     *        fire, from the detached chain the firer walks): neither a head pop nor a sweep skips a
     *        node that is not REMOVED, and REMOVED is terminal.
     *    I2: a node's onFire runs at most once, only after winning LIVE -> NODE_FIRED.
     *    I3: once head is FIRED it stays FIRED.
     *    I4: no node goes LIVE -> REMOVED after its remover has read FIRED in head: from the fire's
     *        exchange on, only the firer changes the state of a node it detached, except for a
     *        remove that read head before the exchange. So a remove that starts after any thread
     *        saw the list fired returns false, and its node, if registered in time, runs.
     *
     * 5. Memory ordering. head, listState and listNext are volatile (sequentially consistent);
     *    the steering counts are plain and racy on purpose (SweptStack part 5). The release of the
     *    head CAS in add publishes the node's fields (and whatever the registrant wrote before) to the
     *    firer; the getAndSet in fire is a release that publishes the firer's earlier writes (the
     *    task's result) to every registrant that later reads FIRED with an acquire (the refusing read
     *    in add) and to every node it fires. Weaker modes would do on some accesses, but every access
     *    here is on a path that already pays a CAS, so the volatile default costs nothing measurable.
     *
     * 6. Progress. add and remove are lock-free (a CAS loop that retries only when another thread
     *    changed head). fire is wait-free apart from the callbacks it runs. The sweep is
     *    SweptStack's try-lock (nobody waits) at O(1) amortized cost.
     *
     * 7. Races. fire vs remove of the same node: one CAS on the node's listState decides; the loser learns it
     *    lost from the return value (remove returns false: the callback has run, is running, or is
     *    about to run). A remove that starts after the exchange (and so after any isFired() that
     *    returned true) reads FIRED and loses at once (I4); it does not race the firer's walk.
     *    add vs fire: decided by the order of the head CAS and the head exchange.
     *    sweep vs head pop: both only skip REMOVED nodes, so by I1 no live node is lost; a sweep may
     *    write into a node that a pop has just unlinked, which leaves a REMOVED node linked until a
     *    later sweep, never a live node unlinked.
     *
     * 8. Resumption. fire runs callbacks on the firing thread, newest first; callbacks that resume
     *    work hand it to a scheduler (see Resume), so fire never recurses into user code deeply.
     *
     * 9. References. Seed 000 (one atomic word: pending, completed, or the waiting continuation),
     *    generalized to many waiters; DESIGN principles 2 and 5.
     */

    /** A registration. Subclass it to say what firing does. */
    public abstract static class Node extends SignalNode {
        /** Creates a live, unregistered node. */
        protected Node() {}

        /**
         * Runs once, on the firing thread, when the list fires while this node is registered.
         * Exceptions are reported to the firing thread's uncaught-exception handler and do not stop
         * the other nodes.
         */
        @Override
        protected abstract void onFire();

        /** Returns whether this node has been fired. */
        public final boolean isFired() {
            return wasFired();
        }
    }

    private static final SignalNode FIRED = new Node() {
        @Override
        protected void onFire() {}
    };

    private volatile SignalNode head;

    /** Creates an empty, unfired list. */
    public SignalList() {}

    /**
     * Registers {@code node}. Returns {@code false}, without registering, when the list has already
     * fired: the caller then acts as if the node had fired (this is the "completed" answer of the
     * seed-000 handshake). A node may be added to one list, once.
     */
    public final boolean add(SignalNode node) {
        SignalNode h = head;
        for (;;) {
            if (h == FIRED) {
                return false;
            }
            if (h != null && h.listState == REMOVED) { // pop a removed head while we are here
                SignalNode next = h.listNext;
                if (HEAD.compareAndSet(this, h, next)) {
                    h = next;
                } else {
                    h = head;
                }
                continue;
            }
            node.listNext = h;
            SignalNode witness = (SignalNode) HEAD.compareAndExchange(this, h, node);
            if (witness == h) {
                return true;
            }
            h = witness;
        }
    }

    /**
     * Takes {@code node} back. Returns {@code true} when this call removed it before the list fired
     * (its {@code onFire} will never run), {@code false} when the list has fired (the node's {@code
     * onFire} has run, is running, or is about to run on the firing thread; or the node was refused)
     * or the node was removed already.
     */
    public final boolean remove(SignalNode node) {
        // I4: once head is FIRED the firer owns every detached node, so a remove that sees FIRED
        // leaves the node alone; without this check a remove could overtake the firer's walk and
        // win a node of a list that other threads have already seen fired.
        if (node.listState != LIVE
                || head == FIRED
                || !STATE.compareAndSet(node, LIVE, REMOVED)) {
            return false;
        }
        if (head == node && HEAD.compareAndSet(this, node, node.listNext)) {
            leftAtTop();
            popRemovedHeads();
            return true;
        }
        leftLinked(); // counted dead; sweeps when dead nodes outnumber the live estimate
        return true;
    }

    /**
     * Fires the list: the first call detaches every registered node and runs {@code onFire} on each
     * one still live, newest first, and returns {@code true}; later calls return {@code false}.
     */
    public final boolean fire() {
        SignalNode h = (SignalNode) HEAD.getAndSet(this, FIRED);
        if (h == FIRED) {
            return false;
        }
        for (SignalNode n = h; n != null; n = n.listNext) {
            if (n.listState == LIVE && STATE.compareAndSet(n, LIVE, NODE_FIRED)) {
                try {
                    n.onFire();
                } catch (Throwable t) {
                    Thread current = Thread.currentThread();
                    current.getUncaughtExceptionHandler().uncaughtException(current, t);
                }
            }
        }
        return true;
    }

    /** Returns whether {@link #fire} has been called. */
    public final boolean isFired() {
        return head == FIRED;
    }

    /**
     * Returns whether no node is linked and the list has not fired (a volatile read of the head): a
     * list that holds only removed nodes not yet unlinked is not empty.
     */
    public final boolean isEmpty() {
        return head == null;
    }

    /** Returns the number of linked nodes (live or removed-but-not-yet-unlinked); for tests. */
    public final int linkedCount() {
        int count = 0;
        SignalNode h = head;
        if (h == FIRED) {
            return 0;
        }
        for (SignalNode n = h; n != null; n = n.listNext) {
            count++;
        }
        return count;
    }

    /**
     * Pops the REMOVED nodes that a pop of the head has laid bare (each was counted dead when it was
     * removed; popping them early only makes the next sweep shorter). Stops at a live node, at
     * FIRED, or when another thread changes head.
     */
    private void popRemovedHeads() {
        SignalNode h = head;
        while (h != null && h != FIRED && h.listState == REMOVED) { // I1: pops REMOVED nodes only
            SignalNode next = h.listNext;
            if (!HEAD.compareAndSet(this, h, next)) {
                return;
            }
            h = next;
        }
    }

    // ---- the stack as SweptStack sees it ----

    @Override
    final Object top() {
        SignalNode h = head;
        return h == FIRED ? null : h;
    }

    @Override
    final Object link(Object node) {
        return ((SignalNode) node).listNext;
    }

    @Override
    final void setLink(Object node, Object next) {
        ((SignalNode) node).listNext = (SignalNode) next;
    }

    @Override
    final boolean isNode(Object o) {
        return o != null;
    }

    @Override
    final boolean isDead(Object node) {
        return ((SignalNode) node).listState == REMOVED;
    }

    private static final VarHandle HEAD;
    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(SignalList.class, "head", SignalNode.class);
            STATE = lookup.findVarHandle(SignalNode.class, "listState", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
