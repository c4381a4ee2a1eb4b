package dev.coro.gate;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.TimeSource;
import dev.coro.scheduler.Scheduler;

/**
 * A scheduler's clock and timers as the admission engine's {@link TimeSource}: a gate whose waiters
 * expire or age reads time on the scheduler it was given, so a virtual-time scheduler drives it
 * exactly in tests.
 */
final class SchedulerClock implements TimeSource {
    /** The scheduler whose clock and timers these are. */
    final Scheduler scheduler;

    SchedulerClock(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    @Override
    public long nanoTime() {
        return scheduler.nanoTime();
    }

    /** The scheduler's absolute timer: a virtual clock advanced meanwhile does not make it late. */
    @Override
    public Runnable scheduleAt(Runnable action, long deadlineNanos) {
        Cancellable timer = scheduler.scheduleAt(action, deadlineNanos);
        return timer::cancel;
    }

    /**
     * The scheduler's time plus {@code timeoutNanos} (at least 0), saturating at
     * {@link Long#MAX_VALUE}, which the engine reads as never.
     */
    long deadlineAfter(long timeoutNanos) {
        long now = scheduler.nanoTime();
        return now > Long.MAX_VALUE - timeoutNanos ? Long.MAX_VALUE : now + timeoutNanos;
    }
}
