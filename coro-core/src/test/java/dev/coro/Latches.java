package dev.coro;

import java.util.concurrent.CountDownLatch;

/** Waiting on a latch from code that cannot throw checked exceptions (tasks, runnables). */
public final class Latches {
    private Latches() {}

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
