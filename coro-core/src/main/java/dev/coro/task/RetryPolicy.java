package dev.coro.task;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * When {@link Task#retry(RetryPolicy)} tries again: at most {@link #maxAttempts()} runs in all, only
 * for errors the policy accepts, with a delay before each retry that starts at an initial value and
 * grows by a factor up to a maximum. Immutable and thread-safe.
 *
 * {@snippet :
 * RetryPolicy policy = RetryPolicy.exponential(5, Duration.ofMillis(10), Duration.ofSeconds(1))
 *         .retryOn(e -> e instanceof java.io.IOException);
 * Task<String> robust = fetch.retry(policy);
 * }
 */
public final class RetryPolicy {
    private final int maxAttempts;
    private final Duration initialDelay;
    private final Duration maxDelay;
    private final double multiplier;
    private final Predicate<? super Throwable> retryable;

    private RetryPolicy(int maxAttempts, Duration initialDelay, Duration maxDelay, double multiplier,
            Predicate<? super Throwable> retryable) {
        this.maxAttempts = maxAttempts;
        this.initialDelay = initialDelay;
        this.maxDelay = maxDelay;
        this.multiplier = multiplier;
        this.retryable = retryable;
    }

    /**
     * A policy with the same delay before every retry.
     *
     * @param maxAttempts runs in all, at least 1
     * @param delay the delay before each retry, not negative
     * @return the policy (retries every error)
     * @throws IllegalArgumentException if {@code maxAttempts < 1} or {@code delay} is negative
     * @throws NullPointerException if {@code delay} is null
     */
    public static RetryPolicy fixed(int maxAttempts, Duration delay) {
        return exponential(maxAttempts, delay, delay, 1.0);
    }

    /**
     * A policy whose delay doubles after each retry, up to {@code maxDelay}.
     *
     * @param maxAttempts runs in all, at least 1
     * @param initialDelay the delay before the first retry, not negative
     * @param maxDelay the largest delay, not less than {@code initialDelay}
     * @return the policy (retries every error)
     * @throws IllegalArgumentException on a bad count or delay (the message names it)
     * @throws NullPointerException if a delay is null
     */
    public static RetryPolicy exponential(int maxAttempts, Duration initialDelay, Duration maxDelay) {
        return exponential(maxAttempts, initialDelay, maxDelay, 2.0);
    }

    private static RetryPolicy exponential(int maxAttempts, Duration initialDelay, Duration maxDelay,
            double multiplier) {
        Objects.requireNonNull(initialDelay, "initialDelay");
        Objects.requireNonNull(maxDelay, "maxDelay");
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        if (initialDelay.isNegative()) {
            throw new IllegalArgumentException("initialDelay must not be negative, was " + initialDelay);
        }
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw new IllegalArgumentException(
                    "maxDelay must be >= initialDelay (" + initialDelay + "), was " + maxDelay);
        }
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, multiplier, e -> true);
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
        return new RetryPolicy(maxAttempts, initialDelay, maxDelay, multiplier, predicate);
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
     * Returns whether {@code error} may be retried.
     *
     * @param error the error
     * @return whether the policy retries it
     */
    public boolean isRetryable(Throwable error) {
        return retryable.test(error);
    }

    /**
     * Returns the delay before run number {@code attempt} (2 for the first retry).
     *
     * @param attempt the run about to start, at least 2
     * @return the delay
     * @throws IllegalArgumentException if {@code attempt < 2}
     */
    public Duration delayBefore(int attempt) {
        if (attempt < 2) {
            throw new IllegalArgumentException("attempt must be >= 2, was " + attempt);
        }
        double nanos = initialDelay.toNanos() * Math.pow(multiplier, attempt - 2);
        return nanos >= maxDelay.toNanos() ? maxDelay : Duration.ofNanos((long) nanos);
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialDelay=" + initialDelay
                + ", maxDelay=" + maxDelay + ", multiplier=" + multiplier + "]";
    }
}
