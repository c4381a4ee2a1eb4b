package dev.coro.gate;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The recent verdicts of a {@link CircuitBreakerGate} in its closed state: the last {@code n} calls
 * ({@link Count}) or the calls of the last stretch of time ({@link Time}). Each closed period of a
 * breaker has a window of its own, made when the period begins, so a window is never reset: a
 * verdict recorded into the window of a period that has ended changes nothing.
 */
abstract class OutcomeWindow {
    /* Implementation overview.
     *
     * 1. Representation.
     *    Count: slots (long[n]): 0 = empty, else seq << 3 | code, where seq is the call's place in
     *      the order of claims (claimed, a counter) and code = 1 | failure << 1 | slow << 2.
     *      totals (long): three signed 21-bit fields, calls | failures << 21 | slow << 42, the sums
     *      over the slots' contents, each slot's change added by the thread that made it.
     *    Time: slots (Bucket[10]), slot k mod 10 for bucket k = (now - origin) / bucketNanos. A
     *      Bucket is its index (final) and two counters: word = calls << 32 | failures, and slow.
     * 2. Transitions.
     *    Count record: seq = claimed.getAndAdd(1); slot seq mod n: CAS it from old to (seq, code)
     *      unless old holds a later seq (then this verdict is already out of the last n: dropped);
     *      then totals.getAndAdd(the change: +1 call if old was empty, the failure and slow bits of
     *      new minus old).
     *    Time record: the bucket of now: if the slot holds an older bucket (or none), CAS in a new
     *      one and look again; if it holds a later one, the verdict is out of the window (dropped);
     *      else getAndAdd its word (and its slow counter).
     * 3. Linearization points. A record: its totals.getAndAdd (Count) or its bucket's getAndAdd
     *    (Time). The answer (passes a threshold?) is read from the value that RMW returned (Count)
     *    or from a sum of the buckets read right after it (Time).
     * 4. Invariants.
     *    I1 (Count): once every record has returned, totals equals the sums over the slots, and the
     *       slots hold the verdicts of the last min(claimed, n) claims: a slot's CAS installs a seq
     *       only over a smaller one, so the largest seq of each residue class stays.
     *    I2 (Count): calls only grows (a slot never becomes empty) and never exceeds n; a field may
     *       go transiently negative or above n by the records in flight (a change applied before the
     *       one it replaced), hence the signed fields, exact while |value| < 2^20.
     *    I3 (Time): a bucket's counters only grow; a verdict is counted in the bucket of its time or
     *       dropped only when a bucket 10 or more later has taken its slot, that is when it has left
     *       the window anyway.
     * 5. Memory ordering: every access is volatile (VarHandle getVolatile / CAS / getAndAdd); the
     *    costs are a few RMWs per verdict, none of them on the admission path.
     * 6. Progress: lock-free. The Count slot CAS retries only when another record changed that slot
     *    (a call a whole window later); the Time slot CAS only when another record installed a
     *    bucket. Nothing waits.
     * 7. Cancellation: a cancelled call is no verdict and never reaches a window.
     */

    /** A call's verdict bits in a Count slot. */
    private static final long PRESENT = 1, FAILURE = 2, SLOW = 4;

    /**
     * Records one verdict at {@code now}, and answers whether the window, with it, passes one of
     * {@code gate}'s thresholds.
     *
     * @param failure whether the call failed
     * @param slow whether it was slow
     * @param now the gate's clock at its end (a Time window's; a Count window ignores it)
     * @param gate the gate whose thresholds decide
     * @return whether the breaker should open
     */
    abstract boolean record(boolean failure, boolean slow, long now, CircuitBreakerGate gate);

    /**
     * Returns the window's sums at {@code now}: {calls, failures, slow calls}.
     *
     * @param now the gate's clock
     * @return the three sums
     */
    abstract long[] sums(long now);

    /** The last {@code n} calls. */
    static final class Count extends OutcomeWindow {
        private static final int BITS = 21;
        private static final long ONE_FAILURE = 1L << BITS, ONE_SLOW = 1L << (2 * BITS);
        private final long[] slots;
        private volatile long claimed;
        private volatile long totals;

        Count(int n) {
            this.slots = new long[n];
        }

        @Override
        boolean record(boolean failure, boolean slow, long now, CircuitBreakerGate gate) {
            long seq = (long) CLAIMED.getAndAdd(this, 1L);
            int i = (int) (seq % slots.length);
            long code = seq << 3 | PRESENT | (failure ? FAILURE : 0) | (slow ? SLOW : 0);
            long old;
            do {
                old = (long) SLOTS.getVolatile(slots, i);
                if (old != 0 && (old >>> 3) > seq) {
                    return false; // I1: a later claim holds the slot; this verdict has left the window
                }
            } while (!SLOTS.compareAndSet(slots, i, old, code));
            long change = (old == 0 ? 1 : 0)
                    + (bit(code, FAILURE) - bit(old, FAILURE)) * ONE_FAILURE
                    + (bit(code, SLOW) - bit(old, SLOW)) * ONE_SLOW;
            long t = (long) TOTALS.getAndAdd(this, change) + change;
            long calls = field(t, 0);
            return gate.passes(calls, field(t, 1), field(t, 2));
        }

        @Override
        long[] sums(long now) {
            long t = totals;
            return new long[] {field(t, 0), field(t, 1), field(t, 2)};
        }

        /**
         * For tests of I1, once every record has returned: {calls, failures, slow} summed over the
         * slots, then the number of slots holding one of the last min(claimed, n) claims.
         */
        long[] recount() {
            long calls = 0, failures = 0, slow = 0, recent = 0;
            long claims = claimed;
            for (int i = 0; i < slots.length; i++) {
                long v = (long) SLOTS.getVolatile(slots, i);
                if (v != 0) {
                    calls++;
                    failures += bit(v, FAILURE);
                    slow += bit(v, SLOW);
                    if ((v >>> 3) >= claims - slots.length) {
                        recent++;
                    }
                }
            }
            return new long[] {calls, failures, slow, recent};
        }

        private static long bit(long code, long bit) {
            return (code & bit) != 0 ? 1 : 0;
        }

        /** The signed field {@code k} (0: calls, 1: failures, 2: slow) of a totals word (I2). */
        static long field(long t, int k) {
            for (int j = 0; j < k; j++) {
                long low = (t << (64 - BITS)) >> (64 - BITS);
                t = (t - low) >> BITS;
            }
            return k == 2 ? t : (t << (64 - BITS)) >> (64 - BITS);
        }

        private static final VarHandle CLAIMED;
        private static final VarHandle TOTALS;
        private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                CLAIMED = l.findVarHandle(Count.class, "claimed", long.class);
                TOTALS = l.findVarHandle(Count.class, "totals", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    /** The calls of the last stretch of time, counted in {@link #BUCKETS} buckets. */
    static final class Time extends OutcomeWindow {
        /** The buckets a time window is counted in. */
        static final int BUCKETS = 10;
        private static final long ONE_CALL = 1L << 32;
        private final long origin;
        private final long bucketNanos;
        private final Bucket[] slots = new Bucket[BUCKETS];

        /** One bucket: its index, calls << 32 | failures, and slow calls. */
        static final class Bucket {
            final long index;
            volatile long word;
            volatile long slow;

            Bucket(long index) {
                this.index = index;
            }
        }

        Time(long origin, long bucketNanos) {
            this.origin = origin;
            this.bucketNanos = bucketNanos;
        }

        private long indexAt(long now) {
            return Math.max(0, (now - origin) / bucketNanos); // the clock a recorder read is not before origin
        }

        @Override
        boolean record(boolean failure, boolean slow, long now, CircuitBreakerGate gate) {
            long k = indexAt(now);
            int i = (int) (k % BUCKETS);
            Bucket b;
            for (;;) {
                b = (Bucket) SLOTS.getVolatile(slots, i);
                if (b != null && b.index == k) {
                    break;
                }
                if (b != null && b.index > k) {
                    return false; // I3: a bucket a window later holds the slot; this verdict has left the window
                }
                SLOTS.compareAndSet(slots, i, b, new Bucket(k)); // lost: another record installed one; look again
            }
            WORD.getAndAdd(b, ONE_CALL + (failure ? 1 : 0));
            if (slow) {
                SLOW_CALLS.getAndAdd(b, 1L);
            }
            long[] s = sumsAt(k);
            return gate.passes(s[0], s[1], s[2]);
        }

        @Override
        long[] sums(long now) {
            return sumsAt(indexAt(now));
        }

        /** The buckets k - 9 to k; slow before word, so that slow calls never outnumber calls. */
        private long[] sumsAt(long k) {
            long calls = 0, failures = 0, slow = 0;
            for (int j = 0; j < BUCKETS; j++) {
                Bucket b = (Bucket) SLOTS.getVolatile(slots, j);
                if (b != null && b.index <= k && b.index > k - BUCKETS) {
                    slow += b.slow;
                    long w = b.word;
                    calls += w >>> 32;
                    failures += w & 0xFFFF_FFFFL;
                }
            }
            return new long[] {calls, failures, slow};
        }

        private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Bucket[].class);
        private static final VarHandle WORD;
        private static final VarHandle SLOW_CALLS;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                WORD = l.findVarHandle(Bucket.class, "word", long.class);
                SLOW_CALLS = l.findVarHandle(Bucket.class, "slow", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }
}
