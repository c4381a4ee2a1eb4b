package dev.coro.gate;

import dev.coro.task.Task;

/**
 * {@link PermitGateLincheck} on a {@link PriorityGate} of capacity 2, where thread {@code t} asks with
 * priority {@code t % 3}: the permit lane under the keyed order (a heap the owner fills from the
 * intake before every decision). The order itself is model-checked on the engine
 * (KeyedOrderLincheckTest); here, that the gate loses no slot and strands no waiter.
 */
public class PriorityGateLincheckTest extends PermitGateLincheck {
    /** Creates the gate under test. */
    public PriorityGateLincheckTest() {
        super(new PriorityGate(2));
    }

    @Override
    Task<Admission> acquireTask(Waiter w) {
        return ((PriorityGate) gate).acquire(w.tid % 3);
    }

    @Override
    Object tag(int tid) {
        return tid % 3;
    }
}
