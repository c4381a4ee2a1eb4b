package dev.coro;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Waiting on a latch: from code that cannot throw checked exceptions, and as a test's assertion. */
public final class Latches {
    /** How long {@link #opens} waits: far past any healthy wait on a slow machine; a hang guard only. */
    private static final long HANG_GUARD_SECONDS = 60;

    private Latches() {}

    /**
     * Waits for {@code latch} to open, at most a minute, so that a test asserts what it waits for and
     * a hang fails with the test's own message ({@code assertTrue(opens(done), "...")}) before JUnit's
     * timeout. Not a timing check: a healthy wait is milliseconds even on a slow machine.
     *
     * @param latch the latch to wait for
     * @return whether it opened
     * @throws InterruptedException if interrupted while waiting (JUnit's timeout)
     */
    public static boolean opens(CountDownLatch latch) throws InterruptedException {
        return latch.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS);
    }

    /**
     * Waits for {@code latch}; an interrupt (JUnit's timeout) restores the flag and fails the caller.
     *
     * @param latch the latch to wait for
     */
    public static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a latch", e);
        }
    }
}
