package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** LatestOnlyGate: one running, one waiting (the newest), superseded ones never run; the cancelling mode; try, close, cancellation, bad input. */
class LatestOnlyGateTest {

    @Test
    void aNewerSubmissionSupersedesTheWaitingOneWhichNeverRuns() {
        LatestOnlyGate gate = new LatestOnlyGate();
        Promise<String> hold = new Promise<>();
        CompletableFuture<String> first = gate.within(hold.task()).toCompletableFuture();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> second = gate.within(Task.fromCallable(() -> ran.addAndGet(2))).toCompletableFuture();
        assertFalse(second.isDone(), "admitted while the first runs");
        CompletableFuture<Integer> third = gate.within(Task.fromCallable(() -> ran.addAndGet(3))).toCompletableFuture();
        assertTrue(second.isCancelled(), "the waiting submission was not superseded");
        assertFalse(third.isDone());
        hold.complete("a");
        assertEquals("a", done(first));
        assertEquals(3, done(third), "the newest did not run once the first left");
        assertEquals(3, ran.get(), "a superseded submission ran");
        gate.closeAndCheck();
    }

    @Test
    void ofManySubmissionsWhileOneRunsOnlyTheLastRuns() {
        LatestOnlyGate gate = new LatestOnlyGate();
        Promise<Void> hold = new Promise<>();
        CompletableFuture<Void> running = gate.within(hold.task()).toCompletableFuture();
        List<Integer> ran = new ArrayList<>();
        List<CompletableFuture<Integer>> typed = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            int q = i;
            typed.add(gate.within(Task.fromCallable(() -> {
                ran.add(q);
                return q;
            })).toCompletableFuture());
        }
        for (int i = 0; i < 999; i++) {
            assertTrue(typed.get(i).isCancelled(), "submission " + i + " not superseded");
        }
        assertEquals(0, gate.engine.linkedWaiters() - 1, "more than the newest waiter is linked");
        hold.complete(null);
        done(running);
        assertEquals(List.of(999), ran);
        assertEquals(999, done(typed.get(999)));
    }

    @Test
    void aCancelledWaiterLeavesAndSupersedesNoOne() {
        LatestOnlyGate gate = new LatestOnlyGate();
        Promise<Void> hold = new Promise<>();
        CompletableFuture<Void> running = gate.within(hold.task()).toCompletableFuture();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> waiting = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        waiting.cancel(false);
        hold.complete(null);
        done(running);
        assertEquals(0, ran.get(), "a cancelled submission ran");
        assertEquals(0, gate.engine.linkedWaiters(), "the cancelled waiter is still linked");
        assertEquals(7, done(gate.within(Task.value(7)).toCompletableFuture()), "the gate is not idle");
    }

    @Test
    void theCancellingModeCancelsTheRunningOperationForTheNewest() {
        LatestOnlyGate gate = LatestOnlyGate.cancellingRunning();
        assertTrue(gate.cancelsRunning());
        CompletableFuture<Object> first = gate.within(Task.never()).toCompletableFuture();
        assertFalse(first.isDone());
        CompletableFuture<String> second = gate.within(Task.value("newest")).toCompletableFuture();
        assertTrue(first.isCancelled(), "the running operation was not cancelled");
        assertEquals("newest", done(second));
        gate.closeAndCheck();
    }

    /** Cancellation is cooperative: an operation that does not wait finishes, and the newest waits for its exit. */
    @Test
    void theCancellingModeWaitsForTheCancelledOperationToLeave() {
        LatestOnlyGate gate = LatestOnlyGate.cancellingRunning();
        Promise<String> hold = new Promise<>();
        Promise<String> cleanup = new Promise<>(); // its cleanup runs with cancellation masked, and takes time
        CompletableFuture<String> first = gate.within(hold.task().andFinally(cleanup.task())).toCompletableFuture();
        CompletableFuture<String> second = gate.within(Task.value("newest")).toCompletableFuture();
        CompletableFuture<String> third = gate.within(Task.value("newer")).toCompletableFuture();
        assertTrue(second.isCancelled(), "the waiting submission was not superseded");
        assertFalse(first.isDone(), "the cancelled operation's cleanup was cut short");
        assertFalse(third.isDone(), "admitted while the cancelled operation still runs");
        cleanup.complete("cleaned");
        assertTrue(first.isCancelled(), "the running operation was not cancelled");
        assertEquals("newer", done(third));
    }

    @Test
    void theDefaultModeLetsTheRunningOperationFinish() {
        LatestOnlyGate gate = new LatestOnlyGate();
        assertFalse(gate.cancelsRunning());
        Promise<String> hold = new Promise<>();
        CompletableFuture<String> first = gate.within(hold.task()).toCompletableFuture();
        CompletableFuture<String> second = gate.within(Task.value("b")).toCompletableFuture();
        assertFalse(first.isDone(), "the running operation was cancelled");
        hold.complete("a");
        assertEquals("a", done(first));
        assertEquals("b", done(second));
    }

    @Test
    void tryWithinAdmitsOnlyAnIdleGateAndSupersedesNoOne() {
        LatestOnlyGate gate = new LatestOnlyGate();
        assertEquals(1, done(gate.tryWithin(Task.value(1)).toCompletableFuture()));
        Promise<Void> hold = new Promise<>();
        CompletableFuture<Void> running = gate.within(hold.task()).toCompletableFuture();
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(Task.value(2)).outcome().join());
        CompletableFuture<Integer> waiting = gate.within(Task.value(3)).toCompletableFuture();
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire().outcome().join());
        assertFalse(waiting.isDone(), "a try superseded the waiting submission");
        hold.complete(null);
        done(running);
        assertEquals(3, done(waiting));
        Admission a = done(gate.tryAcquire().toCompletableFuture());
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(Task.value(4)).outcome().join());
        a.exit();
        assertEquals(5, done(gate.tryWithin(Task.value(5)).toCompletableFuture()));
    }

    @Test
    void closeCancelsTheWaitingSubmissionAndLaterOnesButNotTheRunningOne() {
        LatestOnlyGate gate = new LatestOnlyGate();
        Promise<String> hold = new Promise<>();
        CompletableFuture<String> running = gate.within(hold.task()).toCompletableFuture();
        CompletableFuture<String> waiting = gate.within(Task.value("w")).toCompletableFuture();
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(e.getMessage().contains("1 admitted"), e.getMessage());
        assertTrue(waiting.isCancelled());
        assertInstanceOf(Outcome.Cancelled.class, gate.within(Task.value("late")).outcome().join());
        hold.complete("r");
        assertEquals("r", done(running));
        gate.closeAndCheck();
    }

    @Test
    void badInputIsRefused() {
        LatestOnlyGate gate = LatestOnlyGate.cancellingRunning();
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> new LatestOnlyGate().within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.tryWithin(null)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> gate.call(null)).getMessage());
    }

    /**
     * 100,000 rapid submissions from two threads, whose work runs on a two-worker pool, a tenth of them cancelled at
     * random: never two operations at once, each ran at most once, a submission superseded (ended
     * cancelled, not cancelled by the test) never ran its work, and the last submission runs.
     */
    @Test
    void underRapidSubmissionsNeverTwoRunAndSupersededOnesNeverRun() throws Exception {
        for (boolean cancelling : new boolean[] {false, true}) {
            LatestOnlyGate gate = cancelling ? LatestOnlyGate.cancellingRunning() : new LatestOnlyGate();
            AtomicInteger inside = new AtomicInteger();
            AtomicReference<String> broken = new AtomicReference<>();
            int perThread = 50_000;
            AtomicBoolean[] ran = new AtomicBoolean[2 * perThread];
            boolean[] cancelledByTest = new boolean[2 * perThread]; // read after the submitters' join
            @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
            CompletableFuture<Integer>[] results = new CompletableFuture[2 * perThread];
            try (WorkStealingPool pool = WorkStealingPool.create(2)) {
                CountDownLatch start = new CountDownLatch(1);
                Thread[] submitters = new Thread[2];
                for (int t = 0; t < 2; t++) {
                    int base = t * perThread;
                    submitters[t] = new Thread(() -> {
                        SplittableRandom random = new SplittableRandom(base);
                        try {
                            start.await();
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                        for (int i = base; i < base + perThread; i++) {
                            int id = i;
                            AtomicBoolean mine = ran[i] = new AtomicBoolean();
                            Task<Integer> work = Task.fromRunnable(() -> {
                                        if (inside.incrementAndGet() != 1) {
                                            broken.compareAndSet(null, "two operations at once");
                                        }
                                        if (!mine.compareAndSet(false, true)) {
                                            broken.compareAndSet(null, "ran twice: " + id);
                                        }
                                    })
                                    .then(Task.yieldNow())
                                    .andFinally(inside::decrementAndGet)
                                    .map(ignored -> id);
                            // arrives on this thread (so the order of arrival is the order of calls); runs on the pool
                            results[i] = gate.within(work.startOn(pool)).toCompletableFuture();
                            if (random.nextInt(10) == 0) {
                                cancelledByTest[id] = true;
                                results[i].cancel(false);
                            }
                        }
                    });
                    submitters[t].start();
                }
                start.countDown();
                for (Thread t : submitters) {
                    t.join();
                }
                CompletableFuture<Integer> last = gate.within(Task.value(-1)).toCompletableFuture(); // arrives after all
                assertEquals(-1, last.join(), "the last submission did not run");
                int completedWithValue = 0;
                for (int i = 0; i < results.length; i++) {
                    Integer v = results[i].handle((value, error) -> error == null ? value : null).join();
                    if (v != null) {
                        completedWithValue++;
                        assertTrue(ran[i].get(), "ended with a value without running: " + i);
                    } else if (!cancelling && !cancelledByTest[i]) {
                        assertFalse(ran[i].get(), "superseded after running: " + i);
                    }
                }
                assertNull(broken.get());
                assertTrue(completedWithValue >= 1, "nothing ran");
                assertEquals(0, inside.get());
                gate.closeAndCheck();
            }
        }
    }

    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "not complete: the test would wait for ever");
        return f.join();
    }
}
