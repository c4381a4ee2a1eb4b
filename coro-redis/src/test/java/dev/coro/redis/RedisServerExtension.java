package dev.coro.redis;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test class a real {@link RedisServer}: one private {@code redis-server} per test run,
 * started on first use and stopped when the run ends (the root store closes it). If the binary is
 * missing, the class's tests are skipped by an assumption, and one line on standard error says why.
 *
 * {@snippet :
 * @ExtendWith(RedisServerExtension.class)
 * class SomeRedisTest {
 *     @Test
 *     void uses(RedisServer redis) { ... }
 * }
 * }
 */
final class RedisServerExtension implements BeforeAllCallback, ParameterResolver {
    private static final String WHY = "coro-redis tests skipped: no redis-server at " + RedisServer.BINARY
            + " (install the redis-server package, or set -Dcoro.redis.server=PATH)";
    private static volatile boolean told;

    @Override
    public void beforeAll(ExtensionContext context) {
        if (!RedisServer.available()) {
            if (!told) {
                told = true;
                System.err.println(WHY);
            }
            Assumptions.abort(WHY);
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == RedisServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.create(RedisServerExtension.class))
                .getOrComputeIfAbsent(RedisServer.class, k -> {
                    try {
                        return RedisServer.start();
                    } catch (Exception e) {
                        throw new IllegalStateException("could not start " + RedisServer.BINARY + ": " + e, e);
                    }
                }, RedisServer.class);
    }
}
