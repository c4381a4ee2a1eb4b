package dev.coro.sync;

/**
 * {@link AsyncMutexLincheckTest} with {@code withLock} as the waiting operation: each waiter runs
 * {@code mutex.withLock(body)}, whose body acquires and lets go at once, checked as a
 * {@code lock()}'s value is (exclusion and FIFO hand-over at every acquisition). {@code withLock} is
 * one guarded node: its exit unlocks on every path of a body that was entered and on none of a
 * waiter that was cancelled first.
 */
public class AsyncMutexWithLockLincheckTest extends AsyncMutexLincheckTest {
    @Override
    boolean withLock() {
        return true;
    }
}
