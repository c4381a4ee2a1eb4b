package dev.coro.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.WaitQueue;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class EventTest {

    @Test
    void setWakesEveryWaiterWithTheValue() {
        Event<String> e = new Event<>();
        List<CompletableFuture<String>> waiters = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            waiters.add(e.await().toCompletableFuture());
        }
        assertFalse(waiters.get(0).isDone());
        assertFalse(e.isSet());
        assertTrue(e.set("go"));
        assertTrue(e.isSet());
        for (CompletableFuture<String> w : waiters) {
            assertEquals("go", w.join());
        }
    }

    @Test
    void queueLengthCountsTheWaitersUntilSet() {
        Event<String> e = new Event<>();
        assertEquals(0, e.queueLength());
        List<CompletableFuture<String>> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiters.add(e.await().toCompletableFuture());
        }
        assertEquals(3, e.queueLength());
        waiters.get(2).cancel(true); // the newest departs at once
        assertEquals(2, e.queueLength());
        e.set("go");
        assertEquals(0, e.queueLength());
    }

    @Test
    void aWaiterAfterSetDoesNotSuspend() {
        Event<Integer> e = new Event<>();
        e.set(7);
        CompletableFuture<Integer> f = e.await().toCompletableFuture();
        assertTrue(f.isDone(), "completed during the call: no suspension");
        assertEquals(7, f.join());
        assertEquals(7, e.awaitBlocking());
    }

    @Test
    void theFirstSetWinsUntilReset() {
        Event<String> e = new Event<>();
        assertTrue(e.set("first"));
        assertFalse(e.set("second"), "setting twice is refused");
        assertEquals("first", e.await().join());
        assertTrue(e.reset());
        assertFalse(e.isSet());
        assertTrue(e.set("third"));
        assertEquals("third", e.await().join());
    }

    @Test
    void resetWhileWaitersWaitDoesNothingAndTheyWaitForTheNextSet() {
        Event<String> e = new Event<>();
        CompletableFuture<String> w = e.await().toCompletableFuture();
        assertFalse(e.reset(), "not set: nothing to reset");
        assertFalse(w.isDone());
        e.set("later");
        assertEquals("later", w.join());
    }

    @Test
    void aWaitAfterResetSuspendsAgain() {
        Event<Void> e = new Event<>();
        e.set();
        e.reset();
        CompletableFuture<Void> w = e.await().toCompletableFuture();
        assertFalse(w.isDone());
        e.set();
        assertTrue(w.isDone());
    }

    @Test
    void tenThousandWaitersHalfCancelledNoneOfTheCancelledResumedAndNothingLeft() {
        Event<Integer> e = new Event<>();
        AtomicInteger resumed = new AtomicInteger();
        List<CompletableFuture<Integer>> kept = new ArrayList<>();
        List<CompletableFuture<Integer>> cancelled = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            CompletableFuture<Integer> f = e.await().map(v -> {
                resumed.incrementAndGet();
                return v;
            }).toCompletableFuture();
            (i % 2 == 0 ? kept : cancelled).add(f);
        }
        for (CompletableFuture<Integer> f : cancelled) {
            assertTrue(f.cancel(false));
        }
        assertTrue(linkedWaiters(e) <= 5_000 * 2 + 64, "cancelled waiters were unlinked: " + linkedWaiters(e));
        e.set(1);
        for (CompletableFuture<Integer> f : kept) {
            assertEquals(1, f.join());
        }
        assertEquals(5_000, resumed.get(), "none of the cancelled waiters resumed");
        assertEquals(0, linkedWaiters(e), "the fired event holds no waiter");
    }

    @Test
    void allCancelledWaitersLeaveTheEventEmpty() {
        Event<Integer> e = new Event<>();
        for (int i = 0; i < 100_000; i++) {
            e.await().toCompletableFuture().cancel(false);
        }
        assertTrue(linkedWaiters(e) <= 64, "linked: " + linkedWaiters(e));
    }

    @Test
    void oldWaitersCancelledWhileTheNewestWaitsAreSweptNotKept() {
        Event<Integer> e = new Event<>();
        List<CompletableFuture<Integer>> old = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            old.add(e.await().toCompletableFuture());
        }
        CompletableFuture<Integer> newest = e.await().toCompletableFuture();
        for (CompletableFuture<Integer> f : old) { // none of them is the newest: the sweep unlinks them
            assertTrue(f.cancel(false));
        }
        assertTrue(linkedWaiters(e) <= 2 + 64, "cancelled waiters below a live one were swept: " + linkedWaiters(e));
        e.set(7);
        assertEquals(7, newest.join());
    }

    /** The waiter nodes a primitive still links: an event's intake, or a mutex's engine (intake and order). */
    static int linkedWaiters(Object primitive) {
        try {
            if (primitive instanceof AsyncMutex) {
                var laneField = AsyncMutex.class.getDeclaredField("lane");
                laneField.setAccessible(true);
                return ((AdmissionEngine) laneField.get(primitive)).linkedWaiters();
            }
            var queueField = primitive.getClass().getDeclaredField("queue");
            queueField.setAccessible(true);
            return ((WaitQueue) queueField.get(primitive)).linkedCount();
        } catch (ReflectiveOperationException ex) {
            throw new AssertionError(ex);
        }
    }

    @Test
    void aTaskWaitingOnASingleThreadSchedulerResumesOnThatThread() throws Exception {
        ExecutorService single = Executors.newSingleThreadExecutor(r -> new Thread(r, "the-one"));
        try {
            Scheduler s = Scheduler.from(single);
            Event<String> e = new Event<>();
            CompletableFuture<String> where = e.await().map(v -> Thread.currentThread().getName())
                    .startOn(s).toCompletableFuture();
            Thread setter = Thread.ofPlatform().name("setter").start(() -> e.set("x"));
            setter.join();
            assertEquals("the-one", where.get());
        } finally {
            single.shutdown();
        }
    }

    @Test
    void blockingWaitIsCancelledByInterrupt() {
        Event<String> e = new Event<>();
        Thread.currentThread().interrupt();
        assertThrows(CancellationException.class, e::awaitBlocking);
        assertTrue(Thread.interrupted());
    }

    @Test
    @Tag("stress")
    void setRacingWaitersAndResetsNeverLosesAWaiter() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "event-stress")) {
            for (int round = 0; round < Stress.scaled(200); round++) {
                Event<Integer> e = new Event<>();
                List<CompletableFuture<Integer>> waits = new ArrayList<>();
                Thread setter = Thread.ofPlatform().start(() -> e.set(42));
                for (int i = 0; i < 50; i++) {
                    waits.add(e.await().startOn(pool).toCompletableFuture());
                }
                setter.join();
                for (CompletableFuture<Integer> w : waits) {
                    assertEquals(42, w.get(), "round " + round);
                }
            }
        }
    }
}
