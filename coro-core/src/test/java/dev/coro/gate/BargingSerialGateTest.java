package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.sync.BargingMutexTest.StepScheduler;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link SerialGate#barging()}: the fairness its javadoc states, close (queued waiters cancelled; a
 * waiter woken before the close does not enter after it), cancellation, try, the destruction check
 * and bad input. Waiters run on a step scheduler whose queued resumptions the test runs one by one.
 */
class BargingSerialGateTest {
    private final StepScheduler steps = new StepScheduler();

    private <T> CompletableFuture<T> start(Task<T> task) {
        return task.startOn(steps).toCompletableFuture();
    }

    @Test
    void aNewcomerEntersAFreedGateAheadOfTheWokenWaiter() {
        SerialGate g = SerialGate.barging();
        assertTrue(g.isBarging());
        Admission held = g.tryAcquire().join();
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> a = start(g.within(Task.fromRunnable(() -> order.add("a"))));
        steps.runAll();
        held.exit(); // frees the gate and wakes a
        assertFalse(g.isBusy());
        CompletableFuture<Void> c = g.tryWithin(Task.fromRunnable(() -> order.add("c"))).toCompletableFuture();
        assertTrue(c.isDone(), "the try entered the free gate ahead of the woken waiter");
        steps.runAll(); // a competes: the gate is free again (c left), so a enters
        assertTrue(a.isDone());
        assertEquals(List.of("c", "a"), order);
        assertFalse(g.isBusy());
        assertEquals(0, g.queueLength());
    }

    @Test
    void queuedWaitersEnterOneAfterAnotherInArrivalOrderWhenNobodyBarges() {
        SerialGate g = SerialGate.barging();
        Admission held = g.tryAcquire().join();
        List<String> order = new ArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            waiters.add(start(g.within(Task.fromRunnable(() -> order.add(name)))));
        }
        steps.runAll();
        assertEquals(3, g.queueLength());
        held.exit(); // wakes a; each one that leaves wakes the next, once the woken one has competed
        steps.runAll();
        for (CompletableFuture<Void> w : waiters) {
            assertTrue(w.isDone(), "every waiter entered: a woken waiter that won cleared its wake");
        }
        assertEquals(List.of("a", "b", "c"), order);
        assertFalse(g.isBusy());
        assertEquals(0, g.queueLength());
    }

    @Test
    void aTryFailsOnlyWhileTheGateIsBusy() {
        SerialGate g = SerialGate.barging();
        Admission held = g.tryAcquire().join();
        assertThrows(CancellationException.class, () -> g.tryWithin(Task.value(1)).join());
        held.exit();
        assertEquals(1, g.tryWithin(Task.value(1)).join());
    }

    @Test
    void closeCancelsQueuedWaitersAndAWaiterWokenBeforeItDoesNotEnterAfterIt() {
        SerialGate g = SerialGate.barging();
        Admission held = g.tryAcquire().join();
        List<String> ran = new ArrayList<>();
        CompletableFuture<Void> woken = start(g.within(Task.fromRunnable(() -> ran.add("woken"))));
        CompletableFuture<Void> queued = start(g.within(Task.fromRunnable(() -> ran.add("queued"))));
        steps.runAll();
        held.exit(); // wakes the first; its resumption is queued
        g.close();
        steps.runAll();
        assertTrue(queued.isCancelled() || queued.isCompletedExceptionally());
        assertThrows(CancellationException.class, queued::join);
        assertThrows(CancellationException.class, woken::join, "woken before the close, refused after it");
        assertEquals(List.of(), ran);
        assertFalse(g.isBusy());
        g.closeAndCheck(); // nothing admitted remains
        assertThrows(CancellationException.class, () -> g.within(Task.value(1)).join(), "closed");
        assertEquals("SerialGate[barging, free, closed]", g.toString());
    }

    @Test
    void closeAndCheckCountsTheHolder() {
        SerialGate g = SerialGate.barging();
        Admission held = g.tryAcquire().join();
        IllegalStateException e = assertThrows(IllegalStateException.class, g::closeAndCheck);
        assertTrue(e.getMessage().contains("1 admitted operation(s)"), e.getMessage());
        held.exit();
    }

    @Test
    void aCancelledWaiterLeavesNothingAndTheNextIsWoken() {
        SerialGate g = SerialGate.barging();
        Admission held = g.tryAcquire().join();
        CompletableFuture<Admission> a = start(g.acquire());
        CompletableFuture<Admission> b = start(g.acquire());
        steps.runAll();
        assertTrue(a.cancel(false));
        held.exit();
        steps.runAll();
        assertTrue(b.isDone());
        assertTrue(g.isBusy());
        b.join().exit();
        assertFalse(g.isBusy());
        assertEquals(0, g.queueLength());
    }

    @Test
    void badInput() {
        SerialGate g = SerialGate.barging();
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.tryWithin(null)).getMessage());
        assertFalse(new SerialGate().isBarging());
    }
}
