package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;

/**
 * The gates that hold every entry back until one signal opens them for good ({@link ReadinessGate}:
 * {@code setReady()}; {@link CompletionGate}: the n-th arrival), and then admit everyone: the rule is
 * written once here ({@link Latch}), each gate only decides when to send the signal.
 */
abstract class LatchGate extends SingleDoorGate {
    /** Creates the gate, already open if {@code open} (a completion gate expecting no arrivals). */
    LatchGate(boolean open) {
        super(new Latch(open));
    }

    /** Sends the opening signal: applied by the engine's owner before it next decides. */
    final void open() {
        engine.signal(1);
    }

    /** Admissions not yet given back: a racy snapshot for tests, exact when the gate is quiescent. */
    final long admittedSnapshot() {
        return ((Latch) engine).admitted;
    }

    /**
     * The rule. State, owner only (AdmissionEngine I1): open (set by the opening signal, never
     * cleared) and admitted (admissions not yet given back, for closeAndCheck).
     */
    private static final class Latch extends AdmissionEngine {
        private boolean open;
        private long admitted;

        Latch(boolean open) {
            this.open = open;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            if (!open) {
                return false;
            }
            admitted++;
            return true;
        }

        @Override
        protected boolean ruleCanEnter() {
            return open;
        }

        @Override
        protected void ruleLeave(long released) {
            admitted -= released;
            assert admitted >= 0 : "more admissions given back than taken: " + admitted;
        }

        @Override
        protected long ruleAdmitted() {
            return admitted;
        }

        @Override
        protected void ruleSignal(int count) {
            open = true;
        }
    }
}
