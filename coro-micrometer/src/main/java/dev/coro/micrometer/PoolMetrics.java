package dev.coro.micrometer;

import dev.coro.scheduler.WorkStealingPool;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Meters for a {@link WorkStealingPool}, read from {@link WorkStealingPool#stats()} at each scrape,
 * all tagged {@code pool=<name>}:
 * <ul>
 *   <li>{@code coro.pool.workers} (gauge): the worker threads;</li>
 *   <li>{@code coro.pool.running} (gauge): workers running a task;</li>
 *   <li>{@code coro.pool.queued} (gauge, tasks): submitted and not yet started;</li>
 *   <li>{@code coro.pool.steals} (counter): times a worker took tasks from another's queue;</li>
 *   <li>{@code coro.pool.parks} (counter): times a worker parked with nothing to do;</li>
 *   <li>{@code coro.pool.rejected} (counter): submissions refused after shutdown.</li>
 * </ul>
 * The pool is held strongly by the meters: remove them (or the registry) when the pool is closed.
 *
 * {@snippet :
 * WorkStealingPool pool = WorkStealingPool.create(4, "api");
 * new PoolMetrics(pool, "api").bindTo(registry);
 * }
 */
public final class PoolMetrics implements MeterBinder {
    private final WorkStealingPool pool;
    private final Iterable<Tag> tags;

    /**
     * Meters for {@code pool}, tagged {@code pool=<name>}.
     *
     * @param pool the pool
     * @param name its name in the tags
     * @throws NullPointerException if an argument is null
     */
    public PoolMetrics(WorkStealingPool pool, String name) {
        this(pool, name, Tags.empty());
    }

    /**
     * Meters for {@code pool}, tagged {@code pool=<name>} and with {@code tags}.
     *
     * @param pool the pool
     * @param name its name in the tags
     * @param tags further tags
     * @throws NullPointerException if an argument is null
     */
    public PoolMetrics(WorkStealingPool pool, String name, Iterable<Tag> tags) {
        this.pool = Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(name, "name");
        this.tags = Tags.concat(Objects.requireNonNull(tags, "tags"), "pool", name);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "coro.pool.workers", "the pool's worker threads", null, s -> s.workers());
        gauge(registry, "coro.pool.running", "workers running a task", null, s -> s.running());
        gauge(registry, "coro.pool.queued", "tasks submitted and not yet started", "tasks", s -> s.queued());
        counter(registry, "coro.pool.steals", "times a worker took tasks from another worker's queue", s -> s.steals());
        counter(registry, "coro.pool.parks", "times a worker parked with nothing to do", s -> s.parks());
        counter(registry, "coro.pool.rejected", "submissions refused because the pool was shut down", s -> s.rejected());
    }

    private void gauge(MeterRegistry registry, String name, String description, String unit,
            ToDoubleFunction<WorkStealingPool.Stats> value) {
        Gauge.builder(name, pool, p -> value.applyAsDouble(p.stats()))
                .description(description).baseUnit(unit).tags(tags).register(registry);
    }

    private void counter(MeterRegistry registry, String name, String description,
            ToDoubleFunction<WorkStealingPool.Stats> value) {
        FunctionCounter.builder(name, pool, p -> value.applyAsDouble(p.stats()))
                .description(description).tags(tags).register(registry);
    }
}
