package dev.coro.gate;

/**
 * The rule of the gates that hold every entry back until one signal opens them for good
 * ({@link ReadinessGate}: {@code setReady()}; {@link CompletionGate}: the n-th arrival), and then
 * admit everyone: written once here, each gate only decides when to send the signal.
 */
abstract class LatchGate extends SingleDoorGate {
    /* Rule state, owner only (AdmissionGate I1): open (set by ruleSignal when the opening signal is
     * applied; never cleared) and admitted (admissions not yet given back, for closeAndCheck). */

    private boolean open;
    private int admitted;

    /** Creates the rule, already open if {@code open} (a completion gate expecting no arrivals). */
    LatchGate(boolean open) {
        this.open = open;
    }

    /** Admissions not yet given back: a racy snapshot for tests, exact when the gate is quiescent. */
    final int admittedSnapshot() {
        return admitted;
    }

    @Override
    final boolean ruleTryEnter(int kind) {
        if (!open) {
            return false;
        }
        admitted++;
        return true;
    }

    @Override
    final boolean ruleCanEnter() {
        return open;
    }

    @Override
    final void ruleLeave(long released) {
        admitted -= released(released, 0);
        assert admitted >= 0 : "more admissions given back than taken: " + admitted;
    }

    @Override
    final int ruleAdmitted() {
        return admitted;
    }

    /** The opening signal: applied by the owner before it next decides (AdmissionGate part 5). */
    @Override
    void ruleSignal(int count) {
        open = true;
    }
}
