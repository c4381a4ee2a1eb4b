package dev.coro.gate;

/** {@link PermitGateLincheck} on a {@link CapacityGate} of capacity 2. */
public class CapacityGateLincheckTest extends PermitGateLincheck {
    /** Creates the gate under test. */
    public CapacityGateLincheckTest() {
        super(new CapacityGate(2));
    }
}
