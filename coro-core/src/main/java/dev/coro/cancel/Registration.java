package dev.coro.cancel;

/**
 * A callback registered on a {@link CancellationToken}; {@link #unregister()} takes it back.
 *
 * <p>Unregistering frees the registration at once or within an amortized constant number of later
 * operations on the same token, so a long-lived token that sees many register/unregister pairs keeps
 * its memory bounded by the callbacks still registered. Thread-safe.
 */
public interface Registration extends AutoCloseable {
    /**
     * Takes the callback back.
     *
     * <p>Once the token's cancellation has begun (in particular, once any thread has seen {@link
     * CancellationToken#isCancelled()} return {@code true}), this returns {@code false} and the
     * callback runs (or has run) on the cancelling thread: a callback is never skipped by a cancel
     * that was already visible.
     *
     * @return {@code true} if the callback will now never run; {@code false} if it has run, is
     *     running or is about to run, or was unregistered before
     */
    boolean unregister();

    /** Same as {@link #unregister()}; lets a registration live in a try-with-resources block. */
    @Override
    default void close() {
        unregister();
    }

    /** A registration that has nothing to take back (for example, on a token that never cancels). */
    Registration NONE = () -> false;
}
