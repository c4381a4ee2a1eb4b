package dev.coro.cancel;

/**
 * Something pending that can be called off, such as a scheduled timer.
 *
 * <p>Thread-safe: {@link #cancel()} may be called from any thread, any number of times.
 */
@FunctionalInterface
public interface Cancellable {
    /**
     * Calls the pending thing off.
     *
     * @return {@code true} if this call prevented it from running; {@code false} if it had already
     *     run, started running, or was cancelled before
     */
    boolean cancel();
}
