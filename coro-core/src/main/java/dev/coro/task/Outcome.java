package dev.coro.task;

import java.util.Objects;
import java.util.concurrent.CancellationException;

/**
 * How a task ended: with a {@link Value}, a {@link Failure}, or {@link Cancelled}. Exactly one of the
 * three is signalled, exactly once, for each run of a task.
 *
 * <p><b>Re-raising.</b> {@link Task#outcome()} turns a task's ending into an outcome value; three
 * doors turn it back: {@link Task#fromOutcome(Outcome)} (as a task), {@link #get()} (as a value or an
 * exception, for blocking code) and {@link Promise#completeWith(Outcome)} (to pass it on). Each keeps
 * the error instance.
 *
 * <p>Immutable and thread-safe.
 *
 * {@snippet :
 * String text = switch (outcome) {
 *     case Outcome.Value<Integer> v -> "value " + v.value();
 *     case Outcome.Failure<Integer> f -> "error " + f.error();
 *     case Outcome.Cancelled<Integer> c -> "cancelled";
 * };
 * }
 *
 * @param <T> the value type
 */
public sealed interface Outcome<T> {
    /**
     * The value channel.
     *
     * @param value the value, possibly null
     * @param <T> the value type
     */
    record Value<T>(T value) implements Outcome<T> {}

    /**
     * The error channel.
     *
     * @param error the failure, never null
     * @param <T> the value type
     */
    record Failure<T>(Throwable error) implements Outcome<T> {
        /**
         * Creates a failure.
         *
         * @param error the failure
         * @throws NullPointerException if {@code error} is null
         */
        public Failure {
            Objects.requireNonNull(error, "error");
        }
    }

    /**
     * The cancelled channel.
     *
     * @param <T> the value type
     */
    record Cancelled<T>() implements Outcome<T> {}

    /**
     * Returns the value, or throws: the error itself (wrapped in {@link java.util.concurrent.CompletionException}
     * when checked) for a failure, {@link CancellationException} when cancelled.
     *
     * @return the value
     */
    default T get() {
        return switch (this) {
            case Value<T> v -> v.value();
            case Failure<T> f -> {
                if (f.error() instanceof RuntimeException re) {
                    throw re;
                }
                if (f.error() instanceof Error e) {
                    throw e;
                }
                throw new java.util.concurrent.CompletionException(f.error());
            }
            case Cancelled<T> c -> throw new CancellationException("task was cancelled");
        };
    }
}
