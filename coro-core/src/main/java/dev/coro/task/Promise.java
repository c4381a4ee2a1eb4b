package dev.coro.task;

import java.util.Objects;

/**
 * A result completed from outside: {@link #complete}, {@link #fail} or {@link #cancel}, once; any
 * number of tasks wait for it through {@link #task()}.
 *
 * <p><b>Completion</b> is a one-word handshake: the completer writes the result and exchanges the
 * waiter word for "completed" in one atomic operation; a waiter registers with one atomic operation
 * and learns whether it must wait or can read the result at once. No lock.
 *
 * <p><b>Waiting.</b> {@link #task()} returns a task that ends as the promise does (value, error or
 * cancelled). A waiting task resumes on its own scheduler (inline when the completing thread already
 * runs it). A cancelled wait unregisters itself; the promise keeps nothing of it.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe and lock-free; the first completion wins and
 * later ones return {@code false}. Actions before the winning completion happen-before every waiter
 * resumes.
 *
 * {@snippet :
 * Promise<String> reply = new Promise<>();
 * Task<Integer> length = reply.task().map(String::length);
 * new Thread(() -> reply.complete("hello")).start();
 * System.out.println(length.join());   // 5
 * }
 *
 * @param <T> the value type
 */
public final class Promise<T> {
    private final Completion cell = new Completion();
    private final Task<T> task = cell.awaitTask();

    /** Creates a pending promise. */
    public Promise() {}

    /**
     * Completes the promise with a value.
     *
     * @param value the value (may be null)
     * @return whether this call completed the promise
     */
    public boolean complete(T value) {
        return cell.completeWith(Completion.encodeValue(value));
    }

    /**
     * Completes the promise with an error.
     *
     * @param error the error
     * @return whether this call completed the promise
     * @throws NullPointerException if {@code error} is null
     */
    public boolean fail(Throwable error) {
        return cell.completeWith(new Completion.Failed(Objects.requireNonNull(error, "error")));
    }

    /**
     * Completes the promise on the cancelled channel.
     *
     * @return whether this call completed the promise
     */
    public boolean cancel() {
        return cell.completeWith(Completion.CANCELLED);
    }

    /**
     * Completes the promise as {@code outcome} says: with its value, its error (the same instance),
     * or on the cancelled channel; the inverse of {@link Task#outcome()} for promises, for passing an
     * outcome on.
     *
     * {@snippet :
     * Promise<String> relay = new Promise<>();
     * Outcome<String> seen = source.outcome().join();
     * relay.completeWith(seen);   // relay.task() now ends as source did
     * }
     *
     * @param outcome how to complete
     * @return whether this call completed the promise (false if it was complete already)
     * @throws NullPointerException if {@code outcome} is null
     */
    public boolean completeWith(Outcome<? extends T> outcome) {
        Objects.requireNonNull(outcome, "outcome");
        return cell.completeWith(switch (outcome) {
            case Outcome.Value<? extends T> v -> Completion.encodeValue(v.value());
            case Outcome.Failure<? extends T> f -> new Completion.Failed(f.error());
            case Outcome.Cancelled<? extends T> c -> Completion.CANCELLED;
        });
    }

    /**
     * Returns whether the promise has completed.
     *
     * @return whether completed
     */
    public boolean isDone() {
        return cell.isCompleted();
    }

    /**
     * Returns a task that waits for this promise and ends as it does. The task may be started any
     * number of times; each start waits for the same result.
     *
     * @return the waiting task
     */
    public Task<T> task() {
        return task;
    }

    @Override
    public String toString() {
        return isDone() ? "Promise[" + Completion.toOutcome(cell.result) + "]" : "Promise[pending]";
    }
}
