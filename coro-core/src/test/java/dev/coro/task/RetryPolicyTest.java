package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/** Issue 14, item 4: {@link RetryPolicy}'s messages, jitter, random source and listener. */
class RetryPolicyTest {
    private static final Duration MS_100 = Duration.ofMillis(100);

    /** A random source that returns the given draws in turn (then the last one again). */
    private static RandomGenerator draws(double... values) {
        AtomicInteger next = new AtomicInteger();
        return new RandomGenerator() {
            @Override
            public long nextLong() {
                throw new AssertionError("the policy draws doubles");
            }

            @Override
            public double nextDouble() {
                return values[Math.min(next.getAndIncrement(), values.length - 1)];
            }
        };
    }

    /**
     * A scheduler that runs work inline and records every timer's delay; {@code fire}: run timers at
     * once (the delay "passes"), else hold them until cancelled.
     */
    private static final class RecordingScheduler implements Scheduler {
        final List<Duration> delays = new ArrayList<>();
        final List<String> timerEvents = new ArrayList<>();
        final boolean fire;

        RecordingScheduler(boolean fire) {
            this.fire = fire;
        }

        @Override
        public void execute(Runnable task) {
            Scheduler.inline().execute(task);
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            delays.add(delay);
            if (fire) {
                task.run();
                return () -> false;
            }
            return () -> {
                timerEvents.add("cancelled " + delay);
                return true;
            };
        }

        @Override
        public long nanoTime() {
            return 0;
        }

        @Override
        public boolean isCurrent() {
            return true;
        }
    }

    private record Event(int attempt, String error, Duration delay) {}

    /** Fails with "attempt N" for its first {@code failures} runs, then returns "done". */
    private static Task<String> failingTimes(int failures, AtomicInteger runs) {
        return Task.fromCallable(() -> {
            int n = runs.incrementAndGet();
            if (n <= failures) {
                throw new IllegalStateException("attempt " + n);
            }
            return "done";
        });
    }

    @Test
    void fixedNamesItsOwnArgumentsInItsMessages() {
        assertEquals("delay must not be negative, was PT-0.001S", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.fixed(3, Duration.ofMillis(-1))).getMessage());
        assertEquals("delay", assertThrows(NullPointerException.class, () -> RetryPolicy.fixed(3, null)).getMessage());
        assertEquals("maxAttempts must be >= 1, was 0", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.fixed(0, MS_100)).getMessage());
        assertEquals("initialDelay must not be negative, was PT-0.001S", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.exponential(3, Duration.ofMillis(-1), MS_100)).getMessage());
        assertEquals("maxDelay must be >= initialDelay (PT0.1S), was PT0.05S", assertThrows(IllegalArgumentException.class,
                () -> RetryPolicy.exponential(3, MS_100, Duration.ofMillis(50))).getMessage());
        assertEquals("initialDelay", assertThrows(NullPointerException.class,
                () -> RetryPolicy.exponential(3, null, MS_100)).getMessage());
        assertEquals("maxDelay", assertThrows(NullPointerException.class,
                () -> RetryPolicy.exponential(3, MS_100, null)).getMessage());
        assertEquals(MS_100, RetryPolicy.fixed(3, MS_100).delayBefore(5));
    }

    @Test
    void withoutJitterTheDelayIsTheBackoff() {
        RetryPolicy p = RetryPolicy.exponential(6, Duration.ofMillis(10), Duration.ofMillis(25));
        assertEquals(RetryPolicy.Jitter.NONE, p.jitter());
        assertEquals(List.of(Duration.ofMillis(10), Duration.ofMillis(20), Duration.ofMillis(25), Duration.ofMillis(25)),
                List.of(p.delayBefore(2), p.delayBefore(3), p.delayBefore(4), p.delayBefore(5)));
        assertEquals(p.backoff(3), p.delayBefore(3));
    }

    @Test
    void fullJitterIsTheBackoffTimesTheDraw() {
        RetryPolicy p = RetryPolicy.exponential(5, MS_100, Duration.ofSeconds(1))
                .withJitter(RetryPolicy.Jitter.FULL, draws(0.0, 0.5, 0.25, Math.nextDown(1.0)));
        assertEquals(Duration.ZERO, p.delayBefore(2), "random(0, d) may be 0");
        assertEquals(Duration.ofMillis(50), p.delayBefore(2));
        assertEquals(Duration.ofMillis(50), p.delayBefore(3), "a quarter of the 200 ms backoff");
        Duration top = p.delayBefore(2);
        assertTrue(top.compareTo(MS_100) < 0 && top.compareTo(Duration.ofMillis(99)) > 0, top.toString());
    }

    @Test
    void equalJitterIsHalfTheBackoffPlusAJitteredHalf() {
        RetryPolicy p = RetryPolicy.exponential(5, MS_100, Duration.ofSeconds(1))
                .withJitter(RetryPolicy.Jitter.EQUAL, draws(0.0, 0.5, 0.5, Math.nextDown(1.0)));
        assertEquals(Duration.ofMillis(50), p.delayBefore(2), "never below d/2");
        assertEquals(Duration.ofMillis(75), p.delayBefore(2));
        assertEquals(Duration.ofMillis(150), p.delayBefore(3), "100 + 50 of the 200 ms backoff");
        assertTrue(p.delayBefore(2).compareTo(MS_100) < 0);
    }

    @Test
    void jitteredDelaysStayWithinTheirBoundsForAnyDraw() {
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        RetryPolicy base = RetryPolicy.exponential(40, Duration.ofNanos(3), Duration.ofDays(365));
        RetryPolicy full = base.withJitter(RetryPolicy.Jitter.FULL, random);
        RetryPolicy equal = base.withJitter(RetryPolicy.Jitter.EQUAL, random);
        for (int i = 0; i < 20_000; i++) {
            int attempt = 2 + i % 39;
            long d = base.backoff(attempt).toNanos();
            long f = full.delayBefore(attempt).toNanos();
            long e = equal.delayBefore(attempt).toNanos();
            String where = "seed " + seed + ", attempt " + attempt + ", backoff " + d;
            assertTrue(f >= 0 && f <= d, where + ", full " + f);
            assertTrue(e >= d / 2 && e <= d, where + ", equal " + e);
        }
        assertEquals(Duration.ZERO, RetryPolicy.fixed(3, Duration.ZERO)
                .withJitter(RetryPolicy.Jitter.FULL, draws(Double.NaN)).delayBefore(2), "a zero backoff draws nothing");
    }

    @Test
    void theDefaultRandomSourceAlsoStaysInBounds() {
        RetryPolicy full = RetryPolicy.fixed(3, MS_100).withJitter(RetryPolicy.Jitter.FULL);
        RetryPolicy equal = RetryPolicy.fixed(3, MS_100).withJitter(RetryPolicy.Jitter.EQUAL);
        for (int i = 0; i < 1_000; i++) {
            assertTrue(full.delayBefore(2).compareTo(MS_100) <= 0);
            Duration e = equal.delayBefore(2);
            assertTrue(e.compareTo(Duration.ofMillis(50)) >= 0 && e.compareTo(MS_100) <= 0, e.toString());
        }
        assertEquals(MS_100, full.withJitter(RetryPolicy.Jitter.NONE).delayBefore(2), "NONE removes jitter");
    }

    @Test
    void aRandomSourceOutOfRangeIsReported() {
        for (double bad : new double[] {1.0, -0.1, Double.NaN, 7}) {
            RetryPolicy p = RetryPolicy.fixed(3, MS_100).withJitter(RetryPolicy.Jitter.FULL, draws(bad));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.delayBefore(2));
            assertEquals("the random source must return a number in [0, 1), returned " + bad, e.getMessage());
        }
    }

    @Test
    void retryTellsTheListenerEachRetryAndWaitsExactlyTheDelayChosen() {
        List<Event> events = new ArrayList<>();
        RetryPolicy policy = RetryPolicy.exponential(5, MS_100, Duration.ofSeconds(1))
                .withJitter(RetryPolicy.Jitter.FULL, draws(0.5, 0.25))
                .withListener((attempt, error, delay) -> events.add(new Event(attempt, error.getMessage(), delay)));
        AtomicInteger runs = new AtomicInteger();
        RecordingScheduler scheduler = new RecordingScheduler(true);
        assertEquals("done", failingTimes(2, runs).retry(policy).startOn(scheduler).join());
        assertEquals(List.of(new Event(2, "attempt 1", Duration.ofMillis(50)), new Event(3, "attempt 2", Duration.ofMillis(50))),
                events);
        assertEquals(List.of(Duration.ofMillis(50), Duration.ofMillis(50)), scheduler.delays,
                "the retry waits the delay the listener was told");
        assertEquals(3, runs.get());
    }

    @Test
    void theListenerIsNotToldOfTheFirstRunOfGivingUpOrOfErrorsNotRetried() {
        List<Event> events = new ArrayList<>();
        RetryPolicy policy = RetryPolicy.fixed(3, Duration.ZERO)
                .withListener((attempt, error, delay) -> events.add(new Event(attempt, error.getMessage(), delay)));
        AtomicInteger runs = new AtomicInteger();
        IllegalStateException last = assertThrows(IllegalStateException.class,
                () -> failingTimes(10, runs).retry(policy).join());
        assertEquals("attempt 3", last.getMessage());
        assertEquals(List.of(new Event(2, "attempt 1", Duration.ZERO), new Event(3, "attempt 2", Duration.ZERO)), events);
        events.clear();
        AtomicInteger once = new AtomicInteger();
        assertThrows(IllegalStateException.class,
                () -> failingTimes(10, once).retry(policy.retryOn(e -> false)).join());
        assertEquals(List.of(), events);
        assertEquals(1, once.get());
        assertEquals("done", Task.value("done").retry(policy).join());
        assertEquals(List.of(), events, "a first run that succeeds tells nothing");
    }

    @Test
    void aThrowingListenerEndsTheRetryingWithItsErrorAndTheRunsErrorSuppressed() {
        IllegalArgumentException fromListener = new IllegalArgumentException("listener");
        RetryPolicy policy = RetryPolicy.fixed(5, Duration.ZERO).withListener((a, e, d) -> {
            throw fromListener;
        });
        AtomicInteger runs = new AtomicInteger();
        IllegalArgumentException thrown = assertThrows(IllegalArgumentException.class,
                () -> failingTimes(10, runs).retry(policy).join());
        assertSame(fromListener, thrown);
        assertEquals("attempt 1", thrown.getSuppressed()[0].getMessage());
        assertEquals(1, runs.get(), "no retry after the listener threw");
    }

    @Test
    void aBadRandomSourceFailsTheRetriedTaskWithTheRunsErrorSuppressed() {
        RetryPolicy policy = RetryPolicy.fixed(5, MS_100).withJitter(RetryPolicy.Jitter.EQUAL, draws(2.0));
        AtomicInteger runs = new AtomicInteger();
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> failingTimes(10, runs).retry(policy).join());
        assertTrue(thrown.getMessage().startsWith("the random source"), thrown.getMessage());
        assertEquals("attempt 1", thrown.getSuppressed()[0].getMessage());
        assertEquals(1, runs.get());
    }

    @Test
    void cancellingARunWaitingForItsRetryDelayEndsItCancelledWithoutAnotherAttempt() {
        List<Event> events = new ArrayList<>();
        RetryPolicy policy = RetryPolicy.fixed(5, MS_100)
                .withListener((attempt, error, delay) -> events.add(new Event(attempt, error.getMessage(), delay)));
        AtomicInteger runs = new AtomicInteger();
        RecordingScheduler scheduler = new RecordingScheduler(false); // holds the delay's timer
        TaskHandle<String> handle = failingTimes(10, runs).retry(policy).start(scheduler);
        assertFalse(handle.isDone(), "waiting for the retry delay");
        assertEquals(List.of(MS_100), scheduler.delays);
        assertTrue(handle.cancel());
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
        assertEquals(List.of("cancelled " + MS_100), scheduler.timerEvents, "the delay's timer was cancelled");
        assertEquals(1, runs.get(), "cancellation is never retried");
        assertEquals(1, events.size());
    }

    @Test
    void badInputIsRejectedByName() {
        RetryPolicy p = RetryPolicy.fixed(3, MS_100);
        assertEquals("jitter", assertThrows(NullPointerException.class, () -> p.withJitter(null)).getMessage());
        assertEquals("jitter", assertThrows(NullPointerException.class,
                () -> p.withJitter(null, new SplittableRandom())).getMessage());
        assertEquals("random", assertThrows(NullPointerException.class,
                () -> p.withJitter(RetryPolicy.Jitter.FULL, null)).getMessage());
        assertEquals("listener", assertThrows(NullPointerException.class, () -> p.withListener(null)).getMessage());
        assertEquals("predicate", assertThrows(NullPointerException.class, () -> p.retryOn(null)).getMessage());
        assertEquals("attempt must be >= 2, was 1",
                assertThrows(IllegalArgumentException.class, () -> p.delayBefore(1)).getMessage());
        assertEquals("attempt must be >= 2, was 1",
                assertThrows(IllegalArgumentException.class, () -> p.backoff(1)).getMessage());
        assertEquals("policy", assertThrows(NullPointerException.class, () -> Task.value(1).retry(null)).getMessage());
    }
}
