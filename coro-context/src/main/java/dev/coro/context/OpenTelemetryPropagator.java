package dev.coro.context;

import dev.coro.task.ContextPropagation;
import dev.coro.task.ContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;

/**
 * Carries OpenTelemetry's current {@link Context} across a task's hops, and with it the current span
 * and baggage: the context current on the starting thread when a task starts is made current on
 * whatever thread runs each of the task's steps, and its {@link Scope} closed after the step. A span
 * started inside any step (on a pool worker, after a timer, after a gate let the task in, on an event
 * loop) therefore gets the span that was current at the start as its parent.
 *
 * <p>It captures a {@link Context}; {@link #install} hands the {@link Scope} it opened to
 * {@link #restore}.
 *
 * <p>Scopes are opened and closed on the same thread, properly nested (the core installs and restores
 * around each step like a stack), which is what OpenTelemetry's context storage requires. A step that
 * makes a context current itself must close its scope before the step ends, as anywhere else.
 *
 * <p>Thread-safety: stateless, one shared instance ({@link #instance()}); it uses
 * {@link Context#current()}, so whatever {@code ContextStorage} OpenTelemetry is configured with.
 *
 * {@snippet :
 * try (ContextPropagation.Registration otel = OpenTelemetryPropagator.register()) {
 *     Span request = tracer.spanBuilder("request").startSpan();
 *     try (Scope ignored = request.makeCurrent()) {
 *         handle(req).startOn(pool).join(); // spans started in handle's steps are children of request
 *     } finally {
 *         request.end();
 *     }
 * }
 * }
 */
public final class OpenTelemetryPropagator implements ContextPropagator<Context, Scope> {
    private static final OpenTelemetryPropagator INSTANCE = new OpenTelemetryPropagator();

    private OpenTelemetryPropagator() {}

    /**
     * Returns the OpenTelemetry propagator (one instance: registering it twice fails, as
     * {@link ContextPropagation#register} says).
     *
     * @return the propagator
     */
    public static OpenTelemetryPropagator instance() {
        return INSTANCE;
    }

    /**
     * Registers the OpenTelemetry propagator: tasks started from now on carry the current context.
     *
     * @return the registration, whose {@code close()} stops it for tasks started afterwards
     * @throws IllegalArgumentException if it is registered already
     */
    public static ContextPropagation.Registration register() {
        return ContextPropagation.register(INSTANCE);
    }

    /**
     * Returns the current thread's OpenTelemetry context.
     *
     * @return {@link Context#current()} (never null; the root context when nothing is current)
     */
    @Override
    public Context capture() {
        return Context.current();
    }

    /**
     * Makes {@code captured} current on this thread.
     *
     * @param captured the context that {@link #capture()} returned
     * @return the scope to close after the step
     */
    @Override
    public Scope install(Context captured) {
        return captured.makeCurrent();
    }

    /**
     * Closes the scope {@link #install} opened, making the thread's previous context current again.
     *
     * @param previous the scope that {@link #install} returned
     */
    @Override
    public void restore(Scope previous) {
        previous.close();
    }

    @Override
    public String toString() {
        return "OpenTelemetryPropagator";
    }
}
