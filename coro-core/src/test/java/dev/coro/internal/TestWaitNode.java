package dev.coro.internal;

import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link WaitNode} for engine tests: settles by one CAS on {@link #outcome}, resumes nothing, and
 * departs (runs its queue's hook) when abandoned or rejected, as a task's step does.
 */
final class TestWaitNode extends WaitNode {
    /** The value of {@link #outcome} when the node was abandoned. */
    static final Object ABANDONED = new Object();

    final int name;
    final AtomicReference<Object> outcome = new AtomicReference<>();
    private volatile boolean cancelRequested;

    TestWaitNode(int name) {
        this.name = name;
    }

    @Override
    public boolean admit(Object value) {
        return outcome.compareAndSet(null, value);
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

    @Override
    public boolean isSettled() {
        return outcome.get() != null;
    }

    @Override
    public boolean isCancelRequested() {
        return cancelRequested;
    }

    @Override
    protected void onFire() {
        cancel();
    }

    @Override
    public String toString() {
        return "node " + name;
    }
}
