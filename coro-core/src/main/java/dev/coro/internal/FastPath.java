package dev.coro.internal;

/**
 * A wait that may be over at once: implemented by the body of a {@code Task.create} task (for
 * example {@code AsyncMutex}'s acquire), it lets the run loop try the wait before it allocates a
 * suspension or registers on the cancellation token. The loop calls {@link #tryNow()} only when the
 * task's token is not cancelled; if it answers {@link #NOT_NOW}, the loop suspends and calls the
 * body as usual (which must then try again: the answer may have changed).
 */
public interface FastPath {
    /** The answer of {@link #tryNow()} when the wait is not over. */
    Object NOT_NOW = new Object() {
        @Override
        public String toString() {
            return "NOT_NOW";
        }
    };

    /**
     * Ends the wait now if it can: returns the value the task completes with, or {@link #NOT_NOW}.
     *
     * @return the value, or {@link #NOT_NOW}
     */
    Object tryNow();
}
