package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** PriorityGate: order by priority then arrival, the starvation policy, aging on virtual time. */
class PriorityGateTest {

    /** A queued waiter: its priority and arrival number. */
    private record Ask(int priority, int arrival) {}

    @Test
    void admissionOrderIsPriorityDescendingThenArrival() {
        PriorityGate gate = new PriorityGate(1);
        Admission held = gate.acquire(0).join();
        int[] priorities = {1, 3, 2, 3, 1, 2, -5, 3, Integer.MAX_VALUE, Integer.MIN_VALUE};
        List<Ask> admitted = new ArrayList<>();
        List<Ask> asks = new ArrayList<>();
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int i = 0; i < priorities.length; i++) {
            Ask ask = new Ask(priorities[i], i);
            asks.add(ask);
            runs.add(gate.within(ask.priority(), Task.fromRunnable(() -> admitted.add(ask))).toCompletableFuture());
        }
        assertTrue(admitted.isEmpty());
        held.exit(); // each admitted run exits at once and hands the slot on, inline
        runs.forEach(CompletableFuture::join);
        asks.sort(Comparator.comparingInt(Ask::priority).reversed().thenComparingInt(Ask::arrival));
        assertEquals(asks, admitted);
        assertEquals(1, gate.available());
        gate.closeAndCheck();
    }

    /** Without aging, a low waiter waits as long as higher ones keep arriving. */
    @Test
    void withoutAgingALowWaiterWaitsWhileHigherOnesWait() {
        PriorityGate gate = new PriorityGate(1);
        Admission holder = gate.acquire(5).join();
        CompletableFuture<Admission> low = gate.acquire(0).toCompletableFuture();
        for (int i = 0; i < 100; i++) {
            CompletableFuture<Admission> high = gate.acquire(1).toCompletableFuture();
            holder.exit();
            assertFalse(low.isDone(), "the low waiter overtook a waiting higher one");
            holder = high.join();
        }
        holder.exit();
        low.join().exit();
        gate.closeAndCheck();
    }

    /**
     * Aging on virtual time: step 10, a waiter of priority 0 arrives at 0 while one of priority 2
     * arrives every 5 ns and the slot changes hands every 5 ns. The bound: it is admitted before every
     * priority-2 waiter that arrives at or after 0 + (2 - 0) * 10 = 20.
     */
    @Test
    void agingAdmitsALowWaiterWithinItsBound() {
        ManualScheduler clock = new ManualScheduler();
        PriorityGate gate = new PriorityGate(1, Duration.ofNanos(10), clock);
        Admission holder = gate.acquire(9).join();
        CompletableFuture<Admission> low = gate.acquire(0).toCompletableFuture();
        List<Long> highArrivals = new ArrayList<>();
        List<CompletableFuture<Admission>> highs = new ArrayList<>();
        int admittedHighs = 0;
        while (!low.isDone()) {
            assertTrue(clock.nanoTime() < 100, "the low waiter was not admitted by 100 ns");
            clock.advance(5);
            highArrivals.add(clock.nanoTime());
            highs.add(gate.acquire(2).toCompletableFuture());
            holder.exit(); // hands the slot to one waiter, inline
            if (!low.isDone()) {
                holder = highs.get(admittedHighs++).join(); // without the low one: the oldest high
            }
        }
        long admittedAt = clock.nanoTime();
        assertTrue(admittedAt <= 20, "admitted at " + admittedAt + ", after its bound 20");
        for (int i = 0; i < highs.size(); i++) {
            assertEquals(highArrivals.get(i) < 20, highs.get(i).isDone(), "the priority-2 waiter that arrived at "
                    + highArrivals.get(i) + " against the aged low waiter admitted at " + admittedAt);
        }
        low.join().exit();
        gate.close();
        highs.forEach(h -> h.handle((a, e) -> a == null ? null : a.exit()).join());
    }

    @Test
    void aCancelledWaiterTakesNoSlot() {
        PriorityGate gate = new PriorityGate(1);
        Admission held = gate.acquire(0).join();
        CompletableFuture<Admission> high = gate.acquire(7).toCompletableFuture();
        CompletableFuture<Admission> low = gate.acquire(1).toCompletableFuture();
        high.cancel(false);
        held.exit();
        assertTrue(high.isCancelled());
        low.join().exit();
        assertEquals(1, gate.available());
        gate.close();
        assertInstanceOf(Outcome.Cancelled.class, gate.acquire(3).outcome().join());
        gate.closeAndCheck();
    }

    @Test
    void badInputIsRefusedWithTheRuleNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PriorityGate(0));
        assertTrue(e.getMessage().contains("capacity"), e.getMessage());
        ManualScheduler clock = new ManualScheduler();
        IllegalArgumentException step = assertThrows(IllegalArgumentException.class,
                () -> new PriorityGate(1, Duration.ZERO, clock));
        assertTrue(step.getMessage().contains("agingStep"), step.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PriorityGate(1, Duration.ofNanos(-1), clock));
        assertThrows(NullPointerException.class, () -> new PriorityGate(1, null, clock));
        assertThrows(NullPointerException.class, () -> new PriorityGate(1, Duration.ofSeconds(1), null));
        PriorityGate gate = new PriorityGate(2);
        assertThrows(NullPointerException.class, () -> gate.within(1, null));
        assertThrows(NullPointerException.class, () -> gate.call(1, null));
        assertEquals(7, gate.call(Integer.MIN_VALUE, () -> 7));
    }

    @Test
    void agedKeysSaturateInsteadOfOverflowing() {
        assertEquals(-Long.MAX_VALUE, PriorityGate.agedKey(0, Integer.MAX_VALUE, Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE, PriorityGate.agedKey(0, Integer.MIN_VALUE, Long.MAX_VALUE));
        assertEquals(Long.MIN_VALUE, PriorityGate.agedKey(Long.MIN_VALUE + 5, 1, 10));
        assertEquals(Long.MAX_VALUE, PriorityGate.agedKey(Long.MAX_VALUE - 5, -1, 10));
        assertEquals(100 - 3 * 7, PriorityGate.agedKey(100, 3, 7));
    }
}
