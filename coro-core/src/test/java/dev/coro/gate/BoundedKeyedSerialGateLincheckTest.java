package dev.coro.gate;

/**
 * {@link KeyedSerialGateLincheck} on a gate bounded to one key at a time: the keys' slots (a
 * permit lane of their own) taken by a key's first admitted operation and given back by its entry's
 * last user, racing newcomers of both keys.
 */
public class BoundedKeyedSerialGateLincheckTest extends KeyedSerialGateLincheck {
    /** Creates the gate under test. */
    public BoundedKeyedSerialGateLincheckTest() {
        super(new KeyedSerialGate<>(1, 16), 1); // a small table: short visits
    }
}
