package dev.coro.gate;

import dev.coro.LincheckSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link PermitGateLincheck} on a {@link SerialGate}: the permit lane with one permit, where the
 * engine also resumes the admitted waiter inside the drain (the admission leaves the rule full with
 * one admitted, AdmissionEngine overview 8).
 */
public class SerialGateLincheckTest extends PermitGateLincheck {
    /** Creates the serial gate under test. */
    public SerialGateLincheckTest() {
        super(new SerialGate());
    }

    /**
     * The race of {@link PermitGateLincheck#pushDuringTheReleasingOwnersDrain()} (one slot: the
     * release is the only way to room), explored deeper than the generated runs reach: 300
     * interleavings did not find its mutant, 1,000 do.
     */
    @Test
    void modelCheckingPushDuringTheReleasingOwnersDrain() {
        LincheckSupport.lincheck(getClass()).scenarios(pushDuringTheReleasingOwnersDrain())
                .iterations(0).invocations(1000)
                .modelCheck("modelCheckingPushDuringTheReleasingOwnersDrain");
    }
}
