package dev.coro.io;

import java.util.Arrays;

/**
 * The event loop's pending timers: a 4-ary min-heap ordered by deadline, then by arrival, in which
 * every timer knows its own slot ({@link LoopTimer#index}), so that a cancelled timer is removed in
 * O(log n) instead of staying behind as a flagged corpse.
 *
 * <p>Why a heap and not only a hashed or hierarchical wheel: a heap fires each timer at its exact
 * deadline (a wheel rounds deadlines to its tick, which alone costs up to one tick of lateness), and
 * adds a timer with random deadline in O(1) expected swaps; removal by index is O(log4 n). A 4-ary
 * heap is half as deep as a binary one and its four children share a cache line or two. The loop's
 * {@link TimerWheel} sits in front of it (see {@link LoopTimers}): the timers due within the wheel's
 * span are sorted a tick at a time into a run instead, so the heap holds only those beyond the wheel
 * and the few the loop adds for a tick it has already taken.
 *
 * <p>Confined to the loop thread: no synchronization.
 */
final class TimerHeap {
    private static final int MIN_CAPACITY = 64;

    private LoopTimer[] heap = new LoopTimer[MIN_CAPACITY];
    private int size;
    /** Arrival counter: equal deadlines fire in arrival order. */
    private long arrivals;

    /** The number of timers held. */
    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The earliest timer, or null. */
    LoopTimer peek() {
        return size == 0 ? null : heap[0];
    }

    /** Adds {@code t}, which must not be in the heap already. */
    void add(LoopTimer t) {
        assert t.index < 0 : "timer already in the heap";
        t.seq = arrivals++;
        if (size == heap.length) {
            heap = Arrays.copyOf(heap, size * 2);
        }
        siftUp(size++, t);
    }

    /** Removes and returns the earliest timer, or null. */
    LoopTimer poll() {
        if (size == 0) {
            return null;
        }
        LoopTimer t = heap[0];
        removeAt(0);
        return t;
    }

    /** Removes {@code t} if held; whether it was. */
    boolean remove(LoopTimer t) {
        int i = t.index;
        if (i < 0 || i >= size || heap[i] != t) {
            return false;
        }
        removeAt(i);
        return true;
    }

    /** Removes everything and returns it (in no particular order). */
    LoopTimer[] clear() {
        LoopTimer[] all = Arrays.copyOf(heap, size);
        for (LoopTimer t : all) {
            t.index = LoopTimer.NOT_HELD;
        }
        heap = new LoopTimer[MIN_CAPACITY];
        size = 0;
        return all;
    }

    private void removeAt(int i) {
        LoopTimer removed = heap[i];
        removed.index = LoopTimer.NOT_HELD;
        int last = --size;
        LoopTimer moved = heap[last];
        heap[last] = null;
        if (i != last) {
            siftDown(i, moved);
            if (heap[i] == moved) {
                siftUp(i, moved);
            }
        }
        if (heap.length > MIN_CAPACITY && size < heap.length >>> 2) {
            heap = Arrays.copyOf(heap, heap.length >>> 1); // memory follows the live count down
        }
    }

    private static boolean earlier(LoopTimer a, LoopTimer b) {
        return a.deadline < b.deadline || (a.deadline == b.deadline && a.seq < b.seq);
    }

    private void siftUp(int i, LoopTimer t) {
        LoopTimer[] h = heap;
        while (i > 0) {
            int parent = (i - 1) >>> 2;
            LoopTimer p = h[parent];
            if (!earlier(t, p)) {
                break;
            }
            h[i] = p;
            p.index = i;
            i = parent;
        }
        h[i] = t;
        t.index = i;
    }

    private void siftDown(int i, LoopTimer t) {
        LoopTimer[] h = heap;
        int n = size;
        for (;;) {
            int first = (i << 2) + 1;
            if (first >= n) {
                break;
            }
            int best = first;
            LoopTimer b = h[first];
            int end = Math.min(first + 4, n);
            for (int c = first + 1; c < end; c++) {
                if (earlier(h[c], b)) {
                    best = c;
                    b = h[c];
                }
            }
            if (!earlier(b, t)) {
                break;
            }
            h[i] = b;
            b.index = i;
            i = best;
        }
        h[i] = t;
        t.index = i;
    }

    /** Checks the heap order and the indexes (tests and assertions). */
    boolean isConsistent() {
        for (int i = 0; i < size; i++) {
            if (heap[i].index != i) {
                return false;
            }
            if (i > 0 && earlier(heap[i], heap[(i - 1) >>> 2])) {
                return false;
            }
        }
        return true;
    }
}
