/**
 * Coro context propagation: {@link dev.coro.task.ContextPropagator}s for the contexts that
 * libraries keep in thread-locals, so they follow a task across pool hops, timers, gate hand-offs and
 * event-loop resumptions.
 *
 * <p>Each propagator needs only its own library, which is an optional dependency of this module:
 * <ul>
 *   <li>{@link dev.coro.context.MdcPropagator}: the SLF4J 2 MDC ({@code org.slf4j:slf4j-api});</li>
 *   <li>{@link dev.coro.context.OpenTelemetryPropagator}: OpenTelemetry's current {@code Context},
 *       and with it the current span ({@code io.opentelemetry:opentelemetry-api});</li>
 *   <li>{@link dev.coro.context.MicrometerContextPropagator}: every {@code ThreadLocalAccessor}
 *       registered in Micrometer's {@code ContextRegistry}, the registry Reactor uses
 *       ({@code io.micrometer:context-propagation}).</li>
 * </ul>
 */
module dev.coro.context {
    requires transitive dev.coro;
    requires static org.slf4j;
    requires static io.opentelemetry.context;
    requires static context.propagation;

    exports dev.coro.context;
}
