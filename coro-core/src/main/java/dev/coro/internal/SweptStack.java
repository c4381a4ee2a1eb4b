package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The counted sweep that {@link SignalList} (a token's callbacks, a task's waiters) and
 * {@link WaitQueue} (a primitive's intake) share: a lock-free stack of nodes whose removed ("dead")
 * nodes are unlinked at once when they are on top, and otherwise by a sweep that runs when the dead
 * nodes that may still be linked outnumber an estimate of the live ones plus a constant. So any
 * sequence of adds and removals keeps at most as many dead nodes linked as live ones, plus that
 * constant (exactly so when one thread works the stack), at O(1) amortized cost.
 *
 * <p>Every stack is also a {@link SignalNode} (two words, default and unused unless the subclass
 * registers itself on a list: a task's run does, on its cancellation token).
 *
 * <p>A subclass says what its stack is: its top ({@link #top}), how a node links to the next older
 * one ({@link #link}, {@link #setLink}), and which nodes are dead ({@link #isDead}). It reports every
 * node that leaves the live set ({@link #leftAtTop}, {@link #leftLinked}, {@link #leftDrained}).
 */
abstract class SweptStack extends SignalNode {
    /* Implementation overview.
     *
     * 1. Representation. The stack itself is the subclass's (a head word and a link per node). Here
     *    one word, steering (volatile Steering): null until the first node is left linked (most
     *    stacks, a task's waiters above all, only ever pop their top, and so keep no counts: a
     *    fiber is a SignalList, and a suspended task keeps its fiber), then a Steering, set once by
     *    CAS, holding:
     *    sweeping (volatile int): 0/1, the single-sweeper try-lock.
     *    deadCount (plain int): nodes that left the live set since the last sweep (or since the
     *      steering was made) and may still be linked (not unlinked on the spot).
     *    departed (plain int): every node that left the live set since the last sweep, or since the
     *      steering was made (dead or unlinked at once or drained), saturating at Integer.MAX_VALUE.
     *    liveAtLastSweep (plain int): the live nodes the last sweep kept; 0 before the first sweep.
     *    liveAtLastSweep - departed is a lower bound of the live nodes still linked (adds only raise
     *    the live count; before the first sweep it is at most 0, a bound too, whichever departures
     *    came before the steering was made), so sweeping when deadCount > liveAtLastSweep - departed
     *    + SLACK keeps linked <= 2 * live + SLACK when one thread works the stack. Every node left
     *    linked is counted in deadCount: the first one makes the steering.
     *
     * 2. Transitions. leftAtTop: departed++. leftDrained(n): departed += n. Both change nothing while
     *    there is no steering. leftLinked: makes the steering if there is none (CAS null -> new;
     *    the loser uses the winner's), then departed++, deadCount++, then a sweep if the trigger
     *    holds. sweep (try-lock): counts reset; for each
     *    live pred, pred.link = the first live node below it (skipping only dead nodes); the live
     *    nodes kept become liveAtLastSweep.
     *
     * 3. Linearization: none of their own; the stack's operations linearize at the subclass's CASes.
     *
     * 4. Invariant. S1: a sweep skips dead nodes only, and dead is terminal, so every live node
     *    linked before the sweep stays reachable from the top.
     *
     * 5. Memory ordering. The three counts are plain and racy on purpose (here and in both
     *    subclasses): a lost or stale update only moves a sweep earlier or later, and every sweep
     *    resets them from what it walked. The links the sweep writes are the subclass's volatile
     *    fields, so a concurrent reader sees either the old or the new successor, both reachable
     *    through dead nodes only (S1). sweeping is volatile: its CAS and its release write bracket
     *    one sweep at a time. steering is volatile and written once, by CAS, so every thread uses
     *    the same try-lock.
     *
     * 6. Progress. The sweep is a try-lock nobody waits for: a thread that finds it taken skips.
     *    Cost: a sweep walks live + dead nodes; the trigger makes that walk at most
     *    2 * (the adds and removals since the previous sweep) + SLACK: O(1) amortized.
     *
     * 7. Races. A sweep that writes into a node that a concurrent pop or take has just unlinked
     *    leaves a dead node linked a little longer, never a live node unlinked (S1). The subclass
     *    lists its own races.
     *
     * 8. Resumption: none here.
     *
     * 9. References. Seed 002 (the intake's lock-free stack); SignalList and WaitQueue, its two
     *    users.
     */

    /** Dead nodes tolerated beyond the live estimate before a sweep. */
    static final int SWEEP_SLACK = 32;

    /** The sweep's try-lock and counts (part 1): made when a node is first left linked. */
    private static final class Steering {
        volatile int sweeping;
        int deadCount; // plain: a steering estimate, see part 5
        int departed; // plain: a steering estimate, see part 5
        int liveAtLastSweep; // plain: a steering estimate, see part 5
    }

    /** Null until a node is first left linked, then set once (part 1). */
    private volatile Steering steering;

    /** Creates a stack with no steering yet (one field per instance: a task's fiber is one). */
    SweptStack() {}

    /** The steering, made if there is none yet (part 2). */
    private Steering steering() {
        Steering st = steering;
        if (st == null) {
            st = new Steering();
            Steering witness = (Steering) STEERING.compareAndExchange(this, (Steering) null, st);
            if (witness != null) {
                st = witness;
            }
        }
        return st;
    }

    /** Dead nodes tolerated beyond the live estimate before a sweep; tests use 0 (sweep at once). */
    int sweepSlack() {
        return SWEEP_SLACK;
    }

    /** Returns the newest node, or null if the stack holds no node. */
    abstract Object top();

    /** Returns the node below {@code node} (a node, or the stack's end: anything that is not a node). */
    abstract Object link(Object node);

    /** Makes {@code next} the node below {@code node} (a volatile write). */
    abstract void setLink(Object node, Object next);

    /** Returns whether {@code o} is a node of this stack (not its end). */
    abstract boolean isNode(Object o);

    /** Returns whether {@code node} is dead: removed, settled; terminal. */
    abstract boolean isDead(Object node);

    /** A node left the live set and was unlinked at once (it was on top). */
    final void leftAtTop() {
        Steering st = steering;
        if (st != null) { // none: nothing was left linked, so there is nothing to steer (part 1)
            int d = st.departed;
            if (d != Integer.MAX_VALUE) { // saturate: a long run of pops must not wrap it
                st.departed = d + 1;
            }
        }
    }

    /** {@code count} live nodes left the stack at once (a take). */
    final void leftDrained(int count) {
        Steering st = steering;
        if (st != null) {
            long d = (long) st.departed + count;
            st.departed = (int) Math.min(d, Integer.MAX_VALUE);
        }
    }

    /** A node left the live set and may still be linked: counts it dead, and sweeps if due. */
    final void leftLinked() {
        Steering st = steering();
        int gone = st.departed;
        if (gone != Integer.MAX_VALUE) {
            st.departed = ++gone;
        }
        int dead = ++st.deadCount;
        if (dead > st.liveAtLastSweep - gone + sweepSlack()) {
            sweep(st);
        }
    }

    /** Unlinks the dead nodes below the top, unless another thread is sweeping. */
    final void sweep() {
        sweep(steering());
    }

    private void sweep(Steering st) {
        if (st.sweeping != 0 || !SWEEPING.compareAndSet(st, 0, 1)) {
            return;
        }
        try {
            st.deadCount = 0;
            st.departed = 0;
            int live = 0;
            Object pred = top();
            if (isNode(pred)) {
                live = 1;
                Object cur = link(pred);
                while (isNode(cur)) {
                    if (isDead(cur)) {
                        Object succ = link(cur);
                        while (isNode(succ) && isDead(succ)) {
                            succ = link(succ);
                        }
                        setLink(pred, succ); // S1: only dead nodes are skipped
                        cur = succ;
                    } else {
                        live++;
                        pred = cur;
                        cur = link(cur);
                    }
                }
            }
            st.liveAtLastSweep = live;
        } finally {
            st.sweeping = 0;
        }
    }

    private static final VarHandle SWEEPING;
    private static final VarHandle STEERING;

    static {
        try {
            SWEEPING = MethodHandles.lookup().findVarHandle(Steering.class, "sweeping", int.class);
            STEERING = MethodHandles.lookup().findVarHandle(SweptStack.class, "steering", Steering.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
