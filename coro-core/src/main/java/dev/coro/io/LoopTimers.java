package dev.coro.io;

import java.util.function.Consumer;

/**
 * An event loop's pending timers: a {@link TimerWheel} for the timers due within about two seconds,
 * the <em>run</em> (the timers of one tick, sorted) and a {@link TimerHeap} for the far ones and the
 * few the loop adds for a tick it has already taken.
 *
 * <p><b>Lazy sorting.</b> A timer due more than a tick ahead waits, unsorted, in its tick's slot: in
 * the slot's pushed chain if another thread scheduled it (no inbox, no loop work), in the slot's
 * owned list if the loop took it in (scheduled on the loop, or through the inbox). The loop takes
 * one whole slot at a time, when the run is empty and the slot's tick starts within
 * {@link #LEAD_TICKS} tick: it sorts the slot's timers by deadline into the run (one sort of a
 * primitive array, no pointer chasing) and then fires from the run and the heap, whichever holds the
 * earlier deadline. As every timer of a slot not yet taken is due no earlier than the run's, the run
 * never needs merging with a later slot, and a loop that has fallen behind (a stall, a burst) catches
 * up one tick at a time with a run of one tick's size and a small heap: the sorting cost per timer
 * does not grow with how far behind it is. Firing is by exact deadline: the wheel never makes a timer
 * early or late; it only defers the sorting.
 *
 * <p><b>Order.</b> Deadline order; equal deadlines in the order the loop took the timers in (the
 * owned list of a slot before its pushed chain, each oldest first; a slot's timers before those the
 * loop added to the heap afterwards).
 *
 * <p><b>Costs.</b> Adding: O(1) into the wheel (a CAS from another thread, a list append on the
 * loop), O(log n) into the heap. Removing a cancelled timer: O(1) from an owned list (a pushed chain
 * is moved to its slot's owned list first, each timer once) or from the run, O(log n) from the heap.
 * Taking a slot: one sort of its k timers' keys, O(k log k); firing from the run: O(1).
 *
 * <p>Confined to the loop thread, except {@link #offer}, {@link #takeTime} and {@link #isDirty} (any
 * thread).
 */
final class LoopTimers {
    /** log2 of the tick: 2^20 ns, about 1.05 ms. */
    static final int SHIFT = 20;
    /** Wheel slots: ticks accepted at once, about 2.1 s. */
    static final int SLOTS = 2048;
    /** A slot is taken (sorted into the run) this many ticks before its tick starts, at the earliest. */
    static final int LEAD_TICKS = 1;
    /** The run's and the take scratch's smallest capacity (they shrink back to it after a burst). */
    private static final int MIN_RUN = 256;

    private final int shift;
    private final int slots;
    private final TimerWheel wheel;
    private final TimerHeap heap = new TimerHeap();
    /**
     * The run: the timers of the last tick taken, sorted by deadline (then by the order taken), in
     * [runPos, runEnd); an entry is null once its timer was removed. Each timer in it has index
     * {@link LoopTimer#runIndex(int)} of its position.
     */
    private LoopTimer[] run = new LoopTimer[MIN_RUN];
    private int runPos;
    private int runEnd;
    /** The timers in the run that were not removed (fired ones are past runPos). */
    private int runLive;
    /** Scratch of a take: the slot's timers in the order taken, and their sort keys. */
    private LoopTimer[] taken = new LoopTimer[MIN_RUN];
    private long[] keys = new long[MIN_RUN];
    /** Per slot: the loop's own list of that slot's timers (first; first.prev is the last). */
    private final LoopTimer[] owned;
    private int ownedCount;
    /** The next tick to take: every tick before it is in the heap; slots hold [cursor, cursor + slots). */
    private long cursor;
    /** Ticks in [cursor, scanFrom) hold nothing, as of the last scan (Long.MAX_VALUE: none holds anything). */
    private long scanFrom;

    /** The loop's timers, with ticks of 2^{@link #SHIFT} ns and {@link #SLOTS} slots. */
    LoopTimers() {
        this(SHIFT, SLOTS);
    }

    /** Timers with ticks of {@code 2^shift} ns and {@code slots} wheel slots (tests: tiny wheels). */
    LoopTimers(int shift, int slots) {
        this.shift = shift;
        this.slots = slots;
        this.wheel = new TimerWheel(shift, slots);
        this.owned = new LoopTimer[slots];
    }

    // ------------------------------------------------------------------ any thread

    /**
     * Puts {@code t} into its tick's wheel slot if it is not due within {@link #LEAD_TICKS} ticks of
     * {@code now} (the caller's clock reading for its deadline) and the wheel accepts that tick now;
     * any thread. A timer due sooner goes through the inbox: the loop must act on it soon anyway,
     * and it then stays behind the runnables its thread submitted before it.
     *
     * @return {@link TimerWheel#TELL} if it did and the caller must tell the loop: wake it for
     *     {@link #takeTime} if it sleeps past it, then {@link LoopTimer#told()}; {@link TimerWheel#JOINED}
     *     if it did behind a told timer of its slot (the loop needs no word); {@link TimerWheel#REFUSED}
     *     if not: the caller hands {@code t} to the loop another way
     */
    int offer(LoopTimer t, long now) {
        if ((t.deadline >> shift) - (now >> shift) <= LEAD_TICKS) {
            return TimerWheel.REFUSED;
        }
        t.index = LoopTimer.INCOMING; // plain: published by the push's CAS
        int pushed = wheel.push(t);
        if (pushed == TimerWheel.REFUSED) {
            t.index = LoopTimer.NOT_HELD;
        }
        return pushed;
    }

    /** The latest time by which the loop must take the slot of {@code deadline}'s tick; any thread. */
    long takeTime(long deadline) {
        return ((deadline >> shift) - LEAD_TICKS) << shift;
    }

    /** Whether some thread may have pushed a timer since the last {@link #nextWake()}; any thread. */
    boolean isDirty() {
        return wheel.isDirty();
    }

    // ------------------------------------------------------------------ loop

    /** Adds {@code t} on the loop: to its slot's owned list if the wheel holds its tick, else to the heap. */
    void add(LoopTimer t) {
        long tick = t.deadline >> shift;
        if (tick >= cursor && tick - cursor < slots) {
            append(wheel.slotOf(tick), t);
            if (tick < scanFrom) {
                scanFrom = tick;
            }
        } else {
            heap.add(t);
        }
    }

    /**
     * Forgets {@code t}, which was cancelled, wherever the loop holds it; O(1) in the wheel, O(log n)
     * in the heap.
     *
     * @return whether it was held
     */
    boolean remove(LoopTimer t) {
        int index = t.index;
        if (index >= 0) {
            return heap.remove(t);
        }
        if (index <= LoopTimer.IN_RUN) {
            int pos = LoopTimer.runPosition(index);
            assert run[pos] == t;
            run[pos] = null;
            t.index = LoopTimer.NOT_HELD;
            runLive--;
            return true;
        }
        if (index == LoopTimer.INCOMING) {
            takeIn(wheel.slotOf(t.deadline >> shift)); // skips t: it is no longer pending
            return true;
        }
        if (index == LoopTimer.OWNED) {
            unlink(wheel.slotOf(t.deadline >> shift), t);
            return true;
        }
        return false;
    }

    /** The number of timers held: exact, since it takes every pushed timer in first. */
    int size() {
        for (int i = 0; i < slots; i++) {
            if (!wheel.isEmpty(i)) {
                takeIn(i);
            }
        }
        return heldKnown();
    }

    /** The timers held that the loop has taken in (size() without taking in the pushed ones). */
    int heldKnown() {
        return heap.size() + ownedCount + runLive;
    }

    /**
     * Takes the slots that {@link #pollDue} would take at {@code now} before answering: while the run
     * is empty, the next slot if its tick starts within {@link #LEAD_TICKS} of {@code now}. After it,
     * every timer due by {@code now} is in the run or the heap, or in a slot behind a run that holds
     * earlier timers (I3 of EventLoop).
     */
    void advance(long now) {
        long limit = (now >> shift) + LEAD_TICKS; // ticks <= limit may be taken
        while (runPeek() == null && cursor <= limit) {
            takeNext(limit);
        }
    }

    /**
     * Removes and returns the earliest timer if it is due at {@code now}; else null. Takes the next
     * slot into the run first when the run is empty and the slot's tick starts within
     * {@link #LEAD_TICKS} of {@code now}.
     */
    LoopTimer pollDue(long now) {
        long limit = (now >> shift) + LEAD_TICKS;
        for (;;) {
            LoopTimer r = runPeek();
            if (r == null && cursor <= limit) {
                takeNext(limit);
                continue;
            }
            LoopTimer h = heap.peek();
            if (r != null && (h == null || r.deadline <= h.deadline)) { // equal: the run was taken first
                if (r.deadline > now) {
                    return null;
                }
                run[runPos++] = null;
                runLive--;
                r.index = LoopTimer.NOT_HELD;
                return r;
            }
            if (h == null || h.deadline > now) {
                return null;
            }
            heap.poll();
            return h;
        }
    }

    /**
     * The time the loop must wake by for its timers: the earliest of the heap's first deadline and
     * the take time of the first slot that holds anything. Clears the wheel's dirty flag and scans
     * the slots if it was set: call it before announcing a park, and re-check {@link #isDirty()}
     * after the announcement (EventLoop's overview, part 5).
     *
     * @return loop-relative nanoseconds, or {@link EventLoop#FOREVER}
     */
    long nextWake() {
        LoopTimer first = heap.peek();
        long d = first == null ? EventLoop.FOREVER : first.deadline;
        if (wheel.isDirty()) {
            wheel.clearDirty(); // then scan: a push after this sets it again
            scanFrom = cursor;
        }
        LoopTimer r = runPeek();
        if (r != null) {
            // no slot is taken before the run is empty, and every slot's timers are due after the run's
            return Math.min(d, r.deadline);
        }
        if (scanFrom == Long.MAX_VALUE) {
            return d;
        }
        long end = cursor + slots;
        if (d < (Long.MAX_VALUE >> 1)) {
            end = Math.min(end, (d >> shift) + LEAD_TICKS + 1); // ticks that may have to be taken before d
        }
        for (long tick = Math.max(scanFrom, cursor); tick < end; tick++) {
            int i = wheel.slotOf(tick);
            if (owned[i] != null || !wheel.isEmpty(i)) {
                scanFrom = tick;
                return Math.min(d, takeTime(tick << shift));
            }
        }
        scanFrom = end == cursor + slots ? Long.MAX_VALUE : end;
        return d;
    }

    /** Empties everything for good (the loop is terminating): hands every timer held to {@code sink}. */
    void close(Consumer<LoopTimer> sink) {
        for (LoopTimer t : heap.clear()) {
            sink.accept(t);
        }
        for (int p = runPos; p < runEnd; p++) {
            LoopTimer t = run[p];
            run[p] = null;
            if (t != null) {
                t.index = LoopTimer.NOT_HELD;
                sink.accept(t);
            }
        }
        runPos = runEnd = runLive = 0;
        for (int i = 0; i < slots; i++) {
            LoopTimer t = owned[i];
            owned[i] = null;
            while (t != null) {
                LoopTimer next = (LoopTimer) t.next;
                t.next = null;
                t.prev = null;
                t.index = LoopTimer.NOT_HELD;
                sink.accept(t);
                t = next;
            }
        }
        ownedCount = 0;
        LoopTimer t = wheel.close();
        while (t != null) {
            LoopTimer next = (LoopTimer) t.next;
            t.next = null;
            t.index = LoopTimer.NOT_HELD;
            sink.accept(t);
            t = next;
        }
        scanFrom = Long.MAX_VALUE;
    }

    /** Checks the structures (tests and assertions). */
    boolean isConsistent() {
        int n = 0;
        for (int i = 0; i < slots; i++) {
            LoopTimer first = owned[i];
            LoopTimer last = null;
            for (LoopTimer t = first; t != null; t = (LoopTimer) t.next) {
                if (t.index != LoopTimer.OWNED || (t != first && t.prev != last)
                        || wheel.slotOf(t.deadline >> shift) != i) {
                    return false;
                }
                last = t;
                n++;
            }
            if (first != null && first.prev != last) {
                return false;
            }
        }
        int live = 0;
        long last = Long.MIN_VALUE;
        for (int p = runPos; p < runEnd; p++) {
            LoopTimer t = run[p];
            if (t == null) {
                continue;
            }
            if (t.index != LoopTimer.runIndex(p) || t.deadline < last || (t.deadline >> shift) != cursor - 1) {
                return false;
            }
            last = t.deadline;
            live++;
        }
        for (int p = 0; p < runPos; p++) {
            if (run[p] != null) {
                return false; // fired entries let go of their timers
            }
        }
        return n == ownedCount && live == runLive && heap.isConsistent();
    }

    // ------------------------------------------------------------------ internals

    /** The run's first timer that was not removed (skipping removed entries for good), or null. */
    private LoopTimer runPeek() {
        int p = runPos;
        int end = runEnd;
        LoopTimer[] r = run;
        while (p < end) {
            LoopTimer t = r[p];
            if (t != null) {
                runPos = p;
                return t;
            }
            p++;
        }
        runPos = p;
        return null;
    }

    /**
     * The run is empty and {@code cursor <= limit}: takes the slot of tick {@code cursor} into the
     * run, sorted; or, if the loop has been away longer than the wheel's span (every slot holds a
     * tick at or before {@code limit}), takes every slot into the heap at once.
     */
    private void takeNext(long limit) {
        assert runLive == 0 && cursor <= limit;
        if (limit - cursor >= slots) { // a long sleep or stall: each slot once, whatever earlier tick it held
            for (long tick = limit - slots + 1; tick <= limit; tick++) {
                takeSlot(tick, true);
            }
            cursor = limit + 1;
            return;
        }
        long tick = cursor++;
        sortIntoRun(tick, takeSlot(tick, false));
    }

    /**
     * Empties the slot of {@code tick}, its owned list and then its pushed chain (the order taken),
     * and hands each pending timer on: into the heap if {@code toHeap} (catching up after a long
     * stall), else into {@code taken}, from index 0 (a tick's run, to sort). A cancelled timer is
     * dropped: its removal will find it held nowhere (LoopTimer I2).
     *
     * @return how many timers went into {@code taken} (0 if {@code toHeap})
     */
    private int takeSlot(long tick, boolean toHeap) {
        int i = wheel.slotOf(tick);
        int k = 0;
        LoopTimer t = owned[i];
        owned[i] = null;
        while (t != null) {
            LoopTimer next = (LoopTimer) t.next;
            t.prev = null;
            ownedCount--;
            k = handOn(t, toHeap, k);
            t = next;
        }
        t = wheel.take(tick);
        while (t != null) {
            LoopTimer next = (LoopTimer) t.next;
            k = handOn(t, toHeap, k);
            t = next;
        }
        return k;
    }

    /** {@link #takeSlot}'s sink: detaches {@code t} and, if pending, puts it into the heap or taken[k]. */
    private int handOn(LoopTimer t, boolean toHeap, int k) {
        t.next = null;
        t.index = LoopTimer.NOT_HELD;
        if (!t.isPending()) {
            return k;
        }
        if (toHeap) {
            heap.add(t);
            return k;
        }
        if (k == taken.length) {
            taken = java.util.Arrays.copyOf(taken, k * 2);
        }
        taken[k] = t;
        return k + 1;
    }

    /**
     * Sorts {@code taken[0..k)}, all of tick {@code tick}, by deadline and then by position into the
     * run: a key per timer packs its deadline's offset within the tick (shift bits) above its position
     * (the rest), so one sort of longs orders them and keeps the order taken among equal deadlines.
     */
    private void sortIntoRun(long tick, int k) {
        runPos = 0;
        runEnd = k;
        runLive = k;
        if (run.length < k || (run.length > MIN_RUN && k < run.length >>> 2)) {
            run = new LoopTimer[Math.max(MIN_RUN, Integer.highestOneBit(Math.max(1, k - 1)) << 1)];
            keys = new long[run.length];
        }
        if (taken.length > MIN_RUN && k < taken.length >>> 2) {
            LoopTimer[] old = taken;
            taken = new LoopTimer[run.length];
            System.arraycopy(old, 0, taken, 0, k);
        }
        long base = tick << shift;
        int positionBits = 63 - shift;
        if (k <= 1 || 64 - Long.numberOfLeadingZeros(k) > positionBits) {
            // at most one timer, or more in one tick than the key has bits for: a stable sort by deadline
            if (k > 1) {
                java.util.Arrays.sort(taken, 0, k, java.util.Comparator.comparingLong(x -> x.deadline));
            }
            for (int j = 0; j < k; j++) {
                put(j, taken[j]);
            }
        } else {
            long[] key = keys;
            for (int j = 0; j < k; j++) {
                key[j] = ((taken[j].deadline - base) << positionBits) | j;
            }
            java.util.Arrays.sort(key, 0, k);
            long mask = (1L << positionBits) - 1;
            for (int j = 0; j < k; j++) {
                put(j, taken[(int) (key[j] & mask)]);
            }
        }
        java.util.Arrays.fill(taken, 0, k, null);
    }

    private void put(int p, LoopTimer t) {
        assert (t.deadline >> shift) == cursor - 1 : "a timer of another tick in the slot";
        run[p] = t;
        t.index = LoopTimer.runIndex(p);
    }

    /** Moves slot {@code i}'s pushed chain to the end of its owned list (cancelled timers dropped). */
    private void takeIn(int i) {
        LoopTimer t = wheel.drain(i);
        if (t != null && (t.deadline >> shift) < scanFrom) {
            scanFrom = t.deadline >> shift; // the slot holds something now, even if dirty was cleared
        }
        while (t != null) {
            LoopTimer next = (LoopTimer) t.next;
            t.next = null;
            t.index = LoopTimer.NOT_HELD;
            if (t.isPending()) {
                append(i, t);
            }
            t = next;
        }
    }

    private void append(int i, LoopTimer t) {
        LoopTimer first = owned[i];
        t.index = LoopTimer.OWNED;
        t.next = null;
        if (first == null) {
            t.prev = t;
            owned[i] = t;
        } else {
            LoopTimer last = first.prev;
            last.next = t;
            t.prev = last;
            first.prev = t;
        }
        ownedCount++;
    }

    private void unlink(int i, LoopTimer t) {
        LoopTimer first = owned[i];
        LoopTimer next = (LoopTimer) t.next;
        if (t == first) {
            owned[i] = next;
            if (next != null) {
                next.prev = t.prev;
            }
        } else {
            t.prev.next = next;
            if (next != null) {
                next.prev = t.prev;
            } else {
                first.prev = t.prev; // t was the last
            }
        }
        t.next = null;
        t.prev = null;
        t.index = LoopTimer.NOT_HELD;
        ownedCount--;
    }
}
