package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** KeyTable: one node per key, removal of exactly the given node, growth, and concurrent churn. */
class KeyTableTest {

    /** A node of the table under test. */
    static final class Node<K> extends KeyTable.Node<K> {
        /** Set by its placer when it lets go of the key: a finder may remove it from then on. */
        volatile boolean dead;

        Node(K key) {
            super(key);
        }

        @Override
        public String toString() {
            return "Node[" + key + "]@" + Integer.toHexString(System.identityHashCode(this));
        }
    }

    /** Unequal keys whose hash codes are all {@code hash}. */
    record Colliding(int id, int hash) {
        @Override
        public int hashCode() {
            return hash;
        }
    }

    @Test
    void placesOneNodePerKeyAndRemovesExactlyTheGivenNode() {
        KeyTable<Node<String>> table = new KeyTable<>(16);
        Node<String> a = new Node<>("a");
        Node<String> otherA = new Node<>(new String("a"));
        assertNull(table.putIfAbsent(a), "an empty table placed nothing");
        assertSame(a, table.putIfAbsent(otherA), "an equal key was placed twice");
        assertFalse(table.remove(otherA), "removed a node that was never placed, in place of an equal key's");
        assertEquals(1, table.size());
        assertTrue(table.remove(a));
        assertFalse(table.remove(a), "removed twice");
        assertEquals(0, table.size());
        assertNull(table.putIfAbsent(otherA), "the key is free again");
        assertTrue(table.remove(otherA));
    }

    /**
     * {@code replace} puts the successor in the place of exactly the given node, alone in its bin or
     * in a bucket, and refuses a node that is not in the table (the keyed gate's first joiner turns an
     * entry into a shared node this way, and must fail once the entry's placer removed it).
     */
    @Test
    void replacePutsTheSuccessorInPlaceOfExactlyTheGivenNode() {
        KeyTable<Node<Colliding>> table = new KeyTable<>(16);
        Node<Colliding> a = new Node<>(new Colliding(1, 5));
        Node<Colliding> a2 = new Node<>(new Colliding(1, 5));
        Node<Colliding> a3 = new Node<>(new Colliding(1, 5));
        assertFalse(table.replace(a, a2), "replaced a node that was never placed");
        assertNull(table.putIfAbsent(a));
        assertFalse(table.replace(a2, a3), "replaced a node by an equal key's, not the one in place");
        assertTrue(table.replace(a, a2)); // alone in its bin
        assertSame(a2, table.putIfAbsent(a3));
        assertFalse(table.replace(a, a3), "replaced a node twice");
        Node<Colliding> b = new Node<>(new Colliding(2, 5)); // same bin: a bucket
        assertNull(table.putIfAbsent(b));
        assertTrue(table.replace(a2, a3)); // in a bucket
        assertSame(a3, table.putIfAbsent(new Node<>(new Colliding(1, 5))));
        assertSame(b, table.putIfAbsent(new Node<>(new Colliding(2, 5))), "the bucket's other node is kept");
        assertFalse(table.replace(a2, a), "a replaced node is out of the bucket");
        assertEquals(2, table.size());
        assertTrue(table.remove(a3));
        assertTrue(table.remove(b));
        assertEquals(0, table.size());
    }

    @Test
    void unequalKeysWithOneHashCodeShareABinAndDoNotGrowTheTable() {
        KeyTable<Node<Colliding>> table = new KeyTable<>(16);
        List<Node<Colliding>> nodes = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Node<Colliding> n = new Node<>(new Colliding(i, 42));
            nodes.add(n);
            assertNull(table.putIfAbsent(n), "key " + i + " was taken by an unequal key with the same hash");
        }
        for (Node<Colliding> n : nodes) {
            assertSame(n, table.putIfAbsent(new Node<>(new Colliding(n.key().id(), 42))));
        }
        assertEquals(200, table.size());
        assertEquals(16, table.bins(), "one bucket of equal hashes is no reason to grow");
        for (int i = 199; i >= 0; i -= 2) { // from the end and the middle of the bucket
            assertTrue(table.remove(nodes.get(i)));
        }
        for (int i = 0; i < 200; i += 2) {
            assertTrue(table.remove(nodes.get(i)));
        }
        assertEquals(0, table.size());
    }

    @Test
    void growsWithTheKeysInUseAndFindsEveryKeyAfterGrowing() {
        KeyTable<Node<Integer>> table = new KeyTable<>(2);
        int keys = 20_000;
        List<Node<Integer>> nodes = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            Node<Integer> n = new Node<>(k);
            nodes.add(n);
            assertNull(table.putIfAbsent(n));
        }
        int bins = table.bins();
        assertTrue(bins >= keys / 4, "20,000 keys in " + bins + " bins");
        for (Node<Integer> n : nodes) {
            assertSame(n, table.putIfAbsent(new Node<>(n.key())), "key " + n.key() + " lost in growth");
        }
        Set<Integer> seen = new HashSet<>();
        table.forEach(n -> assertTrue(seen.add(n.key()), "key " + n.key() + " visited twice"));
        assertEquals(keys, seen.size());
        for (Node<Integer> n : nodes) {
            assertTrue(table.remove(n), "key " + n.key());
        }
        assertEquals(0, table.size());
        assertEquals(bins, table.bins(), "the table keeps its size (it never shrinks)");
    }

    /**
     * A small table spreads its bins a cache line apart (16 slots each), so that two workers on two
     * keys never write one line; a table of more than 64 bins keeps them adjacent, so a table of many
     * keys costs one slot per bin, not sixteen.
     */
    @Test
    void aSmallTableSpreadsItsBinsALineApartAndALargeOneKeepsThemAdjacent() {
        KeyTable<Node<Integer>> table = new KeyTable<>(16);
        assertEquals(16 * 16, table.slots(), "16 bins, 16 slots each");
        for (int k = 0; k < 2_000; k++) {
            assertNull(table.putIfAbsent(new Node<>(k)));
        }
        assertTrue(table.bins() > 64, "2,000 keys in " + table.bins() + " bins");
        assertEquals(table.bins(), table.slots(), "a large table: one slot per bin");
    }

    /**
     * Two keys that share a bin, placed and removed 10,000 times, leave the table its size: a bucket
     * that goes away is counted out (found by mutation: without that, every bucket made counted
     * towards growth for ever, and a churn of two keys doubled the table again and again).
     */
    @Test
    void aChurnOfTwoKeysInOneBinDoesNotGrowTheTable() {
        KeyTable<Node<Colliding>> table = new KeyTable<>(16);
        for (int i = 0; i < 10_000; i++) {
            Node<Colliding> one = new Node<>(new Colliding(1, 7));
            Node<Colliding> two = new Node<>(new Colliding(2, 7));
            assertNull(table.putIfAbsent(one));
            assertNull(table.putIfAbsent(two));
            assertTrue(table.remove(two));
            assertTrue(table.remove(one));
        }
        assertEquals(16, table.bins());
    }

    /**
     * The keyed gate's "retained heap per idle key: 0 bytes": 100,000 keys used one after another
     * (every 10th with the next key in use at once) leave the table empty and at its first size, so
     * what it keeps does not grow with the keys ever used, only with the most in use at once.
     */
    @Test
    void keysUsedOneAfterAnotherLeaveTheTableEmptyAndAtItsFirstSize() {
        KeyTable<Node<Long>> table = new KeyTable<>(16);
        for (long k = 0; k < 100_000; k++) {
            Node<Long> n = new Node<>(k);
            assertNull(table.putIfAbsent(n));
            if (k % 10 == 0) {
                Node<Long> next = new Node<>(k + 1);
                assertNull(table.putIfAbsent(next));
                assertTrue(table.remove(next));
            }
            assertTrue(table.remove(n));
        }
        assertEquals(0, table.size());
        assertEquals(16, table.bins(), "the table grew with the keys ever used");
    }

    @Test
    void badSizeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new KeyTable<>(1));
        assertThrows(IllegalArgumentException.class, () -> new KeyTable<>(12));
        assertThrows(IllegalArgumentException.class, () -> new KeyTable<>(-16));
    }

    /**
     * Threads churn 64 keys through a table that starts with 2 bins (so it grows while they work):
     * a thread that places a node holds its key until it lets go (marks the node dead), so no two
     * threads ever hold one key; a thread that finds a dead node removes it (as the keyed gate's
     * newcomer helps remove a dead entry), and the placer's own removal then fails. Afterwards the
     * table is empty.
     */
    @Test
    void concurrentChurnWhileGrowingKeepsOneNodePerKeyAndLeavesNothing() throws Exception {
        int threads = 4;
        int keys = 64;
        int rounds = Stress.scaled(50_000);
        KeyTable<Node<Integer>> table = new KeyTable<>(2);
        AtomicIntegerArray holders = new AtomicIntegerArray(keys);
        AtomicReference<String> broken = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> workers = new ArrayList<>();
        long seed = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            SplittableRandom random = new SplittableRandom(seed + t);
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < rounds && broken.get() == null; i++) {
                        int k = random.nextInt(keys);
                        Node<Integer> mine = new Node<>(k);
                        Node<Integer> found = table.putIfAbsent(mine);
                        if (found == null) {
                            if (holders.incrementAndGet(k) != 1) {
                                broken.compareAndSet(null, "two holders of key " + k + " (seed " + seed + ")");
                            }
                            holders.decrementAndGet(k);
                            mine.dead = true;
                            table.remove(mine); // false if a finder removed it meanwhile
                        } else if (found.dead) {
                            table.remove(found);
                        }
                    }
                } catch (Exception e) {
                    broken.compareAndSet(null, e.toString());
                }
            }));
        }
        for (Thread w : workers) {
            w.join();
        }
        assertNull(broken.get());
        assertEquals(0, table.size(), "nodes left (seed " + seed + ")");
        assertTrue(table.bins() > 2, "the table never grew");
    }
}
