package dev.coro.gate;

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
     * The rule: the condition is the opening signal, applied by the owner (open is set once and never
     * cleared; owner only, AdmissionEngine I1).
     */
    private static final class Latch extends ConditionRule {
        private boolean open;

        Latch(boolean open) {
            this.open = open;
        }

        @Override
        boolean holds() {
            return open;
        }

        @Override
        protected void ruleSignal(int count) {
            open = true;
        }
    }
}
