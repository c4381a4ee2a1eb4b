package dev.coro.gate;

/**
 * {@link CoalescingGateLincheck} on the sharing form: a request for a joins an execution for b when
 * {@code a <= b} (a request for 1 may share an execution for 1 or 2; one for 2 only one for 2).
 */
public class SharingCoalescingGateLincheckTest extends CoalescingGateLincheck {
    /** Creates the gate under test. */
    public SharingCoalescingGateLincheckTest() {
        super(CoalescingGate.sharing((Integer a, Integer b) -> a <= b), (a, b) -> a <= b);
    }
}
