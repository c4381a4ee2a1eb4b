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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** DeadlineGate on virtual time: earliest deadline first, expiry at the deadline, one timer. */
class DeadlineGateTest {
    private final ManualScheduler clock = new ManualScheduler();

    @Test
    void admitsEarliestDeadlineFirst() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join();
        List<Long> admitted = new ArrayList<>();
        long[] deadlines = {50, 20, 90, 20, 70};
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (long d : deadlines) {
            runs.add(gate.within(d, Task.fromRunnable(() -> admitted.add(d))).toCompletableFuture());
        }
        held.exit();
        runs.forEach(CompletableFuture::join);
        assertEquals(List.of(20L, 20L, 50L, 70L, 90L), admitted);
        gate.closeAndCheck();
    }

    /** Times out at its deadline on virtual time: not a tick later, never early; takes nothing. */
    @Test
    void aWaiterTimesOutAtItsDeadlineAndTakesNothing() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Outcome<Void>> late = gate.within(Duration.ofNanos(10), Task.fromRunnable(ran::incrementAndGet))
                .outcome().toCompletableFuture();
        clock.advance(9);
        assertFalse(late.isDone(), "timed out early, at 9 of 10");
        clock.advance(1);
        assertTrue(late.isDone(), "not timed out at its deadline");
        Outcome.Failure<?> f = assertInstanceOf(Outcome.Failure.class, late.join());
        assertInstanceOf(TimeoutException.class, f.error());
        assertEquals(0, clock.pending(), "the timer outlived the last waiter");
        held.exit();
        assertEquals(0, ran.get(), "a timed-out waiter was admitted");
        assertEquals(1, gate.available(), "a timed-out waiter took the slot");
        gate.closeAndCheck();
    }

    /**
     * The clock moves between the gate's reading and the timer's registration (another thread
     * advancing virtual time): the timer must still fire at the deadline. Found by the Lincheck
     * stress run: with a relative delay the timer was due a tick late, and the waiter was still
     * waiting at its deadline.
     */
    @Test
    void aTimerArmedWhileTheClockMovesIsNotLate() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join();
        clock.tickOnSchedule = true;
        CompletableFuture<Outcome<Admission>> w = gate.acquire(10L).outcome().toCompletableFuture();
        clock.tickOnSchedule = false;
        assertEquals(1, clock.nanoTime(), "the timer's registration moved the clock");
        clock.advance(8);
        assertFalse(w.isDone(), "timed out early");
        clock.advance(1);
        Outcome.Failure<?> f = assertInstanceOf(Outcome.Failure.class, w.join(), "not timed out at its deadline");
        assertInstanceOf(TimeoutException.class, f.error());
        held.exit();
        gate.closeAndCheck();
    }

    @Test
    void aPassedDeadlineFailsAtOnceEvenWithASlotFree() {
        DeadlineGate gate = new DeadlineGate(2, clock);
        clock.advance(100);
        AtomicInteger ran = new AtomicInteger();
        for (Task<Void> t : List.of(
                gate.within(Duration.ZERO, Task.fromRunnable(ran::incrementAndGet)),
                gate.within(Duration.ofSeconds(-1), Task.fromRunnable(ran::incrementAndGet)),
                gate.within(100L, Task.fromRunnable(ran::incrementAndGet)),
                gate.within(Long.MIN_VALUE, Task.fromRunnable(ran::incrementAndGet)))) {
            Outcome.Failure<?> f = assertInstanceOf(Outcome.Failure.class, t.outcome().join());
            assertInstanceOf(TimeoutException.class, f.error());
        }
        assertEquals(0, ran.get());
        assertEquals(2, gate.available());
        assertEquals(0, clock.pending(), "a failed request armed a timer");
        gate.closeAndCheck();
    }

    /** A deadline counts from the moment the request reaches the gate, not from building the task. */
    @Test
    void aTimeoutCountsFromArrival() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Task<Admission> acquire = gate.acquire(Duration.ofNanos(10));
        clock.advance(1_000);
        Admission a = acquire.join();
        CompletableFuture<Admission> waiting = acquire.toCompletableFuture();
        clock.advance(9);
        assertFalse(waiting.isDone());
        a.exit();
        waiting.join().exit();
        gate.closeAndCheck();
    }

    @Test
    void farDeadlinesDoNotOverflow() {
        clock.advance(1_000_000);
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofDays(365L * 1000)).join(); // saturates: never
        CompletableFuture<Admission> centuries = gate.acquire(Duration.ofDays(365L * 200)).toCompletableFuture();
        CompletableFuture<Admission> never = gate.acquire(Long.MAX_VALUE).toCompletableFuture();
        CompletableFuture<Admission> maxDuration = gate.acquire(Duration.ofSeconds(Long.MAX_VALUE)).toCompletableFuture();
        clock.advance(1_000_000_000L);
        assertFalse(centuries.isDone() || never.isDone() || maxDuration.isDone(), "a far deadline expired");
        held.exit();
        centuries.join().exit(); // the one finite deadline first
        never.join().exit(); // then the two that never expire, in arrival order
        maxDuration.join().exit();
        gate.closeAndCheck();
    }

    @Test
    void oneTimerForManyWaiters() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join();
        List<CompletableFuture<Outcome<Admission>>> waiters = new ArrayList<>();
        for (int i = 1; i <= 50; i++) {
            waiters.add(gate.acquire(Duration.ofNanos(100 - i)).outcome().toCompletableFuture());
            assertTrue(clock.pending() <= 1, clock.pending() + " timers for " + i + " waiters");
        }
        for (int t = 0; t < 100; t++) {
            clock.advance(1);
            assertTrue(clock.pending() <= 1, clock.pending() + " timers at " + clock.nanoTime());
            for (int i = 1; i <= 50; i++) {
                assertEquals(clock.nanoTime() >= 100 - i, waiters.get(i - 1).isDone(),
                        "waiter with deadline " + (100 - i) + " at " + clock.nanoTime());
            }
        }
        held.exit();
        assertEquals(1, gate.available());
        gate.closeAndCheck();
    }

    @Test
    void closeCancelsWaitersAndDisarmsTheTimer() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join();
        CompletableFuture<Outcome<Admission>> w = gate.acquire(Duration.ofNanos(50)).outcome().toCompletableFuture();
        assertEquals(1, clock.pending());
        gate.close();
        assertInstanceOf(Outcome.Cancelled.class, w.join());
        assertEquals(0, clock.pending(), "close left the timer armed");
        held.exit();
        gate.closeAndCheck();
    }

    @Test
    void aCancelledWaiterTakesNoSlot() {
        DeadlineGate gate = new DeadlineGate(1, clock);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join();
        CompletableFuture<Admission> w = gate.acquire(Duration.ofNanos(50)).toCompletableFuture();
        w.cancel(false);
        held.exit();
        assertEquals(1, gate.available());
        Admission next = gate.tryAcquire().join();
        next.exit();
        gate.closeAndCheck();
    }

    @Test
    void badInputIsRefusedWithTheRuleNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new DeadlineGate(0, clock));
        assertTrue(e.getMessage().contains("capacity"), e.getMessage());
        assertThrows(NullPointerException.class, () -> new DeadlineGate(1, null));
        DeadlineGate gate = new DeadlineGate(1, clock);
        assertThrows(NullPointerException.class, () -> gate.within((Duration) null, Task.value(1)));
        assertThrows(NullPointerException.class, () -> gate.within(Duration.ofSeconds(1), null));
        assertThrows(NullPointerException.class, () -> gate.within(5L, null));
        assertThrows(NullPointerException.class, () -> gate.acquire(null));
        assertThrows(NullPointerException.class, () -> gate.call(Duration.ofSeconds(1), null));
        assertThrows(NullPointerException.class, () -> gate.tryWithin(null));
        assertEquals(3, gate.call(Duration.ofSeconds(1), () -> 3));
    }
}
