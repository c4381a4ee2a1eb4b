package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The select-able waiter: one suspension waiting in several engines, exactly one of which admits it;
 * every other engine sees a settled node, skips it, and gets back what it had reserved for it.
 */
class SelectTest {

    /** The internal {@code selectAny}: waits in every engine, resumes with the one that admitted it. */
    static Task<Select.Selected> selectAny(AdmissionEngine... engines) {
        return Task.create(completer -> {
            Select select = new Select((WaitNode) completer, engines.length);
            for (int i = 0; i < engines.length && !select.isSettled(); i++) {
                engines[i].enter(select.clause(i), null);
            }
        });
    }

    @Test
    void aSelectIsAdmittedByExactlyOneEngineAndTheOtherGetsItsUnitBack() {
        TestLane a = new TestLane(1);
        TestLane b = new TestLane(1);
        assertTrue(a.tryEnterNow(null) && b.tryEnterNow(null));
        CompletableFuture<Select.Selected> s = selectAny(a, b).toCompletableFuture();
        assertFalse(s.isDone());
        assertEquals(2, a.linkedWaiters() + b.linkedWaiters(), "one clause queued in each");
        b.release(1);
        assertEquals(1, s.join().index(), "b admitted it");
        assertEquals(0, b.freePermits(), "b's unit went to the select");
        assertEquals(0, a.freePermits());
        a.release(1);
        assertEquals(1, a.freePermits(), "a's clause departed: its unit is not owed to anyone");
        assertTrue(a.tryEnterNow(null), "and a newcomer takes it");
        a.release(1);
        b.release(1);
        assertEquals(0, a.linkedWaiters() + b.linkedWaiters());
    }

    @Test
    void aSelectAdmittedAtOnceDoesNotQueueItsLaterClauses() {
        TestLane a = new TestLane(1);
        TestLane b = new TestLane(1);
        assertEquals(0, selectAny(a, b).join().index());
        assertEquals(0, a.freePermits());
        assertEquals(1, b.freePermits(), "b was never asked");
        assertEquals(0, b.linkedWaiters());
        a.release(1);
    }

    @Test
    void aCancelledSelectDepartsFromEveryEngine() {
        TestLane a = new TestLane(1);
        TestLane b = new TestLane(1);
        assertTrue(a.tryEnterNow(null) && b.tryEnterNow(null));
        CompletableFuture<Select.Selected> s = selectAny(a, b).toCompletableFuture();
        assertTrue(s.cancel(false));
        a.release(1);
        b.release(1);
        assertEquals(1, a.freePermits());
        assertEquals(1, b.freePermits());
        assertEquals(0, a.linkedWaiters() + b.linkedWaiters());
    }

    @Test
    void aSelectOverAClosedEngineCompletesCancelledAndTheOtherForgetsIt() {
        TestLane a = new TestLane(1);
        TestLane b = new TestLane(1);
        assertTrue(a.tryEnterNow(null) && b.tryEnterNow(null));
        CompletableFuture<Select.Selected> s = selectAny(a, b).toCompletableFuture();
        a.close(); // the first clause to settle decides: abandoned, so the select is cancelled
        assertTrue(s.isCancelled());
        b.release(1);
        assertEquals(1, b.freePermits(), "b's clause departed with the select");
        a.release(1);
    }

    @Test
    void aSelectThatLosesTheHandOverToItsCancellationPassesTheUnitOn() {
        TestLane a = new TestLane(1);
        assertTrue(a.tryEnterNow(null));
        Scope scope = Scope.on(Scheduler.inline());
        CompletableFuture<Select.Selected> s = new CompletableFuture<>();
        scope.spawn(selectAny(a, new TestLane(0)).outcome().map(o -> {
            if (o instanceof Outcome.Value<Select.Selected> v) {
                s.complete(v.value());
            } else {
                s.cancel(false);
            }
            return null;
        }));
        CompletableFuture<Void> next = a.enter(null).toCompletableFuture();
        scope.cancel();
        assertTrue(s.isCancelled());
        a.release(1);
        assertTrue(next.isDone() && !next.isCompletedExceptionally(), "the unit went to the next waiter");
        a.release(1);
        assertEquals(1, a.freePermits());
    }

    /**
     * Two threads release one unit each into two engines that both hold a queued select clause: one
     * admission wins, the other engine's unit goes to its next waiter (or stays free). Repeated with
     * fresh engines; the counts must come out exact every round.
     */
    @Test
    void releasesRacingForOneSelectAdmitItOnce() throws Exception {
        int rounds = Stress.scaled(5_000);
        CyclicBarrier start = new CyclicBarrier(2);
        AtomicInteger twice = new AtomicInteger();
        for (int r = 0; r < rounds; r++) {
            TestLane a = new TestLane(1);
            TestLane b = new TestLane(1);
            assertTrue(a.tryEnterNow(null) && b.tryEnterNow(null));
            AtomicInteger admissions = new AtomicInteger();
            CompletableFuture<Select.Selected> s = selectAny(a, b)
                    .map(sel -> {
                        admissions.incrementAndGet();
                        return sel;
                    })
                    .toCompletableFuture();
            Thread other = Thread.ofPlatform().start(() -> {
                await(start);
                b.release(1);
            });
            await(start);
            a.release(1);
            other.join();
            Select.Selected won = s.join();
            if (admissions.get() != 1) {
                twice.incrementAndGet();
            }
            (won.index() == 0 ? a : b).release(1);
            assertEquals(1, a.freePermits(), "round " + r + ": a's unit is free");
            assertEquals(1, b.freePermits(), "round " + r + ": b's unit is free");
            assertEquals(0, a.linkedWaiters() + b.linkedWaiters(), "round " + r);
        }
        assertEquals(0, twice.get(), "a select admitted more than once");
    }

    @Test
    void aSelectNeedsAClause() {
        assertThrows(IllegalArgumentException.class, () -> selectAny().join());
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
