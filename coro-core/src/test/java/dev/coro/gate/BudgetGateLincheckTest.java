package dev.coro.gate;

import dev.coro.task.Task;

/**
 * {@link PermitGateLincheck} on a {@link BudgetGate} of 3 units, where thread {@code t} asks for
 * {@code 1 + t % 3} units: weighted admissions, a head that lacks units blocking lighter waiters, and
 * waiters cancelled while part of their cost is set aside for them.
 */
public class BudgetGateLincheckTest extends PermitGateLincheck {
    /** Creates the gate under test. */
    public BudgetGateLincheckTest() {
        super(new BudgetGate(3));
    }

    @Override
    Task<Admission> acquireTask(Waiter w) {
        return ((BudgetGate) gate).acquire(weight(w.tid));
    }

    @Override
    Object tag(int tid) {
        return weight(tid);
    }

    @Override
    long weight(int tid) {
        return 1 + tid % 3;
    }
}
