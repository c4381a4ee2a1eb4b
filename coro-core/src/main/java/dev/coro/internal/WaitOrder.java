package dev.coro.internal;

import java.util.Arrays;
import java.util.function.ToLongFunction;

/**
 * The order in which an {@link AdmissionEngine}'s owner offers its taken waiters to the rule:
 * {@linkplain #arrival() arrival order} (the default, a linked list) or {@linkplain #byKey by a key}
 * computed from each waiter's tag (a binary heap; arrival order among equal keys), for rules that
 * admit by priority or by deadline. An order is the owner's private structure, fed from the lock-free
 * intake; it holds settled waiters until it meets them or purges them.
 *
 * <p>Not thread-safe: only the engine's owner touches it (AdmissionEngine I1).
 */
public abstract class WaitOrder {
    /* Purging. A waiter that departs while in the order stays there, settled, until the order meets
     * it at its head (the engine drops it) or purges. purgeIfCrowded drops every settled waiter once
     * the order holds more than twice the waiters it kept at the last purge, plus a constant: the
     * walk is paid by the adds since, so O(1) amortized, and settled waiters never outnumber the
     * live ones by more than that bound (when adds stop, by the size at the last add). */

    private static final int PURGE_SLACK = 32;

    private int keptAtLastPurge;

    WaitOrder() {}

    /**
     * Arrival order: the oldest waiter first; a waiter the rule refuses blocks every later one.
     *
     * @return a new, empty order
     */
    public static WaitOrder arrival() {
        return new Arrival();
    }

    /**
     * By key: the waiter whose tag has the least {@code key} first, arrival order among equal keys
     * (so a key of {@code -priority} admits the highest priority first, and a deadline admits the
     * earliest deadline first). The key is computed once, when the owner takes the waiter.
     *
     * @param key the key of a waiter's tag; a pure function
     * @return a new, empty order
     */
    public static WaitOrder byKey(ToLongFunction<Object> key) {
        return new ByKey(key);
    }

    /** Adds a waiter taken from the intake (the owner offers them in arrival order). */
    abstract void add(WaitNode w);

    /** Returns the waiter to offer next (perhaps settled: the engine drops it), or null. */
    abstract WaitNode first();

    /** Removes the waiter {@link #first()} returned. */
    abstract void removeFirst();

    /** Returns the number of waiters held, settled or not. */
    abstract int size();

    /** Drops every settled waiter. */
    abstract void dropSettled();

    /** Whether a refused first waiter blocks the waiters that arrive after it (arrival order). */
    abstract boolean blocksLaterArrivals();

    /** Returns whether no waiter is held. */
    final boolean isEmpty() {
        return size() == 0;
    }

    /** Drops the settled waiters when the order is crowded (see the purging note). */
    final void purgeIfCrowded() {
        if (size() > 2 * keptAtLastPurge + PURGE_SLACK) {
            dropSettled();
            keptAtLastPurge = size();
        }
    }

    /** Arrival order: a list linked through {@link WaitNode#after}. */
    private static final class Arrival extends WaitOrder {
        private WaitNode head;
        private WaitNode tail;
        private int size;

        @Override
        void add(WaitNode w) {
            w.after = null;
            if (tail == null) {
                head = w;
            } else {
                tail.after = w;
            }
            tail = w;
            size++;
        }

        @Override
        WaitNode first() {
            return head;
        }

        @Override
        void removeFirst() {
            WaitNode h = head;
            head = h.after;
            h.after = null;
            if (head == null) {
                tail = null;
            }
            size--;
        }

        @Override
        int size() {
            return size;
        }

        @Override
        void dropSettled() {
            WaitNode kept = null;
            WaitNode last = null;
            int n = 0;
            for (WaitNode w = head; w != null; ) {
                WaitNode next = w.after;
                w.after = null;
                if (!w.isSettled()) {
                    if (last == null) {
                        kept = w;
                    } else {
                        last.after = w;
                    }
                    last = w;
                    n++;
                }
                w = next;
            }
            head = kept;
            tail = last;
            size = n;
        }

        @Override
        boolean blocksLaterArrivals() {
            return true;
        }
    }

    /** By key: a binary min-heap on (key, arrival sequence), in parallel arrays. */
    static final class ByKey extends WaitOrder {
        private final ToLongFunction<Object> key;
        private WaitNode[] nodes = new WaitNode[8];
        private long[] keys = new long[8];
        private long[] seqs = new long[8];
        private int size;
        private long nextSeq;

        ByKey(ToLongFunction<Object> key) {
            this.key = key;
        }

        @Override
        void add(WaitNode w) {
            add(w, key.applyAsLong(w.tag()));
        }

        /** Adds {@code w} with {@code k} as its key. */
        void add(WaitNode w, long k) {
            if (size == nodes.length) {
                int n = size * 2;
                nodes = Arrays.copyOf(nodes, n);
                keys = Arrays.copyOf(keys, n);
                seqs = Arrays.copyOf(seqs, n);
            }
            int i = size++;
            nodes[i] = w;
            keys[i] = k;
            seqs[i] = nextSeq++;
            siftUp(i);
        }

        @Override
        WaitNode first() {
            return size == 0 ? null : nodes[0];
        }

        /** The key of {@link #first()}; the order must not be empty. */
        long firstKey() {
            return keys[0];
        }

        @Override
        void removeFirst() {
            int last = --size;
            move(last, 0);
            nodes[last] = null;
            if (last > 0) {
                siftDown(0);
            }
            if (size == 0 && nodes.length > 1024) { // give back a large heap once it empties
                nodes = new WaitNode[8];
                keys = new long[8];
                seqs = new long[8];
            }
        }

        @Override
        int size() {
            return size;
        }

        @Override
        void dropSettled() {
            int n = 0;
            for (int i = 0; i < size; i++) {
                if (!nodes[i].isSettled()) {
                    move(i, n++);
                }
            }
            Arrays.fill(nodes, n, size, null);
            size = n;
            for (int i = (n >>> 1) - 1; i >= 0; i--) {
                siftDown(i);
            }
        }

        @Override
        boolean blocksLaterArrivals() {
            return false;
        }

        private boolean less(int i, int j) {
            return keys[i] < keys[j] || (keys[i] == keys[j] && seqs[i] < seqs[j]);
        }

        private void move(int from, int to) {
            nodes[to] = nodes[from];
            keys[to] = keys[from];
            seqs[to] = seqs[from];
        }

        private void swap(int i, int j) {
            WaitNode n = nodes[i];
            nodes[i] = nodes[j];
            nodes[j] = n;
            long k = keys[i];
            keys[i] = keys[j];
            keys[j] = k;
            long s = seqs[i];
            seqs[i] = seqs[j];
            seqs[j] = s;
        }

        private void siftUp(int i) {
            while (i > 0) {
                int parent = (i - 1) >>> 1;
                if (!less(i, parent)) {
                    return;
                }
                swap(i, parent);
                i = parent;
            }
        }

        private void siftDown(int i) {
            for (;;) {
                int l = 2 * i + 1;
                if (l >= size) {
                    return;
                }
                int c = l + 1 < size && less(l + 1, l) ? l + 1 : l;
                if (!less(c, i)) {
                    return;
                }
                swap(i, c);
                i = c;
            }
        }
    }
}
