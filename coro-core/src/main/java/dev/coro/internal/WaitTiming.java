package dev.coro.internal;

/**
 * The timing of one queued wait, made only while someone observes waits (a JFR recording that
 * enables {@link WaitEvent}, or a {@link WaitObserver} on the engine): when it started, and its JFR
 * event if one is being recorded. Immutable; kept in the engine's side table, by node, until the wait
 * ends (the node has no field for it: an unobserved waiter pays nothing).
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
