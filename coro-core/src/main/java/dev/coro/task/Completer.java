package dev.coro.task;

/**
 * The completing side of a task made by {@link Task#create}: the body of the task receives a
 * completer and calls exactly one of {@link #complete}, {@link #fail} or {@link #cancel}, now or
 * later, from any thread. The first call wins; later calls return {@code false} and do nothing.
 *
 * <p><b>Cancellation.</b> When the task's cancellation token fires while the completer is pending, the
 * completer completes on the cancelled channel by itself and runs the action given to
 * {@link #onCancel(Runnable)}, so the body can release what it holds (a timer, a queue slot). A body
 * need not poll for cancellation.
 *
 * <p><b>Where the task continues.</b> The waiting task resumes on its own scheduler: inline (through a
 * trampoline) when the completing thread already runs that scheduler, otherwise by submission to it.
 *
 * <p>Thread-safe.
 *
 * @param <T> the value type
 */
public interface Completer<T> {
    /**
     * Completes the task with a value.
     *
     * @param value the value (may be null)
     * @return whether this call completed the task
     */
    boolean complete(T value);

    /**
     * Completes the task with an error.
     *
     * @param error the error
     * @return whether this call completed the task
     * @throws NullPointerException if {@code error} is null
     */
    boolean fail(Throwable error);

    /**
     * Completes the task on the cancelled channel.
     *
     * @return whether this call completed the task
     */
    boolean cancel();

    /**
     * Sets the action to run if the task is cancelled while pending (by its token, or by
     * {@link #cancel()}). If that already happened, runs {@code action} at once. At most one action may
     * be set.
     *
     * @param action what to release on cancellation
     * @throws NullPointerException if {@code action} is null
     * @throws IllegalStateException if an action was already set
     */
    void onCancel(Runnable action);

    /**
     * Returns the context of the waiting task.
     *
     * @return the context
     */
    Context context();
}
