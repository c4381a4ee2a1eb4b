package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The buffer of a buffered channel and its fast lane ({@link ChannelCore} part 10): a bounded ring of
 * cells with a sequence number each, indexed by a send counter and a receive counter. While the lane
 * is open, sends and receives claim a cell with one CAS on their counter and need no ownership; the
 * channel's owner shuts the lane (a bit in both counters) before any waiter waits, and then is the
 * only one that claims cells, through the same operations.
 */
final class ChannelLane {
    /* Implementation overview.
     *
     * 1. Representation.
     *    sends, receives (volatile long, each on its own cache line): (position << 1) | SHUT. A
     *      position counts the cells claimed so far; cell of position p is p mod capacity.
     *    sequences[i] (long, accessed through SEQUENCE): for the cell of position p, in the lap of p
     *      (doubled, so that "published" and "free for the next lap" differ even for capacity 1):
     *      2p                free: the sender of position p may claim it
     *      2p + 1            published: holds the element of position p, the receiver of p may take it
     *      2(p + capacity)   taken: free for the sender of position p + capacity (the next lap)
     *    elements[i] (plain): the element, written before its sequence publishes it, cleared by the
     *      receiver before its sequence frees the cell.
     *    SHUT (bit 0 of both counters): set by the channel's owner; a lane operation that sees it
     *      (or whose CAS fails because of it) answers LANE_SHUT and goes to the owner.
     *
     * 2. Transitions.
     *    claim to send at p:    sends p -> p + 1, if sequences[p] == 2p     CAS     lane (open) or owner
     *    publish p:             elements[p] = e; sequences[p] = 2p + 1      plain, release store
     *    claim to receive at p: receives p -> p + 1, if sequences[p] == 2p+1  CAS   lane (open) or owner
     *    take p:                e = elements[p]; elements[p] = null; sequences[p] = 2(p + capacity)
     *    shut / open:           set / clear SHUT in both counters           CAS     owner only
     *
     * 3. Linearization points. A send that gets room: its claim CAS (from then on its element is in
     *    the buffer; a receiver that reaches the cell before the publish waits for it, part 6). FULL:
     *    the read of receives that finds the cell of p - capacity not yet claimed (capacity elements
     *    claimed and not taken). A receive that gets an element: its claim CAS. EMPTY: the read of
     *    sends that finds no cell claimed at p.
     *
     * 4. Invariants. R1: 0 <= sends - receives <= capacity (positions). R2: a cell is claimed by at
     *    most one sender and one receiver per lap, in that order (its sequence gates each claim).
     *    R3: while SHUT is set, only the owner moves the counters.
     *
     * 5. Memory ordering. The counters are read and CASed as volatile. A cell's element is written
     *    before its sequence's release store and read after the acquire load that sees 2p + 1; the
     *    receiver's clear is before its release store of 2(p + capacity), which the next sender's acquire
     *    load sees before it writes the cell. So the element's fields written before the send
     *    happen-before the receive that takes it.
     *
     * 6. Progress. Claims are lock-free CAS loops. The one wait: a thread that reaches a cell whose
     *    claim another thread won but whose sequence store it has not yet made (the claimer is two
     *    plain stores from it) spins with Thread.onSpinWait until it is made, as Vyukov's bounded
     *    queue and JCTools' MpmcArrayQueue do. Without it, a receive could answer EMPTY beside an
     *    element that a completed send put in a later cell, and a sender could wait beside room.
     *
     * 7. References. D. Vyukov's bounded MPMC queue (per-cell sequence numbers); the two counters of
     *    Koval, Alistarh and Elizarov, "Fast and Scalable Channels in Kotlin Coroutines" (PPoPP 2023).
     */

    /** An answer of {@link #offer} and {@link #poll}: the lane is shut; ask the owner. */
    static final Object LANE_SHUT = new Object() {
        @Override
        public String toString() {
            return "LANE_SHUT";
        }
    };

    /** {@link #offer}'s answers besides {@link #LANE_SHUT}. */
    static final Object ROOM = new Object() {
        @Override
        public String toString() {
            return "ROOM";
        }
    };

    /** {@link #offer}'s answer when the buffer is full. */
    static final Object FULL = new Object() {
        @Override
        public String toString() {
            return "FULL";
        }
    };

    private static final long SHUT = 1;

    private final int capacity;
    private final int mask; // capacity - 1 if a power of two, else -1
    private final Object[] elements;
    private final long[] sequences;
    private final Counter sends = new Counter();
    private final Counter receives = new Counter();

    /** A counter on a cache line of its own, so that senders and receivers do not share one. */
    @SuppressWarnings("unused") // the padding
    private static final class Counter {
        long p01, p02, p03, p04, p05, p06, p07;
        volatile long value;
        long q01, q02, q03, q04, q05, q06, q07;
    }

    /**
     * Creates an empty, open lane.
     *
     * @param capacity the buffer size, at least 1
     */
    ChannelLane(int capacity) {
        assert capacity >= 1;
        this.capacity = capacity;
        this.mask = Integer.bitCount(capacity) == 1 ? capacity - 1 : -1;
        this.elements = new Object[capacity];
        this.sequences = new long[capacity];
        for (int i = 0; i < capacity; i++) {
            sequences[i] = 2L * i;
        }
    }

    private int cell(long position) {
        return mask >= 0 ? (int) (position & mask) : (int) (position % capacity);
    }

    /**
     * Puts {@code e} in the buffer if it has room.
     *
     * @param e the element
     * @param owner whether the caller owns the channel (it may use a shut lane)
     * @return {@link #ROOM} (it is in), {@link #FULL}, or {@link #LANE_SHUT} (not for the owner)
     */
    Object offer(Object e, boolean owner) {
        for (;;) {
            long s = sends.value;
            if ((s & SHUT) != 0 && !owner) {
                return LANE_SHUT;
            }
            long p = s >>> 1;
            int i = cell(p);
            long seq = sequenceAcquire(i);
            if (seq == 2 * p) {
                if (SENDS.compareAndSet(sends, s, s + 2)) { // the claim: linearization point
                    elements[i] = e;
                    setSequenceRelease(i, 2 * p + 1); // publishes e
                    return ROOM;
                }
            } else if (seq < 2 * p) { // the cell holds the element of p - capacity
                if ((receives.value >>> 1) <= p - capacity) {
                    return FULL; // not yet claimed by a receiver: capacity elements are in
                }
                Thread.onSpinWait(); // its receiver claimed it and frees it two stores from now (part 6)
            } // seq > 2p: another sender claimed p; read again
        }
    }

    /**
     * Takes the oldest element.
     *
     * @param owner whether the caller owns the channel (it may use a shut lane)
     * @return the element, null if the buffer is empty, or {@link #LANE_SHUT} (not for the owner)
     */
    Object poll(boolean owner) {
        for (;;) {
            long r = receives.value;
            if ((r & SHUT) != 0 && !owner) {
                return LANE_SHUT;
            }
            long p = r >>> 1;
            int i = cell(p);
            long seq = sequenceAcquire(i);
            if (seq == 2 * p + 1) {
                if (RECEIVES.compareAndSet(receives, r, r + 2)) { // the claim: linearization point
                    Object e = elements[i];
                    elements[i] = null;
                    setSequenceRelease(i, 2 * (p + capacity)); // frees the cell for the next lap
                    return e;
                }
            } else if (seq < 2 * p + 1) { // not yet published in this lap
                if ((sends.value >>> 1) <= p) {
                    return null; // nobody claimed it: empty
                }
                Thread.onSpinWait(); // its sender claimed it and publishes it two stores from now (part 6)
            } // seq > 2p + 1: another receiver took p; read again
        }
    }

    /**
     * Owner only, lane shut: the oldest element, left in the buffer, or null if it is empty.
     *
     * @return the element or null
     */
    Object peekOwned() {
        for (;;) {
            long p = receives.value >>> 1;
            int i = cell(p);
            long seq = sequenceAcquire(i);
            if (seq == 2 * p + 1) {
                return elements[i];
            }
            if ((sends.value >>> 1) <= p) {
                return null;
            }
            Thread.onSpinWait(); // a sender claimed it before the lane shut and publishes it now (part 6)
        }
    }

    /**
     * Owner only, lane shut: whether an {@link #offer} would find room (only the owner claims cells
     * to send, so the answer holds until it does).
     *
     * @return whether there is room
     */
    boolean hasRoomOwned() {
        for (;;) {
            long p = sends.value >>> 1;
            long seq = sequenceAcquire(cell(p));
            if (seq == 2 * p) {
                return true;
            }
            if ((receives.value >>> 1) <= p - capacity) {
                return false;
            }
            Thread.onSpinWait(); // a receiver claimed the cell before the lane shut and frees it now (part 6)
        }
    }

    /**
     * The number of elements claimed into the buffer and not yet claimed out: exact while the lane
     * is shut and quiescent, a snapshot otherwise.
     *
     * @return the size
     */
    long size() {
        return (sends.value >>> 1) - (receives.value >>> 1);
    }

    /**
     * Returns whether the lane is shut.
     *
     * @return whether shut
     */
    boolean isShut() {
        return (sends.value & SHUT) != 0;
    }

    /** Owner only: shuts the lane; from the return on, only the owner claims cells (R3). */
    void shut() {
        setBit(sends, SENDS, true);
        setBit(receives, RECEIVES, true);
    }

    /** Owner only: opens the lane. */
    void open() {
        setBit(receives, RECEIVES, false);
        setBit(sends, SENDS, false);
    }

    private static void setBit(Counter c, VarHandle handle, boolean shut) {
        for (long v = c.value; ; ) {
            long next = shut ? v | SHUT : v & ~SHUT;
            if (next == v) {
                return;
            }
            long witness = (long) handle.compareAndExchange(c, v, next);
            if (witness == v) {
                return;
            }
            v = witness; // a lane claim moved the counter meanwhile
        }
    }

    private long sequenceAcquire(int i) {
        return (long) SEQUENCE.getAcquire(sequences, i);
    }

    private void setSequenceRelease(int i, long v) {
        SEQUENCE.setRelease(sequences, i, v);
    }

    private static final VarHandle SENDS;
    private static final VarHandle RECEIVES;
    private static final VarHandle SEQUENCE = MethodHandles.arrayElementVarHandle(long[].class);

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            SENDS = l.findVarHandle(Counter.class, "value", long.class);
            RECEIVES = SENDS;
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
