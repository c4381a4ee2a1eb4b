package dev.coro.context;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.ContextPropagation;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** {@link MicrometerContextPropagator} with Micrometer's real {@code ContextRegistry}. */
class MicrometerContextPropagatorTest {
    private static final ThreadLocal<String> TENANT = new ThreadLocal<>();
    private static final String KEY = "dev.coro.context.test.tenant";

    @Test
    void aThreadLocalRegisteredInTheGlobalRegistryFollowsTheChainAndLeavesNoValue() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        ContextRegistry.getInstance().registerThreadLocalAccessor(KEY, TENANT);
        try (Hops hops = new Hops(); ContextPropagation.Registration r = MicrometerContextPropagator.register()) {
            TENANT.set("acme");
            CompletableFuture<Void> chain;
            try {
                chain = hops.start(step -> seen.add(step + "=" + TENANT.get()));
            } finally {
                TENANT.remove();
            }
            hops.finish(chain);

            assertEquals(Hops.STEPS.stream().map(s -> s + "=acme").toList(), seen);
            List<String> left = hops.probeEveryThread(TENANT::get);
            assertTrue(left.stream().allMatch(v -> v == null), "a step left its value on a thread: " + left);

            seen.clear(); // an unrelated task started with no value: sees none
            hops.finish(hops.start(step -> seen.add(step + "=" + TENANT.get())));
            assertEquals(Hops.STEPS.stream().map(s -> s + "=null").toList(), seen);
        } finally {
            ContextRegistry.getInstance().removeThreadLocalAccessor(KEY);
        }
    }

    @Test
    void aStepSeesNoValueItsTaskDidNotStartWithAndTheThreadsOwnComesBack() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        ContextRegistry.getInstance().registerThreadLocalAccessor(KEY, TENANT);
        try (Hops hops = new Hops(); ContextPropagation.Registration r = MicrometerContextPropagator.register()) {
            hops.probeEveryThread(() -> {
                TENANT.set("thread's own"); // every worker and the loop get a value of their own
                return null;
            });
            hops.finish(hops.start(step -> seen.add(step + "=" + TENANT.get()))); // started with none

            assertEquals(Hops.STEPS.stream().map(s -> s + "=null").toList(), seen, "clearMissing(true) by default");
            List<String> after = hops.probeEveryThread(TENANT::get);
            assertTrue(after.stream().allMatch("thread's own"::equals), "a thread lost its own value: " + after);
        } finally {
            ContextRegistry.getInstance().removeThreadLocalAccessor(KEY);
        }
    }

    @Test
    void theMdcThroughMicrometersSlf4jAccessorFollowsTheChain() throws Exception {
        ContextRegistry registry = new ContextRegistry().registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("request"));
        ContextSnapshotFactory factory =
                ContextSnapshotFactory.builder().contextRegistry(registry).clearMissing(true).build();
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Hops hops = new Hops();
                ContextPropagation.Registration r = ContextPropagation.register(MicrometerContextPropagator.create(factory))) {
            MDC.put("request", "r-7");
            CompletableFuture<Void> chain;
            try {
                chain = hops.start(step -> seen.add(step + "=" + MDC.get("request")));
            } finally {
                MDC.remove("request");
            }
            hops.finish(chain);

            assertEquals(Hops.STEPS.stream().map(s -> s + "=r-7").toList(), seen);
            List<String> left = hops.probeEveryThread(() -> MDC.get("request"));
            assertTrue(left.stream().allMatch(v -> v == null), "a step left its MDC on a thread: " + left);
        }
    }

    @Test
    void aNullFactoryIsRefusedByName() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> MicrometerContextPropagator.create(null));
        assertEquals("factory", e.getMessage());
    }
}
