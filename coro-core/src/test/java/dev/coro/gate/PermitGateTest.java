package dev.coro.gate;

import static dev.coro.Latches.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The permit lane's accounting (PermitLane overview): each way a registered waiter can leave without
 * being admitted gives back exactly its count, in both of T6's cases.
 */
class PermitGateTest {

    @Test
    void aWaiterCancelledBeforeAnyPermitReachedItGivesBackItsPlace() {
        SerialGate gate = new SerialGate();
        Admission holder = gate.acquire().join();
        CompletableFuture<Admission> waiter = gate.acquire().toCompletableFuture();
        assertFalse(waiter.isDone());
        waiter.cancel(false); // T6 with the count below zero: the waiter was not covered
        holder.exit();
        assertFalse(gate.isBusy(), "the permit went to the cancelled waiter");
        Outcome<Admission> now = gate.tryAcquire().outcome().join();
        Admission next = (Admission) assertInstanceOf(Outcome.Value.class, now).value();
        assertTrue(gate.isBusy());
        next.exit();
        gate.closeAndCheck();
    }

    /**
     * T6's second case, made deterministic: the owner is busy running the admitted waiter inline
     * (a serial gate resumes it inside the drain), that waiter's exit posts a credit that covers
     * the next waiter, and the next waiter is cancelled before the owner can hand the credit over.
     * The credit must become the free permit, not stay as a second one: without that, a later
     * waiter was admitted while another operation held the serial gate.
     */
    @Test
    void aWaiterCancelledWhileAPermitIsOnItsWayFreesThatPermitOnce() throws Exception {
        SerialGate gate = new SerialGate();
        Admission holder = gate.acquire().join();
        CountDownLatch exited = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        // started on this thread (inline scheduler): resumed inline on the thread that admits it
        CompletableFuture<Void> first = gate.acquire().flatMap(a -> Task.fromRunnable(() -> {
            a.exit(); // the next waiter is now covered by a credit the busy owner has not applied
            exited.countDown();
            await(proceed);
        })).toCompletableFuture();
        CompletableFuture<Admission> second = gate.acquire().toCompletableFuture();
        Thread owner = Thread.ofPlatform().start(holder::exit); // admits `first`, runs it, owns meanwhile
        exited.await();
        second.cancel(false);
        proceed.countDown();
        owner.join();
        first.join();
        assertTrue(second.isCancelled());
        assertFalse(gate.isBusy(), "the covered waiter's permit was not freed");

        Admission a = gate.acquire().join();
        CompletableFuture<Admission> b = gate.acquire().toCompletableFuture();
        assertFalse(b.isDone(), "a waiter was admitted while another operation held the serial gate");
        a.exit();
        b.join().exit();
        assertFalse(gate.isBusy());
        gate.closeAndCheck();
    }

    @Test
    void closeGivesBackTheCountsOfEveryAbandonedWaiter() {
        CapacityGate gate = new CapacityGate(2);
        Admission one = gate.acquire().join();
        Admission two = gate.acquire().join();
        CompletableFuture<Admission> w1 = gate.acquire().toCompletableFuture();
        CompletableFuture<Admission> w2 = gate.acquire().toCompletableFuture();
        gate.close();
        assertTrue(w1.isCompletedExceptionally() && w2.isCompletedExceptionally());
        assertInstanceOf(Outcome.Cancelled.class, gate.acquire().outcome().join(), "acquired after close");
        one.exit();
        two.exit();
        assertEquals(2, gate.available());
        gate.closeAndCheck();
    }
}
