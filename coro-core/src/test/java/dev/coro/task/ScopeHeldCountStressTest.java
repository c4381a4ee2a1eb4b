package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Scope's counting on a two-worker pool, where workers hold count-downs (Scope part 11,
 * WorkerThread): children spawned from outside threads and from a task on the pool, some ending at
 * once and some resumed later by finisher threads, while joiners start joins over and over. A join
 * must never resume before every child spawned before it began has ended, and every join must
 * resume once all children have ended. Rounds scale with {@code -Dcoro.stress.scale}
 * ({@link Stress}); the seed is in every failure message.
 */
@Tag("stress")
class ScopeHeldCountStressTest {

    @Test
    void joinsNeverResumeBeforeEarlierChildrenEndAndAllResumeOnceTheyHave() throws Exception {
        int rounds = Stress.scaled(10);
        long baseSeed = new SplittableRandom().nextLong();
        try (WorkStealingPool pool = WorkStealingPool.create(2, "held-stress")) {
            for (int round = 0; round < rounds; round++) {
                runRound(pool, baseSeed + round);
            }
        }
    }

    /** Spawner 0 is a task on the pool; spawners 1 and 2 are outside threads. */
    private static void runRound(WorkStealingPool pool, long seed) throws Exception {
        String context = "seed " + seed;
        int spawners = 3;
        int perSpawner = 2000;
        Scope scope = Scope.on(pool);
        AtomicIntegerArray ended = new AtomicIntegerArray(spawners * perSpawner); // 1 once child i has ended
        AtomicIntegerArray published = new AtomicIntegerArray(spawners); // spawns returned, per spawner
        ConcurrentLinkedQueue<Promise<Void>> toFinish = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        CountDownLatch spawnersDone = new CountDownLatch(spawners);
        AtomicInteger running = new AtomicInteger(3); // the two finishers and the joiner

        class Spawner {
            void spawnAll(int s, SplittableRandom random) {
                try {
                    for (int k = 0; k < perSpawner; k++) {
                        int id = s * perSpawner + k;
                        Task<Void> body = Task.fromRunnable(() -> ended.set(id, 1));
                        if (random.nextInt(3) == 0) { // waits: resumed on a worker by a finisher's completion
                            Promise<Void> promise = new Promise<>();
                            toFinish.add(promise);
                            body = promise.task().then(body);
                        }
                        scope.spawn(body);
                        published.set(s, k + 1); // after the spawn returned
                    }
                } finally {
                    spawnersDone.countDown();
                }
            }
        }
        Spawner spawner = new Spawner();
        CompletableFuture<Void> inside = Task.fromRunnable(() -> spawner.spawnAll(0, new SplittableRandom(seed)))
                .startOn(pool).toCompletableFuture();
        List<Thread> threads = new ArrayList<>();
        for (int s = 1; s < spawners; s++) {
            int index = s;
            threads.add(Thread.ofPlatform().start(() -> spawner.spawnAll(index, new SplittableRandom(seed * 31 + index))));
        }
        for (int f = 0; f < 2; f++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    for (;;) {
                        Promise<Void> p = toFinish.poll();
                        if (p != null) {
                            p.complete(null);
                        } else if (spawnersDone.getCount() == 0 && toFinish.isEmpty()) {
                            return;
                        } else {
                            Thread.onSpinWait();
                        }
                    }
                } finally {
                    running.decrementAndGet();
                }
            }));
        }
        List<CompletableFuture<Void>> joins = new ArrayList<>();
        Thread joiner = Thread.ofPlatform().start(() -> {
            try {
                while (spawnersDone.getCount() > 0 && joins.size() < 2000) {
                    int[] before = new int[spawners];
                    for (int s = 0; s < spawners; s++) {
                        before[s] = published.get(s);
                    }
                    joins.add(scope.join().map(v -> {
                        for (int s = 0; s < spawners; s++) {
                            for (int k = 0; k < before[s]; k++) {
                                if (ended.get(s * perSpawner + k) == 0) {
                                    violations.add("a join resumed while child " + k + " of spawner " + s
                                            + ", spawned before it began, had not ended (" + context + ")");
                                    return v;
                                }
                            }
                        }
                        return v;
                    }).toCompletableFuture());
                }
            } finally {
                running.decrementAndGet();
            }
        });
        threads.add(joiner);
        for (Thread t : threads) {
            t.join();
        }
        inside.join();
        assertEquals(0, running.get(), context);
        for (CompletableFuture<Void> join : joins) {
            join.join(); // every child ends, so every join resumes (a lost one hangs: the test's timeout)
        }
        assertTrue(violations.isEmpty(), () -> String.join("; ", violations));
        scope.joinBlocking();
        assertEquals(0, scope.activeCount(), context);
        for (int i = 0; i < spawners * perSpawner; i++) {
            assertEquals(1, ended.get(i), "child " + i + " ended (" + context + ")");
        }
    }
}
