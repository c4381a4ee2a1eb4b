package dev.coro.gate;

/** {@link CoalescingGateLincheck} on the keyed form: requests with equal keys share. */
public class CoalescingGateLincheckTest extends CoalescingGateLincheck {
    /** Creates the gate under test. */
    public CoalescingGateLincheckTest() {
        super(new CoalescingGate<>(), Integer::equals);
    }
}
