package dev.coro.gate;

/** {@link KeyedSerialGateLincheck} on a gate with no bound on keys. */
public class KeyedSerialGateLincheckTest extends KeyedSerialGateLincheck {
    /** Creates the gate under test. */
    public KeyedSerialGateLincheckTest() {
        super(new KeyedSerialGate<>(KeyedSerialGate.NO_BOUND, 16), Integer.MAX_VALUE); // a small table: short visits
    }
}
