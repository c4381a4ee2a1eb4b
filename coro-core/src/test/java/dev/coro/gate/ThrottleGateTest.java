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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** ThrottleGate on virtual time: starts exactly spaced, never later than needed, the bound, cancellation, bad input. */
class ThrottleGateTest {
    private static final long MS = 1_000_000;
    private final ManualScheduler clock = new ManualScheduler();

    /** 100 queued operations start exactly one interval apart; after idling, the next starts at once. */
    @Test
    void startsAreExactlySpaced() {
        ThrottleGate gate = new ThrottleGate(Duration.ofMillis(5), clock);
        List<CompletableFuture<Long>> starts = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            starts.add(gate.within(Task.fromCallable(clock::nanoTime)).toCompletableFuture());
        }
        for (int k = 1; k < 100; k++) {
            assertFalse(starts.get(k).isDone(), "started early: " + k);
            assertTrue(clock.pending() <= 1, "more than one timer");
            clock.advance(5 * MS);
        }
        for (int k = 0; k < 100; k++) {
            assertEquals(k * 5 * MS, done(starts.get(k)), "start " + k);
        }
        clock.advance(20 * MS);
        assertEquals(clock.nanoTime(), done(gate.within(Task.fromCallable(clock::nanoTime)).toCompletableFuture()), "an idle gate starts at once");
        assertEquals(0, clock.pending());
    }

    /**
     * Bounded to one at a time, with work longer than the interval: each start waits for the previous
     * exit and no longer (never later than needed); with work shorter than the interval, for the
     * interval.
     */
    @Test
    void aBoundedGateStartsAtTheLaterOfTheIntervalAndAnExit() {
        ThrottleGate gate = new ThrottleGate(Duration.ofMillis(10), 1, clock);
        Admission first = done(gate.acquire().toCompletableFuture());
        CompletableFuture<Admission> second = gate.acquire().toCompletableFuture();
        clock.advance(25 * MS);
        assertFalse(second.isDone(), "started while the first was running");
        first.exit();
        assertTrue(second.isDone(), "not started at the first's exit, 15 ms after the interval");
        CompletableFuture<Long> third = gate.within(Task.fromCallable(clock::nanoTime)).toCompletableFuture();
        done(second).exit(); // at 25 ms: the third may start at 35 ms, the interval after the second's start
        clock.advance(9 * MS);
        assertFalse(third.isDone(), "started before the interval");
        clock.advance(1 * MS);
        assertEquals(35 * MS, done(third));
        assertEquals(1, gate.maxRunning());
        gate.closeAndCheck();
    }

    @Test
    void aCancelledWaiterTakesNoStart() {
        ThrottleGate gate = new ThrottleGate(Duration.ofMillis(10), clock);
        done(gate.within(Task.value(null)).toCompletableFuture());
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Void> cancelled = gate.within(Task.fromRunnable(ran::incrementAndGet)).toCompletableFuture();
        CompletableFuture<Long> behind = gate.within(Task.fromCallable(clock::nanoTime)).toCompletableFuture();
        cancelled.cancel(false);
        clock.advance(10 * MS);
        assertEquals(10 * MS, done(behind), "the cancelled waiter's start was spent");
        assertEquals(0, ran.get());
    }

    @Test
    void tryAndClose() {
        ThrottleGate gate = new ThrottleGate(Duration.ofMillis(10), 2, clock);
        assertInstanceOf(Outcome.Value.class, gate.tryWithin(Task.value(1)).outcome().toCompletableFuture().getNow(null));
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(Task.value(1)).outcome().toCompletableFuture().getNow(null), "a try inside the interval");
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire().outcome().toCompletableFuture().getNow(null));
        CompletableFuture<Outcome<Integer>> waiting = gate.within(Task.value(1)).outcome().toCompletableFuture();
        gate.close();
        assertInstanceOf(Outcome.Cancelled.class, done(waiting));
        assertInstanceOf(Outcome.Cancelled.class, gate.within(Task.value(1)).outcome().toCompletableFuture().getNow(null));
        assertEquals(0, clock.pending());
        gate.closeAndCheck();
    }

    @Test
    void closeAndCheckNamesWorkStillRunning() {
        ThrottleGate gate = new ThrottleGate(Duration.ofMillis(10), 2, clock);
        Admission held = done(gate.acquire().toCompletableFuture());
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(e.getMessage().contains("1 admitted operation"), e.getMessage());
        held.exit();
    }

    @Test
    void badInputIsRefusedWithTheArgumentsName() {
        assertThrows(IllegalArgumentException.class, () -> new ThrottleGate(Duration.ZERO), "zero interval");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ThrottleGate(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("minInterval"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new ThrottleGate(Duration.ofMillis(1), 0, clock));
        assertTrue(e.getMessage().contains("maxRunning"), e.getMessage());
        assertTrue(assertThrows(NullPointerException.class, () -> new ThrottleGate(null)).getMessage().contains("minInterval"));
        assertTrue(assertThrows(NullPointerException.class, () -> new ThrottleGate(Duration.ofMillis(1), null)).getMessage().contains("clock"));
        ThrottleGate gate = new ThrottleGate(Duration.ofMillis(1), clock);
        assertTrue(assertThrows(NullPointerException.class, () -> gate.within(null)).getMessage().contains("work"));
        assertEquals(Integer.MAX_VALUE, gate.maxRunning());
        assertEquals(MS, gate.intervalNanos());
    }

    /** The future's value; it must be complete (work runs inline on virtual time), never waited for. */
    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "not complete: the test would wait for ever");
        return f.join();
    }
}
