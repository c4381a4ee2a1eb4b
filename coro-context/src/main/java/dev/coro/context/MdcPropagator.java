package dev.coro.context;

import dev.coro.task.ContextPropagation;
import dev.coro.task.ContextPropagator;
import java.util.Map;
import org.slf4j.MDC;

/**
 * Carries the SLF4J MDC across a task's hops: the map the starting thread has when a task starts is
 * set on whatever thread runs each of the task's steps, and that thread's own map put back after the
 * step, so log lines written anywhere in the task carry the same keys.
 *
 * <p>What is carried is a copy ({@link MDC#getCopyOfContextMap()}), taken when the task starts: later
 * changes on the starting thread do not reach the task, and a change a step makes to the MDC lasts
 * until that step ends (the next step sees the captured map again). A null or empty map is carried as
 * "no MDC": the step runs with the MDC cleared, and a thread that had no MDC is cleared again after
 * it, so nothing stays behind on a pooled thread.
 *
 * <p>Thread-safety: stateless, one shared instance ({@link #instance()}); each call works on the
 * current thread's MDC only. It works with whichever MDC adapter the SLF4J provider on the class path
 * supplies; with the no-operation provider it carries nothing.
 *
 * {@snippet :
 * try (ContextPropagation.Registration mdc = MdcPropagator.register()) {
 *     MDC.put("request", requestId);
 *     handle(request).startOn(pool).join(); // every step logs with request=requestId, on any worker
 * } finally {
 *     MDC.remove("request");
 * }
 * }
 */
public final class MdcPropagator implements ContextPropagator<Map<String, String>, Map<String, String>> {
    private static final MdcPropagator INSTANCE = new MdcPropagator();

    private MdcPropagator() {}

    /**
     * Returns the MDC propagator (one instance: registering it twice fails, as
     * {@link ContextPropagation#register} says).
     *
     * @return the propagator
     */
    public static MdcPropagator instance() {
        return INSTANCE;
    }

    /**
     * Registers the MDC propagator: tasks started from now on carry the MDC.
     *
     * @return the registration, whose {@code close()} stops it for tasks started afterwards
     * @throws IllegalArgumentException if it is registered already
     */
    public static ContextPropagation.Registration register() {
        return ContextPropagation.register(INSTANCE);
    }

    /**
     * Returns a copy of the current thread's MDC.
     *
     * @return the copy, or null when the thread has none
     */
    @Override
    public Map<String, String> capture() {
        return MDC.getCopyOfContextMap();
    }

    /**
     * Sets {@code captured} as the current thread's MDC (clears it when {@code captured} is null or
     * empty) and returns what the thread had.
     *
     * @param captured what {@link #capture()} returned when the task started
     * @return a copy of the thread's previous MDC, or null when it had none
     */
    @Override
    public Map<String, String> install(Map<String, String> captured) {
        Map<String, String> previous = MDC.getCopyOfContextMap();
        set(captured);
        return previous;
    }

    /**
     * Puts {@code previous} back as the current thread's MDC (clears it when null or empty).
     *
     * @param previous what {@link #install} returned
     */
    @Override
    public void restore(Map<String, String> previous) {
        set(previous);
    }

    private static void set(Map<String, String> map) {
        if (map == null || map.isEmpty()) {
            MDC.clear();
        } else {
            MDC.setContextMap(map);
        }
    }

    @Override
    public String toString() {
        return "MdcPropagator";
    }
}
