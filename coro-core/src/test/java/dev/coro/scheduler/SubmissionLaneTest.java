package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The submission lanes of {@link InjectionQueue} and {@link WorkStealingPool}'s outside path through
 * them: the lease (L1), no task lost or run twice (L2), the take back of a push that raced with
 * shutdown, and shutdownNow. No sleeps; waits are latches and joins.
 */
class SubmissionLaneTest {

    /** A runnable that is only a number. */
    record Item(int value) implements Runnable {
        @Override
        public void run() {}
    }

    @Test
    void aLaneLeasedByAnEndedThreadPassesOnWithItsTasksAndALiveOwnerKeepsIt() throws Exception {
        InjectionQueue q = new InjectionQueue(2);
        AtomicReference<InjectionQueue.Lane> first = new AtomicReference<>();
        Thread a = Thread.ofPlatform().start(() -> {
            InjectionQueue.Lane lane = q.laneOfCurrentThread();
            first.set(lane);
            for (int v = 1; v <= 3; v++) {
                q.push(lane, new Item(v), 0);
            }
        });
        a.join();
        assertNotNull(first.get(), "a free home lane is leased");
        int home = (int) a.threadId() & (InjectionQueue.LANES - 1);
        // threads whose home lane is a's: the next one takes the lane over (a has ended), a third
        // one, while the second lives, gets none
        CountDownLatch release = new CountDownLatch(1);
        AtomicReference<InjectionQueue.Lane> second = new AtomicReference<>();
        CountDownLatch leased = new CountDownLatch(1);
        Thread b = sameHome(home, () -> {
            second.set(q.laneOfCurrentThread());
            q.push(second.get(), new Item(4), 0);
            leased.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        leased.await();
        assertSame(first.get(), second.get(), "the ended owner's lane passes to the next thread of that home");
        AtomicReference<InjectionQueue.Lane> third = new AtomicReference<>(first.get());
        Thread c = sameHome(home, () -> third.set(q.laneOfCurrentThread()));
        c.join();
        assertNull(third.get(), "a lane whose owner lives is not shared");
        release.countDown();
        b.join();
        // everything pushed by both owners is there, oldest first
        WorkQueue mine = new WorkQueue();
        List<Integer> taken = new ArrayList<>();
        Runnable r;
        while ((r = q.stealFromLanes(mine, 0)) != null) {
            Runnable older;
            List<Integer> batch = new ArrayList<>();
            while ((older = mine.pop()) != null) {
                batch.add(((Item) older).value());
            }
            batch.add(((Item) r).value());
            taken.addAll(batch);
        }
        assertEquals(List.of(1, 2, 3, 4), taken);
        assertTrue(q.isEmpty());
    }

    /** Starts platform threads until one's home lane is {@code home}, and returns it (the others run nothing). */
    private static Thread sameHome(int home, Runnable body) {
        for (;;) {
            Thread t = Thread.ofPlatform().unstarted(body);
            if (((int) t.threadId() & (InjectionQueue.LANES - 1)) == home) {
                t.start();
                return t;
            }
        }
    }

    @Test
    @Tag("stress")
    void manyShortLivedSubmittersLeaseLanesInTurnAndEveryTaskRunsOnce() throws Exception {
        int threads = 64; // eight times the lanes: leases pass from ended threads to new ones
        int perThread = Stress.scaled(2_000); // beyond a ring: overflow chunks too
        int total = threads * perThread;
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        CountDownLatch done = new CountDownLatch(total);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int wave = 0; wave < threads; wave += 8) {
                List<Thread> submitters = new ArrayList<>();
                for (int s = wave; s < wave + 8; s++) {
                    int base = s * perThread;
                    submitters.add(Thread.ofPlatform().start(() -> {
                        for (int i = 0; i < perThread; i++) {
                            int id = base + i;
                            pool.execute(() -> {
                                runs.incrementAndGet(id);
                                done.countDown();
                            });
                        }
                    }));
                }
                for (Thread t : submitters) {
                    t.join();
                }
            }
            done.await();
        }
        for (int i = 0; i < total; i++) {
            assertEquals(1, runs.get(i), "task " + i);
        }
    }

    @Test
    @Tag("stress")
    void aSubmissionRacingShutdownEitherRunsOnceOrIsRejectedAndNeverRuns() throws Exception {
        int rounds = Stress.scaled(300);
        for (int round = 0; round < rounds; round++) {
            int submitters = 3;
            int perThread = 600; // beyond a ring: chunks and lanes both hold work at shutdown
            AtomicIntegerArray runs = new AtomicIntegerArray(submitters * perThread);
            AtomicIntegerArray rejected = new AtomicIntegerArray(submitters * perThread);
            WorkStealingPool pool = WorkStealingPool.create(2);
            CountDownLatch going = new CountDownLatch(submitters);
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                int base = s * perThread;
                threads.add(Thread.ofPlatform().start(() -> {
                    going.countDown();
                    for (int i = 0; i < perThread; i++) {
                        int id = base + i;
                        try {
                            pool.execute(() -> runs.incrementAndGet(id));
                        } catch (RejectedExecutionException e) {
                            rejected.set(id, 1);
                        }
                    }
                }));
            }
            going.await();
            pool.shutdown();
            for (Thread t : threads) {
                t.join();
            }
            assertTrue(pool.awaitTermination(Duration.ofDays(1)), "round " + round);
            for (int i = 0; i < runs.length(); i++) {
                assertEquals(1 - rejected.get(i), runs.get(i), "round " + round + ", task " + i
                        + (rejected.get(i) == 1 ? " was rejected" : " was accepted"));
            }
        }
    }

    @Test
    void shutdownNowReturnsTheTasksWaitingInALane() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(2);
        CountDownLatch busy = new CountDownLatch(2);
        CountDownLatch gate = new CountDownLatch(1);
        for (int w = 0; w < 2; w++) { // both workers blocked: what is submitted next stays queued
            pool.execute(() -> {
                busy.countDown();
                try {
                    gate.await();
                } catch (InterruptedException expected) {
                    // shutdownNow interrupts the workers
                }
            });
        }
        busy.await();
        Set<Runnable> queued = new HashSet<>();
        Thread submitter = Thread.ofPlatform().start(() -> {
            for (int i = 0; i < 1000; i++) { // beyond the lane's ring: overflow chunks as well
                Item item = new Item(i);
                queued.add(item);
                pool.execute(item);
            }
        });
        submitter.join();
        List<Runnable> dropped = pool.shutdownNow();
        gate.countDown();
        assertTrue(pool.awaitTermination(Duration.ofDays(1)));
        assertEquals(1000, dropped.size());
        assertEquals(queued, Set.copyOf(dropped));
    }
}
