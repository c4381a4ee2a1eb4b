package dev.coro.gate;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The rule of the gates that count identical permits ({@link SerialGate}: one, {@link CapacityGate}:
 * k), with the engine's permit lane (AdmissionGate overview 9): entering and leaving take one atomic
 * instruction on a counter and need no ownership while nobody waits; the engine's owner only hands
 * permits to queued waiters.
 */
abstract class PermitGate extends SingleDoorGate {
    /* Implementation overview.
     *
     * 1. Representation.
     *    permits (final int): the capacity k.
     *    available (volatile int): free permits minus unserved waiters. Read as
     *      p = max(available, 0)  permits free for anyone who arrives
     *      u = max(-available, 0) waiters that registered and are not yet covered by a credit
     *      (never both non-zero: one number).
     *    credits (plain int, owner only, AdmissionGate I1): permits handed to the queue by a release
     *      that found an unserved waiter, not yet given to a particular waiter. May be negative for a
     *      moment (a cancelled waiter's debt, see T6, that a credit still in flight will pay).
     *    Accounting identity (with c = credits + credits in flight, L = waiters registered and
     *      neither admitted nor accounted as cancelled, H = admissions held):
     *      k = p + c + H   and   L = u + c.
     *
     * 2. Transitions (A = available).
     *    T1 try (fast, tryNow and the try door): A > 0 and not closed: CAS A -> A-1: admitted.
     *       Otherwise declined, nothing changed.
     *    T2 arrive (waiting door, after T1 failed): closed: refused, nothing changed. Else
     *       getAndAdd(A, -1): old > 0: admitted (p-1); old <= 0: registered (u+1, L+1), the step is
     *       pushed on the intake and the owner is asked to drain (a push refused by a closed intake
     *       is accounted as the waiter's cancellation, T6).
     *    T3 release: getAndAdd(A, +1): old >= 0: p+1, done (no owner). old < 0: u-1 and one credit
     *       in flight; the engine's release posts it (ruleLeave: credits+1, by the owner or as a
     *       pending release that the owner applies), and the owner drains.
     *    T4 admit (owner): credits > 0 and a live waiter at the head: credits-1, L-1, H+1, its admit
     *       CAS. ruleCanEnter is credits > 0, so waiters with no credit stay in the intake (I5).
     *    T5 undo (owner): the admit CAS lost to the waiter's cancellation: credits+1 (the credit goes
     *       to the next waiter); the cancellation itself is T6.
     *    T6 cancelled waiter (owner, through the intake's onCancelled for a pushed step that ended
     *       cancelled, exactly once per step; and for a refused push): getAndAdd(A, +1): old < 0:
     *       u-1; old >= 0: u was 0, so every registered waiter, this one too, was covered (L = c >= 1
     *       counting credits in flight): its credit is freed as a permit (p+1) and destroyed
     *       (credits-1; if it is still in flight, credits is -1 until it lands).
     *    Each transition keeps the identities of part 1.
     *
     * 3. Linearization points. try and an arrival admitted at once: their RMW on available. A queued
     *    waiter: its place in line is its push; its admission is the owner's admit CAS, paid for by
     *    the credit of the release whose getAndAdd found it unserved. release: its getAndAdd.
     *
     * 4. Invariants.
     *    P1 (no loss, no duplicate): k = p + c + H (part 1) at every RMW on available.
     *    P2 (no barging): a newcomer takes a permit (T1, T2) only when available > 0, so u = 0: every
     *       registered waiter is already covered by a credit on its way. A permit that is freed while
     *       some waiter is unserved (T3, old < 0) goes to the queue, never to the free count.
     *    P3 (no missed waiter): if L > 0 then u > 0 or c > 0; u > 0 implies p = 0, so some admission
     *       is held and its release will post a credit; a posted credit meets its waiter by the
     *       engine's owner protocol (AdmissionGate overview 5: the credit is a pending release, the
     *       waiter a push; whichever comes second finds the other).
     *
     * 5. Memory ordering. available is only touched by volatile RMWs (CAS, getAndAdd) and volatile
     *    reads, totally ordered: a release's getAndAdd happens-before the RMW of the try or arrival
     *    that takes its permit, which carries the release's writes to the admitted work. A permit
     *    that goes through the owner: the engine's ownership and the waiter's admit CAS order it.
     *    credits is owner state, ordered by the engine's ownership (I1).
     *
     * 6. Progress. try, arrive and release are wait-free when nobody waits (one RMW; try retries its
     *    CAS only while another thread's RMW succeeded: lock-free). Handing a credit to a waiter is
     *    the engine's lock-free drain.
     *
     * 7. References. The counter that goes negative by the number of waiters is kotlinx.coroutines'
     *    SemaphoreImpl design and tokio's batch_semaphore permits; here the queue and the hand-off are
     *    the shared admission engine, and a cancelled waiter's count is settled by its owner (T6).
     */

    private final int permits;
    private volatile int available;
    private int credits;

    /** Creates the rule with {@code permits} free permits (validated by the public constructor). */
    PermitGate(int permits) {
        this.permits = permits;
        this.available = permits;
    }

    /** The number of permits. */
    final int permits() {
        return permits;
    }

    /** A snapshot of the free permits: exact when no operation is entering or leaving. */
    final int freePermits() {
        return Math.max(available, 0);
    }

    // ---- the permit lane: outside ownership ----

    @Override
    final boolean tryEnterNow(int kind) { // T1
        if (isClosed()) {
            return false;
        }
        for (int a = available; a > 0; ) {
            int witness = (int) AVAILABLE.compareAndExchange(this, a, a - 1);
            if (witness == a) {
                return true;
            }
            a = witness;
        }
        return false;
    }

    @Override
    final int arrive(int kind) { // T2
        if (isClosed()) {
            return REFUSE;
        }
        return (int) AVAILABLE.getAndAdd(this, -1) > 0 ? ENTER : QUEUE;
    }

    @Override
    final void arrivalRefused(int kind) { // T2's refused push: accounted as a cancelled waiter (T6)
        countCancelledWaiter();
    }

    @Override
    final void release(long weight) { // T3
        int old = (int) AVAILABLE.getAndAdd(this, 1);
        assert old < permits : "a permit was released twice: " + (old + 1) + " free of " + permits;
        if (old < 0) {
            super.release(weight); // an unserved waiter: the credit goes through the owner
        }
    }

    // ---- the rule: owner only ----

    @Override
    final boolean ruleTryEnter(int kind) { // T4
        if (credits <= 0) {
            return false;
        }
        credits--;
        return true;
    }

    @Override
    final boolean ruleCanEnter() {
        return credits > 0;
    }

    @Override
    final void ruleLeave(long released) { // T3's credit posted, or T5
        credits += (int) released;
    }

    @Override
    final void ruleWaitersCancelled(int count) { // T6, count times at once
        int old = (int) AVAILABLE.getAndAdd(this, count);
        // the increments old, old+1, ..., old+count-1 that were >= 0 each free a covered waiter's credit
        int uncovered = Math.min(count, Math.max(-old, 0));
        credits -= count - uncovered;
    }

    @Override
    final int ruleAdmitted() {
        return permits - Math.max(available, 0) - credits;
    }

    private static final VarHandle AVAILABLE;

    static {
        try {
            AVAILABLE = MethodHandles.lookup().findVarHandle(PermitGate.class, "available", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
