package dev.coro.io;

import java.util.function.Consumer;

/**
 * An event loop's pending timers: a {@link TimerWheel} for the timers due within about two seconds,
 * and a {@link TimerHeap} for the rest and for every timer whose tick has come.
 *
 * <p><b>Lazy sorting.</b> A timer due more than a tick ahead waits, unsorted, in its tick's slot: in
 * the slot's pushed chain if another thread scheduled it (no inbox, no loop work), in the slot's
 * owned list if the loop took it in (scheduled on the loop, or through the inbox). The loop takes a
 * whole slot into the heap {@link #LEAD_TICKS} tick before the slot's tick starts, so every timer
 * is in the heap before it can be due, and the heap holds only the next couple of ticks' timers plus
 * the far ones (beyond the wheel's span). Firing is from the heap only, by exact deadline: the wheel
 * never makes a timer early or late; it only defers the sorting.
 *
 * <p><b>Order.</b> Deadline order; equal deadlines in the order the loop took the timers in (the
 * owned list of a slot before its pushed chain, each oldest first).
 *
 * <p><b>Costs.</b> Adding: O(1) into the wheel (a CAS from another thread, a list append on the
 * loop), O(log n) into the heap. Removing a cancelled timer: O(1) from an owned list (a pushed chain
 * is moved to its slot's owned list first, each timer once), O(log n) from the heap. Taking a slot:
 * O(k log n) for its k timers.
 *
 * <p>Confined to the loop thread, except {@link #offer}, {@link #takeTime} and {@link #isDirty} (any
 * thread).
 */
final class LoopTimers {
    /** log2 of the tick: 2^20 ns, about 1.05 ms. */
    static final int SHIFT = 20;
    /** Wheel slots: ticks accepted at once, about 2.1 s. */
    static final int SLOTS = 2048;
    /** A slot is taken into the heap this many ticks before its tick starts. */
    static final int LEAD_TICKS = 1;

    private final int shift;
    private final int slots;
    private final TimerWheel wheel;
    private final TimerHeap heap = new TimerHeap();
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
     * @return whether it did; if not, the caller hands {@code t} to the loop another way
     */
    boolean offer(LoopTimer t, long now) {
        if ((t.deadline >> shift) - (now >> shift) <= LEAD_TICKS) {
            return false;
        }
        t.index = LoopTimer.INCOMING; // plain: published by the push's CAS
        if (wheel.push(t)) {
            return true;
        }
        t.index = LoopTimer.NOT_HELD;
        return false;
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
        return heap.size() + ownedCount;
    }

    /**
     * Moves into the heap every slot whose tick starts within {@link #LEAD_TICKS} of {@code now}:
     * after it, every timer due before the next tick is in the heap.
     */
    void advance(long now) {
        long target = (now >> shift) + LEAD_TICKS; // take every tick <= target
        if (target < cursor) {
            return;
        }
        for (long tick = Math.max(cursor, target - slots + 1); tick <= target; tick++) {
            takeToHeap(tick); // after a long sleep: each slot once, whatever earlier tick it held
        }
        cursor = target + 1;
    }

    /** Removes and returns the earliest timer if it is due at {@code now}; else null. */
    LoopTimer pollDue(long now) {
        LoopTimer t = heap.peek();
        if (t == null || t.deadline > now) {
            return null;
        }
        heap.poll();
        return t;
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
        return n == ownedCount && heap.isConsistent();
    }

    // ------------------------------------------------------------------ internals

    /** Moves the slot of {@code tick} (its owned list, then its pushed chain) into the heap. */
    private void takeToHeap(long tick) {
        int i = wheel.slotOf(tick);
        LoopTimer t = owned[i];
        owned[i] = null;
        while (t != null) {
            LoopTimer next = (LoopTimer) t.next;
            t.next = null;
            t.prev = null;
            ownedCount--;
            t.index = LoopTimer.NOT_HELD;
            if (t.isPending()) {
                heap.add(t);
            } // else cancelled: its removal will find it held nowhere (LoopTimer I2)
            t = next;
        }
        t = wheel.take(tick);
        while (t != null) {
            LoopTimer next = (LoopTimer) t.next;
            t.next = null;
            t.index = LoopTimer.NOT_HELD;
            if (t.isPending()) {
                heap.add(t);
            }
            t = next;
        }
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
