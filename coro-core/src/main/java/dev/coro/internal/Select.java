package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One suspension waiting in several queues at once (several engines, later several channels), of
 * which exactly one wins: the select-able waiter. The waiter (a task's suspension step) is queued in
 * none of them; each queue gets a {@linkplain #clause(int) clause} node of its own, and every clause
 * settles through this select. The first clause to settle (admitted, abandoned because its queue
 * closed, or rejected because it expired) claims the select with one CAS and settles the waiter with
 * its outcome; every other clause then departs from its queue (the queue sees a settled node, skips
 * it, and gives back whatever it had reserved for it), exactly once.
 *
 * <p>Usage, in a {@code Task.create} body: {@code Select s = new Select((WaitNode) completer, n)};
 * then for each clause {@code i}, while {@code !s.isSettled()}, queue {@code s.clause(i)} (for an
 * engine, {@code engine.enter(s.clause(i), tag)}). An admitted waiter resumes with a
 * {@link Selected}: which clause won, and the value it was admitted with.
 */
public final class Select implements WaitNode.Departures {
    /* Implementation overview.
     *
     * 1. Representation. winner (volatile int): -1 while open, else the index of the clause that
     *    claimed the select. The waiter's own result word (its CAS) settles the suspension; each
     *    clause's departure hook (WaitNode.hook) tells its queue once.
     *
     * 2. Transitions.
     *    clause i admitted / abandoned / rejected: CAS winner -1 -> i (the claim); the loser of the
     *      claim returns false (the queue undoes an admission). The winner of an admission first makes
     *      every other clause depart, then admits the waiter with Selected(i, value); an abandon or
     *      reject settles the waiter on its cancelled or error channel, whose departure hook (this
     *      select's departed) makes every clause depart, clause i too (its queue counts it cancelled).
     *    the waiter's token fires: the waiter settles cancelled and departs: every clause departs.
     *
     * 3. Linearization points. A clause's claim CAS decides among the clauses; the waiter's result CAS
     *    decides between the winning clause and the waiter's own cancellation. Exactly one outcome.
     *
     * 4. Invariants. S1: at most one clause is admitted: only the claimer calls the waiter's admit.
     *    S2: every clause that is not admitted departs from its queue exactly once (its hook's
     *    getAndSet), whether it lost the claim, claimed but lost to the token, or was queued after
     *    the select settled (its cancelInto finds the hook done and departs at once).
     *
     * 5. Memory ordering. winner is volatile; the claim CAS orders the claimer's later writes. The
     *    waiter's result CAS publishes the value to the resumed task (AsyncStep part 5).
     *
     * 6. Progress. Wait-free apart from the departures it triggers (one hook per clause).
     *
     * 7. Cancellation races. Token vs claim: if the token settles the waiter first, its departure
     *    runs every clause's hook; a clause that claims afterwards finds the waiter settled, its admit
     *    returns false (the queue undoes it), and its own hook has already run or runs once. If the
     *    claim comes first and the token wins the waiter's CAS, the same. Claim vs claim: one CAS.
     *
     * 8. Resumption: the waiter's (its scheduler, through the trampoline). The losing clauses depart
     *    before the winner's admit resumes the waiter, so the resumed task never sees them reserved.
     *
     * 9. References. Go's select and kotlinx.coroutines' SelectImplementation (one state word per
     *    select, clauses registered in each channel's queue); DESIGN principle 5.
     */

    /**
     * What a waiter admitted through a select resumes with.
     *
     * @param index the clause that won
     * @param value the value that clause was admitted with
     */
    public record Selected(int index, Object value) {}

    private final WaitNode waiter;
    private final Clause[] clauses;
    private volatile int winner = -1;

    /**
     * Creates a select of {@code clauses} clauses for {@code waiter}, and makes the waiter's departure
     * (its token firing) the departure of every clause.
     *
     * @param waiter the suspension: a task's step, not queued anywhere itself
     * @param clauses how many queues it waits in
     * @throws IllegalArgumentException if {@code clauses < 1}
     */
    public Select(WaitNode waiter, int clauses) {
        if (clauses < 1) {
            throw new IllegalArgumentException("clauses must be at least 1, got " + clauses);
        }
        this.waiter = waiter;
        this.clauses = new Clause[clauses];
        for (int i = 0; i < clauses; i++) {
            this.clauses[i] = new Clause(this, i);
        }
        waiter.cancelInto(this);
    }

    /**
     * Returns clause {@code i}: the node to queue in the {@code i}-th queue.
     *
     * @param i the clause's index
     * @return the clause node
     */
    public WaitNode clause(int i) {
        return clauses[i];
    }

    /**
     * Returns whether the select is decided: a clause won, or the waiter was cancelled. Queueing
     * further clauses is then pointless (they would depart at once).
     *
     * @return whether settled
     */
    public boolean isSettled() {
        return winner >= 0 || waiter.isSettled();
    }

    /** The waiter departed (its token, or a clause's abandon or reject): every clause departs (S2). */
    @Override
    public void departed(WaitNode node) {
        for (Clause c : clauses) {
            c.depart();
        }
    }

    private boolean claim(int index) {
        return winner < 0 && WINNER.compareAndSet(this, -1, index) && !waiter.isSettled();
    }

    /** A clause node: settles through the select (part 2). */
    private static final class Clause extends WaitNode {
        private final Select select;
        private final int index;

        Clause(Select select, int index) {
            this.select = select;
            this.index = index;
        }

        @Override
        public boolean admit(Object value) {
            return admit(value, false);
        }

        @Override
        public boolean admitQueued(Object value) {
            return admit(value, true);
        }

        private boolean admit(Object value, boolean queued) {
            if (!select.claim(index)) {
                return false;
            }
            for (Clause c : select.clauses) { // the others depart before the waiter resumes (part 8)
                if (c != this) {
                    c.depart();
                }
            }
            Selected selected = new Selected(index, value);
            // false: the token won; S2
            return queued ? select.waiter.admitQueued(selected) : select.waiter.admit(selected);
        }

        @Override
        public boolean abandon() {
            return select.claim(index) && select.waiter.abandon(); // the waiter's departure departs all
        }

        @Override
        public boolean abandon(Object reason) {
            return select.claim(index) && select.waiter.abandon(reason);
        }

        @Override
        public boolean reject(Throwable error) {
            return select.claim(index) && select.waiter.reject(error);
        }

        @Override
        public boolean isSettled() {
            return select.isSettled();
        }

        @Override
        public boolean isCancelRequested() {
            return select.waiter.isCancelRequested();
        }

        void depart() {
            departed();
        }

        @Override
        public String toString() {
            return "Select.Clause[" + index + "]";
        }
    }

    private static final VarHandle WINNER;

    static {
        try {
            WINNER = MethodHandles.lookup().findVarHandle(Select.class, "winner", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
