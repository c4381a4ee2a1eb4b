package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The rule of a lock of one unit that admits by competition instead of by hand-off (the barging
 * {@code AsyncMutex} and {@code SerialGate}): a release frees the unit, and if tasks wait, the
 * engine's owner wakes the oldest one (one woken waiter at a time); until that waiter runs and takes
 * the unit, anyone who asks (the releaser coming back, a newcomer, a try) may take it first. So a
 * holder that releases and asks again on the same thread keeps going without a hand-off, and a
 * waiter is woken only once the unit is free.
 *
 * <p>The protocol has a part outside this class: a queued waiter's admission by the engine means
 * "woken", not "holding". The waiting door ({@link #waitingDoor()}) completes with {@link #HELD} when
 * its fast path took the unit, and with null when the waiter was woken; a woken waiter must then
 * call {@link #tryWoken()}, exactly once, on every path (it is not cancellable in between), and ask
 * again if that fails; {@link #entered(Object)} does both cases on the door's value. The layers above
 * build that loop: the lock task and a gate's acquire as a flatMap ({@link Competition}), withLock
 * and a serial gate's within as the test of a guarded node's exit frame, which the run loop applies
 * to the door's value before anything else.
 */
public final class BargingLane extends AdmissionEngine implements UnitCount {
    /* Implementation overview.
     *
     * 1. Representation. state (volatile long), three fields in one word:
     *      bit 0      HELD    someone holds the unit
     *      bit 1      AWAKE   a waiter has been woken and has yet to compete (at most one)
     *      bits 2..   W       registered waiters: queued, neither woken nor accounted as departed,
     *                         counted in units of WAITER = 4
     *    The waiters themselves are the engine's (intake and order, arrival order). The engine's rule
     *    state is this word alone: every hook is a CAS or getAndAdd on it, so the hooks that run
     *    outside ownership (try, arrive, release, compete) and the owner's (wake, undo, departed)
     *    are ordered by the word.
     *
     * 2. Transitions (s = state).
     *    B1 try (tryEnterNow: the waiting door's fast path, tryLock, a gate's try): not closed and
     *       HELD clear: CAS s -> s | HELD. Otherwise declined, nothing changed. Whatever W and AWAKE
     *       are: this is the barging.
     *    B2 arrive (the waiting door, after B1 failed): closed: refused. Else getAndAdd(+WAITER),
     *       then the engine pushes the node and drains. Always QUEUE, never ENTER: a registered waiter
     *       gets the unit only through B4 and B6, so the count W and the queue agree.
     *    B3 release r (unlock, a gate's exit): old = getAndAdd(-HELD), HELD set in old (releaseIfHeld:
     *       CAS, refused if HELD is clear). If old has W > 0 and AWAKE clear: nudge the owner (the
     *       engine's release(1); ruleLeave does nothing). The nudge comes after the unit is free.
     *    B4 wake (owner, ruleTryEnter for the order's first waiter): HELD and AWAKE clear: CAS
     *       s -> s - WAITER + AWAKE, then the engine's admit CAS resumes the waiter ("woken").
     *       Otherwise refused: the first waiter blocks the rest (AdmissionEngine I2).
     *    B5 undo (owner, ruleUndo): that admit CAS lost to the waiter's departure: CAS
     *       s -> s + WAITER - AWAKE (registered again; its departure, B7, unregisters it), and the
     *       drain goes on to the next waiter.
     *    B6 compete (the woken waiter, on its own thread, tryWoken): not closed and HELD clear: CAS
     *       s -> (s | HELD) - AWAKE: it holds. Otherwise CAS s -> s - AWAKE: it lost, and asks again
     *       (B1, then B2: at the back of the line).
     *    B7 departed (owner, ruleDeparted, for the summed weights w of waiters that departed queued,
     *       or a push refused by CLOSED): getAndAdd(-w * WAITER).
     *
     * 3. Linearization points. try, and an acquisition by a woken waiter: their CAS (B1, B6). A
     *    queued waiter's place in line: its push. release: its RMW (B3).
     *
     * 4. Invariants.
     *    L1 (exclusion): HELD is set only by B1 and B6, each a CAS from HELD clear, and cleared only
     *       by B3 by the holder: at most one holder.
     *    L2 (one woken waiter): AWAKE is set only by B4 from AWAKE clear, and cleared only by that
     *       waiter's B6 or its B5: at most one waiter is woken and has not competed.
     *    L3 (counting): W = the waiters registered by B2 (and arrivals refused by CLOSED, B7 at once),
     *       less those woken by a B4 whose admit won, less those accounted as departed by B7. Each
     *       registered waiter leaves W exactly once: woken (B4 kept) or departed (B7; B4 undone by
     *       B5 first). Asserted non-negative.
     *    L4 (no lost wake-up): whenever W > 0 with HELD and AWAKE clear, an owner is about to offer
     *       the first waiter, or some waiter is registered that has not been pushed yet (its own
     *       push then drains). The states that lead there: B3 from HELD (it nudges, unless AWAKE, in
     *       which case the woken waiter's B6 either holds, or clears AWAKE while HELD is set, and
     *       that holder's B3 nudges); B5 (the owner goes on offering in the same pass); B2 on a free
     *       unit (the push and the engine's owner protocol, AdmissionEngine part 5: the order is
     *       empty and ruleCanEnter is true, so room is true and the re-check sees the push). A B4
     *       refused because a barger holds leaves the barger's B3 to nudge again.
     *
     * 5. Memory ordering. state is only touched by volatile RMWs and volatile reads, totally
     *    ordered: a release's RMW happens-before the CAS that takes the unit next (B1 or B6), which
     *    carries the releaser's writes to the next holder. The woken waiter's admission is ordered by
     *    the engine's ownership and the admit CAS, like every other.
     *
     * 6. Progress and fairness. try, arrive, release and compete are lock-free (a CAS loop retries
     *    only when another thread's RMW succeeded); waking is the engine's drain. Not fair: the unit
     *    goes to whoever's CAS comes first; a woken waiter that loses goes to the back of the line
     *    (B6), so a waiter can be overtaken any number of times while others keep taking the unit,
     *    and can wait for ever in principle. What it does promise: the oldest waiter is the one
     *    woken, one at a time, and a free unit with a registered waiter is always offered (L4).
     *
     * 7. Cancellation races. A queued waiter that is cancelled departs: the engine unlinks or skips
     *    it and B7 unregisters it. A wake that loses to the departure is undone (B5). A woken waiter
     *    is past its admission (its task continues with null); it competes (B6) before anything
     *    else, with no cancellation check in between, so AWAKE is always cleared; if it won, its
     *    holder's exit releases (the doors run it on every path); if it lost and its task is now
     *    cancelled, its next wait ends cancelled at its first step and registers nothing. A
     *    closed lane refuses B1, B2 and B6 (B6 then only clears AWAKE): a waiter woken before a
     *    close does not enter after it.
     *
     * 8. Resumption: the engine's (part 8). A woken waiter does not hold the unit, so the engine
     *    never runs it inside its drain: it queues behind the drain on the thread's trampoline and
     *    runs once ownership is released (on the waiter's scheduler; inline only when the releasing
     *    thread runs that scheduler).
     *
     * 9. References. ReentrantLock(false) and AbstractQueuedSynchronizer (a released lock is free,
     *    a parked successor is signalled and competes); Go's sync.Mutex in normal mode (a woken
     *    waiter competes with new arrivals; the "woken" flag keeps the unlocker from waking another
     *    one meanwhile); the paper's relaxed admission for gates (P4215).
     */

    /** The value the waiting door completes with when its fast path took the unit (not woken). */
    public static final Object HELD = new Object() {
        @Override
        public String toString() {
            return "HELD";
        }
    };

    /** Bit 0: the unit is held. */
    private static final long HOLD = 1;
    /** Bit 1: a woken waiter has yet to compete. */
    private static final long AWAKE = 2;
    /** One registered waiter. */
    private static final long WAITER = 4;

    private volatile long state;
    private final Door door = new Door();

    /** Creates a free lane that wakes waiters in arrival order. */
    public BargingLane() {
        super(WaitOrder.arrival(), false, null);
    }

    /**
     * Returns the body of the waiting task (for {@code Task.create}): it completes with
     * {@link #HELD} if its fast path took the unit, else queues the waiter and completes with null
     * once it is woken, when the caller must {@link #tryWoken()}.
     *
     * @return the body
     */
    public Consumer<Object> waitingDoor() {
        return door;
    }

    /**
     * B6: the woken waiter competes for the unit. Call it exactly once per wake, on every path,
     * right after the waiting door completed with null.
     *
     * @return whether it now holds the unit (false: it lost, and must ask again)
     */
    public boolean tryWoken() {
        for (long s = state; ; ) {
            assert (s & AWAKE) != 0 : "tryWoken without a wake";
            boolean take = (s & HOLD) == 0 && !isClosed();
            long next = take ? (s | HOLD) - AWAKE : s - AWAKE;
            long witness = (long) STATE.compareAndExchange(this, s, next);
            if (witness == s) {
                return take;
            }
            s = witness;
        }
    }

    /**
     * Whether a waiter whose waiting door completed with {@code doorValue} now holds the unit: yes if
     * the door's fast path took it ({@link #HELD}); else the waiter was woken and competes, B6
     * ({@link #tryWoken()}). Call it exactly once per completion of the door with a value, before
     * anything else; false: ask again.
     *
     * @param doorValue the waiting door's value
     * @return whether the caller holds the unit
     */
    public boolean entered(Object doorValue) {
        return doorValue == HELD || tryWoken();
    }

    /**
     * The function of a barging entry, {@code door.flatMap(competition)}: after the waiting door, a
     * waiter that took the unit at once goes on to {@code then}; a woken one competes (B6, exactly
     * once, since a flatMap function runs on every path) and goes on to {@code then} if it won, or to
     * the whole entry again (back to the door, at the end of the line) if it lost. One object that
     * knows the task it belongs to, so an entry built per use costs this and its flatMap node.
     * Generic in the task type, so this layer needs no task import.
     *
     * <p>Use: {@code Competition<Task<T>> c = lane.competition(then); return c.entry(door.flatMap(c));}
     *
     * @param <R> the task type the door's flatMap yields
     */
    public static final class Competition<R> implements Function<Object, R> {
        private final BargingLane lane;
        private final R then;
        /** The whole entry; written once by {@link #entry}, before the entry is handed out. */
        private R entry;

        Competition(BargingLane lane, R then) {
            this.lane = lane;
            this.then = then;
        }

        /**
         * Records the whole entry (the door's flatMap of this function), which a lost competition
         * runs again, and returns it.
         *
         * @param entry {@code door.flatMap(this)}
         * @return {@code entry}
         */
        public R entry(R entry) {
            this.entry = entry; // plain: the entry is published with the task that starts it
            return entry;
        }

        @Override
        public R apply(Object doorValue) {
            return lane.entered(doorValue) ? then : entry;
        }
    }

    /**
     * Returns the function of a barging entry that goes on to {@code then} once the unit is held
     * (see {@link Competition}).
     *
     * @param then what follows the acquisition
     * @param <R> the task type
     * @return a new competition
     */
    public <R> Competition<R> competition(R then) {
        return new Competition<>(this, then);
    }

    @Override
    public long freePermits() {
        return (state & HOLD) == 0 ? 1 : 0;
    }

    // ---- outside ownership ----

    @Override
    public boolean tryEnterNow(Object tag) { // B1
        if (isClosed()) {
            return false;
        }
        for (long s = state; (s & HOLD) == 0; ) {
            long witness = (long) STATE.compareAndExchange(this, s, s | HOLD);
            if (witness == s) {
                return true;
            }
            s = witness;
        }
        return false;
    }

    @Override
    protected int arrive(Object tag) { // B2
        if (isClosed()) {
            return REFUSE;
        }
        STATE.getAndAdd(this, WAITER);
        return QUEUE;
    }

    @Override
    protected void arrivalRefused(Object tag) { // B2's refused push: accounted as a departure (B7)
        departedUnqueued(tag);
    }

    @Override
    public void release(long weight) { // B3
        assert weight == 1 : "a lane of one unit releases 1, not " + weight;
        long old = (long) STATE.getAndAdd(this, -HOLD);
        assert (old & HOLD) != 0 : "released a free unit";
        nudgeIfNeeded(old);
    }

    @Override
    public boolean releaseIfHeld(long weight) { // B3, refused when nothing is held
        assert weight == 1 : "a lane of one unit releases 1, not " + weight;
        for (long s = state; (s & HOLD) != 0; ) {
            long witness = (long) STATE.compareAndExchange(this, s, s - HOLD);
            if (witness == s) {
                nudgeIfNeeded(s);
                return true;
            }
            s = witness;
        }
        return false;
    }

    /** After B3 from {@code old}: waiters registered and nobody woken: the owner wakes one (L4). */
    private void nudgeIfNeeded(long old) {
        if (old >= WAITER && (old & AWAKE) == 0) {
            super.release(1);
        }
    }

    // ---- the rule: owner only ----

    @Override
    protected boolean ruleTryEnter(Object tag) { // B4
        for (long s = state; (s & (HOLD | AWAKE)) == 0; ) {
            assert s >= WAITER : "L3: a waiter to wake is registered";
            long witness = (long) STATE.compareAndExchange(this, s, s - WAITER + AWAKE);
            if (witness == s) {
                return true;
            }
            s = witness;
        }
        return false;
    }

    @Override
    protected void ruleUndo(Object tag) { // B5
        long old = (long) STATE.getAndAdd(this, WAITER - AWAKE);
        assert (old & AWAKE) != 0 : "L2: undoing a wake that did not happen";
    }

    @Override
    protected boolean ruleCanEnter() {
        return (state & (HOLD | AWAKE)) == 0;
    }

    @Override
    protected void ruleLeave(long released) {} // B3's nudge: the unit is already free

    @Override
    protected void ruleDeparted(long weight) { // B7
        long old = (long) STATE.getAndAdd(this, -weight * WAITER);
        assert old >= weight * WAITER : "L3: more departures than registered waiters";
    }

    @Override
    protected long ruleAdmitted() {
        return state & HOLD;
    }

    /** The waiting door: B1 as the run loop's fast path, else the engine's enter (B2). */
    private final class Door implements Consumer<Object>, FastPath {
        @Override
        public Object tryNow() {
            return tryEnter(null) ? HELD : NOT_NOW;
        }

        @Override
        public void accept(Object completer) {
            enter((WaitNode) completer, null); // every Task.create completer is its step (a WaitNode)
        }
    }

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(BargingLane.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
