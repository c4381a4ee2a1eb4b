package dev.coro.examples.io;

import dev.coro.cancel.Cancellable;
import dev.coro.io.EventLoop;
import dev.coro.sync.Event;
import dev.coro.task.Task;
import java.time.Duration;

/**
 * A periodic timer on an {@link EventLoop}, read like the seed's {@code timerfd}: it expires every
 * {@code period} at fixed rate (the k-th expiry is due {@code k * period} after {@link #start()}, so
 * lateness does not accumulate), and {@link #await()} completes with the number of expirations since
 * the last await, waiting if there were none.
 *
 * <p>Confined to the loop: start it, await it and stop it from tasks running on the loop.
 */
final class Ticker {
    private final EventLoop loop;
    private final long period;
    private final Event<Void> expired = new Event<>();
    private long start;
    private long fired;
    private long unread;
    private Cancellable timer;

    Ticker(EventLoop loop, Duration period) {
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive, was " + period);
        }
        this.loop = loop;
        this.period = period.toNanos();
    }

    /** Arms the first expiry one period from now; returns the start time on the loop's clock. */
    long start() {
        assert loop.inEventLoop();
        start = loop.nanoTime();
        arm();
        return start;
    }

    private void arm() {
        long due = start + (fired + 1) * period;
        timer = loop.schedule(this::expire, Duration.ofNanos(due - loop.nanoTime()));
    }

    private void expire() {
        fired++;
        unread++;
        arm(); // before waking the reader, which may stop the ticker
        expired.set();
    }

    /** Waits for the next expiry unless some are unread; completes with how many there were. */
    Task<Long> await() {
        return Task.defer(() -> unread > 0 ? Task.value(take()) : expired.await().map(x -> take()));
    }

    private long take() {
        long n = unread;
        unread = 0;
        expired.reset();
        return n;
    }

    /** Stops expiring. */
    void stop() {
        if (timer != null) {
            timer.cancel();
        }
    }
}
