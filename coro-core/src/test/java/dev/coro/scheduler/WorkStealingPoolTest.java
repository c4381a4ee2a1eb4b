package dev.coro.scheduler;

import static dev.coro.Latches.await;
import static dev.coro.Latches.opens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.cancel.Cancellable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkStealingPool}: submission paths, stealing, the park/wake protocol, shutdown, failures
 * and bad input. No test sleeps or asserts on elapsed wall-clock time; waits are latches.
 */
class WorkStealingPoolTest {

    // --- bad input ---

    @Test
    void rejectsBadWorkerCounts() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> WorkStealingPool.create(0));
        assertEquals("workers must be > 0, was 0", zero.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> WorkStealingPool.create(-3, "x"));
        assertEquals("workers must be > 0, was -3", negative.getMessage());
        IllegalArgumentException huge = assertThrows(IllegalArgumentException.class, () -> WorkStealingPool.create(40_000));
        assertEquals("workers must be <= 32767, was 40000", huge.getMessage());
        NullPointerException name = assertThrows(NullPointerException.class, () -> WorkStealingPool.create(1, null));
        assertEquals("namePrefix", name.getMessage());
    }

    @Test
    void rejectsNullArguments() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            assertEquals("task", assertThrows(NullPointerException.class, () -> pool.execute(null)).getMessage());
            assertEquals("task", assertThrows(NullPointerException.class, () -> pool.schedule(null, Duration.ZERO)).getMessage());
            assertEquals("delay", assertThrows(NullPointerException.class, () -> pool.schedule(() -> {}, null)).getMessage());
            assertEquals("timeout", assertThrows(NullPointerException.class, () -> pool.awaitTermination(null)).getMessage());
            // from inside the pool too
            AtomicReference<Throwable> inside = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            pool.execute(() -> {
                try {
                    pool.execute(null);
                } catch (Throwable t) {
                    inside.set(t);
                }
                done.countDown();
            });
            done.await();
            assertTrue(inside.get() instanceof NullPointerException);
        }
    }

    // --- identity ---

    @Test
    void workersAreNamedNonDaemonThreadsAndIsCurrentHoldsOnlyOnThem() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "named");
                WorkStealingPool other = WorkStealingPool.create(1)) {
            assertEquals(2, pool.workers());
            assertFalse(pool.isCurrent());
            AtomicReference<Thread> thread = new AtomicReference<>();
            AtomicReference<Boolean> current = new AtomicReference<>();
            AtomicReference<Boolean> otherCurrent = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            pool.execute(() -> {
                thread.set(Thread.currentThread());
                current.set(pool.isCurrent());
                otherCurrent.set(other.isCurrent());
                done.countDown();
            });
            done.await();
            assertTrue(thread.get().getName().matches("named-worker-[12]"), thread.get().getName());
            assertFalse(thread.get().isDaemon());
            assertTrue(current.get());
            assertFalse(otherCurrent.get());
        }
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            AtomicReference<String> name = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            pool.execute(() -> {
                name.set(Thread.currentThread().getName());
                done.countDown();
            });
            done.await();
            assertTrue(name.get().matches("coro-pool-\\d+-worker-1"), name.get());
            assertTrue(pool.toString().contains("running"), pool.toString());
        }
    }

    // --- submissions ---

    @Test
    @Tag("stress")
    void everyExternalSubmissionFromFourThreadsRunsExactlyOnce() throws Exception {
        int perThread = Stress.scaled(100_000) / 4;
        int total = perThread * 4;
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        CountDownLatch done = new CountDownLatch(total);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<Thread> submitters = new ArrayList<>();
            for (int s = 0; s < 4; s++) {
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
            done.await();
        }
        for (int i = 0; i < total; i++) {
            assertEquals(1, runs.get(i), "task " + i);
        }
    }

    @Test
    @Tag("stress")
    void localSubmissionsRunExactlyOnceThroughOverflowAndStealing() throws Exception {
        int total = Stress.scaled(200_000); // far beyond a worker's ring: overflow chunks too
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        CountDownLatch done = new CountDownLatch(total);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            pool.execute(() -> {
                for (int i = 0; i < total; i++) {
                    int id = i;
                    pool.execute(() -> {
                        runs.incrementAndGet(id);
                        done.countDown();
                    });
                }
            });
            done.await();
        }
        for (int i = 0; i < total; i++) {
            assertEquals(1, runs.get(i), "task " + i);
        }
    }

    @Test
    void outsideSubmissionsStartInOrderOnAOneWorkerPool() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            CountDownLatch gate = new CountDownLatch(1);
            pool.execute(() -> await(gate)); // hold the worker while the queue fills
            List<Integer> order = new ArrayList<>();
            int n = 1000;
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                int id = i;
                pool.execute(() -> {
                    order.add(id); // one worker: no race
                    done.countDown();
                });
            }
            gate.countDown();
            done.await();
            for (int i = 0; i < n; i++) {
                assertEquals(i, order.get(i));
            }
        }
    }

    /**
     * A worker polls the injection queue every 64 tasks even when its own queue is full; a poll then
     * takes only as many outside submissions as its queue has room for, besides the one it runs
     * (here: none), so none is lost. The other worker is held, so nothing is stolen and the queue
     * stays full: every local task that runs submits one more, for more than 64 tasks.
     */
    @Test
    void aWorkerWithAFullQueueTakesOutsideSubmissionsWithoutLosingAny() throws Exception {
        int ring = WorkQueue.CAPACITY;
        int refills = 3 * (Worker.FAIRNESS_MASK + 1); // several fairness polls with the queue full
        int outside = 2 * Worker.INJECTED_BATCH;
        WorkStealingPool pool = WorkStealingPool.create(2);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        boolean ranAll = false;
        try {
            pool.execute(() -> { // holds one worker: the other's queue is not stolen from
                held.countDown();
                await(release);
            });
            assertTrue(opens(held), "a worker took the holding task");
            AtomicInteger refillsLeft = new AtomicInteger(refills);
            CountDownLatch done = new CountDownLatch(ring + refills + outside);
            CountDownLatch filled = new CountDownLatch(1);
            CountDownLatch queuedOutside = new CountDownLatch(1);
            Runnable local = new Runnable() {
                @Override
                public void run() {
                    if (refillsLeft.getAndDecrement() > 0) {
                        pool.execute(this); // takes the slot this task left: the queue stays full
                    }
                    done.countDown();
                }
            };
            pool.execute(() -> {
                for (int i = 0; i < ring; i++) {
                    pool.execute(local); // fills this worker's own queue, without overflowing it
                }
                filled.countDown();
                await(queuedOutside); // the outside submissions wait in the injection queue
            });
            assertTrue(opens(filled), "the filling task ran");
            for (int i = 0; i < outside; i++) {
                pool.execute(done::countDown);
            }
            queuedOutside.countDown();
            ranAll = opens(done);
            assertTrue(ranAll, "every local and outside task ran: " + done.getCount() + " did not");
        } finally {
            release.countDown();
            if (ranAll) {
                pool.close();
            } else {
                pool.shutdownNow(); // a worker may have died: close() would wait for it forever
            }
        }
    }

    @Test
    void nestedLocalSubmissionsRun() throws Exception {
        int depth = 10_000;
        AtomicInteger ran = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(1);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            pool.execute(new Runnable() {
                int left = depth;

                @Override
                public void run() {
                    ran.incrementAndGet();
                    if (--left == 0) {
                        done.countDown();
                    } else {
                        pool.execute(this);
                    }
                }
            });
            assertTrue(opens(done), "the 10,000 nested submissions all ran");
            assertEquals(depth, ran.get(), "each nested submission ran once");
        }
    }

    @Test
    void aBlockedWorkersQueuedTasksAreStolen() throws Exception {
        for (int queued : new int[] {1, 2, 100, 1000}) {
            try (WorkStealingPool pool = WorkStealingPool.create(2)) {
                CountDownLatch ranElsewhere = new CountDownLatch(queued);
                AtomicReference<Thread> blocked = new AtomicReference<>();
                Set<Thread> runners = ConcurrentHashMap.newKeySet();
                CountDownLatch done = new CountDownLatch(1);
                pool.execute(() -> {
                    blocked.set(Thread.currentThread());
                    for (int i = 0; i < queued; i++) {
                        pool.execute(() -> { // into this worker's own queue
                            runners.add(Thread.currentThread());
                            ranElsewhere.countDown();
                        });
                    }
                    try {
                        ranElsewhere.await(); // this worker blocks: only a thief can run them
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    done.countDown();
                });
                done.await();
                assertFalse(runners.contains(blocked.get()), queued + " queued");
                assertEquals(1, runners.size());
            }
        }
    }

    // --- the park/wake protocol ---

    @Test
    @Tag("stress")
    void aSubmissionToAnIdlePoolIsNeverLost() throws Exception {
        int rounds = Stress.scaled(2_000);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int i = 0; i < rounds; i++) {
                if (i % 2 == 0) {
                    awaitAllParked(pool); // the pool is idle: every worker is parked
                } // else: submit while the workers are on their way to parking
                CountDownLatch ran = new CountDownLatch(1);
                pool.execute(ran::countDown);
                assertTrue(opens(ran), "round " + i + ": a submission to an idle pool ran");
            }
        }
    }

    @Test
    @Tag("stress")
    void aSubmissionAtAnyPointOfTheSearchersSpinIsNeverLost() throws Exception {
        // The racy moment is a searcher giving up and parking while a task arrives: sweep the
        // submission's offset from "pool just went idle" across the whole spin phase.
        int rounds = Stress.scaled(1_000);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int i = 0; i < rounds; i++) {
                CountDownLatch first = new CountDownLatch(1);
                pool.execute(first::countDown);
                assertTrue(opens(first), "round " + i + ": the first submission ran");
                // the pool goes idle from here on
                long offset = (i % 100) * 1_000L; // 0 to 99 us: not a sleep, a varying start
                long start = System.nanoTime();
                while (System.nanoTime() - start < offset) {
                    Thread.onSpinWait();
                }
                CountDownLatch ran = new CountDownLatch(1);
                pool.execute(ran::countDown);
                assertTrue(opens(ran),
                        "round " + i + ": a submission " + offset / 1_000 + " us into the searchers' spin ran");
            }
        }
    }

    @Test
    @Tag("stress")
    void aBurstOfTasksThatNeedEachOtherWakesEnoughWorkers() throws Exception {
        // The first searcher to find work must make sure someone looks for the rest: here the rest
        // is a task the first one waits for.
        int rounds = Stress.scaled(500);
        try (WorkStealingPool pool = WorkStealingPool.create(3)) {
            for (int i = 0; i < rounds; i++) {
                if (i % 2 == 0) {
                    awaitAllParked(pool);
                }
                CountDownLatch partner = new CountDownLatch(1);
                CountDownLatch done = new CountDownLatch(2);
                pool.execute(() -> {
                    await(partner);
                    done.countDown();
                });
                pool.execute(() -> {
                    partner.countDown();
                    done.countDown();
                });
                assertTrue(opens(done),
                        "round " + i + ": both tasks of the burst ran (a second worker woke for the partner)");
            }
        }
    }

    @Test
    @Tag("stress")
    void aLocalSubmissionRacingTheOtherWorkersParkIsNeverLost() throws Exception {
        int rounds = Stress.scaled(1_000);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int i = 0; i < rounds; i++) {
                if (i % 2 == 0) {
                    awaitAllParked(pool);
                }
                CountDownLatch done = new CountDownLatch(1);
                pool.execute(() -> {
                    CountDownLatch child = new CountDownLatch(1);
                    pool.execute(child::countDown); // local queue; this worker then blocks on it
                    try {
                        child.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    done.countDown();
                });
                assertTrue(opens(done),
                        "round " + i + ": the local child ran (stolen) while its submitter waited for it");
            }
        }
    }

    @Test
    void workersParkWhenIdle() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(3)) {
            CountDownLatch ran = new CountDownLatch(1);
            pool.execute(ran::countDown);
            ran.await();
            awaitAllParked(pool); // would hang if an idle worker kept spinning forever
            assertEquals(3, pool.parkedWorkers());
        }
    }

    /** Waits, without sleeping, until every worker of {@code pool} is registered as parked. */
    static void awaitAllParked(WorkStealingPool pool) throws InterruptedException {
        while (pool.parkedWorkers() < pool.workers()) {
            if (Thread.interrupted()) { // the test timed out
                throw new InterruptedException("workers still unparked: " + pool.parkedWorkers() + " parked");
            }
            Thread.onSpinWait();
        }
    }

    // --- failures ---

    @Test
    void aThrowingTaskGoesToTheHandlerAndTheWorkerLivesOn() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            List<Throwable> reported = new ArrayList<>();
            AtomicReference<Thread> first = new AtomicReference<>();
            CountDownLatch installed = new CountDownLatch(1);
            pool.execute(() -> {
                first.set(Thread.currentThread());
                Thread.currentThread().setUncaughtExceptionHandler((t, e) -> {
                    synchronized (reported) {
                        reported.add(e);
                    }
                });
                installed.countDown();
            });
            installed.await();
            IllegalStateException boom = new IllegalStateException("boom");
            pool.execute(() -> {
                throw boom;
            });
            pool.execute(() -> {
                throw new AssertionError("an Error too");
            });
            AtomicReference<Thread> after = new AtomicReference<>();
            CountDownLatch ranAfter = new CountDownLatch(1);
            pool.execute(() -> {
                after.set(Thread.currentThread());
                ranAfter.countDown();
            });
            ranAfter.await();
            assertSame(first.get(), after.get(), "the same worker thread went on");
            synchronized (reported) {
                assertEquals(2, reported.size());
                assertSame(boom, reported.get(0));
                assertTrue(reported.get(1) instanceof AssertionError);
            }
        }
    }

    @Test
    void aTasksInterruptDoesNotLeakIntoTheNextTask() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            pool.execute(() -> Thread.currentThread().interrupt());
            AtomicReference<Boolean> interrupted = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            pool.execute(() -> {
                interrupted.set(Thread.currentThread().isInterrupted());
                done.countDown();
            });
            done.await();
            assertFalse(interrupted.get());
        }
    }

    // --- shutdown ---

    @Test
    void shutdownRejectsOutsideWorkAndLetsQueuedWorkFinish() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(1);
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        pool.execute(() -> {
            started.countDown();
            await(gate);
        });
        started.await();
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 100; i++) {
            pool.execute(ran::incrementAndGet);
        }
        pool.shutdown();
        assertTrue(pool.isShutdown());
        assertFalse(pool.isTerminated());
        assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
        assertThrows(RejectedExecutionException.class, () -> pool.schedule(() -> {}, Duration.ZERO));
        gate.countDown();
        assertTrue(pool.awaitTermination(Duration.ofDays(1)));
        assertEquals(100, ran.get());
        assertTrue(pool.isTerminated());
        assertTrue(pool.toString().contains("terminated"), pool.toString());
        assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
        pool.shutdown(); // idempotent
        pool.close();
    }

    @Test
    void afterShutdownTheGraphInFlightMaySpawnFromInsideThePool() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(2);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger children = new AtomicInteger();
        pool.execute(() -> {
            await(gate);
            for (int i = 0; i < 1000; i++) {
                pool.execute(children::incrementAndGet); // accepted: from the pool's own thread
            }
        });
        pool.shutdown();
        gate.countDown();
        pool.close();
        assertEquals(1000, children.get());
        assertTrue(pool.isTerminated());
    }

    @Test
    void shutdownOfAnIdlePoolTerminatesIt() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(2);
        awaitAllParked(pool);
        pool.shutdown();
        assertTrue(pool.awaitTermination(Duration.ofDays(1)));
        WorkStealingPool busy = WorkStealingPool.create(2); // and of one that never got to park
        busy.shutdown();
        assertTrue(busy.awaitTermination(Duration.ofDays(1)));
    }

    /**
     * The last worker to park re-checks the queues after it reads the shutdown: a submission that read
     * RUNNING just before the shutdown's CAS is accepted, and must still run.
     */
    @Test
    @Tag("stress")
    void aSubmissionRacingShutdownEitherRunsOnceOrIsRejectedAndNeverRuns() throws Exception {
        int rounds = Stress.scaled(300);
        for (int round = 0; round < rounds; round++) {
            int submitters = 3;
            int perThread = 600;
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
    void shutdownNowReturnsQueuedWorkAndInterruptsRunningWork() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(1);
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Boolean> interrupted = new AtomicReference<>(false);
        pool.execute(() -> {
            started.countDown();
            try {
                new CountDownLatch(1).await();
            } catch (InterruptedException e) {
                interrupted.set(true);
            }
        });
        started.await();
        List<Runnable> queued = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Runnable r = () -> {
                throw new AssertionError("must not run");
            };
            queued.add(r);
            pool.execute(r);
        }
        List<Runnable> dropped = pool.shutdownNow();
        assertEquals(Set.copyOf(queued), Set.copyOf(dropped));
        assertTrue(pool.awaitTermination(Duration.ofDays(1)));
        assertTrue(interrupted.get());
    }

    @Test
    void shutdownNowReturnsWorkFromWorkerQueuesAndOverflowChunks() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(1);
        CountDownLatch queuedAll = new CountDownLatch(1);
        CountDownLatch gate = new CountDownLatch(1);
        AtomicInteger ran = new AtomicInteger();
        int n = 1000; // beyond the ring: some overflow to the injection queue in chunks
        pool.execute(() -> {
            for (int i = 0; i < n; i++) {
                pool.execute(ran::incrementAndGet);
            }
            queuedAll.countDown();
            try {
                gate.await();
            } catch (InterruptedException expected) {
                // shutdownNow interrupts the busy worker: the task ends quietly
            }
        });
        queuedAll.await();
        List<Runnable> dropped = pool.shutdownNow();
        gate.countDown();
        assertTrue(pool.awaitTermination(Duration.ofDays(1)));
        assertEquals(n, dropped.size() + ran.get());
        assertEquals(n, dropped.size(), "the only worker was blocked");
    }

    @Test
    void closeWaitsForQueuedWork() {
        AtomicInteger ran = new AtomicInteger();
        WorkStealingPool pool = WorkStealingPool.create(2);
        try (pool) {
            for (int i = 0; i < 10_000; i++) {
                pool.execute(ran::incrementAndGet);
            }
        }
        assertEquals(10_000, ran.get());
        assertTrue(pool.isTerminated());
    }

    @Test
    void closeFromInsideThePoolOnlyShutsItDown() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(1);
        CountDownLatch closed = new CountDownLatch(1);
        pool.execute(() -> {
            pool.close();
            closed.countDown();
        });
        closed.await();
        assertTrue(pool.isShutdown());
        assertTrue(pool.awaitTermination(Duration.ofDays(1)));
    }

    // --- timers ---

    @Test
    void aTimerRunsOnThePoolNeverEarly() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            long delay = Duration.ofMillis(20).toNanos();
            AtomicReference<Boolean> onPool = new AtomicReference<>();
            long[] firedAt = new long[1];
            CountDownLatch fired = new CountDownLatch(1);
            long start = pool.nanoTime();
            pool.schedule(() -> {
                firedAt[0] = pool.nanoTime();
                onPool.set(pool.isCurrent());
                fired.countDown();
            }, Duration.ofNanos(delay));
            fired.await();
            assertTrue(firedAt[0] - start >= delay, "fired early");
            assertTrue(onPool.get());
        }
    }

    @Test
    void aCancelledTimerNeverRuns() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            AtomicInteger ran = new AtomicInteger();
            Cancellable timer = pool.schedule(ran::incrementAndGet, Duration.ofHours(1));
            assertTrue(timer.cancel());
            assertFalse(timer.cancel(), "only the first cancel wins");
            CountDownLatch later = new CountDownLatch(1);
            pool.schedule(later::countDown, Duration.ZERO);
            later.await();
            assertEquals(0, ran.get());
        }
    }

    @Test
    void shutdownCancelsPendingTimers() {
        WorkStealingPool pool = WorkStealingPool.create(1);
        Cancellable timer = pool.schedule(() -> {
            throw new AssertionError("must not run");
        }, Duration.ofHours(1));
        pool.close(); // does not wait an hour
        assertFalse(timer.cancel(), "already cancelled by the shutdown");
    }

    @Test
    void manyPoolsComeAndGo() {
        for (int i = 0; i < 50; i++) {
            WorkStealingPool pool = WorkStealingPool.create(2);
            pool.execute(() -> {});
            pool.close();
            assertTrue(pool.isTerminated());
            for (Worker w : pool.workers) {
                assertNotNull(w);
                assertNotEquals(Thread.State.RUNNABLE, waitForExit(w));
            }
        }
    }

    private static Thread.State waitForExit(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        return t.getState();
    }
}
