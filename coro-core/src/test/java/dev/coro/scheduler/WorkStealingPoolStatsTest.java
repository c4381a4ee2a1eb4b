package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/** {@link WorkStealingPool#stats()} against activity made deterministic with latches and thread states. */
class WorkStealingPoolStatsTest {
    @Test
    void queuedAndRunningWhileEveryWorkerIsBusy() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            CountDownLatch started = new CountDownLatch(2);
            CountDownLatch release = new CountDownLatch(1);
            for (int i = 0; i < 2; i++) {
                pool.execute(() -> {
                    started.countDown();
                    await(release);
                });
            }
            started.await(); // both workers are inside a task
            CountDownLatch ran = new CountDownLatch(10);
            for (int i = 0; i < 10; i++) {
                pool.execute(ran::countDown);
            }
            WorkStealingPool.Stats busy = pool.stats();
            assertEquals(2, busy.workers());
            assertEquals(2, busy.running(), busy.toString());
            assertEquals(10, busy.queued(), busy.toString());
            release.countDown();
            ran.await();
        }
    }

    @Test
    void anIdlePoolHasParkedAndQueuesNothing() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "stats")) {
            List<Thread> workers = workerThreads(pool);
            for (Thread t : workers) {
                while (t.getState() != Thread.State.WAITING) {
                    Thread.onSpinWait(); // until both workers have parked
                }
            }
            WorkStealingPool.Stats idle = pool.stats();
            assertEquals(0, idle.running(), idle.toString());
            assertEquals(0, idle.queued(), idle.toString());
            assertTrue(idle.parks() >= 2, idle.toString());
        }
    }

    @Test
    void aWorkerBlockedWithTasksInItsQueueHasThemStolen() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            CountDownLatch stolen = new CountDownLatch(10);
            CountDownLatch done = new CountDownLatch(1);
            pool.execute(() -> {
                for (int i = 0; i < 10; i++) {
                    pool.execute(stolen::countDown); // into this worker's own queue
                }
                await(stolen); // blocks this worker: only the other one can run them, by stealing
                done.countDown();
            });
            done.await();
            assertTrue(pool.stats().steals() >= 1, pool.stats().toString());
        }
    }

    @Test
    void rejectionsAreCounted() {
        WorkStealingPool pool = WorkStealingPool.create(1);
        pool.shutdown();
        assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
        assertThrows(RejectedExecutionException.class, () -> pool.schedule(() -> {}, java.time.Duration.ofSeconds(1)));
        assertEquals(2, pool.stats().rejected());
        pool.close();
    }

    private static List<Thread> workerThreads(WorkStealingPool pool) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (Worker w : pool.workers) {
            threads.add(w);
        }
        return threads;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
