package dev.coro.gate;

import dev.coro.LincheckSupport;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Lincheck explores {@link ReadinessGate} in model-checking and stress modes, with the admission
 * invariant as the checked state (see {@link GateProbe}; as in PermitGateLincheck the
 * operations answer nothing, because which thread admits a waiter is not a function of the
 * sequential history). Checked at every admission in every explored interleaving: nothing is
 * admitted before {@code setReady()} has been called, and nothing started after a {@code close()}
 * returned is admitted. Checked after each run: no waiter waits once the gate is ready (the signal
 * is never missed) or closed, cancelled waiters have ended, the gate's admission count is exact.
 *
 * <p>Mutation-checked: with {@code ruleTryEnter} admitting regardless of {@code ready}, the model
 * checker reports "within admitted before setReady()"; with {@code ruleSignal} setting {@code ready}
 * only when two signals were coalesced, "missed signal: the condition holds and thread 2's waiter
 * waits".
 */
public class ReadinessGateLincheckTest extends GateProbeLincheck {
    private final ReadinessGate gate = new ReadinessGate();
    private volatile boolean readyCalled;
    private final GateProbe probe = new GateProbe(gate,
            () -> readyCalled ? null : "before setReady()");

    /** Creates the gate and its probe. */
    public ReadinessGateLincheckTest() {}

    /** Establishes readiness (recording first that it was called). */
    @Operation
    public void setReady() {
        readyCalled = true;
        gate.setReady();
    }

    /** After each run: the checks of {@link GateProbe#validate}. */
    @Validate
    public void validate() {
        probe.validate(readyCalled && !gate.isClosed(), gate::admittedSnapshot);
    }

    @Override
    GateProbe probe() {
        return probe;
    }

    @Override
    List<ExecutionScenario> scenarios() {
        return List.of(setReadyRacingCancelAndClose(), setReadyRacingEntries());
    }

    /**
     * Two waiters queued before readiness; setReady races the cancel of one, a close and a new
     * entry: the signal applied by another owner, the admit racing the cancel, close racing the
     * admissions.
     */
    static ExecutionScenario setReadyRacingCancelAndClose() {
        return LincheckSupport.scenario(ReadinessGateLincheckTest.class,
                "acquire 1; within 2",
                "setReady; release 1 | cancel 1; close | within 3; tryWithin",
                null);
    }

    /** setReady racing entries on the fast path and pushes that the owner's re-check must see. */
    static ExecutionScenario setReadyRacingEntries() {
        return LincheckSupport.scenario(ReadinessGateLincheckTest.class,
                null,
                "acquire 1; setReady | within 2; acquire 2 | setReady; tryWithin",
                null);
    }

}
