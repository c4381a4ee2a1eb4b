package dev.coro.gate;

/** {@link KeyedSerialGateLincheck} on a gate with no bound on keys. */
public class KeyedSerialGateLincheckTest extends KeyedSerialGateLincheck {
    /** Creates the gate under test. */
    public KeyedSerialGateLincheckTest() {
        super(new KeyedSerialGate<>(), Integer.MAX_VALUE);
    }
}
