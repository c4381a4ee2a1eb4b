package dev.coro.internal;

import java.util.concurrent.atomic.AtomicReference;

/** A {@link WaitNode} for engine tests: settles by one CAS on {@link #outcome}, resumes nothing. */
final class TestWaitNode extends WaitNode {
    /** The value of {@link #outcome} when the node was abandoned. */
    static final Object ABANDONED = new Object();

    final int name;
    final AtomicReference<Object> outcome = new AtomicReference<>();
    private volatile WaitQueue queue;
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
        return outcome.compareAndSet(null, ABANDONED);
    }

    /** What a cancelled task's step does: settle, then tell the queue it was in. */
    boolean cancel() {
        cancelRequested = true;
        if (!abandon()) {
            return false;
        }
        WaitQueue q = queue;
        if (q != null) {
            q.cancelled(this);
        }
        return true;
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
    public void cancelInto(WaitQueue queue) {
        this.queue = queue;
        if (outcome.get() == ABANDONED) { // cancelled between its push and now: tell the queue now
            queue.cancelled(this);
        }
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
