package dev.coro.context;

import dev.coro.task.ContextPropagation;
import dev.coro.task.ContextPropagator;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import java.util.Objects;

/**
 * Bridges Micrometer's {@link ContextRegistry} (the registry Reactor and Micrometer Tracing use) to
 * Coro: every {@code ThreadLocalAccessor} registered there follows a task across its hops. A team that
 * registers its accessors once (its own thread-locals, the MDC through Micrometer's
 * {@code Slf4jThreadLocalAccessor}) gets them in Reactor operators and in Coro tasks alike.
 *
 * <p>When a task starts, the factory's {@link ContextSnapshotFactory#captureAll captureAll()} takes a
 * snapshot of every accessor's value on the starting thread; around each step,
 * {@link ContextSnapshot#setThreadLocals()} sets them on the running thread and the returned
 * {@link ContextSnapshot.Scope} is closed after the step, which puts the thread's own values back.
 * With the default factory ({@link #create()}), accessors with no value at the start are cleared for
 * the step ({@code clearMissing(true)}), so a step never sees a value its task did not start with; a
 * factory built with {@code clearMissing(false)} leaves such thread-locals as the running thread has
 * them. Accessors are read when a task starts: one registered later affects tasks started later.
 *
 * <p>It captures a {@link ContextSnapshot}; {@link #install} hands the {@link ContextSnapshot.Scope}
 * it opened to {@link #restore}.
 *
 * <p>Thread-safety: immutable; the factory and the registry are thread-safe.
 *
 * {@snippet :
 * ContextRegistry.getInstance().registerThreadLocalAccessor("tenant", TENANT); // once, for Reactor too
 * try (ContextPropagation.Registration r = MicrometerContextPropagator.register()) {
 *     TENANT.set("acme");
 *     work.startOn(pool).join(); // every step of work sees "acme"
 * }
 * }
 */
public final class MicrometerContextPropagator implements ContextPropagator<ContextSnapshot, ContextSnapshot.Scope> {
    private final ContextSnapshotFactory factory;

    private MicrometerContextPropagator(ContextSnapshotFactory factory) {
        this.factory = factory;
    }

    /**
     * Returns a propagator over {@link ContextRegistry#getInstance()}, clearing for a step the
     * thread-locals that had no value when its task started.
     *
     * @return the propagator (register it to use it)
     */
    public static MicrometerContextPropagator create() {
        return new MicrometerContextPropagator(ContextSnapshotFactory.builder()
                .contextRegistry(ContextRegistry.getInstance())
                .clearMissing(true)
                .build());
    }

    /**
     * Returns a propagator whose snapshots {@code factory} takes (its registry, key filter and
     * {@code clearMissing} setting).
     *
     * @param factory takes the snapshot when a task starts
     * @return the propagator (register it to use it)
     * @throws NullPointerException if {@code factory} is null
     */
    public static MicrometerContextPropagator create(ContextSnapshotFactory factory) {
        return new MicrometerContextPropagator(Objects.requireNonNull(factory, "factory"));
    }

    /**
     * Creates a propagator over {@link ContextRegistry#getInstance()} (as {@link #create()}) and
     * registers it: tasks started from now on carry every registered thread-local. Each call registers
     * another propagator, so call it once and keep the registration.
     *
     * @return the registration, whose {@code close()} stops it for tasks started afterwards
     */
    public static ContextPropagation.Registration register() {
        return ContextPropagation.register(create());
    }

    /**
     * Takes a snapshot of the current thread's values of every registered accessor.
     *
     * @return the {@link ContextSnapshot}
     */
    @Override
    public ContextSnapshot capture() {
        return factory.captureAll();
    }

    /**
     * Sets the snapshot's values on this thread.
     *
     * @param captured the snapshot that {@link #capture()} returned
     * @return the scope to close after the step
     */
    @Override
    public ContextSnapshot.Scope install(ContextSnapshot captured) {
        return captured.setThreadLocals();
    }

    /**
     * Closes the scope {@link #install} opened, putting back the thread's own values.
     *
     * @param previous the scope that {@link #install} returned
     */
    @Override
    public void restore(ContextSnapshot.Scope previous) {
        previous.close();
    }

    @Override
    public String toString() {
        return "MicrometerContextPropagator[" + factory + "]";
    }
}
