package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Unit tests of {@link SignalList}: firing, removal, ordering, and bounded memory. */
class SignalListTest {
    /**
     * The sweep threshold's constant (SignalList.SWEEP_SLACK) plus one: one thread working a list
     * keeps at most {@code 2 * live + SLACK} nodes linked.
     */
    private static final int SLACK = 33;

    /** A node that records every run, in order, into a shared log. */
    private static final class LoggingNode extends SignalList.Node {
        final int id;
        final List<Integer> log;
        final AtomicInteger runs = new AtomicInteger();

        LoggingNode(int id, List<Integer> log) {
            this.id = id;
            this.log = log;
        }

        @Override
        protected void onFire() {
            runs.incrementAndGet();
            log.add(id);
        }
    }

    /** A node that counts its runs. */
    private static final class CountingNode extends SignalList.Node {
        final AtomicInteger runs = new AtomicInteger();

        @Override
        protected void onFire() {
            runs.incrementAndGet();
        }
    }

    @Test
    void fireRunsEveryRegisteredNodeOnceNewestFirst() {
        SignalList list = new SignalList();
        List<Integer> log = new ArrayList<>();
        LoggingNode[] nodes = new LoggingNode[5];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = new LoggingNode(i, log);
            assertTrue(list.add(nodes[i]));
        }
        assertEquals(5, list.linkedCount());
        assertFalse(list.isFired());

        assertTrue(list.fire());
        assertEquals(List.of(4, 3, 2, 1, 0), log);
        assertTrue(list.isFired());
        assertEquals(0, list.linkedCount());
        for (LoggingNode n : nodes) {
            assertTrue(n.isFired());
            assertFalse(list.remove(n), "remove after fire");
        }

        assertFalse(list.fire(), "second fire");
        assertEquals(List.of(4, 3, 2, 1, 0), log, "second fire ran nothing");
    }

    @Test
    void fireOnEmptyListReturnsTrueOnce() {
        SignalList list = new SignalList();
        assertEquals(0, list.linkedCount());
        assertTrue(list.fire());
        assertFalse(list.fire());
        assertTrue(list.isFired());
    }

    @Test
    void addAfterFireIsRefusedAndNeverRuns() {
        SignalList list = new SignalList();
        list.fire();
        CountingNode late = new CountingNode();
        assertFalse(list.add(late));
        assertEquals(0, list.linkedCount());
        assertFalse(list.fire());
        assertEquals(0, late.runs.get());
        assertFalse(late.isFired());
        assertFalse(list.remove(late), "a refused node counts as fired: remove cannot claim it");
    }

    @Test
    void removeBeforeFireKeepsNodeFromRunning() {
        SignalList list = new SignalList();
        List<Integer> log = new ArrayList<>();
        LoggingNode a = new LoggingNode(0, log);
        LoggingNode b = new LoggingNode(1, log);
        LoggingNode c = new LoggingNode(2, log);
        list.add(a);
        list.add(b);
        list.add(c);

        assertTrue(list.remove(b));
        assertFalse(list.remove(b), "second remove");
        assertTrue(list.fire());
        assertEquals(List.of(2, 0), log);
        assertEquals(0, b.runs.get());
        assertFalse(b.isFired());
    }

    @Test
    void removingTheNewestNodeUnlinksItAtOnce() {
        SignalList list = new SignalList();
        CountingNode old = new CountingNode();
        list.add(old);
        for (int i = 0; i < 100; i++) {
            CountingNode n = new CountingNode();
            list.add(n);
            assertEquals(2, list.linkedCount());
            assertTrue(list.remove(n));
            assertEquals(1, list.linkedCount());
        }
    }

    @Test
    void removingEveryNodeAboveTheOldestLiveOneLeavesOnlyLiveNodesLinked() {
        SignalList list = new SignalList();
        CountingNode base = new CountingNode();
        list.add(base);
        List<CountingNode> children = new ArrayList<>();
        for (int i = 0; i < 20; i++) { // fewer than the sweep threshold: no sweep helps here
            CountingNode n = new CountingNode();
            list.add(n);
            children.add(n);
        }
        for (CountingNode n : children) { // oldest first: each is buried until the last one goes
            assertTrue(list.remove(n));
        }
        assertEquals(1, list.linkedCount());
        list.fire();
        assertEquals(1, base.runs.get());
    }

    @Test
    void throwingNodeGoesToTheUncaughtExceptionHandlerAndDoesNotStopTheOthers() {
        SignalList list = new SignalList();
        CountingNode before = new CountingNode();
        CountingNode after = new CountingNode();
        RuntimeException boom = new RuntimeException("boom");
        list.add(before);
        list.add(new SignalList.Node() {
            @Override
            protected void onFire() {
                throw boom;
            }
        });
        list.add(after);

        List<Throwable> seen = new ArrayList<>();
        AtomicReference<Thread> seenOn = new AtomicReference<>();
        Thread current = Thread.currentThread();
        Thread.UncaughtExceptionHandler saved = current.getUncaughtExceptionHandler();
        current.setUncaughtExceptionHandler((t, e) -> {
            seenOn.set(t);
            seen.add(e);
        });
        try {
            assertTrue(list.fire());
        } finally {
            current.setUncaughtExceptionHandler(saved);
        }
        assertEquals(List.of(boom), seen);
        assertSame(current, seenOn.get());
        assertEquals(1, before.runs.get());
        assertEquals(1, after.runs.get());
    }

    /**
     * Regression (found by SignalListLincheckTest): a remove that starts after the list is visibly
     * fired, while the firer's walk has not yet reached the node, used to win the node, so a node
     * registered before the fire never ran although the fire was already observed. Here the newest
     * node's callback (run first) plays the other thread.
     */
    @Test
    void removeAfterObservedFireLosesToFirer() {
        SignalList list = new SignalList();
        CountingNode older = new CountingNode();
        AtomicInteger removeAnswers = new AtomicInteger(-1);
        AtomicInteger firedSeen = new AtomicInteger(-1);
        list.add(older);
        list.add(new SignalList.Node() {
            @Override
            protected void onFire() {
                firedSeen.set(list.isFired() ? 1 : 0);
                removeAnswers.set(list.remove(older) ? 1 : 0);
            }
        });

        assertTrue(list.fire());
        assertEquals(1, firedSeen.get(), "the callback saw the list fired");
        assertEquals(0, removeAnswers.get(), "remove after an observed fire must lose");
        assertEquals(1, older.runs.get(), "the older node ran");
        assertTrue(older.isFired());
    }

    /**
     * Regression: the sweep threshold used to be the live count seen by the previous sweep, so
     * after a peak of registrations that were then removed beneath a newer live node, about the
     * peak's worth of removed nodes stayed linked (9,968 of 10,000 here). The threshold now follows
     * the current live count.
     */
    @Test
    void removedNodesBuriedUnderALiveOneStayBoundedByTheCurrentLiveCount() {
        SignalList list = new SignalList();
        List<CountingNode> burst = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            CountingNode n = new CountingNode();
            list.add(n);
            burst.add(n);
        }
        CountingNode top = new CountingNode();
        list.add(top);
        for (CountingNode n : burst) { // oldest first, all beneath top
            assertTrue(list.remove(n));
        }
        int linked = list.linkedCount();
        assertTrue(linked <= 2 * 1 + SLACK, "linked " + linked + " with one live node");
        list.fire();
        assertEquals(1, top.runs.get());
        for (CountingNode n : burst) {
            assertEquals(0, n.runs.get());
        }
    }

    @Test
    void aMillionAddRemovePairsKeepTheListEmpty() {
        SignalList list = new SignalList();
        CountingNode longLived = new CountingNode();
        list.add(longLived);
        int pairs = 1_000_000;
        for (int i = 0; i < pairs; i++) {
            CountingNode n = new CountingNode();
            list.add(n);
            list.remove(n);
            if ((i & 0xFFF) == 0) {
                assertEquals(1, list.linkedCount(), "after " + i + " pairs");
            }
        }
        assertEquals(1, list.linkedCount());
        list.fire();
        assertEquals(1, longLived.runs.get());
    }

    /** add A, add B, remove A, add C, remove B, ...: every removal is of a buried node. */
    @Test
    void slidingWindowOfTwoKeepsMemoryBounded() {
        SignalList list = new SignalList();
        CountingNode base = new CountingNode();
        list.add(base);
        CountingNode previous = new CountingNode();
        list.add(previous);
        int maxLinked = 0;
        for (int i = 0; i < 1_000_000; i++) {
            CountingNode next = new CountingNode();
            list.add(next);
            assertTrue(list.remove(previous));
            previous = next;
            if ((i & 0xFF) == 0) {
                maxLinked = Math.max(maxLinked, list.linkedCount());
            }
        }
        assertTrue(maxLinked <= 2 * 2 + SLACK, "max linked " + maxLinked);
        list.fire();
        assertEquals(1, base.runs.get());
        assertEquals(1, previous.runs.get());
    }

    /** FIFO with k live nodes: the oldest goes, so removals never hit the head and sweeps do all. */
    @Test
    void fifoWindowKeepsMemoryBoundedByLiveCount() {
        for (int k : new int[] {1, 10, 100, 1000}) {
            SignalList list = new SignalList();
            ArrayDeque<CountingNode> live = new ArrayDeque<>();
            for (int i = 0; i < k; i++) {
                CountingNode n = new CountingNode();
                list.add(n);
                live.addLast(n);
            }
            int maxLinked = 0;
            int steps = 200_000;
            for (int i = 0; i < steps; i++) {
                CountingNode n = new CountingNode();
                list.add(n);
                live.addLast(n);
                assertTrue(list.remove(live.removeFirst()));
                if (k <= 100 || i % 3 == 0) {
                    maxLinked = Math.max(maxLinked, list.linkedCount());
                }
            }
            assertTrue(maxLinked <= 2 * (k + 1) + SLACK, "k=" + k + ": max linked " + maxLinked);
            list.fire();
            for (CountingNode n : live) {
                assertEquals(1, n.runs.get());
            }
        }
    }

    /** Random adds and removes (seeded; the seed is in every failure message). */
    @Test
    void randomAddRemoveKeepsMemoryBoundedAndFiresExactlyTheLiveNodes() {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        String context = "seed " + seed;
        int cap = 1 + random.nextInt(200);
        SignalList list = new SignalList();
        List<CountingNode> live = new ArrayList<>();
        List<CountingNode> removed = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            boolean add = live.isEmpty() || (live.size() < cap && random.nextBoolean());
            if (add) {
                CountingNode n = new CountingNode();
                assertTrue(list.add(n), context);
                live.add(n);
            } else {
                int at = random.nextInt(live.size());
                CountingNode n = live.get(at);
                live.set(at, live.get(live.size() - 1));
                live.remove(live.size() - 1);
                assertTrue(list.remove(n), context);
                if (removed.size() < 10_000) {
                    removed.add(n);
                }
            }
            if ((i & 0x1F) == 0) {
                int linked = list.linkedCount();
                assertTrue(linked >= live.size(), context + ": linked " + linked + " < live " + live.size());
                assertTrue(linked <= 2 * live.size() + SLACK,
                        context + ": step " + i + " linked " + linked + ", live " + live.size() + ", cap " + cap);
            }
        }
        assertTrue(list.fire(), context);
        for (CountingNode n : live) {
            assertEquals(1, n.runs.get(), context);
        }
        for (CountingNode n : removed) {
            assertEquals(0, n.runs.get(), context);
        }
    }

    /**
     * Threads add and remove their own nodes on one list (FIFO windows, so concurrent sweeps and
     * pops do the unlinking) while a set of anchor nodes stays registered; then one fire. Every
     * anchor and every node still registered runs exactly once, no removed node runs, and the list
     * never held more than its live nodes plus the sweep slack per thread: no sweep or pop unlinked
     * a live node, and none leaked a removed one.
     */
    @Test
    @Tag("stress")
    void concurrentAddRemoveWithSweepsNeverLosesALiveNode() throws Exception {
        int threads = 4;
        int window = 8;
        int rounds = Stress.scaled(50);
        for (int round = 0; round < rounds; round++) {
            SignalList list = new SignalList();
            CountingNode[] anchors = new CountingNode[16];
            for (int i = 0; i < anchors.length; i++) {
                anchors[i] = new CountingNode();
                list.add(anchors[i]);
            }
            CyclicBarrier start = new CyclicBarrier(threads);
            List<List<CountingNode>> kept = new ArrayList<>();
            List<List<CountingNode>> dropped = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                List<CountingNode> keep = new ArrayList<>();
                List<CountingNode> drop = new ArrayList<>();
                kept.add(keep);
                dropped.add(drop);
                long seed = round * 31L + t;
                workers.add(Thread.ofPlatform().start(() -> {
                    try {
                        SplittableRandom random = new SplittableRandom(seed);
                        ArrayDeque<CountingNode> mine = new ArrayDeque<>();
                        start.await();
                        for (int i = 0; i < 20_000; i++) {
                            CountingNode n = new CountingNode();
                            list.add(n);
                            mine.addLast(n);
                            if (mine.size() > window) {
                                CountingNode gone = random.nextInt(4) == 0 ? mine.removeLast() : mine.removeFirst();
                                if (!list.remove(gone)) {
                                    throw new AssertionError("remove of a live node failed, seed " + seed);
                                }
                                if (drop.size() < 2_000) {
                                    drop.add(gone);
                                }
                            }
                        }
                        keep.addAll(mine);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread w : workers) {
                w.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("round " + round, failure.get());
            }
            int live = anchors.length + threads * window;
            int linked = list.linkedCount();
            assertTrue(linked >= live, "round " + round + ": linked " + linked + " < live " + live);
            // racing removers may lose increments of the dead count, each at most one per thread
            int bound = live + threads * (live + SLACK);
            assertTrue(linked <= bound, "round " + round + ": linked " + linked + " > " + bound);
            assertTrue(list.fire());
            for (CountingNode a : anchors) {
                assertEquals(1, a.runs.get(), "anchor, round " + round);
            }
            for (List<CountingNode> keep : kept) {
                assertEquals(window, keep.size());
                for (CountingNode n : keep) {
                    assertEquals(1, n.runs.get(), "kept node, round " + round);
                }
            }
            for (List<CountingNode> drop : dropped) {
                for (CountingNode n : drop) {
                    assertEquals(0, n.runs.get(), "removed node ran, round " + round);
                }
            }
        }
    }
}
