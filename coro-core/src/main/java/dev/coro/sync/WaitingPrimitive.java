package dev.coro.sync;

/**
 * A primitive that tasks wait at, seen by monitoring: the mutex and the gates built on the admission
 * engine. A metrics binder takes one of these, whatever its rule.
 *
 * {@snippet :
 * WaitingPrimitive p = new CapacityGate(8);
 * p.addListener((outcome, waitedNanos) -> histogram.record(waitedNanos));
 * int queued = p.queueLength();
 * }
 */
public interface WaitingPrimitive {
    /**
     * Adds a listener told how each admission ended (see {@link WaitListener}). Admissions that
     * started before it was added are not reported to it.
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    void addListener(WaitListener listener);

    /**
     * Returns how many tasks wait: a snapshot, which may still count a waiter that was cancelled a
     * moment ago.
     *
     * @return the waiters
     */
    int queueLength();
}
