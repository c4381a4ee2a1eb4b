package dev.coro.cancel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Multi-threaded stress of cancellation: cancel, register, unregister and linking racing on real
 * threads. Starts are lined up with barriers and latches, never sleeps; every round's seed is in
 * its failure messages. Rounds scale with {@code -Dcoro.stress.scale} ({@link Stress}).
 */
@Tag("stress")
class CancellationStressTest {
    /** A callback that counts its runs and checks that it sees what the canceller wrote before. */
    private static final class Callback implements Runnable {
        final Shared shared;
        final AtomicInteger runs = new AtomicInteger();
        volatile int payloadSeen = -1;
        volatile boolean takenBack;

        Callback(Shared shared) {
            this.shared = shared;
        }

        @Override
        public void run() {
            payloadSeen = shared.payload; // plain read: cancel() must publish it
            runs.incrementAndGet();
        }
    }

    /** State written by the canceller before cancel(), with plain writes. */
    private static final class Shared {
        int payload;
    }

    /** Runs {@code body(i)} on {@code n} new platform threads and rethrows the first failure. */
    private static void runThreads(int n, ThrowingIntConsumer body) throws InterruptedException {
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int index = i;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    body.accept(index);
                } catch (Throwable e) {
                    failures.add(e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            AssertionError error = new AssertionError("a worker failed", failures.peek());
            failures.stream().skip(1).forEach(error::addSuppressed);
            throw error;
        }
    }

    @FunctionalInterface
    private interface ThrowingIntConsumer {
        void accept(int i) throws Exception;
    }

    /**
     * Registrants register, sometimes unregister at once, sometimes later, sometimes never, while two
     * cancellers cancel once the registrants are part-way. Afterwards each callback has run exactly
     * once unless unregister returned true, in which case it never ran; exactly one cancel returned
     * true; a callback registered after its registrant saw the token cancelled ran during register;
     * an unregister after the registrant saw the token cancelled returned false; and every callback
     * saw the payload written before cancel().
     */
    @Test
    void everyCallbackRunsExactlyOnceUnderConcurrentCancelRegisterUnregister() throws Exception {
        int registrants = 3;
        int perThread = 300;
        int rounds = Stress.scaled(100);
        long baseSeed = new SplittableRandom().nextLong();
        for (int round = 0; round < rounds; round++) {
            long seed = baseSeed + round;
            String context = "seed " + seed;
            SplittableRandom roundRandom = new SplittableRandom(seed);
            CancellationSource source = new CancellationSource();
            CancellationToken token = source.token();
            Shared shared = new Shared();
            int[] cancelAfter = new int[registrants];
            for (int i = 0; i < registrants; i++) {
                cancelAfter[i] = roundRandom.nextInt(perThread);
            }
            CountDownLatch partWay = new CountDownLatch(registrants);
            CyclicBarrier start = new CyclicBarrier(registrants + 2);
            AtomicInteger cancelWins = new AtomicInteger();
            List<List<Callback>> all = new ArrayList<>();
            for (int i = 0; i < registrants; i++) {
                all.add(new ArrayList<>());
            }
            runThreads(registrants + 2, index -> {
                if (index >= registrants) { // a canceller
                    start.await();
                    partWay.await();
                    shared.payload = 42;
                    if (source.cancel()) {
                        cancelWins.incrementAndGet();
                    }
                    return;
                }
                SplittableRandom random = new SplittableRandom(seed * 31 + index);
                List<Callback> mine = all.get(index);
                List<Registration> pending = new ArrayList<>();
                List<Callback> pendingCallbacks = new ArrayList<>();
                start.await();
                for (int i = 0; i < perThread; i++) {
                    if (i == cancelAfter[index]) {
                        partWay.countDown();
                    }
                    Callback c = new Callback(shared);
                    mine.add(c);
                    boolean cancelledBefore = token.isCancelled();
                    Registration r = token.register(c);
                    if (cancelledBefore && c.runs.get() != 1) {
                        throw new AssertionError(context + ": registered after a seen cancel but did not run at once");
                    }
                    switch (random.nextInt(3)) {
                        case 0 -> unregister(token, r, c, context);
                        case 1 -> {
                            pending.add(r);
                            pendingCallbacks.add(c);
                        }
                        default -> { } // never unregistered
                    }
                    if (pending.size() > 4 || (!pending.isEmpty() && random.nextInt(4) == 0)) {
                        int at = random.nextInt(pending.size());
                        unregister(token, pending.remove(at), pendingCallbacks.remove(at), context);
                    }
                }
            });
            assertEquals(1, cancelWins.get(), context + ": cancel() returned true " + cancelWins.get() + " times");
            assertTrue(token.isCancelled(), context);
            for (List<Callback> mine : all) {
                assertEquals(perThread, mine.size(), context);
                for (Callback c : mine) {
                    int expected = c.takenBack ? 0 : 1;
                    assertEquals(expected, c.runs.get(), context + ": runs of a callback taken back=" + c.takenBack);
                    if (expected == 1) {
                        assertEquals(42, c.payloadSeen, context + ": the callback did not see the canceller's write");
                    }
                }
            }
            assertEquals(0, token.linkedCount(), context + ": a cancelled token keeps nothing");
        }
    }

    private static void unregister(CancellationToken token, Registration r, Callback c, String context) {
        boolean cancelledBefore = token.isCancelled();
        boolean takenBack = r.unregister();
        if (cancelledBefore && takenBack) {
            throw new AssertionError(context + ": unregister won after the cancel was visible");
        }
        c.takenBack = takenBack;
    }

    /** Several threads cancel the same source at once: exactly one call returns true. */
    @Test
    void cancelReturnsTrueExactlyOnceUnderContention() throws Exception {
        int threads = 4;
        int rounds = Stress.scaled(300);
        for (int round = 0; round < rounds; round++) {
            CancellationSource source = new CancellationSource();
            AtomicInteger runs = new AtomicInteger();
            for (int i = 0; i < 8; i++) {
                source.token().register(runs::incrementAndGet);
            }
            CyclicBarrier start = new CyclicBarrier(threads);
            AtomicInteger wins = new AtomicInteger();
            runThreads(threads, index -> {
                start.await();
                if (source.cancel()) {
                    wins.incrementAndGet();
                }
            });
            assertEquals(1, wins.get(), "round " + round);
            assertEquals(8, runs.get(), "round " + round);
        }
    }

    /**
     * Threads create children linked to one parent and close some of them while the parent is
     * cancelled part-way. Every child still linked when the cancel began is cancelled by it; a child
     * whose close finished before the cancel began never is; a child closed after its closer saw
     * the parent cancelled is cancelled all the same; a child created after that is cancelled at
     * once.
     */
    @Test
    void linkedChildrenFollowTheirParentUnderConcurrentCancelAndClose() throws Exception {
        int workers = 3;
        int perThread = 300;
        int rounds = Stress.scaled(60);
        long baseSeed = new SplittableRandom().nextLong();
        for (int round = 0; round < rounds; round++) {
            long seed = baseSeed + round;
            String context = "seed " + seed;
            CancellationSource parent = new CancellationSource();
            CountDownLatch partWay = new CountDownLatch(workers);
            CyclicBarrier start = new CyclicBarrier(workers + 1);
            int cancelAfter = new SplittableRandom(seed).nextInt(perThread);
            AtomicInteger cancelStartedFlag = new AtomicInteger();
            List<List<Child>> all = new ArrayList<>();
            for (int i = 0; i < workers; i++) {
                all.add(new ArrayList<>());
            }
            runThreads(workers + 1, index -> {
                if (index == workers) {
                    start.await();
                    partWay.await();
                    cancelStartedFlag.set(1);
                    assertTrue(parent.cancel(), context);
                    return;
                }
                SplittableRandom random = new SplittableRandom(seed * 31 + index);
                List<Child> mine = all.get(index);
                start.await();
                for (int i = 0; i < perThread; i++) {
                    if (i == cancelAfter) {
                        partWay.countDown();
                    }
                    boolean parentCancelledBefore = parent.isCancelled();
                    Child child = new Child(CancellationSource.linkedTo(parent.token()));
                    mine.add(child);
                    if (parentCancelledBefore && !child.source.isCancelled()) {
                        throw new AssertionError(context + ": linked to a cancelled parent but not cancelled");
                    }
                    if (random.nextBoolean()) {
                        child.closerSawParentCancelled = parent.isCancelled();
                        child.source.close();
                        child.closedBeforeCancelBegan = cancelStartedFlag.get() == 0;
                        child.closed = true;
                    }
                }
            });
            assertTrue(parent.isCancelled(), context);
            assertEquals(0, parent.token().linkedCount(), context);
            for (List<Child> mine : all) {
                for (Child child : mine) {
                    boolean cancelled = child.source.isCancelled();
                    if (!child.closed || child.closerSawParentCancelled) {
                        assertTrue(cancelled, context + ": a linked child was not cancelled (closed="
                                + child.closed + ")");
                    }
                    if (child.closedBeforeCancelBegan) {
                        assertFalse(cancelled, context + ": a child closed before the cancel was cancelled");
                    }
                }
            }
        }
    }

    /** A child source and what its worker saw around closing it. */
    private static final class Child {
        final CancellationSource source;
        volatile boolean closed;
        volatile boolean closerSawParentCancelled;
        volatile boolean closedBeforeCancelBegan;

        Child(CancellationSource source) {
            this.source = source;
        }
    }

    /**
     * Threads link and close children and register and unregister callbacks on one long-lived
     * parent that is never cancelled. Afterwards the parent's baseline registrations all still run
     * on cancel, nothing else does, and one more register/unregister pair brings the linked count
     * back to the baseline exactly (it pops every removed node above the baseline ones).
     */
    @Test
    void concurrentLinkAndCloseOnALongLivedParentReturnsToBaseline() throws Exception {
        int workers = 4;
        int perThread = Stress.scaled(50_000);
        CancellationSource parent = new CancellationSource();
        CancellationToken token = parent.token();
        AtomicInteger baselineRuns = new AtomicInteger();
        for (int i = 0; i < 5; i++) {
            token.register(baselineRuns::incrementAndGet);
        }
        int baseline = token.linkedCount();
        AtomicInteger strayRuns = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(workers);
        runThreads(workers, index -> {
            SplittableRandom random = new SplittableRandom(index);
            List<AutoCloseable> open = new ArrayList<>();
            start.await();
            for (int i = 0; i < perThread; i++) {
                if (random.nextBoolean()) {
                    open.add(CancellationSource.linkedTo(token));
                } else {
                    open.add(token.register(strayRuns::incrementAndGet));
                }
                if (open.size() > 16 || random.nextInt(3) == 0) {
                    open.remove(random.nextInt(open.size())).close();
                }
            }
            for (AutoCloseable c : open) {
                c.close();
            }
        });
        int linked = token.linkedCount();
        assertTrue(linked >= baseline, "linked " + linked);
        token.register(strayRuns::incrementAndGet).unregister();
        assertEquals(baseline, token.linkedCount(), "after one more pair (was " + linked + ")");
        parent.cancel();
        assertEquals(5, baselineRuns.get());
        assertEquals(0, strayRuns.get());
    }
}
