package dev.coro.io;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The intake of an event loop's timers that are due within the next couple of seconds: a ring of
 * slots, one per tick of {@code 2^shift} nanoseconds, into which any thread pushes a timer with one
 * CAS, without going through the loop's inbox. The loop takes a slot's timers as a whole, a tick
 * before they can be due, and sorts them then (into its heap); until then it never touches them. So a
 * burst of timers scheduled from another thread costs the loop nothing while it lasts, and the loop
 * stays free to fire the timers that come due during the burst.
 *
 * <p>Each slot holds the timers of exactly one tick at a time, its <em>epoch</em>: a push for any
 * other tick (one the loop has already taken, one too far ahead, or any tick after {@link #close})
 * is refused, and the caller sends the timer through the inbox instead.
 *
 * <p>Thread-safety: {@link #push}, {@link #isDirty} from any thread; everything else only from the
 * loop thread.
 */
final class TimerWheel {
    /* Implementation overview.
     *
     * 1. Representation. heads[i] (volatile, an array element read and written through HEADS):
     *      Epoch(e)       slot i is empty and accepts timers of tick e only (e = -1: closed, none)
     *      t (a timer)    the newest timer pushed for tick tickOf(t.deadline), which is the slot's
     *                     epoch; t.next is the one pushed before it, and so on down to an Epoch(e)
     *                     with the same e (a Treiber stack on a base that names its tick)
     *    The epoch of a slot is therefore read from its head alone: the head's tick if it is a timer,
     *    else the marker's. Markers are immutable; the loop installs a fresh one whenever a slot
     *    moves to a new epoch, so an Epoch object always means the same tick.
     *    dirty (volatile boolean): some push that told the loop (TELL, I4) may have gone unseen by
     *    the loop's last scan.
     *    t.told (LoopTimer, pushers only): the loop has been told of t's slot: t's pusher did the
     *    park protocol (dirty, then wakeFor), or t was pushed behind a told timer (inherited).
     *
     * 2. Transitions.
     *      h (epoch e) -> t with t.next = h     push(t), tickOf(t) = e: CAS heads[i]    any thread
     *      h (epoch e) -> h                     push(t), tickOf(t) != e: refused         any thread
     *      h (epoch e) -> Epoch(t + SLOTS)      take(t), t >= e in the same slot (t > e
     *                                           after a long sleep of the loop): getAndSet loop
     *      h (epoch e) -> Epoch(e)              drain(i): getAndSet (the chain's own base) loop
     *      h           -> Epoch(-1)             close(i): getAndSet; close() does each   loop
     *      dirty: -> true (a push that answers TELL: one volatile write after its CAS, no read
     *      first); true -> false (clearDirty, loop). A push that answers JOINED does not touch it.
     *      t.told: set before t's CAS to h.told of the head h it replaces (plain, published by the
     *      CAS: JOINED if true, TELL if false or h is an Epoch); false -> true after a TELL push's
     *      caller has woken the loop if needed (LoopTimer.told(), release).
     *
     * 3. Linearization points. push: its successful CAS (refused: its last read of the head).
     *    take, drain: the getAndSet of the slot; close: each slot's getAndSet, one slot after
     *    another (not one point for the whole wheel). isEmpty: its read of the head.
     *
     * 4. Invariants.
     *    I1 every timer in slot i's chain has tick = the slot's epoch (push checks it against the
     *       head it replaces, and the CAS fails if the head changed since).
     *    I2 an Epoch object is installed at most once per epoch change and never re-installed for a
     *       different tick, so a CAS that expects it cannot land in a later epoch (no ABA: drain puts
     *       back the chain's own base, which names the same tick, so a push that expected it is
     *       still right; the one closed marker, shared by all slots, is never expected by a CAS).
     *    I3 epochs of a slot only grow (take adds SLOTS), and Epoch(-1) is terminal: no push is
     *       accepted after close, and every accepted push is in a chain that take, drain or close
     *       returns exactly once.
     *    I4 (the loop is told once per chain) a push answers JOINED only if the head its CAS
     *       replaced is a told timer; then some earlier push in the same chain (same slot, same
     *       tick, no take or drain between: those replace the head with an Epoch) has completed the
     *       whole park protocol, and its completion happens-before the JOINED push's return (the
     *       release of told, the acquire of the next push's read, by induction along the chain).
     *       That push's protocol guarantees the loop will not sleep past the slot's take time
     *       without having seen the slot non-empty (EventLoop I1), and the slot stays non-empty,
     *       with the JOINED timer in it, until the loop itself takes or drains it (then the timer
     *       is in the loop's run or owned lists). So a JOINED push may skip the protocol: the loop's
     *       wake time depends only on which slots hold anything, and the take time is the tick's.
     *       A push behind a timer whose pusher has not finished telling (told still false) tells
     *       the loop itself, as does the first push of a chain: no push waits on another thread,
     *       and none completes before the loop is told of its slot (the model check
     *       ParkingLincheckTest found the variant "only the push onto an Epoch tells" wrong: a push
     *       joining a chain whose first pusher had not told yet could return untold).
     *
     * 5. Memory ordering. heads[i]: volatile for every access; a timer's fields (deadline, next,
     *    index) are written before the CAS that publishes it (release) and read by the loop after
     *    its getAndSet (acquire). dirty: volatile; with wakeAt it forms the Dekker pair of the
     *    loop's park protocol (EventLoop's overview, part 5): a TELL pusher writes the slot, then
     *    writes dirty, then reads wakeAt; the loop writes dirty false, scans, writes wakeAt, then
     *    reads dirty (and if it is set, clears it and scans again). t.told: written plain before
     *    the CAS that publishes t, or with release after the pusher's protocol; read with acquire
     *    (I4's happens-before chain); the loop never reads it. A JOINED pusher neither writes
     *    dirty nor reads wakeAt (I4): a burst into slots that already hold timers costs one CAS
     *    per timer and no branch on whether the loop sleeps, so the JIT's code for the push does
     *    not depend on the loop having been busy or idle while it profiled (the former
     *    "if (!dirty) dirty = true" and wakeFor's "awake?" test, never false while a busy loop was
     *    profiled, were compiled as traps that deoptimized the caller's loop when the loop idled).
     *
     * 6. Progress. push is lock-free (its CAS fails only because another push, a take or a drain
     *    succeeded on the same slot) and gives up, never spins, once the epoch moved on. The loop's
     *    operations are wait-free (one getAndSet each, then a private walk).
     *
     * 7. Cancellation. None here: a cancelled timer stays in its chain until the loop drains or
     *    takes the slot (the loop drains it at once when told of the cancel: EventLoop, LoopTimers).
     *
     * 8. Resumption. Not applicable.
     *
     * 9. References. Varghese and Lauck, "Hashed and hierarchical timing wheels" (SOSP 1987) for the
     *    ring of ticks; Netty's HashedWheelTimer, whose producers hand timeouts to the worker through
     *    a queue (here they go straight into their tick's slot); the Treiber stack and the
     *    take-the-whole-stack drain of Inbox.
     */

    /** The base of a slot's chain: the tick the slot accepts. */
    static final class Epoch extends Inbox.Node {
        /** The tick; -1 once the wheel is closed. */
        final long tick;

        Epoch(long tick) {
            this.tick = tick;
        }
    }

    /** push: refused, the slot holds another tick (or the wheel is closed). */
    static final int REFUSED = 0;
    /** push: added behind a timer whose push told the loop; the loop needs no word of it (I4). */
    static final int JOINED = 1;
    /**
     * push: added, and the dirty flag set; the pusher must wake the loop if it sleeps past the slot's
     * take time, and then mark the timer told ({@link LoopTimer#told()}) (I4).
     */
    static final int TELL = 2;

    /** Epoch of a closed slot: no tick matches it. */
    static final long CLOSED = -1;
    /** The head of a closed slot (terminal: nothing replaces it, so sharing it is safe). */
    private static final Epoch CLOSED_SLOT = new Epoch(CLOSED);

    /** log2 of the tick length in nanoseconds. */
    final int shift;
    /** The number of slots, a power of two: the ticks the wheel accepts at once. */
    final int slots;
    private final int mask;
    private final Inbox.Node[] heads;
    private volatile boolean dirty;

    /**
     * A wheel whose slot i accepts tick i at first (ticks {@code 0 .. slots - 1}).
     *
     * @param shift log2 of the tick length in nanoseconds
     * @param slots the number of slots, a power of two
     */
    TimerWheel(int shift, int slots) {
        if (Integer.bitCount(slots) != 1 || shift < 0 || shift > 40) {
            throw new IllegalArgumentException("slots must be a power of two and shift in 0..40, was " + slots
                    + " and " + shift);
        }
        this.shift = shift;
        this.slots = slots;
        this.mask = slots - 1;
        this.heads = new Inbox.Node[slots];
        for (int i = 0; i < slots; i++) {
            heads[i] = new Epoch(i);
        }
    }

    /** The tick of a loop-relative time. */
    long tickOf(long nanos) {
        return nanos >> shift;
    }

    /** The slot of a tick. */
    int slotOf(long tick) {
        return (int) tick & mask;
    }

    /**
     * Pushes {@code t} into the slot of its deadline's tick if that slot holds that tick now; any
     * thread. The caller has set {@code t.index} to {@link LoopTimer#INCOMING}. A push behind a timer
     * whose push has told the loop tells no one (I4); any other sets the dirty flag and asks its
     * caller to tell the loop.
     *
     * @return {@link #TELL} if it was added and the caller must tell the loop (the dirty flag is set:
     *     the caller wakes the loop for the slot's take time if it sleeps past it, then calls
     *     {@link LoopTimer#told()}); {@link #JOINED} if it was added behind a told timer (nothing more
     *     to do); {@link #REFUSED} if the slot holds another tick (or the wheel is closed)
     */
    int push(LoopTimer t) {
        long tick = tickOf(t.deadline);
        int i = slotOf(tick);
        Inbox.Node h = head(i);
        for (;;) {
            if (epochOf(h) != tick) {
                t.next = null;
                return REFUSED;
            }
            // I4: behind a timer whose push told the loop (or inherited that), the loop knows already
            boolean told = h instanceof LoopTimer p && p.isTold();
            t.next = h; // plain, like told: published by the CAS
            t.setToldPlain(told);
            Inbox.Node witness = (Inbox.Node) HEADS.compareAndExchange(heads, i, h, t);
            if (witness == h) {
                if (told) {
                    return JOINED;
                }
                dirty = true; // volatile: ordered before the caller's read of the park word (5)
                return TELL;
            }
            h = witness;
        }
    }

    /** The tick a head stands for (I1). */
    private long epochOf(Inbox.Node h) {
        return h instanceof LoopTimer t ? tickOf(t.deadline) : ((Epoch) h).tick;
    }

    private Inbox.Node head(int i) {
        return (Inbox.Node) HEADS.getVolatile(heads, i);
    }

    /**
     * Loop: takes the timers of the slot of {@code tick}, which holds that tick or an earlier one
     * (after a long sleep of the loop), and moves the slot on to {@code tick + slots} (I3); nothing
     * once closed.
     *
     * @return the timers, oldest push first, linked by {@code next} (the last one's is null); or null
     */
    LoopTimer take(long tick) {
        int i = slotOf(tick);
        if (epoch(i) == CLOSED) {
            return null; // only the loop closes, so this stays true (I3)
        }
        Inbox.Node h = (Inbox.Node) HEADS.getAndSet(heads, i, (Inbox.Node) new Epoch(tick + slots));
        assert epochOf(h) <= tick && slotOf(epochOf(h)) == i : "slot of tick " + tick + " held " + epochOf(h);
        return reverse(h);
    }

    /**
     * Loop: takes the timers of slot {@code i}, leaving it empty and on the same tick.
     *
     * @return the timers, oldest push first, linked by {@code next}; or null
     */
    LoopTimer drain(int i) {
        Inbox.Node h = head(i);
        if (!(h instanceof LoopTimer)) {
            return null;
        }
        Inbox.Node base = h;
        while (base instanceof LoopTimer t) {
            base = t.next;
        }
        // only pushes can have changed the head since: the base stays valid for them (I2)
        return reverse((Inbox.Node) HEADS.getAndSet(heads, i, base));
    }

    /** Loop: whether slot {@code i} holds no timer now. */
    boolean isEmpty(int i) {
        return !(head(i) instanceof LoopTimer);
    }

    /** The tick slot {@code i} accepts now ({@link #CLOSED} once closed). */
    long epoch(int i) {
        return epochOf(head(i));
    }

    /** Whether a push may have happened since the last {@link #clearDirty}; any thread. */
    boolean isDirty() {
        return dirty;
    }

    /** Loop: forgets past pushes; call before a scan of the slots (the Dekker pair, part 5). */
    void clearDirty() {
        dirty = false;
    }

    /**
     * Loop: closes every slot (later pushes are refused) and returns every timer still held, in no
     * particular order, linked by {@code next}. The slots close one after another, each at its own
     * getAndSet: a push refused by a slot already closed may come before a push that a slot not yet
     * closed accepts (and that this call then returns). The loop closes its inbox after its wheel,
     * so a refused push still reaches the loop, as a dropped timer.
     */
    LoopTimer close() {
        LoopTimer all = null;
        for (int i = 0; i < slots; i++) {
            LoopTimer chain = close(i);
            while (chain != null) {
                LoopTimer next = (LoopTimer) chain.next;
                chain.next = all;
                all = chain;
                chain = next;
            }
        }
        return all;
    }

    /**
     * Loop: closes slot {@code i} (its later pushes are refused) and returns its timers, oldest push
     * first, linked by {@code next}.
     */
    LoopTimer close(int i) {
        return reverse((Inbox.Node) HEADS.getAndSet(heads, i, (Inbox.Node) CLOSED_SLOT));
    }

    /** Reverses a chain taken from a slot into push order, dropping its Epoch base. */
    private static LoopTimer reverse(Inbox.Node h) {
        Inbox.Node prev = null;
        while (h instanceof LoopTimer t) {
            Inbox.Node older = t.next;
            t.next = prev;
            prev = t;
            h = older;
        }
        return (LoopTimer) prev;
    }

    private static final VarHandle HEADS = MethodHandles.arrayElementVarHandle(Inbox.Node[].class);
}
