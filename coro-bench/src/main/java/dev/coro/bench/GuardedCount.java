package dev.coro.bench;

import dev.coro.bench.peers.KotlinxMutexPeers;

/**
 * What the contended-counter benchmarks share ({@link MutexContended}, {@link GateSerial}): tasks
 * that each pass a lock or serial gate {@code locks} times and increment a plain {@code long} inside,
 * the check that no increment was lost (a broken exclusion loses some), and kotlinx's mutex peer.
 */
final class GuardedCount {
    private GuardedCount() {}

    /**
     * Checks a count after an operation of {@code tasks} tasks of {@code locks} increments each.
     *
     * @return {@code value}
     * @throws IllegalStateException if {@code value} is not {@code tasks * locks}
     */
    static long check(long value, int tasks, int locks) {
        long expected = (long) tasks * locks;
        if (value != expected) {
            throw new IllegalStateException("counter is " + value + ", expected " + expected
                    + ": the gate or lock let increments race");
        }
        return value;
    }

    /**
     * Checks that the lock or gate under test is free once every task ended.
     *
     * @throws IllegalStateException if {@code stillHeld}, naming {@code what} and {@code state}
     *     ("the mutex", "locked")
     */
    static void requireFree(boolean stillHeld, String what, String state) {
        if (stillHeld) {
            throw new IllegalStateException(what + " is still " + state + " after every task ended");
        }
    }

    /**
     * kotlinx.coroutines: {@code runBlocking(dispatcher) { repeat(tasks) { launch { repeat(locks)
     * { mutex.withLock { counter++ } } } } }} on the two-thread Default scheduler (Kotlin,
     * {@code KotlinxMutexPeers.kt}), watched as {@code name}, then checked.
     *
     * @return the count
     */
    static long kotlinxMutex(int tasks, int locks, Pools.Kotlinx kx, String name) {
        long result;
        Watchdog.begin(name);
        try {
            result = KotlinxMutexPeers.kotlinxMutexContended(tasks, locks, kx.dispatcher);
        } finally {
            Watchdog.end();
        }
        return check(result, tasks, locks);
    }
}
