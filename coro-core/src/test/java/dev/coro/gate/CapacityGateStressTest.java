package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The admission invariant under load, and the hand-off racing cancellation. */
class CapacityGateStressTest {

    /**
     * The invariant: capacity 3, 10,000 waiters, every 7th cancelled while admitted work
     * completes on a 2-worker pool. Never more than 3 admitted; every waiter that was not cancelled
     * is admitted exactly once; a waiter that ends cancelled never ran its work; one whose cancel
     * lost the race ran exactly once; 3 slots free at the end.
     */
    @Test
    @Tag("stress")
    void capacityThreeTenThousandWaitersEverySeventhCancelled() throws Exception {
        int waiters = Stress.scaled(10_000);
        CapacityGate gate = new CapacityGate(3);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicIntegerArray ran = new AtomicIntegerArray(waiters);
        AtomicIntegerArray ended = new AtomicIntegerArray(waiters); // 1 value, 2 cancelled, 3 other
        CountDownLatch allEnded = new CountDownLatch(waiters);
        List<CompletableFuture<Void>> futures = new ArrayList<>(waiters);
        try (WorkStealingPool pool = WorkStealingPool.create(2, "gate-stress")) {
            Admission[] held = {gate.acquire().join(), gate.acquire().join(), gate.acquire().join()};
            for (int i = 0; i < waiters; i++) {
                int n = i;
                Task<Void> work = Task.fromRunnable(() -> {
                    int now = inside.incrementAndGet();
                    most.accumulateAndGet(now, Math::max);
                    ran.incrementAndGet(n);
                    inside.decrementAndGet();
                }).startOn(pool);
                futures.add(gate.within(work).outcome().map(o -> {
                    ended.set(n, o instanceof Outcome.Value<Void> ? 1 : o instanceof Outcome.Cancelled<Void> ? 2 : 3);
                    allEnded.countDown();
                    return (Void) null;
                }).toCompletableFuture());
            }
            assertEquals(0, inside.get());
            Thread canceller = Thread.ofPlatform().start(() -> {
                for (int i = 0; i < waiters; i += 7) {
                    futures.get(i).cancel(false);
                }
            });
            for (Admission a : held) {
                a.exit(); // admitted work starts completing while the canceller runs
            }
            canceller.join();
            allEnded.await();
        }
        int cancelled = 0;
        for (int i = 0; i < waiters; i++) {
            int e = ended.get(i);
            if (i % 7 != 0) {
                assertEquals(1, e, "survivor " + i + " ended " + e);
            }
            assertTrue(e == 1 || e == 2, "waiter " + i + " ended " + e);
            assertEquals(e == 1 ? 1 : 0, ran.get(i), "waiter " + i + " ended " + e + " and ran " + ran.get(i));
            if (e == 2) {
                cancelled++;
            }
        }
        assertTrue(most.get() <= 3, "at most 3 admitted, saw " + most.get());
        assertEquals(3, gate.available());
        gate.closeAndCheck();
        System.out.println("capacityThreeTenThousandWaitersEverySeventhCancelled: " + cancelled
                + " of " + ((waiters + 6) / 7) + " cancels won, most admitted " + most.get());
    }

    /**
     * A slot freed while the oldest waiter is cancelled from another thread: whichever wins, the
     * count ends exact (the waiter ran and left, or the slot went to the next waiter / back).
     */
    @Test
    @Tag("stress")
    void releaseRacingCancelLeavesExactlyTheRightCount() throws Exception {
        int rounds = Stress.scaled(5_000);
        CyclicBarrier barrier = new CyclicBarrier(2);
        int cancelWon = 0;
        for (int round = 0; round < rounds; round++) {
            CapacityGate gate = new CapacityGate(2);
            Admission a = gate.acquire().join();
            Admission b = gate.acquire().join();
            AtomicInteger ran = new AtomicInteger();
            CompletableFuture<Integer> first = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
            Admission[] second = new Admission[1];
            CompletableFuture<Void> next = gate.acquire().map(adm -> {
                second[0] = adm;
                return (Void) null;
            }).toCompletableFuture();
            Thread canceller = Thread.ofPlatform().start(() -> {
                await(barrier);
                first.cancel(false);
            });
            await(barrier);
            a.exit();
            canceller.join();
            // first either ran (and left) or was cancelled; either way next got a's slot.
            assertTrue(ran.get() <= 1, "round " + round);
            if (ran.get() == 0) {
                cancelWon++;
            }
            next.join();
            assertEquals(0, gate.available(), "round " + round + ": b and next hold the slots");
            second[0].exit();
            b.exit();
            assertEquals(2, gate.available(), "round " + round);
            gate.closeAndCheck();
        }
        System.out.println("releaseRacingCancelLeavesExactlyTheRightCount: cancel won " + cancelWon
                + " of " + rounds);
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
