package dev.coro.internal;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link WaitNode} for engine tests: settles by one CAS on {@link #outcome}, resumes nothing, and
 * departs (runs its queue's hook) when abandoned or rejected, as a task's step does.
 */
final class TestWaitNode extends WaitNode {
    /** The value of {@link #outcome} when the node was abandoned. */
    static final Object ABANDONED = new Object();
    /** The value of {@link #outcome} when the node was admitted with null. */
    static final Object ADMITTED_NULL = new Object();

    final int name;
    final AtomicReference<Object> outcome = new AtomicReference<>();
    private volatile boolean cancelRequested;
    /** The node's cancellation wins the race with its admission, at that very instant. */
    volatile boolean cancelAtAdmit;

    TestWaitNode(int name) {
        this.name = name;
    }

    @Override
    public boolean admit(Object value) {
        if (cancelAtAdmit) {
            cancel(); // its token fired just before the admit CAS: the cancel settles it first
            return false;
        }
        return outcome.compareAndSet(null, value == null ? ADMITTED_NULL : value);
    }

    @Override
    public boolean abandon() {
        if (!outcome.compareAndSet(null, ABANDONED)) {
            return false;
        }
        departed();
        return true;
    }

    @Override
    public boolean reject(Throwable error) {
        if (!outcome.compareAndSet(null, error)) {
            return false;
        }
        departed();
        return true;
    }

    /** What a cancelled task's step does: settle, then tell the queue it was in. */
    boolean cancel() {
        cancelRequested = true;
        return abandon();
    }

    /** Its token fired, and its own settling CAS has not run yet. */
    void requestCancel() {
        cancelRequested = true;
    }

    @Override
    public boolean isSettled() {
        return outcome.get() != null;
    }

    @Override
    public boolean isCancelRequested() {
        return cancelRequested;
    }

    @Override
    public String toString() {
        return "node " + name;
    }
}
