package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.internal.AdmissionEngine;
import dev.coro.task.Outcome;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A rule hook that throws breaks its gate loudly (AdmissionEngine overview 7): the error reaches the
 * operation that ran the hook, the gate closes, its waiters end cancelled and later entries are
 * refused. Before, the owner never let go and every later waiter hung without a word.
 */
class BrokenRuleTest {

    @Test
    void aRuleThatThrowsWhileLeavingBreaksTheGate() {
        FaultyGate gate = new FaultyGate();
        Admission held = gate.acquire().join();
        CompletableFuture<Admission> waiter = gate.acquire().toCompletableFuture();
        gate.rule.failOnLeave = true;
        assertEquals("rule bug on leave", assertThrows(IllegalStateException.class, held::exit).getMessage());
        assertBroken(gate, waiter);
    }

    @Test
    void aRuleThatThrowsWhileAdmittingAWaiterBreaksTheGate() {
        FaultyGate gate = new FaultyGate();
        Admission held = gate.acquire().join();
        CompletableFuture<Admission> waiter = gate.acquire().toCompletableFuture();
        gate.rule.failOnEnter = true;
        assertEquals("rule bug on enter", assertThrows(IllegalStateException.class, held::exit).getMessage());
        assertBroken(gate, waiter);
    }

    private static void assertBroken(FaultyGate gate, CompletableFuture<Admission> waiter) {
        assertTrue(waiter.isCompletedExceptionally(), "the waiter hung on a broken gate");
        assertTrue(gate.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, gate.acquire().outcome().join());
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire().outcome().join());
        assertFalse(gate.rule.entered > 1, "the broken rule was asked again");
    }

    /** A gate over a one-slot rule with planted bugs. */
    static final class FaultyGate extends SingleDoorGate {
        final FaultyRule rule;

        FaultyGate() {
            this(new FaultyRule());
        }

        private FaultyGate(FaultyRule rule) {
            super(rule);
            this.rule = rule;
        }
    }

    /** A one-slot rule with planted bugs: its leave or its enter throws once told to. */
    static final class FaultyRule extends AdmissionEngine {
        volatile boolean failOnLeave;
        volatile boolean failOnEnter;
        private boolean busy;
        int entered;

        @Override
        protected boolean ruleTryEnter(Object tag) {
            if (failOnEnter) {
                throw new IllegalStateException("rule bug on enter");
            }
            if (busy) {
                return false;
            }
            busy = true;
            entered++;
            return true;
        }

        @Override
        protected boolean ruleCanEnter() {
            return !busy || failOnEnter;
        }

        @Override
        protected void ruleLeave(long released) {
            if (failOnLeave) {
                throw new IllegalStateException("rule bug on leave");
            }
            busy = false;
        }

        @Override
        protected long ruleAdmitted() {
            return busy ? 1 : 0;
        }
    }
}
