package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** BudgetGate: weighted admission, strict FIFO with head-of-line blocking, cancellation, bad input. */
class BudgetGateTest {

    @Test
    void admitsWhileTheFreeUnitsCoverTheCost() {
        BudgetGate gate = new BudgetGate(10);
        Admission six = gate.acquire(6).join();
        Admission four = gate.acquire(4).join();
        assertEquals(0, gate.available());
        CompletableFuture<Admission> one = gate.acquire(1).toCompletableFuture();
        assertFalse(one.isDone(), "admitted with no unit free");
        four.exit();
        assertEquals(3, gate.available());
        one.join().exit();
        six.exit();
        assertEquals(10, gate.available());
        gate.closeAndCheck();
    }

    /** The head-of-line policy: a small request behind a large one waits for the large one. */
    @Test
    void aLargeHeadIsNotOvertakenBySmallRequests() {
        BudgetGate gate = new BudgetGate(10);
        Admission held = gate.acquire(8).join();
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> large = gate.within(5, Task.fromRunnable(() -> order.add("large")))
                .toCompletableFuture();
        CompletableFuture<Void> small = gate.within(1, Task.fromRunnable(() -> order.add("small")))
                .toCompletableFuture();
        assertFalse(small.isDone(), "the small request overtook the large head, with 2 units free");
        assertTrue(gate.tryAcquire(1).outcome().join() instanceof Outcome.Cancelled,
                "a try overtook the queued head");
        held.exit();
        large.join();
        small.join();
        assertEquals(List.of("large", "small"), order);
        assertEquals(10, gate.available());
        gate.closeAndCheck();
    }

    /** A waiter cancelled while part of its cost is set aside leaves the budget as it found it. */
    @Test
    void aWaiterCancelledWhilePartlyCoveredGivesEveryUnitBack() {
        BudgetGate gate = new BudgetGate(10);
        Admission seven = gate.acquire(7).join();
        CompletableFuture<Admission> five = gate.acquire(5).toCompletableFuture(); // 3 of 5 set aside
        assertFalse(five.isDone());
        assertEquals(0, gate.available());
        five.cancel(false);
        assertTrue(five.isCancelled());
        assertEquals(3, gate.available(), "the units set aside for the cancelled waiter were lost");
        seven.exit();
        assertEquals(10, gate.available());
        Admission all = gate.tryAcquire(10).join();
        all.exit();
        gate.closeAndCheck();
    }

    /** The proof: budget 10, costs 1..10, 10,000 waiters, every 5th cancelled, some admitted. */
    @Test
    void manyWaitersWithRandomCostsNeverExceedTheBudgetAndLeaveItWhole() throws Exception {
        BudgetGate gate = new BudgetGate(10);
        AtomicLong inUse = new AtomicLong();
        AtomicLong peak = new AtomicLong();
        SplittableRandom random = new SplittableRandom(11);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<CompletableFuture<?>> handles = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
                long cost = 1 + random.nextInt(10);
                Task<Void> work = Task.fromRunnable(() -> peak.accumulateAndGet(inUse.addAndGet(cost), Math::max))
                        .then(Task.yieldNow()) // holds its units across a reschedule
                        .andFinally(() -> inUse.addAndGet(-cost));
                CompletableFuture<Void> h = gate.within(cost, work).startOn(pool).toCompletableFuture();
                if (i % 5 == 0) {
                    h.cancel(false); // queued, admitted or running: its units must come back
                }
                handles.add(h);
            }
            for (CompletableFuture<?> h : handles) {
                h.handle((v, e) -> null).join();
            }
        }
        assertTrue(peak.get() <= 10, "budget exceeded: " + peak.get() + " units in use at once");
        assertEquals(0, inUse.get());
        assertEquals(10, gate.available(), "units lost or duplicated");
        gate.closeAndCheck();
    }

    @Test
    void closeCancelsWaitersAndRefusesLaterOnes() {
        BudgetGate gate = new BudgetGate(4);
        Admission held = gate.acquire(4).join();
        CompletableFuture<Admission> waiting = gate.acquire(2).toCompletableFuture();
        gate.close();
        assertTrue(waiting.isCancelled());
        assertInstanceOf(Outcome.Cancelled.class, gate.acquire(1).outcome().join());
        held.exit();
        gate.closeAndCheck();
    }

    @Test
    void badInputIsRefusedWithTheRuleNamed() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> new BudgetGate(0));
        assertTrue(zero.getMessage().contains("budget"), zero.getMessage());
        BudgetGate gate = new BudgetGate(10);
        for (long cost : new long[] {0, -1, 11}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> gate.within(cost, Task.value(1)));
            assertTrue(e.getMessage().contains("cost") && e.getMessage().contains("10")
                    && e.getMessage().contains(Long.toString(cost)), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> gate.acquire(11));
        assertThrows(IllegalArgumentException.class, () -> gate.tryWithin(0, Task.value(1)));
        assertThrows(NullPointerException.class, () -> gate.within(1, null));
        assertThrows(NullPointerException.class, () -> gate.call(1, null));
        assertEquals(3, gate.call(3, () -> gate.budget() - gate.available()));
    }
}
