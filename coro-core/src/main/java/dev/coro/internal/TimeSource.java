package dev.coro.internal;

/**
 * A clock and its timers, as the admission engine needs them for waiters that expire: the gate layer
 * adapts a scheduler's clock to it (so virtual time drives expiry in tests); a test may implement it
 * directly.
 */
public interface TimeSource {
    /**
     * Returns the current time in nanoseconds on this source's clock (only differences mean
     * anything).
     *
     * @return the time
     */
    long nanoTime();

    /**
     * Runs {@code action} once, as soon as this clock reads at least {@code deadlineNanos} (at once,
     * if it does already), on any thread, but never on the calling thread inside this call. The
     * deadline is absolute, so that a clock that moves between the caller's reading and this call
     * does not make the timer late.
     *
     * @param action what to run
     * @param deadlineNanos when, on this clock
     * @return what cancels the timer (best effort: the action may still run once)
     */
    Runnable scheduleAt(Runnable action, long deadlineNanos);
}
