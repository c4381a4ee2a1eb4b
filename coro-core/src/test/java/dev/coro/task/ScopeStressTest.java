package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.Scheduler;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Multi-threaded stress of {@link Scope}'s counting on real platform threads: spawners, finishers
 * (children end on their threads) and joiners race; starts are lined up with barriers and latches,
 * never sleeps; every round's seed is in its failure messages. Rounds scale with
 * {@code -Dcoro.stress.scale} ({@link Stress}). {@link ScopeLincheckTest} model-checks the same
 * counting on small scenarios.
 *
 * <p>The scope runs children on {@link Scheduler#inline()}: a child runs on its spawner until it
 * waits for its promise, and resumes, ends and is counted down on the thread that completes the
 * promise, which also runs the joins that this releases. So once every thread has stopped, every
 * join that will ever complete has completed: "no join is lost" is checked without waiting.
 */
@Tag("stress")
class ScopeStressTest {
    /** A child that waits for its promise and marks itself ended before the scope counts it down. */
    private static final class Child {
        final Promise<Void> promise = new Promise<>();
        volatile boolean ended;
        volatile boolean accepted;
        volatile boolean refused;

        Task<Void> task() {
            return promise.task().map(v -> {
                ended = true;
                return v;
            });
        }
    }

    /**
     * One spawner's children, in spawn order: {@code published} counts those whose spawn has
     * returned (written after the slot, read before it); {@code lowestRunning} is a lower bound of
     * the first that has not ended, advanced lazily by the checks.
     */
    private static final class Spawned {
        final Child[] children;
        final AtomicInteger published = new AtomicInteger();
        final AtomicInteger lowestRunning = new AtomicInteger();

        Spawned(int capacity) {
            children = new Child[capacity];
        }

        /** Whether every child in [0, n) has ended; amortized O(1) over all checks. */
        boolean allEndedBelow(int n) {
            int w = lowestRunning.get();
            while (w < n && children[w].ended) {
                w++;
            }
            lowestRunning.accumulateAndGet(w, Math::max);
            return w >= n;
        }
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
     * Three spawners spawn children in random bursts, two finishers complete them in arrival order,
     * two joiners start joins over and over (now and then blocking on one). Each join records, for
     * each spawner, how many spawns had returned before it began; when the join task resumes, all
     * of those children must have ended. When every thread has stopped, the count is zero and every
     * join has completed, and a new join completes at once.
     */
    @Test
    void joinsNeverCompleteBeforeEarlierChildrenEndAndNoneIsLost() throws Exception {
        int spawners = 3;
        int finishers = 2;
        int joiners = 2;
        int perSpawner = 1000;
        int maxJoins = 1000;
        int rounds = Stress.scaled(10);
        long baseSeed = new SplittableRandom().nextLong();
        for (int round = 0; round < rounds; round++) {
            long seed = baseSeed + round;
            String context = "seed " + seed;
            Scope scope = Scope.on(Scheduler.inline());
            Spawned[] spawned = new Spawned[spawners];
            for (int i = 0; i < spawners; i++) {
                spawned[i] = new Spawned(perSpawner);
            }
            ConcurrentLinkedQueue<Child> toFinish = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
            List<List<CompletableFuture<Void>>> joins = new ArrayList<>();
            for (int i = 0; i < joiners; i++) {
                joins.add(new ArrayList<>());
            }
            CountDownLatch spawnersDone = new CountDownLatch(spawners);
            CyclicBarrier start = new CyclicBarrier(spawners + finishers + joiners);
            runThreads(spawners + finishers + joiners, index -> {
                SplittableRandom random = new SplittableRandom(seed * 31 + index);
                start.await();
                if (index < spawners) {
                    Spawned mine = spawned[index];
                    try {
                        for (int k = 0; k < perSpawner; ) {
                            int burst = Math.min(perSpawner - k, 1 + random.nextInt(8));
                            for (int b = 0; b < burst; b++, k++) {
                                Child child = new Child();
                                scope.spawn(child.task());
                                mine.children[k] = child;
                                mine.published.set(k + 1); // after the spawn returned
                                toFinish.add(child);
                            }
                            Thread.yield(); // let the finishers catch up, so the count often reaches zero
                        }
                    } finally {
                        spawnersDone.countDown();
                    }
                } else if (index < spawners + finishers) {
                    for (;;) {
                        Child child = toFinish.poll();
                        if (child != null) {
                            child.promise.complete(null); // the child ends here, on this thread
                        } else if (spawnersDone.getCount() == 0 && toFinish.isEmpty()) {
                            return;
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                } else {
                    List<CompletableFuture<Void>> mine = joins.get(index - spawners - finishers);
                    while (spawnersDone.getCount() > 0 && mine.size() < maxJoins) {
                        int[] before = new int[spawners];
                        for (int s = 0; s < spawners; s++) {
                            before[s] = spawned[s].published.get();
                        }
                        CompletableFuture<Void> join = scope.join().map(v -> {
                            for (int s = 0; s < spawners; s++) {
                                if (!spawned[s].allEndedBelow(before[s])) {
                                    violations.add("a join completed while a child of spawner " + s
                                            + " spawned before it began was running (" + context + ")");
                                }
                            }
                            return v;
                        }).toCompletableFuture();
                        mine.add(join);
                        if (random.nextInt(64) == 0) {
                            join.join(); // completes once the count next reaches zero
                        }
                    }
                }
            });
            assertTrue(violations.isEmpty(), () -> String.join("; ", violations));
            assertEquals(0, scope.activeCount(), context);
            for (List<CompletableFuture<Void>> mine : joins) {
                for (CompletableFuture<Void> join : mine) {
                    assertTrue(join.isDone(), () -> "a join was lost: every child has ended (" + context + ")");
                    join.join(); // no failure, not cancelled
                }
            }
            assertTrue(scope.join().toCompletableFuture().isDone(), context);
        }
    }

    /**
     * Spawners spawn until the scope refuses (some children end at once, inside their spawn; the
     * others wait to be finished) while a closer, once they are under way, closes the scope and
     * joins it. When that join resumes, every child not yet ended must be one whose spawn is still
     * in progress and will be refused: a spawn that succeeds must have been counted before close
     * returned, so the join waits for its child. Afterwards every spawner was refused exactly once,
     * and the children it got accepted all ended. The real-thread counterpart of
     * {@link ScopeLincheckTest#spawnRacingCloseIsCountedBeforeCloseReturns()}.
     */
    @Test
    void aJoinAfterCloseWaitsForEverySpawnThatSucceeded() throws Exception {
        int spawners = 3;
        int ahead = 10_000; // spawns past the start of the race before a spawner waits for close
        int rounds = Stress.scaled(200);
        long baseSeed = new SplittableRandom().nextLong();
        for (int round = 0; round < rounds; round++) {
            long seed = baseSeed + round;
            String context = "seed " + seed;
            Scope scope = Scope.on(Scheduler.inline());
            int closeAfter = 1 + new SplittableRandom(seed).nextInt(64);
            int capacity = closeAfter + ahead + 1;
            Child[][] children = new Child[spawners][capacity];
            AtomicInteger[] created = new AtomicInteger[spawners];
            for (int i = 0; i < spawners; i++) {
                created[i] = new AtomicInteger();
            }
            ConcurrentLinkedQueue<Child> toFinish = new ConcurrentLinkedQueue<>();
            List<Child> suspects = new ArrayList<>();
            CountDownLatch underWay = new CountDownLatch(spawners);
            CountDownLatch closed = new CountDownLatch(1);
            CountDownLatch refused = new CountDownLatch(spawners);
            CompletableFuture<?>[] joinAfterClose = new CompletableFuture<?>[1];
            CyclicBarrier start = new CyclicBarrier(spawners + 2);
            runThreads(spawners + 2, index -> {
                SplittableRandom random = new SplittableRandom(seed * 31 + index);
                start.await();
                if (index < spawners) {
                    try {
                        for (int k = 0; ; k++) {
                            if (k == closeAfter) {
                                underWay.countDown();
                            }
                            if (k == capacity - 1) {
                                closed.await(); // the closer is slow: stop racing, the next spawn is refused
                            }
                            Child child = new Child();
                            children[index][k] = child;
                            created[index].set(k + 1); // before the spawn starts
                            boolean immediate = random.nextBoolean();
                            if (immediate) {
                                child.promise.complete(null); // the child ends inside its spawn
                            }
                            try {
                                scope.spawn(child.task());
                            } catch (IllegalStateException e) {
                                child.refused = true;
                                return;
                            }
                            child.accepted = true;
                            if (!immediate) {
                                toFinish.add(child);
                            }
                        }
                    } finally {
                        underWay.countDown(); // in case it stopped early
                        refused.countDown();
                    }
                } else if (index == spawners) {
                    underWay.await();
                    scope.refuseSpawns(); // close()'s non-blocking first step
                    closed.countDown();
                    joinAfterClose[0] = scope.join().map(v -> {
                        for (int s = 0; s < spawners; s++) {
                            int n = created[s].get();
                            for (int k = 0; k < n; k++) {
                                if (!children[s][k].ended) {
                                    suspects.add(children[s][k]); // only this fiber writes it
                                }
                            }
                        }
                        return v;
                    }).toCompletableFuture();
                } else {
                    for (;;) {
                        Child child = toFinish.poll();
                        if (child != null) {
                            child.promise.complete(null);
                        } else if (refused.getCount() == 0 && toFinish.isEmpty()) {
                            return;
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                }
            });
            assertTrue(joinAfterClose[0].isDone(), () -> "the join after close was lost (" + context + ")");
            joinAfterClose[0].join();
            for (Child suspect : suspects) {
                assertTrue(suspect.refused && !suspect.accepted,
                        () -> "a spawn succeeded after close() returned, and the join after close did not wait for"
                                + " its child (" + context + ")");
            }
            assertTrue(suspects.size() <= spawners, context);
            assertEquals(0, scope.activeCount(), context);
            assertTrue(scope.isClosed(), context);
            assertThrows(IllegalStateException.class, () -> scope.spawn(Task.value(1)), context);
        }
    }
}
