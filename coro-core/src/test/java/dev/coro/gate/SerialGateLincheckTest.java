package dev.coro.gate;

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
}
