package dev.coro.micrometer;

import dev.coro.cancel.Cancellable;
import dev.coro.io.EventLoop;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Meters for an {@link EventLoop}, tagged {@code loop=<name>}:
 * <ul>
 *   <li>{@code coro.loop.timers.pending} (gauge): timers scheduled and not yet fired, as
 *       {@link EventLoop#pendingTimers()} counts them (from a scraping thread: the count the loop
 *       last published);</li>
 *   <li>{@code coro.loop.io.pending} (gauge): asynchronous I/O operations waiting for their
 *       channel, as the probe last counted them on the loop ({@link EventLoop#pendingIoOperations()});</li>
 *   <li>{@code coro.loop.lag} (timer, with the 0.5 and 0.99 percentiles): how late a probe timer,
 *       scheduled on the loop every probe interval (1 s by default), ran after its due time: how
 *       long the loop's work makes a timer or a ready channel wait.</li>
 * </ul>
 * The probe starts with the first {@code bindTo} and stops at {@link #close()}, or when the loop
 * shuts down.
 *
 * {@snippet :
 * try (EventLoopMetrics metrics = new EventLoopMetrics(loop, "io")) {
 *     metrics.bindTo(registry);
 *     // ...
 * }
 * }
 */
public final class EventLoopMetrics implements MeterBinder, AutoCloseable {
    private final EventLoop loop;
    private final Iterable<Tag> tags;
    private final Duration probeInterval;
    private final List<Timer> lags = new CopyOnWriteArrayList<>();
    private volatile boolean closed;
    private volatile Cancellable probe;

    /**
     * Meters for {@code loop}, probing its lag every second.
     *
     * @param loop the loop
     * @param name its name in the tags
     * @throws NullPointerException if an argument is null
     */
    public EventLoopMetrics(EventLoop loop, String name) {
        this(loop, name, Duration.ofSeconds(1), Tags.empty());
    }

    /**
     * Meters for {@code loop}, probing its lag every {@code probeInterval}.
     *
     * @param loop the loop
     * @param name its name in the tags
     * @param probeInterval how often the lag probe runs
     * @param tags further tags
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code probeInterval} is not positive
     */
    public EventLoopMetrics(EventLoop loop, String name, Duration probeInterval, Iterable<Tag> tags) {
        this.loop = Objects.requireNonNull(loop, "loop");
        Objects.requireNonNull(name, "name");
        this.probeInterval = Objects.requireNonNull(probeInterval, "probeInterval");
        if (probeInterval.isNegative() || probeInterval.isZero()) {
            throw new IllegalArgumentException("probeInterval must be positive, got " + probeInterval);
        }
        this.tags = Tags.concat(Objects.requireNonNull(tags, "tags"), "loop", name);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("coro.loop.timers.pending", loop, EventLoop::pendingTimers)
                .description("timers scheduled on the loop and not yet fired").tags(tags).register(registry);
        Gauge.builder("coro.loop.io.pending", loop, EventLoop::pendingIoOperations)
                .description("asynchronous I/O operations waiting for their channel (as last counted on the loop)")
                .tags(tags).register(registry);
        lags.add(Timer.builder("coro.loop.lag")
                .description("how late a probe timer ran after its due time")
                .publishPercentiles(0.5, 0.99).tags(tags).register(registry));
        if (lags.size() == 1) {
            scheduleProbe();
        }
    }

    private void scheduleProbe() {
        if (closed) {
            return;
        }
        long due = System.nanoTime() + probeInterval.toNanos();
        try {
            probe = loop.schedule(() -> {
                long lag = Math.max(0, System.nanoTime() - due);
                for (Timer t : lags) {
                    t.record(lag, TimeUnit.NANOSECONDS);
                }
                loop.pendingIoOperations(); // counted here, on the loop: what the gauge reads
                scheduleProbe();
            }, probeInterval);
        } catch (RejectedExecutionException shutDown) {
            closed = true; // the loop is shutting down: nothing left to probe
        }
        if (closed) { // closed while scheduling: take the new probe back
            Cancellable p = probe;
            if (p != null) {
                p.cancel();
            }
        }
    }

    /** Stops the lag probe; the meters stay registered. Idempotent. */
    @Override
    public void close() {
        closed = true;
        Cancellable p = probe;
        if (p != null) {
            p.cancel();
        }
    }
}
