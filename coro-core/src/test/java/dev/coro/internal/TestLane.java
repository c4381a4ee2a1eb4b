package dev.coro.internal;

import dev.coro.task.Task;

/**
 * The small test-only rule of the engine tests: a permit lane whose waiters ask with an {@link Ask}
 * (a weight, a key for a keyed order, a deadline on the lane's clock). It states nothing but those
 * three readings of a tag, so every behaviour the tests see is the engine's and the lane's.
 */
class TestLane extends PermitLane {
    /** What a waiter asks for. */
    record Ask(long weight, long key, long deadline) {
        static Ask weight(long weight) {
            return new Ask(weight, 0, NO_DEADLINE);
        }

        static Ask key(long key) {
            return new Ask(1, key, NO_DEADLINE);
        }

        static Ask until(long deadline) {
            return new Ask(1, 0, deadline);
        }
    }

    TestLane(long permits) {
        this(permits, WaitOrder.arrival(), null);
    }

    /** The clock given to the engine, or null. */
    final TimeSource clock;

    TestLane(long permits, WaitOrder order, TimeSource clock) {
        super(permits, order, clock);
        this.clock = clock;
    }

    /** The order by {@link Ask#key()}: least first, arrival order among equal keys. */
    static WaitOrder byKey() {
        return WaitOrder.byKey(tag -> ((Ask) tag).key());
    }

    /** A task that waits for admission with {@code ask}. */
    Task<Void> enter(Ask ask) {
        return Task.create(waitingDoor(ask));
    }

    @Override
    protected long ruleWeight(Object tag) {
        return tag == null ? 1 : ((Ask) tag).weight();
    }

    @Override
    protected long ruleDeadline(Object tag) {
        return tag == null ? NO_DEADLINE : ((Ask) tag).deadline();
    }
}
