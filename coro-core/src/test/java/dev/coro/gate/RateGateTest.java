package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** RateGate on virtual time: exact spacing, bursts, weights without paying forward, cancellation, fail-fast deadlines. */
class RateGateTest {
    private static final long MS = 1_000_000;
    private final ManualScheduler clock = new ManualScheduler();

    private CompletableFuture<Long> admittedAt(Task<Void> enter) {
        return enter.map(ignored -> clock.nanoTime()).toCompletableFuture();
    }

    /**
     * The gate's timer fires 3 ms late for the second waiter: it is admitted then, and the waiters
     * behind it keep their own times (20 ms, 30 ms), instead of every later admission moving back by
     * the lateness. A throttle, whose starts are never closer than the interval, moves back instead.
     */
    @Test
    void aLateTimerDoesNotPushTheBacklogBack() {
        RateGate gate = new RateGate(100, 1, clock); // one every 10 ms
        List<CompletableFuture<Long>> admitted = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            admitted.add(gate.within(Task.fromCallable(clock::nanoTime)).toCompletableFuture());
        }
        clock.advance(13 * MS); // the timer for 10 ms runs at 13 ms
        assertEquals(13 * MS, done(admitted.get(1)));
        clock.advance(7 * MS);
        assertEquals(20 * MS, done(admitted.get(2)), "the lateness moved the backlog back");
        clock.advance(10 * MS);
        assertEquals(30 * MS, done(admitted.get(3)));

        ManualScheduler throttleClock = new ManualScheduler();
        ThrottleGate throttle = new ThrottleGate(Duration.ofMillis(10), throttleClock);
        List<CompletableFuture<Long>> started = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            started.add(throttle.within(Task.fromCallable(throttleClock::nanoTime)).toCompletableFuture());
        }
        throttleClock.advance(13 * MS);
        assertEquals(13 * MS, done(started.get(1)));
        throttleClock.advance(7 * MS);
        assertFalse(started.get(2).isDone(), "a throttle started closer than its interval");
        throttleClock.advance(3 * MS);
        assertEquals(23 * MS, done(started.get(2)));
    }

    /**
     * The gate's timer (or the whole JVM: a GC pause, a descheduled thread) stalls past several
     * slots: when it fires at 35 ms, the waiters whose slots (10, 20, 30 ms) have passed are admitted
     * at once, and the ones behind keep theirs (40, 50 ms). A throttle starts one then and spaces the
     * rest an interval apart from it.
     */
    @Test
    void aStallPastSeveralSlotsIsCaughtUpAndTheRestKeepTheirSlots() {
        RateGate gate = new RateGate(100, 1, clock); // one every 10 ms
        List<CompletableFuture<Long>> admitted = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            admitted.add(gate.within(Task.fromCallable(clock::nanoTime)).toCompletableFuture());
        }
        clock.advance(35 * MS);
        for (int k = 1; k <= 3; k++) {
            assertEquals(35 * MS, done(admitted.get(k)), "slot " + k + " passed during the stall");
        }
        assertFalse(admitted.get(4).isDone(), "admitted before its slot");
        clock.advance(5 * MS);
        assertEquals(40 * MS, done(admitted.get(4)));
        clock.advance(10 * MS);
        assertEquals(50 * MS, done(admitted.get(5)));

        ManualScheduler throttleClock = new ManualScheduler();
        ThrottleGate throttle = new ThrottleGate(Duration.ofMillis(10), throttleClock);
        List<CompletableFuture<Long>> started = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            started.add(throttle.within(Task.fromCallable(throttleClock::nanoTime)).toCompletableFuture());
        }
        throttleClock.advance(35 * MS);
        assertEquals(35 * MS, done(started.get(1)));
        assertFalse(started.get(2).isDone(), "a throttle started closer than its interval");
        throttleClock.advance(10 * MS);
        assertEquals(45 * MS, done(started.get(2)));
    }

    /**
     * A gate on a pool's clock whose only worker is busy: the gate's timer still admits the waiter
     * (here one that runs on no pool, so it runs where it is admitted), because the gate's timer only
     * posts a request and runs on the timer thread, not queued behind the pool's work. The pool is
     * busy until the waiter has been admitted; the bounded get only turns a hang into a failure.
     */
    @Test
    void aBusyPoolDoesNotDelayTheGatesTimer() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            CountDownLatch admitted = new CountDownLatch(1);
            pool.execute(() -> {
                try {
                    admitted.await(); // the pool's only worker is busy until the waiter is admitted
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            RateGate gate = new RateGate(2, 1, pool); // one every 500 ms, on the pool's clock and timers
            assertInstanceOf(Outcome.Value.class, gate.tryAcquire().outcome().toCompletableFuture().getNow(null));
            CompletableFuture<Void> waiter = gate.within(Task.fromRunnable(admitted::countDown)).toCompletableFuture();
            try {
                waiter.get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                admitted.countDown();
                throw new AssertionError("the gate's timer waited behind the busy pool's queue", e);
            }
        }
    }

    /**
     * A request for 5 waits for its tokens; at 20 ms two are there, but a try for one is refused
     * and a request for one queues behind it (no barging); once the line has drained and the bucket
     * is full again, arrivals enter at once again (no waiter stays registered).
     */
    @Test
    void aSmallRequestDoesNotOvertakeALargeOneThatWaits() {
        RateGate gate = new RateGate(100, 5, clock); // one every 10 ms, bursts of 5
        assertTrue(admittedAt(gate.acquire(5).map(a -> null).then(Task.value(null))).isDone());
        CompletableFuture<Long> large = admittedAt(gate.within(5, Task.value(null)));
        clock.advance(20 * MS);
        assertFalse(large.isDone(), "admitted before its tokens were there");
        assertFalse(gate.tryAcquire().outcome().toCompletableFuture().getNow(null) instanceof Outcome.Value,
                "a try took a token while a request waited for it");
        CompletableFuture<Long> small = admittedAt(gate.within(Task.value(null)));
        clock.advance(30 * MS);
        assertEquals(50 * MS, done(large));
        assertFalse(small.isDone(), "the small request was admitted with the large one's tokens");
        clock.advance(10 * MS);
        assertEquals(60 * MS, done(small));
        clock.advance(50 * MS); // full again
        for (int i = 0; i < 5; i++) {
            assertInstanceOf(Outcome.Value.class, gate.tryAcquire().outcome().toCompletableFuture().getNow(null),
                    "nobody waits and the bucket is full, but a try was refused");
        }
    }

    /**
     * The rule's undo (the admitted waiter had departed, its admit CAS lost): the tokens go back, so
     * the next arrival takes them at once.
     */
    @Test
    void anUndoneAdmissionGivesItsTokensBack() {
        TokenBucket bucket = new TokenBucket("RateGate", 10 * MS, 1, Long.MAX_VALUE, true, new SchedulerClock(clock));
        Long one = 1L;
        bucket.runOwned(() -> {
            assertTrue(bucket.ruleTryEnter(one));
            bucket.ruleUndo(one);
        });
        assertTrue(bucket.tryEnterNow(one), "the undone admission kept its token");
        assertFalse(bucket.tryEnterNow(one), "a token twice");
    }

    @Test
    void aThousandAcquisitionsAtAHundredPerSecondTakeTenSeconds() {
        RateGate gate = new RateGate(100, 1, clock);
        List<CompletableFuture<Long>> runs = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            runs.add(admittedAt(gate.within(Task.value(null))));
        }
        for (int k = 1; k < 1000; k++) {
            assertTrue(clock.pending() <= 1, "more than one timer for the gate");
            assertFalse(runs.get(k).isDone(), "admitted before its slot: " + k);
            clock.advance(10 * MS);
        }
        for (int k = 0; k < 1000; k++) {
            assertEquals(k * 10 * MS, done(runs.get(k)), "acquisition " + k);
        }
        assertEquals(9_990 * MS, clock.nanoTime(), "the 1,000th admitted at 9.99 s: 1,000 slots in 10 s");
        assertEquals(0, clock.pending(), "a timer outlived the last waiter");
    }

    /** After idling, a burst of 10 is admitted at once, and never more; then one per interval. */
    @Test
    void aBurstIsAdmittedAtOnceAfterIdlingAndNeverMore() {
        RateGate gate = new RateGate(100, 10, clock);
        for (int round = 0; round < 2; round++) {
            List<CompletableFuture<Long>> runs = new ArrayList<>();
            long start = clock.nanoTime();
            for (int i = 0; i < 15; i++) {
                runs.add(admittedAt(gate.within(Task.value(null))));
            }
            assertEquals(10, runs.stream().filter(CompletableFuture::isDone).count(), "round " + round + ": the burst");
            for (int k = 1; k <= 5; k++) {
                clock.advance(10 * MS);
                assertEquals(10 + k, runs.stream().filter(CompletableFuture::isDone).count(), "one per interval after the burst");
                assertEquals(start + k * 10 * MS, done(runs.get(9 + k)));
            }
            clock.advance(1_000 * MS); // idle: the bucket fills up again, to 10 and no further
        }
    }

    /** A request for 5 waits for its 5 tokens; the request behind it waits for its own, not for a debt. */
    @Test
    void aLargeRequestWaitsForItsTokensAndTheNextCallerDoesNotPayForIt() {
        RateGate gate = new RateGate(100, 5, clock);
        assertTrue(admittedAt(gate.within(5, Task.value(null))).isDone(), "a full bucket admits 5 at once");
        CompletableFuture<Long> five = admittedAt(gate.within(5, Task.value(null)));
        CompletableFuture<Long> one = admittedAt(gate.within(Task.value(null)));
        for (int i = 0; i < 6; i++) {
            clock.advance(10 * MS);
        }
        assertEquals(50 * MS, done(five), "5 tokens take 50 ms to come");
        assertEquals(60 * MS, done(one), "the next caller's token is the next one after them");
    }

    /** A cancelled waiter takes no token: the waiter behind it gets the first one. */
    @Test
    void aCancelledWaiterTakesNoToken() {
        RateGate gate = new RateGate(100, 1, clock);
        assertTrue(admittedAt(gate.within(Task.value(null))).isDone());
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Void> cancelled = gate.within(Task.fromRunnable(ran::incrementAndGet)).toCompletableFuture();
        CompletableFuture<Long> behind = admittedAt(gate.within(Task.value(null)));
        cancelled.cancel(false);
        clock.advance(10 * MS);
        assertEquals(10 * MS, done(behind), "the cancelled waiter's token was spent");
        assertEquals(0, ran.get(), "a cancelled waiter ran");
    }

    /** A request whose turn comes after its deadline fails at once; one that can make it is admitted on its turn. */
    @Test
    void aRequestThatCannotMakeItsDeadlineFailsAtOnce() {
        RateGate gate = new RateGate(100, 1, clock);
        assertTrue(admittedAt(gate.within(Task.value(null))).isDone());
        for (int i = 0; i < 5; i++) {
            gate.within(Task.value(null)).toCompletableFuture(); // turns at 10..50 ms
        }
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Outcome<Void>> hopeless = gate.within(Duration.ofMillis(59), Task.fromRunnable(ran::incrementAndGet))
                .outcome().toCompletableFuture();
        assertTrue(hopeless.isDone(), "a request whose turn (60 ms) is after its deadline (59 ms) waited");
        Outcome.Failure<?> f = assertInstanceOf(Outcome.Failure.class, done(hopeless));
        TimeoutException e = assertInstanceOf(TimeoutException.class, f.error());
        assertTrue(e.getMessage().contains("by the schedule its turn comes 1000000 ns after it"), e.getMessage());
        CompletableFuture<Outcome<Void>> onItsDeadline = gate.within(Duration.ofMillis(60), Task.fromRunnable(ran::incrementAndGet))
                .outcome().toCompletableFuture();
        assertTrue(onItsDeadline.isDone(), "a request whose turn is its deadline waited: admission must come before it");
        assertInstanceOf(TimeoutException.class, ((Outcome.Failure<?>) done(onItsDeadline)).error());
        CompletableFuture<Long> inTime = admittedAt(gate.acquire(1).map(a -> null).then(Task.value(null)));
        CompletableFuture<Long> justInTime = admittedAt(gate.within(Duration.ofMillis(71), Task.value(null)));
        for (int i = 0; i < 7; i++) {
            clock.advance(10 * MS);
        }
        assertEquals(60 * MS, done(inTime), "the hopeless request kept a token");
        assertEquals(70 * MS, done(justInTime), "admitted on its turn, 1 ms before its deadline");
        assertEquals(0, ran.get());
    }

    /**
     * Its turn (10 ms) is before its deadline (10 ms + 1 ns), but the gate's timer runs late, at
     * 14 ms: the waiter fails with a timeout then, and is not admitted after its deadline.
     */
    @Test
    void aWaiterIsNeverAdmittedAfterItsDeadline() {
        RateGate gate = new RateGate(100, 1, clock);
        assertTrue(admittedAt(gate.within(Task.value(null))).isDone());
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Outcome<Void>> w = gate.within(Duration.ofNanos(10 * MS + 1), Task.fromRunnable(ran::incrementAndGet))
                .outcome().toCompletableFuture();
        clock.advance(9 * MS);
        assertFalse(w.isDone(), "failed before its deadline");
        clock.advance(5 * MS);
        Outcome.Failure<?> f = assertInstanceOf(Outcome.Failure.class, done(w), "admitted after its deadline");
        assertInstanceOf(TimeoutException.class, f.error());
        assertEquals(0, ran.get());
        CompletableFuture<Long> next = admittedAt(gate.within(Task.value(null)));
        assertEquals(14 * MS, done(next), "the timed-out waiter took the token");
    }

    @Test
    void tryAdmitsOnlyWhenATokenIsThereAndNobodyWaits() {
        RateGate gate = new RateGate(100, 2, clock);
        AtomicInteger ran = new AtomicInteger();
        assertInstanceOf(Outcome.Value.class, gate.tryWithin(Task.fromRunnable(ran::incrementAndGet)).outcome().toCompletableFuture().getNow(null));
        assertInstanceOf(Outcome.Value.class, gate.tryAcquire().outcome().toCompletableFuture().getNow(null));
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(Task.fromRunnable(ran::incrementAndGet)).outcome().toCompletableFuture().getNow(null));
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(2, Task.fromRunnable(ran::incrementAndGet)).outcome().toCompletableFuture().getNow(null));
        assertEquals(1, ran.get());
        clock.advance(10 * MS);
        assertInstanceOf(Outcome.Value.class, gate.tryWithin(Task.fromRunnable(ran::incrementAndGet)).outcome().toCompletableFuture().getNow(null));
        assertEquals(2, ran.get());
    }

    @Test
    void closeCancelsWaitersAndLaterRequests() {
        RateGate gate = new RateGate(100, 1, clock);
        assertTrue(admittedAt(gate.within(Task.value(null))).isDone());
        CompletableFuture<Outcome<Void>> waiting = gate.within(Task.<Void>value(null)).outcome().toCompletableFuture();
        gate.close();
        assertInstanceOf(Outcome.Cancelled.class, done(waiting));
        assertInstanceOf(Outcome.Cancelled.class, gate.within(Task.value(null)).outcome().toCompletableFuture().getNow(null));
        assertEquals(0, clock.pending(), "close left the timer armed");
        gate.closeAndCheck(); // a rate spends its tokens: nothing is held
        assertTrue(gate.isClosed());
    }

    @Test
    void badInputIsRefusedWithTheArgumentsName() {
        assertMessage("permitsPerSecond", assertThrows(IllegalArgumentException.class, () -> new RateGate(0)));
        assertMessage("permitsPerSecond", assertThrows(IllegalArgumentException.class, () -> new RateGate(-1)));
        assertMessage("permitsPerSecond", assertThrows(IllegalArgumentException.class, () -> new RateGate(Double.NaN)));
        assertMessage("permitsPerSecond", assertThrows(IllegalArgumentException.class, () -> new RateGate(2e9)));
        assertMessage("burst", assertThrows(IllegalArgumentException.class, () -> new RateGate(10, 0)));
        assertMessage("permits", assertThrows(IllegalArgumentException.class, () -> new RateGate(0, Duration.ofSeconds(1), 1, clock)));
        assertMessage("period", assertThrows(IllegalArgumentException.class, () -> new RateGate(1, Duration.ZERO, 1, clock)));
        assertMessage("nanosecond", assertThrows(IllegalArgumentException.class, () -> new RateGate(10, Duration.ofNanos(1), 1, clock)));
        assertMessage("clock", assertThrows(NullPointerException.class, () -> new RateGate(10, 1, null)));
        RateGate gate = new RateGate(10, 3, clock);
        assertMessage("permits", assertThrows(IllegalArgumentException.class, () -> gate.within(4, Task.value(null))));
        assertMessage("permits", assertThrows(IllegalArgumentException.class, () -> gate.within(0, Task.value(null))));
        assertMessage("permits", assertThrows(IllegalArgumentException.class, () -> gate.acquire(4)));
        assertMessage("work", assertThrows(NullPointerException.class, () -> gate.within(null)));
        assertMessage("timeout", assertThrows(NullPointerException.class, () -> gate.within((Duration) null, Task.value(null))));
        assertEquals(100_000_000, gate.intervalNanos());
        assertEquals(3, gate.burst());
        assertEquals(333_333_333, new RateGate(3, Duration.ofSeconds(1), 1, clock).intervalNanos());
    }

    private static void assertMessage(String part, Throwable e) {
        assertTrue(e.getMessage() != null && e.getMessage().contains(part), "message lacks '" + part + "': " + e.getMessage());
    }

    /** The future's value; it must be complete (work runs inline on virtual time), never waited for. */
    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "not complete: the test would wait for ever");
        return f.join();
    }
}
