package dev.coro.channel;

import dev.coro.task.Outcome;
import dev.coro.task.Task;

/**
 * Where one run of a generator puts its values: a stage of a running pipeline (an operator, or the
 * consumer at its end). {@link #accept} is eager: the producer calls it when it emits, at run time,
 * and runs the task it returns before it produces anything else. A stage that wants the next value at
 * once returns {@link Generator#DONE}; one that wants no more returns {@link Generator#STOP} (the
 * cancelled channel), which ends the producer through its own cleanup.
 *
 * <p>Confined to the producer's run: called by one fiber, one value at a time.
 *
 * @param <T> the element type
 */
abstract class GeneratorSink<T> {
    /** The run this stage belongs to: where a stage records a failure of the consumer side. */
    final Run run;

    GeneratorSink(Run run) {
        this.run = run;
    }

    /** Takes {@code value} now; returns what the producer waits for before its next value. */
    abstract Task<Void> accept(T value);

    /**
     * Takes {@code value}, the last one the caller will send ({@link Generator#take}): a stage that
     * would wait for the next request may hand it over and end at once. Returns as {@link #accept}.
     */
    Task<Void> acceptLast(T value) {
        return accept(value);
    }

    /** Records a consumer-side failure (a stage's function threw) and stops the producer. */
    final Task<Void> fail(Throwable error) {
        return run.fail(error);
    }

    /**
     * One consumption: the first failure of its consumer side (an operator's function, the
     * consumer's action). Such a failure is not shown to the producer as an error at its emit (the
     * producer could swallow it): the emit completes cancelled, the producer ends through its cleanup,
     * and the consumption then ends with the recorded failure ({@link #finish}).
     */
    static final class Run {
        /** The first failure, or null; written and read by the producer's fiber only. */
        private Throwable failure;

        Task<Void> fail(Throwable error) {
            if (failure == null) {
                failure = error;
            } else if (failure != error) {
                failure.addSuppressed(error);
            }
            return Generator.STOP;
        }

        /** Whether a failure was recorded. */
        boolean failed() {
            return failure != null;
        }

        /** The outcome of the consumption, given how the producer's task ended. */
        Outcome<Void> result(Outcome<?> producer) {
            Throwable f = failure;
            if (f != null) {
                if (producer instanceof Outcome.Failure<?> pf && pf.error() != f) {
                    f.addSuppressed(pf.error());
                }
                return new Outcome.Failure<>(f);
            }
            return switch (producer) {
                case Outcome.Value<?> v -> new Outcome.Value<>(null);
                case Outcome.Failure<?> pf -> new Outcome.Failure<>(pf.error());
                case Outcome.Cancelled<?> c -> new Outcome.Cancelled<>();
            };
        }

        /** {@link #result} as a task. */
        <R> Task<R> finish(Outcome<?> producer) {
            return switch (result(producer)) {
                case Outcome.Value<Void> v -> Task.value(null);
                case Outcome.Failure<Void> f -> Task.failure(f.error());
                case Outcome.Cancelled<Void> c -> Task.cancelled();
            };
        }
    }
}
