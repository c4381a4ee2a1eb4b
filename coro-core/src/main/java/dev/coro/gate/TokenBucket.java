package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.WaitOrder;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeoutException;

/**
 * The rule of the gates of time ({@link RateGate}, {@link ThrottleGate}): a token bucket on a
 * scheduler's clock, optionally with a bound on the operations running at once. Waiters are offered
 * in arrival order; the engine's one timer wakes the gate when the first waiter's tokens are there.
 */
final class TokenBucket extends AdmissionEngine {
    /* Implementation overview (the engine holds queueing, hand-off, cancellation, expiry and the
     * timer: AdmissionEngine's overview; this is the rule, and the unbounded form's lane of time).
     *
     * 1. State. tat (volatile long), the theoretical arrival time of the generic cell rate
     *    algorithm: the bucket is full at any time t >= tat, and holds (burstNanos - (tat - t)) /
     *    interval tokens before it; the clock's time at creation (full then). registered (volatile
     *    long, the lane only): the permits of the waiters registered at the waiting door and neither
     *    in (ruleEntered) nor departed (ruleDeparted). Owner only: running, the admitted operations
     *    that have not left (the bounded form); queued, the permits of the waiters the owner has taken, for the fail-fast
     *    projection.
     *
     * 2. Due time of a request for n permits present since p: due = max(p, tat - (burst - n) *
     *    interval), the first time at or after p at which the bucket holds n tokens. Admitted
     *    iff due <= now; then tat = max(tat, due) + n * interval (the algorithm's update for an
     *    arrival at due; max(tat, due) is the admission's start). Present since: now, in a throttle
     *    and for an arrival on the fast path, so a throttle is the algorithm on the clock itself:
     *    its starts are never closer than the interval. A rate keeps its schedule: a queued waiter
     *    is stamped with the time the owner took it (ruleArrived; at or after its registration, so
     *    it errs late, never early) and is due by that stamp: its due time is the slot the schedule
     *    gave it, whenever the timer fires. After a late timer or a stall of the JVM (a GC pause, a
     *    descheduled owner), the waiters whose slots have passed are admitted at once, and the ones
     *    behind them keep their slots (10,000 waiters on 1,000/s take 10 s, not 10 s plus every
     *    stall).
     *
     * 3. Transitions.
     *    T1 fast path (tryEnterNow, the lane: the unbounded form): now = the clock, then: closed or
     *       registered != 0: declined (no barging). Else CAS tat t -> max(t, now) + n * interval if
     *       t - (burst - n) * interval <= now (due <= now with p = now), declined otherwise; a lost CAS re-reads the clock and registered and retries
     *       (two arrivals that read the same time would otherwise find the second token 1 ns ahead). The bounded
     *       form decides its fast path under ownership (the engine's), by T3.
     *    T2 arrive (the waiting door, after T1 declined): registered += n (the lane), then the
     *       engine pushes the node. A push refused by a closed intake is a departure (T5).
     *    T3 decide (owner, ruleTryEnter): running < maxRunning, due <= now: CAS tat to the update of
     *       part 2 (retried: a T1 that read registered == 0 before this waiter registered may still
     *       land its CAS), running + 1 (bounded), queued - n. Refused: the engine's
     *       one timer is armed for due (ruleReadyAt); refused for running, only an exit (ruleLeave)
     *       changes the answer.
     *    T4 entered (owner, ruleEntered: the admit CAS won): registered -= n.
     *    T5 departed (owner, ruleDeparted, summed weights): registered -= w, queued -= w.
     *    T6 undo (owner, ruleUndo: the admit CAS lost to the waiter's departure): tat -= n *
     *       interval, running - 1 (bounded). The waiter is still registered (T5 comes after), so no T1
     *       has entered since T3 but one that had read registered == 0 before this waiter
     *       registered; that one's clock reading is before the waiter's stamp, hence before due, so
     *       the undo leaves tat at or above its value without the undone admission: a cancelled
     *       waiter takes no token, and never gives back one that was taken.
     *    T7 leave (ruleLeave, the bounded form's exits): running -= w. The unbounded form has no
     *       exits; a trying door cancelled at the instant it was admitted on T1 spends its token.
     *
     * 4. Linearization points. T1: its read of registered (== 0), with its CAS then based on a tat
     *    that includes every admission decided before; T3: the owner's CAS of tat, the admission
     *    itself the admit CAS (the engine's). A waiter's place in line: its push (the engine's).
     *
     * 5. Invariants. B1 (no barging): T1 admits only while no waiter is registered; a waiter is
     *    registered from before its push until it is in or departed, so while anyone waits, every
     *    arrival queues behind it. B2 (the rate): the starts of the admissions, in the order of
     *    their tat CASes, are at least n * interval apart (each start >= the tat before it), and each
     *    admission's start is at most its time (the clock reading of T1, its due time in T3) plus
     *    (burst - n) intervals; so the admissions whose times lie in a span T number at most burst +
     *    T / interval permits. In a throttle and on the fast path those times are clock readings
     *    taken before the admission: the bound holds on the clock. In a rate a queued waiter's time
     *    is its due time: the bound holds on the schedule, and after a stall the admissions that
     *    came due during it are made at once (part 2). B3 (no lost wake-up): a refused first waiter
     *    has the engine's one timer armed for its due time (bounded: or an admission running).
     *
     * 6. Memory ordering. tat and registered are volatile and changed by CAS and getAndAdd only:
     *    T1 reads the clock, then registered, then tat; a waiter's registration (a volatile RMW)
     *    before its push, so an owner that decides it reads a tat that includes every T1 that read
     *    registered == 0 before, and a later T1 reads registered != 0. Owner state is ordered by the
     *    engine's ownership (its I1). The clock is monotonic across threads (System.nanoTime, or a
     *    virtual clock's volatile time), which T6's argument needs.
     *
     * 7. Deadlines. An arrival with a deadline has its turn projected as max(now, tat - burstNanos
     *    + (queued + n) * interval) (the waiters ahead all served first, each after the bucket state
     *    now), a lower bound of its due time: their admissions add at least their permits to tat.
     *    After its deadline, the waiter is stamped hopeless and the engine expires it in the same
     *    drain (TimeoutException), without waiting. queued is exact but for waiters that depart
     *    before the owner takes them (their departure is counted, their arrival never was): then it
     *    is low. So the projection errs early, never late: a waiter is failed at once only when it
     *    cannot make it; otherwise it expires at its deadline.
     *
     * 8. Progress. T1 is lock-free (its CAS fails only when another admission succeeded); the rest
     *    is the engine's lock-free drain.
     */

    /** A queued waiter's ask: its permits, its deadline, its projected turn, and when it was taken. */
    static final class Ask {
        final long permits;
        final long deadline;
        /** The turn the schedule gave it at arrival, if after its deadline; else NO_DEADLINE. */
        final long hopelessTurn;
        /** When the owner took it (a rate's stamp), or NOT_STAMPED. */
        final long presentSince;

        Ask(long permits, long deadline, long hopelessTurn) {
            this(permits, deadline, hopelessTurn, NOT_STAMPED);
        }

        Ask(long permits, long deadline, long hopelessTurn, long presentSince) {
            this.permits = permits;
            this.deadline = deadline;
            this.hopelessTurn = hopelessTurn;
            this.presentSince = presentSince;
        }
    }

    private static final long NOT_STAMPED = Long.MIN_VALUE;

    private final String name;
    private final SchedulerClock clock;
    /** Nanoseconds per token. */
    final long interval;
    /** The most tokens that accumulate. */
    final long burst;
    private final long burstNanos;
    final long maxRunning;
    /** Whether queued waiters are due by their stamps (a rate) or by the clock (a throttle). */
    private final boolean keepsSchedule;
    /** The unbounded form: arrivals enter by a CAS on tat while nobody waits (T1). */
    private final boolean lane;
    private volatile long tat;
    private volatile long registered;
    private long running;
    private long queued;

    TokenBucket(String name, long interval, long burst, long maxRunning, boolean keepsSchedule, SchedulerClock clock) {
        super(WaitOrder.arrival(), false, clock);
        this.name = name;
        this.keepsSchedule = keepsSchedule;
        this.clock = clock;
        this.interval = interval;
        this.burst = burst;
        this.burstNanos = burst * interval; // checked by the gates: no overflow
        this.maxRunning = maxRunning;
        this.lane = maxRunning == Long.MAX_VALUE;
        this.tat = clock.nanoTime(); // full
    }

    static long permitsOf(Object tag) {
        return tag instanceof Ask a ? a.permits : (Long) tag;
    }

    /** When a request with {@code tag} is due by the schedule, with tat {@code t} (part 2). */
    private long due(Object tag, long now, long t) {
        long present = tag instanceof Ask a && a.presentSince != NOT_STAMPED ? a.presentSince : now;
        return Math.max(present, t - (burst - permitsOf(tag)) * interval);
    }

    @Override
    public boolean tryEnterNow(Object tag) { // T1
        if (!lane) {
            return super.tryEnterNow(tag); // decided under ownership, by T3
        }
        long now = clock.nanoTime(); // before registered: a waiter registered after this is stamped later (T6)
        if (isClosed() || registered != 0) {
            return false;
        }
        long n = permitsOf(tag);
        for (long t = tat; t - (burst - n) * interval <= now; ) {
            long witness = (long) TAT.compareAndExchange(this, t, Math.max(t, now) + n * interval);
            if (witness == t) {
                return true;
            }
            now = clock.nanoTime(); // another admission won: time has moved on too (same order as above)
            if (registered != 0) {
                return false;
            }
            t = witness;
        }
        return false;
    }

    @Override
    protected int arrive(Object tag) { // T2
        if (lane) {
            REGISTERED.getAndAdd(this, permitsOf(tag));
        }
        return QUEUE;
    }

    @Override
    protected void arrivalRefused(Object tag) { // T2's refused push: a departure (T5)
        if (lane) {
            departedUnqueued(tag);
        }
    }

    @Override
    protected boolean ruleTryEnter(Object tag) { // T3
        if (running >= maxRunning) {
            return false;
        }
        long now = clock.nanoTime();
        long n = permitsOf(tag);
        long due;
        for (long t = tat; ; ) {
            due = due(tag, now, t);
            if (due > now) {
                return false;
            }
            long witness = (long) TAT.compareAndExchange(this, t, Math.max(t, due) + n * interval);
            if (witness == t) {
                break;
            }
            t = witness; // a T1 that read registered == 0 before this waiter registered
        }
        if (!lane) {
            running++;
        }
        queued = Math.max(0, queued - n); // 0 already on the bounded form's fast path
        return true;
    }

    @Override
    protected void ruleEntered(Object tag) { // T4
        if (lane) {
            REGISTERED.getAndAdd(this, -permitsOf(tag));
        }
    }

    @Override
    protected long ruleReadyAt(Object tag) {
        if (running >= maxRunning) {
            return NO_DEADLINE; // an exit, not time, frees a place
        }
        return due(tag, clock.nanoTime(), tat);
    }

    @Override
    protected boolean ruleCanEnter() {
        return running < maxRunning && tat - burstNanos + interval <= clock.nanoTime();
    }

    @Override
    protected void ruleLeave(long released) { // T7
        if (!lane) {
            running -= released;
        }
    }

    @Override
    protected void ruleUndo(Object tag) { // T6
        TAT.getAndAdd(this, -permitsOf(tag) * interval);
        if (!lane) {
            running--;
        }
    }

    @Override
    protected long ruleAdmitted() {
        return running;
    }

    @Override
    protected void ruleDeparted(long weight) { // T5
        if (lane) {
            REGISTERED.getAndAdd(this, -weight);
        }
        queued = Math.max(0, queued - weight);
    }

    @Override
    protected Object ruleArrived(Object tag) {
        long n = permitsOf(tag);
        long now = clock.nanoTime();
        long turn = Math.max(now, saturatedAdd(tat - burstNanos, saturatedMultiply(queued + n, interval)));
        queued += n;
        long deadline = tag instanceof Ask a ? a.deadline : NO_DEADLINE;
        boolean hopeless = deadline != NO_DEADLINE && turn >= deadline;
        if (!hopeless && !keepsSchedule) {
            return tag;
        }
        return new Ask(n, deadline, hopeless ? turn : NO_DEADLINE, keepsSchedule ? now : NOT_STAMPED);
    }

    @Override
    protected long ruleWeight(Object tag) {
        return permitsOf(tag); // a throttle's waiters ask for 1
    }

    @Override
    protected long ruleDeadline(Object tag) {
        if (tag instanceof Ask a) {
            return a.hopelessTurn != NO_DEADLINE ? Long.MIN_VALUE : a.deadline;
        }
        return NO_DEADLINE;
    }

    @Override
    protected Throwable ruleTimeout(Object tag) {
        if (tag instanceof Ask a && a.hopelessTurn != NO_DEADLINE) {
            return new TimeoutException(name + ": cannot be admitted before the deadline: by the schedule its turn comes "
                    + (a.hopelessTurn - a.deadline) + " ns after it");
        }
        return new TimeoutException(name + ": the deadline passed before admission");
    }

    private static long saturatedAdd(long a, long b) {
        long r = a + b;
        return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r; // b >= 0 here: only upward overflow
    }

    private static long saturatedMultiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        return hi != 0 || lo < 0 ? Long.MAX_VALUE : lo;
    }

    private static final VarHandle TAT;
    private static final VarHandle REGISTERED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TAT = lookup.findVarHandle(TokenBucket.class, "tat", long.class);
            REGISTERED = lookup.findVarHandle(TokenBucket.class, "registered", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
