package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** BackpressureGate: grants admit in order, accumulate without overflow, are spent by admissions only; cancellation, close, bad input. */
class BackpressureGateTest {

    @Test
    void nothingIsAdmittedBeforeAGrantAndGrantsAdmitWaitersInOrder() {
        BackpressureGate gate = new BackpressureGate();
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int id = i;
            waiters.add(gate.within(Task.fromRunnable(() -> order.add(id))).toCompletableFuture());
        }
        assertEquals(List.of(), order, "admitted without a grant");
        gate.grant(2);
        assertEquals(List.of(0, 1), order);
        assertFalse(waiters.get(2).isDone());
        gate.grant(3);
        assertEquals(List.of(0, 1, 2, 3, 4), order);
        assertEquals(0, gate.available());
        assertFalse(gate.tryWithin(Task.value(1)).outcome().join() instanceof Outcome.Value<Integer>,
                "admitted with no grant left");
    }

    @Test
    void grantsAccumulateAndEachAdmissionSpendsOneForGood() {
        BackpressureGate gate = new BackpressureGate();
        gate.grant(3);
        assertEquals(3, gate.available());
        Admission a = done(gate.acquire().toCompletableFuture());
        a.exit(); // leaving gives nothing back
        assertEquals(2, gate.available());
        assertEquals(7, done(gate.tryWithin(Task.value(7)).toCompletableFuture()));
        assertEquals(8, done(gate.within(Task.value(8)).toCompletableFuture()));
        assertInstanceOf(Outcome.Cancelled.class, done(gate.tryAcquire().outcome().toCompletableFuture()));
        assertEquals(0, gate.available());
    }

    /** A million grants of one, each ahead of its admission, and a million admissions waiting for grants of one. */
    @Test
    void aMillionGrantsOfOneBehave() {
        BackpressureGate gate = new BackpressureGate();
        for (int i = 0; i < 1_000_000; i++) {
            gate.grant(1);
        }
        assertEquals(1_000_000, gate.available());
        Task<Integer> one = gate.tryWithin(Task.value(1));
        long admitted = 0;
        for (int i = 0; i < 1_000_000; i++) {
            admitted += one.join();
        }
        assertEquals(1_000_000, admitted);
        assertInstanceOf(Outcome.Cancelled.class, one.outcome().join(), "a grant spent twice");
        AtomicInteger ran = new AtomicInteger();
        Task<Integer> waiting = gate.within(Task.fromCallable(ran::incrementAndGet));
        for (int i = 0; i < 1_000_000; i++) {
            CompletableFuture<Integer> w = waiting.toCompletableFuture();
            assertFalse(w.isDone());
            gate.grant(1);
            assertEquals(i + 1, done(w));
        }
        assertEquals(0, gate.available());
    }

    /** Long.MAX_VALUE is unbounded demand: grants beyond it saturate instead of overflowing. */
    @Test
    void aGrantOfLongMaxValueSaturates() {
        BackpressureGate gate = new BackpressureGate();
        List<CompletableFuture<Integer>> queued = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            queued.add(gate.within(Task.value(i)).toCompletableFuture());
        }
        gate.grant(Long.MAX_VALUE);
        for (int i = 0; i < 3; i++) {
            assertEquals(i, done(queued.get(i)));
        }
        assertEquals(Long.MAX_VALUE - 3, gate.available());
        gate.grant(Long.MAX_VALUE);
        gate.grant(10);
        assertEquals(Long.MAX_VALUE, gate.available(), "overflowed");
        for (int i = 0; i < 1000; i++) {
            assertEquals(i, done(gate.within(Task.value(i)).toCompletableFuture()));
        }
        assertEquals(Long.MAX_VALUE - 1000, gate.available());
        gate.grant(Long.MAX_VALUE);
        assertEquals(Long.MAX_VALUE, gate.available());
    }

    /**
     * A waiter whose grant is on its way when it is cancelled gives that grant back after further
     * grants saturated the count: it must saturate again, not overflow. Holding the engine's
     * ownership makes the order exact: the cancellation, the grant owed to it and the saturating
     * grant all wait for the owner, which applies them when the action ends.
     */
    @Test
    void aWaiterCancelledAfterASaturatingGrantDoesNotOverflow() {
        BackpressureGate gate = new BackpressureGate();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> waiter = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        gate.engine.runOwned(() -> {
            waiter.cancel(false);          // departs: left to the owner
            gate.grant(Long.MAX_VALUE - 1); // covers its deficit: a grant on its way to it
            gate.grant(5);                  // saturates
        });
        assertTrue(waiter.isCancelled());
        assertEquals(0, ran.get());
        assertEquals(Long.MAX_VALUE, gate.available(), "the departed waiter's grant overflowed the count");
        assertEquals(7, done(gate.within(Task.value(7)).toCompletableFuture()));
    }

    @Test
    void aCancelledWaiterSpendsNoGrant() {
        BackpressureGate gate = new BackpressureGate();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> cancelled = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        CompletableFuture<Integer> behind = gate.within(Task.value(2)).toCompletableFuture();
        cancelled.cancel(false);
        gate.grant(1);
        assertEquals(2, done(behind), "the grant went to the cancelled waiter");
        assertEquals(0, ran.get());
        assertEquals(0, gate.available());
        CompletableFuture<Integer> alone = gate.within(Task.value(3)).toCompletableFuture();
        alone.cancel(false);
        gate.grant(1);
        assertEquals(1, gate.available(), "a cancelled waiter spent the grant");
        assertEquals(0, gate.engine.linkedWaiters(), "a departed waiter stays linked");
    }

    /** Random grants and completions: the work in flight never exceeds the grants minus the work done. */
    @Test
    void inFlightNeverExceedsGrantedMinusCompleted() {
        BackpressureGate gate = new BackpressureGate();
        SplittableRandom random = new SplittableRandom(11);
        List<Promise<Void>> running = new ArrayList<>();
        long granted = 0;
        long completed = 0;
        int[] inFlight = {0};
        int mostInFlight = 0;
        for (int step = 0; step < 20_000; step++) {
            switch (random.nextInt(3)) {
                case 0 -> { // the producer submits an item
                    Promise<Void> work = new Promise<>();
                    gate.within(Task.fromRunnable(() -> {
                        inFlight[0]++;
                        running.add(work);
                    }).then(work.task())).toCompletableFuture();
                }
                case 1 -> { // the consumer grants
                    int n = 1 + random.nextInt(3);
                    gate.grant(n);
                    granted += n;
                }
                default -> { // an item finishes
                    if (!running.isEmpty()) {
                        running.remove(random.nextInt(running.size())).complete(null);
                        inFlight[0]--;
                        completed++;
                    }
                }
            }
            assertTrue(inFlight[0] <= granted - completed,
                    inFlight[0] + " in flight, " + granted + " granted, " + completed + " completed");
            mostInFlight = Math.max(mostInFlight, inFlight[0]);
        }
        assertTrue(mostInFlight > 5, "the test never had work in flight: " + mostInFlight);
    }

    @Test
    void closeCancelsWaitersAndLaterEntriesButNotRunningWork() {
        BackpressureGate gate = new BackpressureGate();
        gate.grant(1);
        Promise<Integer> hold = new Promise<>();
        CompletableFuture<Integer> running = gate.within(hold.task()).toCompletableFuture();
        CompletableFuture<Integer> waiting = gate.within(Task.value(2)).toCompletableFuture();
        gate.closeAndCheck(); // admissions are spent: nothing to complain of
        assertTrue(gate.isClosed());
        assertTrue(waiting.isCancelled());
        assertInstanceOf(Outcome.Cancelled.class, gate.within(Task.value(3)).outcome().join());
        gate.grant(5);
        assertInstanceOf(Outcome.Cancelled.class, gate.within(Task.value(4)).outcome().join(), "admitted after close");
        hold.complete(1);
        assertEquals(1, done(running));
        assertTrue(gate.toString().contains("closed"), gate.toString());
    }

    @Test
    void theBlockingDoorWaitsForAGrant() throws Exception {
        BackpressureGate gate = new BackpressureGate();
        CompletableFuture<String> result = new CompletableFuture<>();
        Thread consumer = Thread.ofVirtual().start(() -> result.complete(gate.call(() -> "item")));
        while (gate.engine.linkedWaiters() == 0) {
            Thread.onSpinWait(); // until the call waits in the gate
        }
        assertFalse(result.isDone());
        gate.grant(1);
        consumer.join();
        assertEquals("item", result.join());
    }

    @Test
    void badInputIsRefusedWithAClearMessage() {
        BackpressureGate gate = new BackpressureGate();
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> gate.grant(0));
        assertTrue(zero.getMessage().contains("n must be positive") && zero.getMessage().contains("0"), zero.getMessage());
        assertThrows(IllegalArgumentException.class, () -> gate.grant(-1));
        assertThrows(IllegalArgumentException.class, () -> gate.grant(Long.MIN_VALUE));
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.tryWithin(null)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> gate.call(null)).getMessage());
        assertEquals(0, gate.available(), "a refused grant counted");
    }

    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "not complete: the test would wait for ever");
        return f.join();
    }
}
