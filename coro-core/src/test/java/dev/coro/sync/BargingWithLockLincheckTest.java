package dev.coro.sync;

/**
 * {@link BargingMutexLincheckTest} with {@code withLock} as the waiting operation: each waiter runs
 * {@code mutex.withLock(body)}, whose body acquires and lets go at once, checked as a
 * {@code lock()}'s value is. {@code withLock} enters by the barging lane's waiting door itself, and
 * its woken waiter competes in the run loop (the unlock frame's test, {@code BargingLane.entered}),
 * not in the lock task's flatMap: the same properties hold (exclusion, each waiter ends once, no
 * waiter left waiting on a free lock, nothing left registered), and the scenario of a woken waiter
 * racing bargers makes it lose its competition and ask again.
 */
public class BargingWithLockLincheckTest extends BargingMutexLincheckTest {
    @Override
    boolean withLock() {
        return true;
    }
}
