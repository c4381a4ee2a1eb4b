package dev.coro.micrometer;

import dev.coro.sync.WaitListener;
import dev.coro.sync.WaitingPrimitive;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Meters for a gate or the mutex (any {@link WaitingPrimitive}), fed by a {@link WaitListener} that
 * each {@code bindTo} adds, all tagged {@code primitive=<name>} and {@code type=<class>}:
 * <ul>
 *   <li>{@code coro.wait.waiting} (gauge): tasks waiting now;</li>
 *   <li>{@code coro.wait.duration} (timer, with the 0.5, 0.95 and 0.99 percentiles): the time each
 *       admission waited, 0 for one admitted at once;</li>
 *   <li>{@code coro.wait.cancelled} (counter): queued waits cancelled, superseded or refused by a
 *       close;</li>
 *   <li>{@code coro.wait.timed.out} (counter): waits whose deadline passed before admission.</li>
 * </ul>
 * The admissions are the timer's count. Waits that started before {@code bindTo} are not counted.
 *
 * {@snippet :
 * CapacityGate db = new CapacityGate(16);
 * new WaitMetrics(db, "db").bindTo(registry);
 * }
 */
public final class WaitMetrics implements MeterBinder {
    private final WaitingPrimitive primitive;
    private final Iterable<Tag> tags;

    /**
     * Meters for {@code primitive}, tagged {@code primitive=<name>} and {@code type=<its class>}.
     *
     * @param primitive the gate or mutex
     * @param name its name in the tags
     * @throws NullPointerException if an argument is null
     */
    public WaitMetrics(WaitingPrimitive primitive, String name) {
        this(primitive, name, Tags.empty());
    }

    /**
     * Meters for {@code primitive}, with {@code tags} besides {@code primitive} and {@code type}.
     *
     * @param primitive the gate or mutex
     * @param name its name in the tags
     * @param tags further tags
     * @throws NullPointerException if an argument is null
     */
    public WaitMetrics(WaitingPrimitive primitive, String name, Iterable<Tag> tags) {
        this.primitive = Objects.requireNonNull(primitive, "primitive");
        Objects.requireNonNull(name, "name");
        this.tags = Tags.concat(Objects.requireNonNull(tags, "tags"),
                "primitive", name, "type", primitive.getClass().getSimpleName());
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("coro.wait.waiting", primitive, WaitingPrimitive::queueLength)
                .description("tasks waiting now").tags(tags).register(registry);
        Timer waited = Timer.builder("coro.wait.duration")
                .description("how long each admission waited (0 when admitted at once)")
                .publishPercentiles(0.5, 0.95, 0.99).tags(tags).register(registry);
        Counter cancelled = Counter.builder("coro.wait.cancelled")
                .description("queued waits cancelled, superseded or refused by a close").tags(tags).register(registry);
        Counter timedOut = Counter.builder("coro.wait.timed.out")
                .description("waits whose deadline passed before admission").tags(tags).register(registry);
        primitive.addListener((outcome, waitedNanos) -> {
            switch (outcome) {
                case ADMITTED -> waited.record(waitedNanos, TimeUnit.NANOSECONDS);
                case CANCELLED -> cancelled.increment();
                case TIMED_OUT -> timedOut.increment();
            }
        });
    }
}
