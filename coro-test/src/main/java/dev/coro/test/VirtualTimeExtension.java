package dev.coro.test;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that gives a test a fresh {@link VirtualTimeScheduler} (as a parameter) and,
 * after the test, runs what is still queued on it and fails the test if a task is still queued or a
 * timer still pending: work that leaked past the test, listed in the message. {@link CoroTest} is
 * the annotation that applies it.
 *
 * {@snippet :
 * @ExtendWith(VirtualTimeExtension.class)
 * class CacheTest {
 *     @Test
 *     void expires(VirtualTimeScheduler scheduler) {
 *         // ... code that takes its time and timers from scheduler ...
 *     }
 * }
 * }
 */
@SuppressWarnings("exports") // JUnit is an optional (static) dependency: only JUnit users meet these types
public final class VirtualTimeExtension implements ParameterResolver, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(VirtualTimeExtension.class);

    /** Creates the extension (JUnit does, through {@code @ExtendWith}). */
    public VirtualTimeExtension() {}

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == VirtualTimeScheduler.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getStore(NAMESPACE).getOrComputeIfAbsent("scheduler", key -> VirtualTimeScheduler.create(),
                VirtualTimeScheduler.class);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        VirtualTimeScheduler scheduler = context.getStore(NAMESPACE).get("scheduler", VirtualTimeScheduler.class);
        if (scheduler != null) {
            CoroTests.assertNothingPending(scheduler, context.getDisplayName());
        }
    }
}
