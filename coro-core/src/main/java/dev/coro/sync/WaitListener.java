package dev.coro.sync;

/**
 * Told how each admission at a waiting primitive ended, for metrics: the mutex
 * ({@link AsyncMutex#addListener}) and the gates built on the admission engine
 * ({@code gate.addListener}). Every admission is reported, with the time it waited (0 when it was
 * admitted at once); so is every queued wait that ended without admission: cancelled (its task was
 * cancelled, a newer one superseded it, or the primitive was closed) or timed out. A refused try is
 * not a wait and is not reported.
 *
 * <p>Called on the thread that ended the wait, sometimes while the primitive decides who is next:
 * an implementation must be quick (count, record into a histogram), must not block and must not
 * throw (an exception goes to the thread's uncaught-exception handler; the primitive goes on).
 *
 * {@snippet :
 * LongAdder admitted = new LongAdder();
 * gate.addListener((outcome, waitedNanos) -> {
 *     if (outcome == WaitListener.Outcome.ADMITTED) {
 *         admitted.increment();
 *     }
 * });
 * }
 */
@FunctionalInterface
public interface WaitListener {
    /** How a wait ended. */
    enum Outcome {
        /** Admitted (at once, or after waiting). */
        ADMITTED,
        /** Cancelled while queued, superseded, or refused by a close. */
        CANCELLED,
        /** Its deadline passed before admission. */
        TIMED_OUT
    }

    /**
     * A wait ended.
     *
     * @param outcome how
     * @param waitedNanos how long it waited, by {@link System#nanoTime()}; 0 when admitted at once
     */
    void waitEnded(Outcome outcome, long waitedNanos);
}
