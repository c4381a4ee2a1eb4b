package dev.coro.sync;

/**
 * {@link MutexLincheck} on {@link AsyncMutex} (a one-unit permit lane on the admission engine), with
 * FIFO hand-over as its order: a waiter whose {@code lock()} call returned (queued) before another
 * waiter's call began is admitted first, unless it was cancelled, checked at every acquisition. An
 * unlock hands the lock to the next waiter, so an unlocked mutex has no waiter left (no missed
 * signal).
 */
public class AsyncMutexLincheckTest extends MutexLincheck {
    /** Creates the mutex under test. */
    public AsyncMutexLincheckTest() {
        super(new AsyncMutex());
    }

    /** FIFO: no live waiter that was queued before {@code w}'s lock() began is still waiting. */
    @Override
    void checkOrder(Waiter w) {
        for (Waiter older : waiters) {
            if (older != w && older.queuedAt != 0 && older.queuedAt < w.startedAt
                    && !older.served && older.endings.get() == 0 && !older.cancelRequested) {
                broken = "thread " + w.tid + "'s waiter got the lock before thread " + older.tid
                        + "'s, queued before it began";
            }
        }
    }
}
