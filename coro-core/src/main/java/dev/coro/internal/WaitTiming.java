package dev.coro.internal;

/**
 * The timing of one queued wait, made only while someone observes waits (a JFR recording that
 * enables {@link WaitEvent}, or a {@link WaitObserver} on the engine): when it started, and its JFR
 * event if one is being recorded. Immutable; carried by the waiter's node until the wait ends.
 */
final class WaitTiming {
    final long startNanos;
    /** The JFR event, or null when no recording enables it. */
    final WaitEvent event;

    WaitTiming(long startNanos, WaitEvent event) {
        this.startNanos = startNanos;
        this.event = event;
    }
}
