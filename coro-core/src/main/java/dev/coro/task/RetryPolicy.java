package dev.coro.task;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;

/**
 * When {@link Task#retry(RetryPolicy)} tries again: at most {@link #maxAttempts()} runs in all, only
 * for errors the policy accepts, with a delay before each retry that starts at an initial value and
 * grows by a factor up to a maximum (the <em>backoff</em>), optionally spread by random
 * {@linkplain Jitter jitter}, and reported to a {@linkplain Listener listener}. Immutable and
 * thread-safe; the {@code with...} methods return new policies.
 *
 * <p><b>Jitter</b> (as in the AWS Architecture Blog's "Exponential Backoff And Jitter"): with a
 * backoff {@code d} for the coming retry, {@link Jitter#FULL} waits {@code random(0, d)} and
 * {@link Jitter#EQUAL} waits {@code d/2 + random(0, d/2)}, so that clients failing together do not
 * retry together. The random source is {@link ThreadLocalRandom} unless one is given (a seeded one
 * makes the delays reproducible in tests).
 *
 * {@snippet :
 * RetryPolicy policy = RetryPolicy.exponential(5, Duration.ofMillis(10), Duration.ofSeconds(1))
 *         .retryOn(e -> e instanceof java.io.IOException)
 *         .withJitter(RetryPolicy.Jitter.FULL)
 *         .withListener((attempt, error, delay) ->
 *                 log.warn("attempt {} in {} after {}", attempt, delay, error.toString()));
 * Task<String> robust = fetch.retry(policy);
 * }
 */
public final class RetryPolicy {
    /**
     * How the delay before a retry is spread around its backoff {@code d} (the delay without jitter).
     * The random draw {@code u} is uniform in {@code [0, 1)}.
     */
    public enum Jitter {
        /** No jitter: the delay is the backoff {@code d}. */
        NONE,
        /** Full jitter: {@code random(0, d)}, that is {@code d * u}; spreads the most, waits least on average. */
        FULL,
        /** Equal jitter: {@code d/2 + random(0, d/2)}; never less than half the backoff. */
        EQUAL
    }

    /**
     * Told of each retry, before its delay starts: on the retried task's scheduler, in the run, once
     * per retry (never for the first run, nor when the policy gives up). A listener that throws ends
     * the retrying: the task fails with what it threw, the error it was told about added as
     * suppressed. Called by concurrent runs concurrently: must be thread-safe.
     *
     * {@snippet :
     * RetryPolicy.Listener log = (attempt, error, delay) ->
     *         System.err.println("retry " + attempt + " in " + delay + ": " + error);
     * }
     */
    @FunctionalInterface
    public interface Listener {
        /**
         * A retry is about to wait and then run.
         *
         * @param attempt the run about to start: 2 for the first retry
         * @param error the error of the run that just failed
         * @param delay the delay chosen (jitter applied), which the retry now waits
         */
        void onRetry(int attempt, Throwable error, Duration delay);
    }

    private final int maxAttempts;
    private final Duration initialDelay;
    private final Duration maxDelay;
    private final double multiplier;
    private final Predicate<? super Throwable> retryable;
    private final Jitter jitter;
    /** The random source of the jitter; null: {@link ThreadLocalRandom#current()} at each draw. */
    private final RandomGenerator random;
    /** Told of retries; null: none. */
    private final Listener listener;

    private RetryPolicy(int maxAttempts, Duration initialDelay, Duration maxDelay, double multiplier,
            Predicate<? super Throwable> retryable, Jitter jitter, RandomGenerator random, Listener listener) {
        this.maxAttempts = maxAttempts;
        this.initialDelay = initialDelay;
        this.maxDelay = maxDelay;
        this.multiplier = multiplier;
        this.retryable = retryable;
        this.jitter = jitter;
        this.random = random;
        this.listener = listener;
    }

    /**
     * A policy with the same delay before every retry.
     *
     * @param maxAttempts runs in all, at least 1
     * @param delay the delay before each retry, not negative
     * @return the policy (retries every error, no jitter, no listener)
     * @throws IllegalArgumentException if {@code maxAttempts < 1} or {@code delay} is negative (the
     *     message names the argument)
     * @throws NullPointerException if {@code delay} is null
     */
    public static RetryPolicy fixed(int maxAttempts, Duration delay) {
        Objects.requireNonNull(delay, "delay");
        checkAttempts(maxAttempts);
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must not be negative, was " + delay);
        }
        return new RetryPolicy(maxAttempts, delay, delay, 1.0, e -> true, Jitter.NONE, null, null);
    }

    /**
     * A policy whose delay doubles after each retry, up to {@code maxDelay}.
     *
     * @param maxAttempts runs in all, at least 1
     * @param initialDelay the delay before the first retry, not negative
     * @param maxDelay the largest delay, not less than {@code initialDelay}
     * @return the policy (retries every error, no jitter, no listener)
     * @throws IllegalArgumentException on a bad count or delay (the message names it)
     * @throws NullPointerException if a delay is null
     */
    public static RetryPolicy exponential(int maxAttempts, Duration initialDelay, Duration maxDelay) {
        Objects.requireNonNull(initialDelay, "initialDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        checkAttempts(maxAttempts);
        if (initialDelay.isNegative()) {
            throw new IllegalArgumentException("initialDelay must not be negative, was " + initialDelay);
        }
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException(
                    "maxDelay must be >= initialDelay (" + initialDelay + "), was " + maxDelay);
        }
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, 2.0, e -> true, Jitter.NONE, null, null);
    }

    private static void checkAttempts(int maxAttempts) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
    }

    /**
     * Returns a policy like this one that retries only errors {@code predicate} accepts.
     *
     * @param predicate which errors to retry
     * @return the new policy
     * @throws NullPointerException if {@code predicate} is null
     */
    public RetryPolicy retryOn(Predicate<? super Throwable> predicate) {
        Objects.requireNonNull(predicate, "predicate");
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, multiplier, predicate, jitter, random, listener);
    }

    /**
     * Returns a policy like this one whose delays are spread by {@code jitter}, drawn from
     * {@link ThreadLocalRandom}.
     *
     * @param jitter how to spread each delay; {@link Jitter#NONE} removes jitter
     * @return the new policy
     * @throws NullPointerException if {@code jitter} is null
     */
    public RetryPolicy withJitter(Jitter jitter) {
        Objects.requireNonNull(jitter, "jitter");
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, multiplier, retryable, jitter, null, listener);
    }

    /**
     * Returns a policy like this one whose delays are spread by {@code jitter}, drawn from
     * {@code random} ({@link RandomGenerator#nextDouble()}, once per retry). Concurrent runs draw
     * concurrently: give a thread-safe source, or a seeded one to a single run in a test.
     *
     * {@snippet :
     * RetryPolicy reproducible = policy.withJitter(RetryPolicy.Jitter.EQUAL, new SplittableRandom(42));
     * }
     *
     * @param jitter how to spread each delay
     * @param random the random source
     * @return the new policy
     * @throws NullPointerException if {@code jitter} or {@code random} is null
     */
    public RetryPolicy withJitter(Jitter jitter, RandomGenerator random) {
        Objects.requireNonNull(jitter, "jitter");
        Objects.requireNonNull(random, "random");
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, multiplier, retryable, jitter, random, listener);
    }

    /**
     * Returns a policy like this one that tells {@code listener} of each retry (replacing any listener
     * this policy had); see {@link Listener}.
     *
     * @param listener told of each retry
     * @return the new policy
     * @throws NullPointerException if {@code listener} is null
     */
    public RetryPolicy withListener(Listener listener) {
        Objects.requireNonNull(listener, "listener");
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, multiplier, retryable, jitter, random, listener);
    }

    /**
     * Returns the number of runs in all (the first run and its retries).
     *
     * @return at least 1
     */
    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * Returns the jitter of this policy's delays.
     *
     * @return the jitter; {@link Jitter#NONE} unless set by {@link #withJitter}
     */
    public Jitter jitter() {
        return jitter;
    }

    /**
     * Returns whether {@code error} may be retried.
     *
     * @param error the error
     * @return whether the policy retries it
     */
    public boolean isRetryable(Throwable error) {
        return retryable.test(error);
    }

    /**
     * Returns the backoff before run number {@code attempt} (2 for the first retry), without jitter:
     * the initial delay times the factor to the power {@code attempt - 2}, capped at the maximum.
     *
     * @param attempt the run about to start, at least 2
     * @return the backoff
     * @throws IllegalArgumentException if {@code attempt < 2}
     */
    public Duration backoff(int attempt) {
        if (attempt < 2) {
            throw new IllegalArgumentException("attempt must be >= 2, was " + attempt);
        }
        double nanos = initialDelay.toNanos() * Math.pow(multiplier, attempt - 2);
        return nanos >= maxDelay.toNanos() ? maxDelay : Duration.ofNanos((long) nanos);
    }

    /**
     * Returns the delay to wait before run number {@code attempt} (2 for the first retry): the
     * {@linkplain #backoff(int) backoff} with this policy's jitter applied. With jitter, each call
     * draws from the random source once, so calls may differ; it never exceeds the backoff, and with
     * {@link Jitter#EQUAL} never falls below half of it.
     *
     * @param attempt the run about to start, at least 2
     * @return the delay
     * @throws IllegalArgumentException if {@code attempt < 2}
     * @throws IllegalStateException if the random source returns a number outside {@code [0, 1)}
     */
    public Duration delayBefore(int attempt) {
        Duration d = backoff(attempt);
        if (jitter == Jitter.NONE || d.isZero()) {
            return d;
        }
        RandomGenerator r = random != null ? random : ThreadLocalRandom.current();
        double u = r.nextDouble();
        if (!(u >= 0.0 && u < 1.0)) { // also refuses NaN
            throw new IllegalStateException("the random source must return a number in [0, 1), returned " + u);
        }
        long nanos = d.toNanos();
        long chosen = jitter == Jitter.FULL
                ? (long) (nanos * u)
                : nanos / 2 + (long) ((nanos - nanos / 2) * u);
        return Duration.ofNanos(Math.min(nanos, Math.max(0, chosen)));
    }

    /** Tells the listener, if any, that run {@code attempt} starts after {@code delay}. */
    void retrying(int attempt, Throwable error, Duration delay) {
        if (listener != null) {
            listener.onRetry(attempt, error, delay);
        }
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialDelay=" + initialDelay
                + ", maxDelay=" + maxDelay + ", multiplier=" + multiplier + ", jitter=" + jitter + "]";
    }
}
