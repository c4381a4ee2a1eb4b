package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;

/**
 * The rule of the gates that admit every waiter while a condition holds (the readiness and completion
 * gates' latch, the predicate gate's predicate), counting the admissions not yet given back for
 * {@code closeAndCheck}: written once here, each gate states only its condition. Owner only
 * (AdmissionEngine I1), like every rule hook.
 */
abstract class ConditionRule extends AdmissionEngine {
    /** Admissions not yet given back; owner only, read racily by tests. */
    long admitted;

    ConditionRule() {}

    /** Whether the condition holds now; evaluated once per decision, under ownership. */
    abstract boolean holds();

    @Override
    protected final boolean ruleTryEnter(Object tag) {
        if (!holds()) {
            return false;
        }
        admitted++;
        return true;
    }

    @Override
    protected final boolean ruleCanEnter() {
        return holds();
    }

    @Override
    protected final void ruleLeave(long released) {
        admitted -= released;
        assert admitted >= 0 : "more admissions given back than taken: " + admitted;
    }

    @Override
    protected final long ruleAdmitted() {
        return admitted;
    }
}
