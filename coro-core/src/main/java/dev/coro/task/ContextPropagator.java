package dev.coro.task;

/**
 * Carries one kind of thread-bound context (an SLF4J MDC, a {@code ThreadLocal}, a tracing span)
 * across a task's hops: what the starting thread has when a task starts is captured, installed on
 * whatever thread runs each of the task's steps, and the thread's own value put back after the step.
 * Register one with {@link ContextPropagation#register}; {@link ContextPropagation#threadLocal}
 * makes one for a {@code ThreadLocal}.
 *
 * <p>When: {@link #capture()} on the thread that starts a task ({@code join}, {@code startOn},
 * {@code toCompletableFuture}, {@code Scope.spawn}, a {@code whenAll} child: a child started inside
 * a task captures what its parent's step has installed). {@link #install} and {@link #restore} on the
 * thread that runs a step, around it, paired and nested like a stack. A change a step makes to the
 * value lasts until that step ends: the next step, perhaps on another thread, sees the value captured
 * at the start again.
 *
 * <p>Implementations must not block and should not throw; an exception from {@code capture} fails
 * the start of the task, one from {@code install} or {@code restore} propagates to the thread that ran
 * the step (its scheduler's uncaught-exception handling).
 *
 * {@snippet :
 * ContextPropagator<String, String> tenant = ContextPropagation.threadLocal(TENANT); // a ThreadLocal<String>
 * try (ContextPropagation.Registration r = ContextPropagation.register(tenant)) {
 *     TENANT.set("acme");
 *     work.startOn(pool).join(); // every step of work sees "acme", on every worker
 * }
 * }
 *
 * @param <C> what is captured when a task starts
 * @param <P> what {@link #install} hands to {@link #restore}: the thread's previous context, or a
 *     scope that restores it (as OpenTelemetry's {@code makeCurrent()} returns)
 */
public interface ContextPropagator<C, P> {
    /**
     * Returns the current thread's context, to be carried by a task that starts now.
     *
     * @return the captured context (may be null)
     */
    C capture();

    /**
     * Installs {@code captured} on the current thread before a step and returns what the thread had.
     *
     * @param captured what {@link #capture()} returned when the task started
     * @return what {@link #restore} needs to put the thread's own context back
     */
    P install(C captured);

    /**
     * Puts back the thread's context after a step.
     *
     * @param previous what {@link #install} returned
     */
    void restore(P previous);
}
