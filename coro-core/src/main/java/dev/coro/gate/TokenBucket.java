package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.WaitOrder;
import java.util.concurrent.TimeoutException;

/**
 * The rule of the gates of time ({@link RateGate}, {@link ThrottleGate}): a token bucket on a
 * scheduler's clock, optionally with a bound on the operations running at once. Waiters are offered
 * in arrival order; the engine's one timer wakes the gate when the first waiter's tokens are there.
 */
final class TokenBucket extends AdmissionEngine {
    /* Rule (owner only; the engine holds queueing, hand-off, cancellation, expiry and the timer).
     *
     * State: tat, the theoretical arrival time of the generic cell rate algorithm: the bucket is
     * full at any time t >= tat, and holds (burstNanos - (tat - t)) / interval tokens before it.
     * Long.MIN_VALUE at creation: full. running: admitted operations that have not left (bounded
     * form only). queued: the permits of the waiters in the order, for the fail-fast projection.
     *
     * Enter n permits at now: start = max(tat, from), end = start + n * interval; admitted iff
     *   end - now <= burstNanos, and then tat = end. from is now, except in a bucket that keeps its
     *   schedule (a rate) for the waiter it last refused for time: from = the ready time it was
     *   given (promised, <= now), so that a timer that fires late does not push every later
     *   admission back by its lateness (a backlog of 10,000 at 1,000/s takes 10 s, not 10 s plus
     *   10,000 timer latencies). The admissions' times by the schedule follow the algorithm
     *   exactly, and each actual time is at or after its time by the schedule (late by the
     *   timer's lateness; a lateness above an interval moves the schedule by the excess). A throttle
     *   does not keep its schedule: its starts are never closer than the interval. Refused: ready
     *   at max(tat, now) + n * interval - burstNanos (> now), remembered as promised, and the
     *   engine's timer is armed for it (ruleReadyAt). A bounded bucket also needs running <
     *   maxRunning; refused for that, only an exit (ruleLeave) can change the answer.
     * Undo (the admitted waiter had departed: its admit CAS lost): tat -= n * interval, exact,
     *   because the engine undoes before any other decision; so a cancelled waiter takes no token.
     * Arrival with a deadline: its turn by the schedule is max(tat, now) + (queued + n) * interval
     *   - burstNanos (the waiters ahead all served first); after its deadline, the waiter is stamped
     *   hopeless and the engine expires it in the same drain (TimeoutException), without waiting.
     *   queued is exact but for waiters that depart before the owner takes them (their departure is
     *   counted, their arrival never was): then it is low, so the projection errs early, never late:
     *   a waiter is failed at once only when it cannot make it; otherwise it expires at its deadline.
     */

    /** A waiter's ask when it has a deadline: its permits, its deadline, and its projected turn. */
    static final class Ask {
        final long permits;
        final long deadline;
        /** The turn the schedule gave it at arrival, if after its deadline; else NO_DEADLINE. */
        final long hopelessTurn;

        Ask(long permits, long deadline, long hopelessTurn) {
            this.permits = permits;
            this.deadline = deadline;
            this.hopelessTurn = hopelessTurn;
        }
    }

    private final String name;
    private final SchedulerClock clock;
    /** Nanoseconds per token. */
    final long interval;
    /** The most tokens that accumulate. */
    final long burst;
    private final long burstNanos;
    final long maxRunning;
    /** Whether a backlog keeps its schedule when the timer is late (see the overview): a rate. */
    private final boolean keepsSchedule;
    private long tat = Long.MIN_VALUE;
    /** The ready time given to the waiter last refused for time, or NOT_PROMISED. */
    private long promised = NOT_PROMISED;
    private long running;
    private long queued;

    private static final long NOT_PROMISED = Long.MIN_VALUE;

    TokenBucket(String name, long interval, long burst, long maxRunning, boolean keepsSchedule, SchedulerClock clock) {
        super(WaitOrder.arrival(), false, clock);
        this.name = name;
        this.keepsSchedule = keepsSchedule;
        this.clock = clock;
        this.interval = interval;
        this.burst = burst;
        this.burstNanos = burst * interval; // checked by the gates: no overflow
        this.maxRunning = maxRunning;
    }

    static long permitsOf(Object tag) {
        return tag instanceof Ask a ? a.permits : (Long) tag;
    }

    @Override
    protected boolean ruleTryEnter(Object tag) {
        if (running >= maxRunning) {
            return false;
        }
        long now = clock.nanoTime();
        long from = promised != NOT_PROMISED && promised <= now ? promised : now; // keeps the schedule
        long end = Math.max(tat, from) + permitsOf(tag) * interval;
        if (end - now > burstNanos) {
            if (keepsSchedule) {
                promised = Math.max(tat, now) + permitsOf(tag) * interval - burstNanos;
            }
            return false;
        }
        promised = NOT_PROMISED;
        tat = end;
        if (maxRunning != Long.MAX_VALUE) {
            running++;
        }
        queued = Math.max(0, queued - permitsOf(tag)); // 0 already on the fast path
        return true;
    }

    @Override
    protected long ruleReadyAt(Object tag) {
        if (running >= maxRunning) {
            return NO_DEADLINE; // an exit, not time, frees a place
        }
        return Math.max(tat, clock.nanoTime()) + permitsOf(tag) * interval - burstNanos;
    }

    @Override
    protected boolean ruleCanEnter() {
        long now = clock.nanoTime();
        return running < maxRunning && Math.max(tat, now) + interval - now <= burstNanos;
    }

    @Override
    protected void ruleLeave(long released) {
        running -= released; // the bounded form's exits; an unbounded bucket is never released
    }

    @Override
    protected void ruleUndo(Object tag) {
        tat -= permitsOf(tag) * interval;
        if (maxRunning != Long.MAX_VALUE) {
            running--;
        }
    }

    @Override
    protected long ruleAdmitted() {
        return running;
    }

    @Override
    protected void ruleDeparted(long weight) {
        queued = Math.max(0, queued - weight);
    }

    @Override
    protected Object ruleArrived(Object tag) {
        long n = permitsOf(tag);
        long turn = saturatedAdd(Math.max(tat, clock.nanoTime()), saturatedMultiply(queued + n, interval)) - burstNanos;
        queued += n;
        if (tag instanceof Ask a && a.deadline != NO_DEADLINE && turn >= a.deadline) {
            return new Ask(a.permits, a.deadline, turn);
        }
        return tag;
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
}
