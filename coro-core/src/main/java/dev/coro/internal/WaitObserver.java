package dev.coro.internal;

/**
 * Told how every admission and every queued wait of an engine ended (for metrics): admitted (with
 * the time it waited, 0 when admitted at once), cancelled (a queued waiter cancelled, superseded or
 * refused by a close) or timed out. Called on the thread that ended the wait, sometimes while the
 * engine's owner decides: it must be quick, must not block, and must not throw (an exception is
 * handed to the thread's uncaught-exception handler and the engine goes on).
 */
@FunctionalInterface
public interface WaitObserver {
    /** The outcome codes of {@link #waitEnded}. */
    int ADMITTED = 0, CANCELLED = 1, TIMED_OUT = 2;

    /**
     * A wait ended.
     *
     * @param outcome {@link #ADMITTED}, {@link #CANCELLED} or {@link #TIMED_OUT}
     * @param waitedNanos how long it waited, by {@link System#nanoTime()}; 0 for an admission at once
     */
    void waitEnded(int outcome, long waitedNanos);
}
