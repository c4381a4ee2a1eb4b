package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A lock-free hash table of nodes that carry their own key: the keyed gate's map from a key to the
 * state of that key's operations. It does only what that gate needs: place a node unless one with an
 * equal key is there ({@link #putIfAbsent}), remove a given node ({@link #remove}), put a successor
 * in the place of a given node ({@link #replace}), and visit the nodes
 * ({@link #forEach}, {@link #size}). Keys are compared by {@code equals} (after identity) and found by
 * {@code hashCode}; a node is kept only while it is in the table, so a table of removed nodes holds
 * nothing but its bins.
 *
 * <p>Unlike {@link java.util.concurrent.ConcurrentHashMap} it keeps no size counter (shared by every
 * thread that puts or removes, a cache line both workers write on every operation), takes no lock
 * to remove, allocates nothing to place a node in an empty bin, and spreads hash codes by their high
 * bits after a multiplication, so that consecutive keys (small integers, sequence numbers), often the
 * hottest, land in bins on different cache lines.
 *
 * @param <N> the node type
 */
public final class KeyTable<N extends KeyTable.Node<?>> {
    /* Implementation overview.
     *
     * 1. Representation.
     *    root (volatile Bins): the table new operations start from.
     *    Bins: bins (Object[], its slots read and CASed through BIN), shift (final: a key with hash
     *      code h lives in bin (h * GOLDEN) >>> shift; length = 1 << (32 - shift) bins, each at slot
     *      index << stride: 16 slots apart (64 bytes with compressed references, so that two bins
     *      never share a cache line) while the table has at most SPREAD_BINS bins, adjacent above
     *      (where a few hot keys rarely meet on one line, and 64 bytes a bin would cost too much
     *      memory); stride is final and each table has its own), buckets (a Count, its
     *      own object: the bins that hold a bucket), next (volatile Bins: the table it migrates into,
     *      null until a migration starts). Every operation reads shift and bins; the bucket count is
     *      written by some, so it lives apart from them (no line that every operation reads is
     *      written by the operations).
     *    A bin holds one of:
     *      null           empty
     *      a Node         one node
     *      an Object[]    a bucket: 2 or more nodes with unequal keys, immutable (replaced, never
     *                     written: copy on write)
     *      a Bins n       moved: this bin's nodes are in n's bins 2i and 2i + 1 (a forward), for ever
     *
     * 2. Transitions (each one CAS of one bin, by whoever asks).
     *    B1 put into null: null -> node. Into a node or a bucket with no equal key: -> the bucket
     *       with the node added (buckets + 1 when a node becomes a bucket).
     *    B2 remove n: n -> null; a bucket of 2 -> the other node (buckets - 1); a larger bucket -> the
     *       bucket without n.
     *    B4 replace n by r (a node with an equal key, not in the table): n -> r; a bucket -> a copy
     *       with r at n's index. The bin's bucket count does not change.
     *    B3 migrate bin i of t into n = t.next (the migrator only): read the bin's content c, write
     *       n's bins 2i and 2i + 1 with c's nodes split by their next hash bit (plain writes: no one
     *       reads those two bins before the CAS below), then CAS t[i] c -> n; if the CAS fails (B1 or
     *       B2 changed the bin meanwhile), again from the read.
     *    G1 grow (a put that made the buckets exceed length / 8, on root): CAS root.next
     *       null -> a table of twice the bins; the winner is the migrator: B3 for every bin in order,
     *       then root = n. Only root grows, so a table is complete (every bin it will receive from
     *       its predecessor is written) before any of its own bins moves.
     *    An operation that reads a forward goes on in the table it names, with the same key.
     *
     *    Fast paths: putIfAbsent first tries B1 as CAS null -> node without reading the bin, and
     *    remove and replace first try B2 and B4 as CAS n -> null (or r): the common cases (an empty
     *    bin, a bin of that node alone) then take one exclusive access to the bin's line instead of
     *    a shared read followed by an exclusive one. A failed fast CAS changes nothing, and the
     *    operation goes on as above.
     *
     * 3. Linearization points. putIfAbsent: the successful CAS of B1, or the acquire read of the bin
     *    in which it found the equal key (a failed fast CAS is not one: it is followed by that
     *    read). remove: the successful CAS of B2, or the read of the bin without the node (not
     *    there). replace: the successful CAS of B4, or that read. forEach and size are not atomic: they see every node that
     *    was in the table for the whole visit, and no node that was removed before it began.
     *
     * 4. Invariants.
     *    T1 (one place): at any moment a node in the table is in exactly one bin that is not a forward:
     *       in t[i], or, once t[i] is a forward to n, in n[2i] or n[2i + 1] (B3 writes them before the
     *       CAS that makes t[i] a forward; after it no operation writes t[i]).
     *    T2 (unique keys): no two nodes in the table have equal keys: a key has one bin in each
     *       table (T1), and B1 scans that bin's nodes for an equal key in the same CAS window.
     *    T3 (forwards point forward): a bin's forward names the table that was its table's next, and
     *       root is replaced only by that next after every bin of it moved; so following forwards
     *       ends, in at most as many steps as migrations are under way (one: G1 starts only on root,
     *       and root changes only after a migration ends).
     *    T4 (no lost write into a new table): n's bins 2i, 2i + 1 are written by B3 only before t[i]
     *       is a forward, and by B1 and B2 only after an operation read that forward (or read root as
     *       n, later still).
     *
     * 5. Memory ordering. Bins are read with acquire (BIN getAcquire) and changed by volatile CAS, so
     *    a node's fields written before it is placed are seen by whoever finds it. B3's plain writes
     *    of the new bins are published by its CAS of the old bin (release) to every thread that
     *    reads the forward (acquire), and by the volatile write of root to those that read root.
     *
     * 6. Progress. Lock-free: a CAS of a bin fails only because another operation's CAS of that bin
     *    succeeded; forwards are followed at most once per migration. No operation waits for a
     *    migration: a migrator that stops for a while leaves the bins it has not moved in the old
     *    table, where operations go on, and only the growth itself waits (no second migration starts).
     *    The bucket count is a getAndAdd, touched only when a bin gains or loses its bucket.
     *
     * 7. Cancellation races: none here (nodes are placed and removed by their callers' rules).
     *
     * 8. Resumption: none (nothing waits).
     *
     * 9. References. The bins that move one at a time behind a forward, read by everyone and
     *    written by one migrator, are ConcurrentHashMap's transfer (Doug Lea), here without its bin
     *    locks (a bin is one word, its buckets copy-on-write) and without its size counter (growth
     *    is asked for by collisions); the multiplicative spread is Knuth's Fibonacci hashing.
     */

    /** A node: what the table holds, with its key (immutable). */
    public abstract static class Node<K> {
        /** The key, compared by {@code equals} and found by {@code hashCode}. */
        protected final K key;

        /**
         * Creates a node for {@code key}.
         *
         * @param key the key, not null
         */
        protected Node(K key) {
            this.key = key;
        }

        /**
         * Returns the key.
         *
         * @return the key
         */
        public final K key() {
            return key;
        }
    }

    /** 2^32 / the golden ratio: the multiplier of Fibonacci hashing (part 9). */
    private static final int GOLDEN = 0x9E3779B9;
    /** A table of at most this many bins spreads them a cache line apart (part 1). */
    private static final int SPREAD_BINS = 64;
    /** log2 of the slots per bin in a table that spreads its bins: 16 slots, 64 bytes. */
    private static final int SPREAD_SHIFT = 4;
    /** The largest table, in bins. */
    private static final int MAX_BINS = 1 << 30;

    private volatile Bins root;

    /**
     * Creates an empty table of {@code bins} bins.
     *
     * @param bins the initial bin count: a power of two, at least 2
     */
    public KeyTable(int bins) {
        if (bins < 2 || Integer.bitCount(bins) != 1 || bins > MAX_BINS) {
            throw new IllegalArgumentException("bins must be a power of two in [2, " + MAX_BINS + "], got " + bins);
        }
        this.root = new Bins(Integer.numberOfLeadingZeros(bins) + 1);
    }

    /**
     * Places {@code fresh} unless a node with an equal key is in the table.
     *
     * @param fresh the node to place; not shared before it is placed
     * @return the node with an equal key that is in the table, or null if {@code fresh} was placed
     */
    @SuppressWarnings("unchecked")
    public N putIfAbsent(N fresh) {
        Object key = fresh.key;
        int h = key.hashCode() * GOLDEN;
        Bins t = root;
        if (t.casBin(t.slot(h), null, fresh)) { // B1, fast path (part 2): an empty bin, no read first
            return null;
        }
        for (;;) {
            int i = t.slot(h);
            Object c = t.binAcquire(i);
            if (c == null) {
                if (t.casBin(i, null, fresh)) { // B1
                    return null;
                }
            } else if (c instanceof Node<?> n) {
                if (n.key == key || key.equals(n.key)) {
                    return (N) n;
                }
                if (t.casBin(i, c, new Object[] {n, fresh})) { // B1, a bucket made
                    t.bucketMade(this);
                    return null;
                }
            } else if (c instanceof Object[] bucket) {
                for (Object o : bucket) {
                    Object k = ((Node<?>) o).key;
                    if (k == key || key.equals(k)) {
                        return (N) o;
                    }
                }
                Object[] grown = Arrays.copyOf(bucket, bucket.length + 1);
                grown[bucket.length] = fresh;
                if (t.casBin(i, c, grown)) { // B1
                    return null;
                }
            } else {
                t = (Bins) c; // a forward (T3)
            }
        }
    }

    /**
     * Removes {@code node} if it is in the table (that node, not another with an equal key).
     *
     * @param node the node
     * @return whether this call removed it
     */
    public boolean remove(N node) {
        return swap(node, null);
    }

    /**
     * Puts {@code replacement} in the place of {@code node} if {@code node} is in the table.
     *
     * @param node the node to take out
     * @param replacement its successor, with a key equal to {@code node}'s, not yet in the table
     * @return whether this call replaced it
     */
    public boolean replace(N node, N replacement) {
        assert replacement.key.equals(node.key) : "a replacement has the same key";
        return swap(node, replacement);
    }

    /** B2 and B4: takes {@code node} out of its bin, putting {@code replacement} (or nothing) there. */
    private boolean swap(N node, N replacement) {
        int h = node.key.hashCode() * GOLDEN;
        Bins t = root;
        if (t.casBin(t.slot(h), node, replacement)) { // B2 or B4, fast path (part 2): that node alone
            return true;
        }
        for (;;) {
            int i = t.slot(h);
            Object c = t.binAcquire(i);
            if (c == node) {
                if (t.casBin(i, c, replacement)) {
                    return true;
                }
            } else if (c instanceof Object[] bucket) {
                int at = -1;
                for (int j = 0; j < bucket.length; j++) {
                    if (bucket[j] == node) {
                        at = j;
                        break;
                    }
                }
                if (at < 0) {
                    return false;
                }
                Object rest;
                if (replacement != null) {
                    Object[] same = bucket.clone();
                    same[at] = replacement;
                    rest = same;
                } else if (bucket.length == 2) {
                    rest = bucket[1 - at];
                } else {
                    Object[] smaller = new Object[bucket.length - 1];
                    System.arraycopy(bucket, 0, smaller, 0, at);
                    System.arraycopy(bucket, at + 1, smaller, at, bucket.length - at - 1);
                    rest = smaller;
                }
                if (t.casBin(i, c, rest)) {
                    if (!(rest instanceof Object[])) {
                        t.bucketGone();
                    }
                    return true;
                }
            } else if (c instanceof Bins next) {
                t = next; // a forward (T3)
            } else {
                return false; // empty, or another node
            }
        }
    }

    /**
     * Calls {@code action} for each node in the table (not atomically: see part 3).
     *
     * @param action what to do with each node
     */
    @SuppressWarnings("unchecked")
    public void forEach(Consumer<? super N> action) {
        Bins t = root;
        for (int i = 0, n = t.length(); i < n; i++) {
            visit(t, i, (Consumer<Object>) action);
        }
    }

    /**
     * Returns the nodes in the table, counted by a visit (not atomic: see part 3).
     *
     * @return the node count
     */
    public int size() {
        int[] n = new int[1];
        forEach(node -> n[0]++);
        return n[0];
    }

    /** Returns the table's bin count now (for tests: the table grows, never shrinks). */
    int bins() {
        return root.length();
    }

    /** Returns the slots of the table's bin array now (for tests: the spread of part 1). */
    int slots() {
        return root.bins.length;
    }

    private static void visit(Bins t, int bin, Consumer<Object> action) {
        Object c = t.binAcquire(t.at(bin));
        if (c == null) {
            return;
        }
        if (c instanceof Object[] bucket) {
            for (Object o : bucket) {
                action.accept(o);
            }
        } else if (c instanceof Bins next) {
            visit(next, 2 * bin, action);
            visit(next, 2 * bin + 1, action);
        } else {
            action.accept(c);
        }
    }

    /** G1: grows {@code t} if it is root and not migrating yet; the caller becomes its migrator. */
    private void grow(Bins t) {
        if (root != t || t.next != null || t.length() >= MAX_BINS) {
            return;
        }
        Bins n = new Bins(t.shift - 1);
        if (!NEXT.compareAndSet(t, (Bins) null, n)) {
            return;
        }
        int made = 0;
        for (int bin = 0, len = t.length(); bin < len; bin++) {
            made += t.migrate(bin, n);
        }
        if (made != 0) {
            n.buckets.add(made);
        }
        root = n; // every bin of t is a forward to n now
    }

    /** One table: its bins and its growth state (part 1). */
    private static final class Bins {
        final Object[] bins;
        final int shift;
        /** log2 of the slots per bin (part 1). */
        final int stride;
        final Count buckets;
        volatile Bins next;

        Bins(int shift) {
            this.shift = shift;
            int length = 1 << (32 - shift);
            this.stride = length <= SPREAD_BINS ? SPREAD_SHIFT : 0;
            this.bins = new Object[length << stride];
            this.buckets = new Count(); // allocated after the bins: not on this object's line (part 1)
        }

        int length() {
            return 1 << (32 - shift);
        }

        int slot(int spreadHash) {
            return (spreadHash >>> shift) << stride;
        }

        /** The slot of bin {@code bin}. */
        int at(int bin) {
            return bin << stride;
        }

        Object binAcquire(int slot) {
            return BIN.getAcquire(bins, slot);
        }

        boolean casBin(int slot, Object expected, Object value) {
            return BIN.compareAndSet(bins, slot, expected, value);
        }

        void bucketMade(KeyTable<?> table) {
            int now = buckets.add(1);
            if (now > length() >>> 3) {
                table.grow(this);
            }
        }

        void bucketGone() {
            buckets.add(-1);
        }

        /** B3: moves bin {@code bin} into {@code n}; returns the buckets it made there. */
        int migrate(int bin, Bins n) {
            int from = at(bin);
            int lo = n.at(2 * bin);
            int hi = n.at(2 * bin + 1);
            for (;;) {
                Object c = binAcquire(from);
                assert !(c instanceof Bins) : "a bin moved twice";
                Object low = null;
                Object high = null;
                if (c instanceof Object[] bucket) {
                    int highs = 0;
                    for (Object o : bucket) {
                        highs += n.slot(((Node<?>) o).key.hashCode() * GOLDEN) == hi ? 1 : 0;
                    }
                    Object[] l = new Object[bucket.length - highs];
                    Object[] r = new Object[highs];
                    int li = 0;
                    int ri = 0;
                    for (Object o : bucket) {
                        if (n.slot(((Node<?>) o).key.hashCode() * GOLDEN) == hi) {
                            r[ri++] = o;
                        } else {
                            l[li++] = o;
                        }
                    }
                    low = l.length == 0 ? null : l.length == 1 ? l[0] : l;
                    high = r.length == 0 ? null : r.length == 1 ? r[0] : r;
                } else if (c != null) {
                    if (n.slot(((Node<?>) c).key.hashCode() * GOLDEN) == hi) {
                        high = c;
                    } else {
                        low = c;
                    }
                }
                n.bins[lo] = low; // plain: published by the CAS below (T4, part 5)
                n.bins[hi] = high;
                if (casBin(from, c, n)) {
                    return (low instanceof Object[] ? 1 : 0) + (high instanceof Object[] ? 1 : 0);
                }
            }
        }
    }

    /** A table's bucket count, in an object of its own (part 1). */
    private static final class Count {
        volatile int n;

        /** Adds {@code delta} and returns the new count. */
        int add(int delta) {
            return (int) COUNT.getAndAdd(this, delta) + delta;
        }
    }

    private static final VarHandle BIN = MethodHandles.arrayElementVarHandle(Object[].class);
    private static final VarHandle COUNT;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            COUNT = lookup.findVarHandle(Count.class, "n", int.class);
            NEXT = lookup.findVarHandle(Bins.class, "next", Bins.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
