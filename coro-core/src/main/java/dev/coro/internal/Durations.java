package dev.coro.internal;

import java.time.Duration;

/** Conversions of {@link Duration}s for the layers that wait for time (schedulers, the event loop, the engine). */
public final class Durations {
    private Durations() {}

    /**
     * Converts a delay to nanoseconds for a timer: negative becomes zero, and durations too long
     * for a long saturate at {@link Long#MAX_VALUE}.
     *
     * @param delay the delay
     * @return its nanoseconds, between 0 and {@link Long#MAX_VALUE}
     * @throws NullPointerException if {@code delay} is null
     */
    public static long toNanos(Duration delay) {
        if (delay.isNegative()) {
            return 0;
        }
        if (delay.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L) {
            return Long.MAX_VALUE;
        }
        return delay.toNanos();
    }
}
