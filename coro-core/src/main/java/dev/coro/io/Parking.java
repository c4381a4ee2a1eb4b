package dev.coro.io;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The event loop's park protocol: how the loop blocks in its selector and how other threads wake it,
 * with one word ({@code wakeAt}), no lost wakeup and at most one {@code wakeup()} per park.
 *
 * <p>The loop calls {@link #park}, which announces the park and asks its {@link Sleeper} whether work
 * arrived meanwhile; only if not does the loop sleep (in its selector), and it calls {@link #awake}
 * once the sleep returns. A thread that has just handed the loop work due at some time calls
 * {@link #wakeFor}, which wakes the sleeper only if the loop is parked past that time, and only if no
 * other thread has woken it since it parked.
 *
 * <p>Thread-safety: {@link #park} and {@link #awake} from the loop thread only; the rest from any
 * thread.
 */
final class Parking {
    /* Implementation overview.
     *
     * 1. Representation. wakeAt (volatile long):
     *      AWAKE (-1)    the loop is not in, nor about to enter, a blocking sleep; it will look for
     *                    work (Sleeper.hasWork) before it sleeps again
     *      FOREVER       the loop is entering or in a sleep with no timeout
     *      d >= 0        the loop is entering or in a sleep that ends at deadline d by itself
     *                    (loop-relative nanoseconds)
     *
     * 2. Transitions.
     *      AWAKE -> d / FOREVER   loop, park: volatile write, then hasWork(d); if it answers true,
     *                             back to AWAKE (the loop does not sleep)
     *      d / FOREVER -> AWAKE   loop, awake: volatile write after its sleep returns
     *      d / FOREVER -> AWAKE   a submitter, wakeFor(due) with due < d: CAS; the CAS winner alone
     *                             calls Sleeper.wakeup(), exactly once
     *
     * 3. Linearization points. park: the write of the parked value (the announcement). wakeFor:
     *    its read of AWAKE or of a parked value no later than due (no wakeup needed), or its
     *    successful CAS.
     *
     * 4. Invariants.
     *    I1 (no lost wakeup) when the loop sleeps until d, every piece of work handed over before
     *       its hasWork(d) check is seen by that check (so it did not sleep, unless the work is due
     *       no earlier than d), and for every piece handed over after it, the submitter's wakeFor
     *       reads the parked value and either finds its due time no earlier than d (the loop wakes
     *       in time by itself) or wins a CAS to AWAKE and calls wakeup().
     *    I2 (one wakeup per park) only a CAS from a parked value to AWAKE calls wakeup(), and the
     *       loop writes a parked value once per park: a burst of submissions to a parked loop makes
     *       one wakeup() call, and submissions to a loop that is awake make none.
     *    I3 the loop writes a parked value only right before its hasWork(d) check, and AWAKE right
     *       after its sleep returns (or instead of sleeping).
     *
     * 5. Memory ordering and the lost-wakeup argument. The submitter makes its work visible with a
     *    volatile write (an inbox or wheel-slot CAS; the wheel's dirty flag) and then reads wakeAt;
     *    the loop writes wakeAt and then reads what hasWork(d) reads (the inbox head, the dirty flag,
     *    the run state): all volatile, so totally ordered (synchronization order), and of the two
     *    reads at least one sees the other side's write (the Dekker pattern). Either the loop sees
     *    the work (and does not sleep, if it is due before d), or the submitter sees the parked
     *    value and wakes the loop.
     *    wakeup() is sticky (Selector.wakeup's contract): called before the sleep starts, it makes
     *    the sleep return at once, so the CAS winner may call it at any time after its CAS.
     *
     *    Why the Netty wakenUp race cannot happen here. Netty 4.0 kept a boolean wakenUp: the loop
     *    set it false before select and submitters did CAS(false, true) + wakeup(). If a submitter's
     *    wakeup came between the loop's set(false) and its select, the select returned at once, but
     *    wakenUp stayed true until the loop's next set(false), so every submitter in between failed
     *    its CAS and called no wakeup while the loop, back in select, blocked on their tasks. The
     *    flaw is that the "someone already woke it" state outlived the wakeup it stood for. Here the
     *    state that suppresses wakeups is AWAKE, and by I3 the loop leaves AWAKE only by writing a
     *    parked value immediately followed by a check for work: every submitter that saw AWAKE made
     *    its work visible before that write (synchronization order), so the check sees it. A
     *    consumed wakeup leaves nothing stale behind; a wakeup() whose sleep already returned for
     *    another reason only makes one later sleep return early (spurious, harmless).
     *
     *    Timed work: a submitter that skips the wakeup because its due time is no earlier than the
     *    parked deadline d relies on the loop waking at d by itself (the sleep never ends before d)
     *    and then looking for work before it sleeps again.
     *
     * 6. Progress. wakeFor is lock-free: a few reads and CASes, each failing only because the loop
     *    moved on. The loop never waits for a submitter.
     *
     * 7. Cancellation. None: a cancel is one more piece of work handed to the loop.
     *
     * 8. Resumption. Not applicable: the loop runs what it finds.
     *
     * 9. References. Netty's SingleThreadEventExecutor and NioEventLoop (the wakenUp race described
     *    in their comments); the JDK's Selector.wakeup contract. Checked by ParkingLincheckTest.
     */

    /** What the loop sleeps in: its selector (or, in tests, a model of one). */
    interface Sleeper {
        /**
         * Whether work has arrived that the loop must act on before {@code deadline}, so that it
         * must not sleep (volatile reads of what submitters write before their wakeFor).
         */
        boolean hasWork(long deadline);

        /** Makes the loop's current or next sleep return at once (sticky, as Selector.wakeup). */
        void wakeup();
    }

    /** wakeAt: the loop is awake and will look for work before it sleeps. */
    static final long AWAKE = -1;
    /** wakeAt: a sleep with no deadline. */
    static final long FOREVER = Long.MAX_VALUE;

    private volatile long wakeAt = AWAKE;

    /**
     * Loop: announces a sleep until {@code deadline}, then looks for work (I3). If it answers true,
     * the loop sleeps now, never past {@code deadline}, and then calls {@link #awake}.
     *
     * @param deadline when the sleep ends by itself (loop-relative nanoseconds, >= 0), or FOREVER
     * @return whether to sleep; false if the check found work (the loop is awake again)
     */
    boolean park(long deadline, Sleeper sleeper) {
        assert deadline >= 0;
        WAKE_AT.setVolatile(this, deadline); // I3: the parked value, then the check
        if (sleeper.hasWork(deadline)) {
            WAKE_AT.setVolatile(this, AWAKE);
            return false;
        }
        return true;
    }

    /** Loop: its sleep returned (I3). */
    void awake() {
        WAKE_AT.setVolatile(this, AWAKE);
    }

    /**
     * Submitter: wakes the loop if it is parked past {@code due} and nobody has woken it yet (I1,
     * I2). Call it after making the work visible.
     *
     * @param due when the work handed over is due: {@link Long#MIN_VALUE} for at once
     * @return whether this call woke the loop
     */
    boolean wakeFor(long due, Sleeper sleeper) {
        for (;;) {
            long w = wakeAt;
            if (w == AWAKE || due >= w) {
                return false; // awake: it looks for work before it sleeps; or it wakes by itself in time
            }
            if (WAKE_AT.compareAndSet(this, w, AWAKE)) {
                sleeper.wakeup();
                return true;
            }
        }
    }

    /** Whether the loop is in, or about to enter, a sleep (tests). */
    boolean isParked() {
        return wakeAt != AWAKE;
    }

    private static final VarHandle WAKE_AT;

    static {
        try {
            WAKE_AT = MethodHandles.lookup().findVarHandle(Parking.class, "wakeAt", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
