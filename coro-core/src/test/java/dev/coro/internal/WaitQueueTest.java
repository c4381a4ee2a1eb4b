package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WaitQueueTest {
    private static final WaitQueue.Sentinel OPEN = new WaitQueue.Sentinel("OPEN", true);
    private static final WaitQueue.Sentinel MARKED = new WaitQueue.Sentinel("MARKED", true);
    private static final WaitQueue.Sentinel CLOSED = new WaitQueue.Sentinel("CLOSED", false);

    private static List<Integer> names(WaitNode first) {
        List<Integer> out = new ArrayList<>();
        for (WaitNode n = first; n != null; n = WaitQueue.next(n)) {
            out.add(((TestWaitNode) n).name);
        }
        return out;
    }

    @Test
    void drainGivesArrivalOrderAndDropsCancelledNodes() {
        WaitQueue q = new WaitQueue(OPEN);
        List<TestWaitNode> nodes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            TestWaitNode n = new TestWaitNode(i);
            assertNull(q.push(n));
            nodes.add(n);
        }
        nodes.get(1).cancel();
        nodes.get(4).cancel();
        assertEquals(List.of(0, 2, 3, 5), names(q.drain(q.exchange(OPEN))));
        assertSame(OPEN, q.state());
    }

    @Test
    void aRefusingSentinelIsReturnedAndNothingIsQueued() {
        WaitQueue q = new WaitQueue(CLOSED);
        assertSame(CLOSED, q.push(new TestWaitNode(0)));
        assertSame(CLOSED, q.state());
        assertFalse(q.hasWaiters());
    }

    @Test
    void cancellingTheOnlyWaiterRestoresExactlyTheStateItWasPushedOnto() { // I2
        WaitQueue q = new WaitQueue(MARKED);
        TestWaitNode n = new TestWaitNode(0);
        assertNull(q.push(n));
        assertTrue(q.hasWaiters());
        assertTrue(n.cancel());
        assertSame(MARKED, q.state(), "the pop restores MARKED, not some other accepting state");
    }

    @Test
    void aNodeCancelledBeforeItLearnsItsQueueIsStillUnlinked() {
        WaitQueue q = new WaitQueue(OPEN);
        TestWaitNode n = new TestWaitNode(0);
        n.abandon(); // settled before the push publishes it (a token that fired during the body)
        assertNull(q.push(n)); // cancelInto finds it abandoned and tells the queue at once
        assertSame(OPEN, q.state());
    }

    @Test
    void randomPushesAndCancellationsKeepLinkedNodesWithinTwiceTheLiveOnes() {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom rnd = new SplittableRandom(seed);
        WaitQueue q = new WaitQueue(OPEN);
        List<TestWaitNode> live = new ArrayList<>();
        int name = 0;
        for (int step = 0; step < Stress.scaled(300_000); step++) {
            int r = rnd.nextInt(100);
            if (r < 50 || live.isEmpty()) {
                TestWaitNode n = new TestWaitNode(name++);
                q.push(n);
                live.add(n);
            } else if (r < 99) {
                int i = rnd.nextInt(live.size()); // any of them, mostly not the newest
                TestWaitNode n = live.get(i);
                live.set(i, live.get(live.size() - 1));
                live.remove(live.size() - 1);
                n.cancel();
            } else {
                List<Integer> drained = names(q.drain(q.exchange(OPEN)));
                assertEquals(live.size(), drained.size(), "seed " + seed);
                live.clear();
            }
            assertTrue(q.linkedCount() <= 2 * live.size() + 2 * 32 + 1,
                    "seed " + seed + ": " + q.linkedCount() + " linked for " + live.size() + " live");
        }
    }

    @Test
    void concurrentPushCancelAndDrainLoseNoWaiterAndSettleEachOnce() throws Exception {
        int threads = 3;
        int perThread = Stress.scaled(20_000);
        WaitQueue q = new WaitQueue(OPEN);
        AtomicInteger admitted = new AtomicInteger();
        AtomicInteger cancelled = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread w = new Thread(() -> {
                SplittableRandom rnd = new SplittableRandom(id);
                try {
                    start.await();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < perThread; i++) {
                    TestWaitNode n = new TestWaitNode(id * perThread + i);
                    q.push(n);
                    if (rnd.nextBoolean() && n.cancel()) {
                        cancelled.incrementAndGet();
                    }
                }
                finished.incrementAndGet();
            });
            w.start();
            workers.add(w);
        }
        start.await();
        while (finished.get() < threads) { // the owner drains and admits while the others push and cancel
            for (WaitNode n = q.drain(q.exchange(OPEN)); n != null; ) {
                WaitNode next = WaitQueue.next(n);
                if (n.admit("in")) {
                    admitted.incrementAndGet();
                }
                n = next;
            }
        }
        for (Thread w : workers) {
            w.join();
        }
        for (WaitNode n = q.drain(q.exchange(OPEN)); n != null; ) {
            WaitNode next = WaitQueue.next(n);
            if (n.admit("in")) {
                admitted.incrementAndGet();
            }
            n = next;
        }
        assertEquals(threads * perThread, admitted.get() + cancelled.get(),
                "every waiter was admitted or cancelled, exactly once");
        assertSame(OPEN, q.state());
    }
}
