package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The rule of the primitives that count interchangeable units (the mutex: one; the serial gate: one;
 * the capacity gate: k; weighted, a budget), with the engine's permit lane (AdmissionEngine part 9):
 * entering and leaving take one atomic instruction on a counter and need no ownership while nobody
 * waits; the engine's owner only hands units to queued waiters. A waiter's weight
 * ({@link #ruleWeight}, 1 by default) is the units it takes.
 *
 * <p>Where the lane cannot be used: rules that are not one count of interchangeable units (a
 * read-write rule's two kinds that exclude each other, a latch, a predicate, a phase), and keyed rules
 * (one count per key: a lane per key would be the lane, the map is not). Any order works with it
 * (the owner hands credits to whichever waiter the order ranks first), and so do expiry (an expired
 * waiter departs like a cancelled one) and a queue limit (a superseded waiter departs the same way:
 * the latest-only gate is a lane of one whose queue holds one).
 */
public class PermitLane extends AdmissionEngine implements UnitCount {
    /* Implementation overview.
     *
     * 1. Representation.
     *    permits (final long): the capacity k.
     *    granted (final boolean): a lane of grants (granted()): it starts with no units, gets them
     *      only from grant(n), and its admissions are spent, never released (see part 9).
     *    available (volatile long): free units minus units owed to registered waiters. Read as
     *      p = max(available, 0)  units free for anyone who arrives
     *      u = max(-available, 0) units that registered waiters still lack (the deficit)
     *      (never both non-zero: one number).
     *    credits (plain long, owner only, AdmissionEngine I1): units handed to the queue (by a
     *      release that found a deficit, or by an arrival that found part of its weight free), not
     *      yet given to a particular waiter. May be negative for a moment (a departed waiter's debt,
     *      see T6, that a credit still in flight will pay).
     *    Accounting identities (c = credits + credits in flight, L = the weights of the waiters
     *      registered and neither admitted nor accounted as departed, H = the weights admitted and
     *      not yet released):
     *      k = p + c + H   and   L = u + c.
     *
     * 2. Transitions (A = available, w = the waiter's weight, r = a released weight).
     *    T1 try (fast, tryNow and the trying door): not closed and A >= w: CAS A -> A - w:
     *       admitted (H + w). Otherwise declined, nothing changed.
     *    T2 arrive (waiting door, after T1 failed): closed: refused, nothing changed. Else
     *       old = getAndAdd(A, -w): old >= w: admitted. Otherwise registered (L + w): the part of w
     *       that was free (old, if old > 0) becomes a credit, posted through the engine's release
     *       (ruleLeave: credits + old); the node is pushed and the owner asked to drain. A push
     *       refused by a closed intake is accounted as a departure (T6).
     *    T3 release r: old = getAndAdd(A, +r): old >= 0: p + r, done (no owner). old < 0: the
     *       deficit absorbs m = min(r, -old) (u - m) and m units become a credit in flight, posted
     *       through the engine's release (ruleLeave: credits + m); the rest is free.
     *    T4 admit (owner): credits >= w for the waiter the order offers: credits - w, L - w, H + w,
     *       its admit CAS. ruleCanEnter is credits > 0, so while no credit exists the intake is not
     *       taken (AdmissionEngine I5).
     *    T5 undo (owner): the admit CAS lost to the waiter's departure: credits + w, H - w (the
     *       credit goes to the next waiter); the departure itself is T6.
     *    T6 departed waiter (owner, ruleDeparted, exactly once per node that registered and departed,
     *       and for a refused push), with w the weights departed: old = getAndAdd(A, +w): the deficit
     *       takes back m = min(w, max(-old, 0)) (u - m: units the waiter still lacked); the other
     *       w - m were covered by credits (L = c counting credits in flight, for those units): they
     *       become free (p + w - m) and those credits are destroyed (credits - (w - m); if still in
     *       flight, credits is negative until they land). T6 is additive: applying the summed weights
     *       of several departures at once equals applying them one by one.
     *    Each transition keeps the identities of part 1.
     *
     * 3. Linearization points. try, and an arrival admitted at once: their RMW on available. A queued
     *    waiter: its place in line is its push; its admission is the owner's admit CAS, paid for by
     *    credits. release: its getAndAdd.
     *
     * 4. Invariants.
     *    P1 (no loss, no duplicate): k = p + c + H (part 1) at every RMW on available.
     *    P2 (no barging): a newcomer takes units (T1, T2) only when available >= w > 0, so u = 0:
     *       every registered waiter's weight is already covered by credits on their way. Units freed
     *       while some waiter lacks any (T3, old < 0) go to the queue first, never to the free count.
     *    P3 (no missed waiter): if L > 0 then u > 0 or c > 0. If u > 0 then p = 0 and the first
     *       waiter lacks units, and H = k - c > 0 (a waiter's weight is at most k, so c < k), so an
     *       admission is held and its release will post credits. If u = 0 then L = c: every waiter is
     *       covered and the owner admits them all. A posted credit meets its waiter by the engine's
     *       owner protocol (AdmissionEngine part 5: the credit is a pending release, the waiter a
     *       push; whichever comes second finds the other).
     *
     * 5. Memory ordering. available is only touched by volatile RMWs (CAS, getAndAdd) and volatile
     *    reads, totally ordered: a release's getAndAdd happens-before the RMW of the try or arrival
     *    that takes its units, which carries the release's writes to the admitted work. Units that go
     *    through the owner: the engine's ownership and the waiter's admit CAS order them. credits is
     *    owner state, ordered by the engine's ownership (I1).
     *
     * 6. Progress. try, arrive and release are wait-free when nobody waits (one RMW; try retries its
     *    CAS only while another thread's RMW succeeded: lock-free). Handing credits to a waiter is
     *    the engine's lock-free drain.
     *
     * 7. Cancellation: T5 and T6; a departed waiter's units are settled by the owner, so a waiter
     *    cancelled while its weight is partly covered by credits in flight leaves the count exactly as
     *    it found it.
     *
     * 8. Resumption: the engine's.
     *
     * 9. A lane of grants (a backpressure gate's: downstream grants, each admission spends one).
     *    k = Long.MAX_VALUE, available starts at 0, and grant(n) is T3 with saturation: CAS A -> A + n,
     *    or Long.MAX_VALUE if that would overflow (as Flow.Subscription.request: that much demand is
     *    unbounded). A deficit absorbs its part first (A < 0: A + n cannot overflow). T6 adds back
     *    what a departed waiter reserved with the same saturating CAS (a grant may have saturated
     *    meanwhile). Nothing else changes: no admission is released, so H only grows and P1 reads
     *    k = p + c + H with k unbounded; ruleAdmitted is 0 (nothing is held that could be returned).
     *
     * 10. References. The counter that goes negative by what the waiters lack is kotlinx.coroutines'
     *    SemaphoreImpl design and tokio's batch_semaphore permits; here the queue and the hand-off are
     *    the shared admission engine, and a departed waiter's units are settled by its owner (T6).
     */

    private final long permits;
    private final boolean granted;
    private volatile long available;
    private long credits;

    /**
     * Creates a lane of {@code permits} free units that offers waiters in arrival order.
     *
     * @param permits the capacity, validated by the caller (at least 1)
     */
    public PermitLane(long permits) {
        this(permits, WaitOrder.arrival(), null);
    }

    /**
     * Creates a lane of {@code permits} free units.
     *
     * @param permits the capacity, validated by the caller (at least 1)
     * @param order the order in which queued waiters receive units
     * @param clock the clock for waiters with a deadline, or null
     */
    protected PermitLane(long permits, WaitOrder order, TimeSource clock) {
        this(permits, order, clock, Integer.MAX_VALUE);
    }

    /**
     * Creates a lane of {@code permits} free units, offered in arrival order, whose queue holds at
     * most {@code queueLimit} waiters: a newer one supersedes the oldest (AdmissionEngine I6; a
     * superseded waiter departs, T6, and takes nothing).
     *
     * @param permits the capacity, validated by the caller (at least 1)
     * @param queueLimit the most queued waiters, at least 1
     */
    public PermitLane(long permits, int queueLimit) {
        this(permits, WaitOrder.arrival(), null, queueLimit);
    }

    private PermitLane(long permits, WaitOrder order, TimeSource clock, int queueLimit) {
        super(order, false, clock, queueLimit);
        this.permits = permits;
        this.available = permits;
        this.granted = false;
    }

    private PermitLane() { // a lane of grants (part 9)
        super(WaitOrder.arrival(), false, null);
        this.permits = Long.MAX_VALUE;
        this.available = 0;
        this.granted = true;
    }

    /**
     * Creates a lane of grants, offered in arrival order: it starts with no units, gets them only
     * from {@link #grant(long)}, and its admissions spend them (they are never released).
     *
     * @return the lane
     */
    public static PermitLane granted() {
        return new PermitLane();
    }

    /**
     * Adds {@code n} units to a lane of grants, saturating at {@link Long#MAX_VALUE}: the waiters
     * that lack units get them first, in order (T3).
     *
     * @param n the units, at least 1 (validated by the caller)
     */
    public final void grant(long n) {
        assert granted && n > 0 : "grant on a lane of permits, or n = " + n;
        long old = addSaturating(n);
        if (old < 0) {
            super.release(Math.min(n, -old)); // a deficit: those units go to the queue
        }
    }

    /** A lane of grants: A + n, or Long.MAX_VALUE if that overflows; returns the old A (part 9). */
    private long addSaturating(long n) {
        for (long a = available; ; ) {
            long next = a > Long.MAX_VALUE - n ? Long.MAX_VALUE : a + n;
            long witness = (long) AVAILABLE.compareAndExchange(this, a, next);
            if (witness == a) {
                return a;
            }
            a = witness;
        }
    }

    /**
     * Returns the capacity.
     *
     * @return the units
     */
    public final long permits() {
        return permits;
    }

    /**
     * A snapshot of the free units: exact when no operation is entering or leaving.
     *
     * @return the free units
     */
    @Override
    public final long freePermits() {
        return Math.max(available, 0);
    }

    // ---- the lane: outside ownership ----

    @Override
    public final boolean tryEnterNow(Object tag) { // T1
        if (isClosed()) {
            return false;
        }
        long w = ruleWeight(tag);
        for (long a = available; a >= w; ) {
            long witness = (long) AVAILABLE.compareAndExchange(this, a, a - w);
            if (witness == a) {
                return true;
            }
            a = witness;
        }
        return false;
    }

    @Override
    protected final int arrive(Object tag) { // T2
        if (isClosed()) {
            return REFUSE;
        }
        long w = ruleWeight(tag);
        long old = (long) AVAILABLE.getAndAdd(this, -w);
        if (old >= w) {
            return ENTER;
        }
        if (old > 0) {
            super.release(old); // the free part of its weight: credits for the queue
        }
        return QUEUE;
    }

    @Override
    protected final void arrivalRefused(Object tag) { // T2's refused push: accounted as a departure (T6)
        departedUnqueued(tag);
    }

    @Override
    public final void release(long weight) { // T3
        long old = granted ? addSaturating(weight) : (long) AVAILABLE.getAndAdd(this, weight);
        assert old + weight <= permits : "units released twice: " + (old + weight) + " free of " + permits;
        if (old < 0) {
            super.release(Math.min(weight, -old)); // a deficit: those units go through the owner
        }
    }

    /**
     * Releases {@code weight} units if that does not make more than the capacity free (the seed's
     * {@code unlock()}, which may be misused); changes nothing otherwise.
     *
     * @param weight the units to release
     * @return whether released (false: they were not held)
     */
    @Override
    public final boolean releaseIfHeld(long weight) {
        for (long a = available; ; ) {
            if (a + weight > permits) {
                return false;
            }
            long witness = (long) AVAILABLE.compareAndExchange(this, a, a + weight);
            if (witness == a) {
                if (a < 0) {
                    super.release(Math.min(weight, -a)); // T3's deficit
                }
                return true;
            }
            a = witness;
        }
    }

    // ---- the rule: owner only ----

    @Override
    protected final boolean ruleTryEnter(Object tag) { // T4
        long w = ruleWeight(tag);
        if (credits < w) {
            return false;
        }
        credits -= w;
        return true;
    }

    @Override
    protected final boolean ruleCanEnter() {
        return credits > 0;
    }

    @Override
    protected final void ruleLeave(long released) { // T2's or T3's credit posted, or T5
        credits += released;
    }

    @Override
    protected final void ruleDeparted(long weight) { // T6, for the summed weights
        long old = granted ? addSaturating(weight) : (long) AVAILABLE.getAndAdd(this, weight);
        long uncovered = Math.min(weight, Math.max(-old, 0));
        credits -= weight - uncovered;
    }

    @Override
    protected final long ruleAdmitted() {
        if (granted) {
            return 0; // spent admissions hold nothing (part 9)
        }
        return permits - Math.max(available, 0) - credits;
    }

    private static final VarHandle AVAILABLE;

    static {
        try {
            AVAILABLE = MethodHandles.lookup().findVarHandle(PermitLane.class, "available", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
