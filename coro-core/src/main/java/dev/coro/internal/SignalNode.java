package dev.coro.internal;

/**
 * What a {@link SignalList} links: a registration's two words, its state and its link to the next
 * older registration. Every registration is a {@link SignalList.Node}, which says what firing does;
 * this base exists apart from it so that a class whose own ancestors are fixed can be a registration
 * too: the {@link SweptStack}s (a task's run, which is the completion cell its joiners register on)
 * start here, and a task's run registers itself, once, on the cancellation token it waits under,
 * instead of one registration per suspension. A stack that is never registered anywhere leaves the
 * two words at their defaults (8 bytes with compressed oops).
 *
 * <p>The words are {@link SignalList}'s to read and write (its overview, part 1); a subclass only
 * overrides {@link #onFire}.
 */
public abstract class SignalNode {
    /** The node is registered and neither fired nor removed (also: not registered yet). */
    static final int LIVE = 0;
    /** The node was taken back by {@link SignalList#remove}. */
    static final int REMOVED = 1;
    /** The node was fired; its callback has run or is running. */
    static final int NODE_FIRED = 2;

    /** LIVE, REMOVED or NODE_FIRED (SignalList part 1). */
    volatile int listState;
    /** The next older node of the list this node is in (SignalList part 1). */
    volatile SignalNode listNext;

    /** Creates a live, unregistered node. */
    protected SignalNode() {}

    /**
     * Runs once, on the firing thread, when the list this node is registered on fires. Exceptions
     * are reported to the firing thread's uncaught-exception handler and do not stop the other
     * nodes. By default it refuses: a class that registers itself says what firing does.
     */
    protected void onFire() {
        throw new IllegalStateException(getClass().getName() + " is not a registration and was fired");
    }

    /**
     * Returns whether this node was fired by the list it is registered on.
     *
     * @return whether fired
     */
    protected final boolean wasFired() {
        return listState == NODE_FIRED;
    }
}
