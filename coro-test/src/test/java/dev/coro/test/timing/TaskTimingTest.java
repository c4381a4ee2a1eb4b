package dev.coro.test.timing;

import dev.coro.task.Promise;
import dev.coro.task.RetryPolicy;
import dev.coro.task.Task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.test.VirtualTimeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Everything that waits for time, on virtual time: exact instants, no sleeps, no wall clock. */
class TaskTimingTest {
    private final VirtualTimeScheduler vt = new VirtualTimeScheduler();

    private <T> CompletableFuture<T> start(Task<T> task) {
        CompletableFuture<T> f = task.startOn(vt).toCompletableFuture();
        vt.runUntilIdle();
        return f;
    }

    private long millis() {
        return Duration.ofNanos(vt.nanoTime()).toMillis();
    }

    @Test
    void delayCompletesExactlyAtItsDeadlineNeverEarly() {
        CompletableFuture<Long> at = start(Task.delay(Duration.ofMillis(100)).map(v -> millis()));
        vt.advanceBy(Duration.ofMillis(99));
        assertFalse(at.isDone(), "not early");
        vt.advanceBy(Duration.ofMillis(1));
        assertEquals(100L, at.join());
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void aCancelledDelayLeavesNoTimerBehind() {
        CompletableFuture<Void> f = start(Task.delay(Duration.ofHours(1)));
        assertEquals(1, vt.pendingTimers());
        f.cancel(false);
        vt.runUntilIdle();
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void timeoutFailsWithTimeoutExceptionAndCancelsTheWork() {
        AtomicInteger cleaned = new AtomicInteger();
        CompletableFuture<Object> f = start(Task.never().andFinally(cleaned::incrementAndGet)
                .timeout(Duration.ofMillis(50)));
        vt.advanceBy(Duration.ofMillis(49));
        assertFalse(f.isDone());
        vt.advanceBy(Duration.ofMillis(1));
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
        assertInstanceOf(TimeoutException.class, e.getCause());
        assertEquals(1, cleaned.get(), "the timed-out work was cancelled and finished first");
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void workThatFinishesInTimeKeepsItsValueAndCancelsTheTimer() {
        CompletableFuture<String> f = start(Task.delay(Duration.ofMillis(10)).then(Task.value("ok"))
                .timeout(Duration.ofSeconds(1)));
        vt.advanceBy(Duration.ofMillis(10));
        assertEquals("ok", f.join());
        assertEquals(0, vt.pendingTimers(), "the timeout's timer was cancelled");
    }

    @Test
    void retryWaitsItsBackoffOnTheSchedulersClock() {
        List<Long> attempts = new ArrayList<>();
        RuntimeException failure = new RuntimeException("flaky");
        Task<String> flaky = Task.fromCallable(() -> {
            attempts.add(millis());
            if (attempts.size() < 4) {
                throw failure;
            }
            return "done";
        });
        CompletableFuture<String> f = start(flaky.retry(
                RetryPolicy.exponential(5, Duration.ofMillis(10), Duration.ofMillis(25))));
        vt.advanceBy(Duration.ofSeconds(1));
        assertEquals("done", f.join());
        assertEquals(List.of(0L, 10L, 30L, 55L), attempts, "delays 10, 20, then capped at 25");
    }

    @Test
    void retryGivesUpWithTheLastErrorAndEarlierOnesSuppressed() throws Exception {
        AtomicInteger n = new AtomicInteger();
        Task<String> failing = Task.fromCallable(() -> {
            throw new IllegalStateException("attempt " + n.incrementAndGet());
        });
        CompletableFuture<String> f = start(failing.retry(RetryPolicy.fixed(3, Duration.ofMillis(5))));
        vt.advanceBy(Duration.ofMillis(100));
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get);
        assertEquals("attempt 3", e.getCause().getMessage());
        assertEquals(1, e.getCause().getSuppressed().length);
        assertEquals(3, n.get());
        CompletableFuture<String> notRetried = start(failing.retry(RetryPolicy.fixed(3, Duration.ofMillis(5))
                .retryOn(err -> false)));
        assertTrue(notRetried.isCompletedExceptionally());
        assertEquals(4, n.get(), "a non-retryable error is not retried");
    }

    @Test
    void whenAnyTakesTheEarliestAndCancelsTheTimersOfTheRest() {
        CompletableFuture<String> f = start(Task.whenAny(List.of(
                Task.delay(Duration.ofMillis(30)).then(Task.value("slow")),
                Task.delay(Duration.ofMillis(10)).then(Task.value("fast")))));
        vt.advanceBy(Duration.ofMillis(10));
        assertEquals("fast", f.join());
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void whenAllRunsChildrenConcurrently() {
        CompletableFuture<Long> f = start(Task.whenAll(List.of(
                Task.delay(Duration.ofMillis(30)), Task.delay(Duration.ofMillis(20)))).map(v -> millis()));
        vt.advanceBy(Duration.ofMillis(30));
        assertEquals(30L, f.join(), "30 ms, not 50: the children overlapped");
    }

    @Test
    void aWaitingTaskResumesOnItsOwnScheduler() throws Exception {
        Promise<String> p = new Promise<>();
        CompletableFuture<Boolean> f = start(p.task().map(v -> vt.isCurrent()));
        Thread other = Thread.ofPlatform().start(() -> p.complete("x")); // completed from another thread
        other.join();
        assertFalse(f.isDone(), "the continuation was handed to the virtual-time scheduler, not run on the completer");
        vt.runUntilIdle();
        assertTrue(f.join());
    }

    @Test
    void resumeOnMovesTheContinuationAndStartOnReturnsToTheCaller() {
        VirtualTimeScheduler other = new VirtualTimeScheduler();
        List<String> where = new ArrayList<>();
        Task<Void> mark = Task.fromRunnable(() -> where.add(vt.isCurrent() ? "vt" : other.isCurrent() ? "other" : "?"));
        CompletableFuture<Void> f = start(mark.then(mark.startOn(other)).then(mark)
                .then(Task.value(null).resumeOn(other)).then(mark));
        other.runUntilIdle();
        vt.runUntilIdle();
        other.runUntilIdle();
        vt.runUntilIdle();
        f.join();
        assertEquals(List.of("vt", "other", "vt", "other"), where);
    }

    @Test
    void delayOfZeroOrLessCompletesAtOnce() {
        assertTrue(start(Task.delay(Duration.ZERO)).isDone());
        assertTrue(start(Task.delay(Duration.ofMillis(-5))).isDone());
        assertEquals(0, vt.pendingTimers());
    }

    @Test
    void timeoutOfAFailingTaskKeepsTheError() {
        RuntimeException e = new RuntimeException();
        CompletableFuture<Object> f = start(Task.failure(e).timeout(Duration.ofMillis(5)));
        assertSame(e, org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, f::get).getCause());
        assertEquals(0, vt.pendingTimers());
    }
}
