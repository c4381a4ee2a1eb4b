package dev.coro.examples.gates;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts how many operations are inside a region at once and remembers the most: what each example
 * of the gates tour prints to show its gate's constraint.
 */
final class Occupancy {
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger most = new AtomicInteger();

    /** Records an entry; returns how many are inside now, this one included. */
    int enter() {
        int now = inside.incrementAndGet();
        most.accumulateAndGet(now, Math::max);
        return now;
    }

    /** Records an exit. */
    void exit() {
        inside.decrementAndGet();
    }

    /** Returns how many are inside now. */
    int now() {
        return inside.get();
    }

    /** Returns the most that were inside at once. */
    int most() {
        return most.get();
    }
}
