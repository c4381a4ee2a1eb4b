package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** {@link ContextPropagation} with a real {@code ThreadLocal}, across pool hops, timers, spawns and joins. */
class ContextPropagationTest {
    private static final ThreadLocal<String> TENANT = new ThreadLocal<>();

    @Test
    void aValueSetBeforeAChainIsSeenAtEveryStepOnEveryThread() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        Set<Thread> threads = ConcurrentHashMap.newKeySet();
        Task<Void> look = Task.fromRunnable(() -> {
            seen.add(String.valueOf(TENANT.get()));
            threads.add(Thread.currentThread());
        });
        try (WorkStealingPool pool = WorkStealingPool.create(2, "ctx");
                ContextPropagation.Registration r = ContextPropagation.register(ContextPropagation.threadLocal(TENANT))) {
            Task<Void> chain = look
                    .then(Task.delay(Duration.ofMillis(1))) // resumed from the timer, on the pool
                    .then(look)
                    .then(Scope.scoped(scope -> {
                        scope.spawn(look); // a child started inside the chain
                        return scope.spawn(look.then(Task.yieldNow()).then(look));
                    }))
                    .then(Task.whenAll(List.of(look, look)).map(ignored -> (Void) null))
                    .then(look);
            TENANT.set("acme");
            try {
                chain.startOn(pool).join();
            } finally {
                TENANT.remove();
            }
            assertEquals(8, seen.size(), seen.toString());
            assertTrue(seen.stream().allMatch("acme"::equals), seen.toString());
            assertTrue(threads.stream().anyMatch(t -> t.getName().startsWith("ctx")), "no step ran on the pool: " + threads);

            List<String> plain = new CopyOnWriteArrayList<>(); // plain runnables on the workers: nothing left behind
            java.util.concurrent.CountDownLatch ran = new java.util.concurrent.CountDownLatch(8);
            for (int i = 0; i < 8; i++) {
                pool.execute(() -> {
                    plain.add(String.valueOf(TENANT.get()));
                    ran.countDown();
                });
            }
            ran.await();
            assertTrue(plain.stream().allMatch("null"::equals), "a step left its value on a worker: " + plain);

            seen.clear(); // an unrelated task on the same workers, started with no value: sees none
            Task.whenAll(List.of(look, look, look.then(Task.delay(Duration.ofMillis(1))).then(look)))
                    .startOn(pool).join();
            assertEquals(List.of("null", "null", "null", "null"), seen, "a value leaked into an unrelated task");
        }
    }

    @Test
    void aChangeInsideAStepLastsUntilTheStepEnds() {
        List<String> seen = new CopyOnWriteArrayList<>();
        try (ContextPropagation.Registration r = ContextPropagation.register(ContextPropagation.threadLocal(TENANT))) {
            TENANT.set("outer");
            try {
                Task.fromRunnable(() -> TENANT.set("changed"))
                        .then(Task.yieldNow())
                        .then(Task.fromRunnable(() -> seen.add(TENANT.get())))
                        .join();
                assertEquals("outer", TENANT.get(), "a step's change leaked to the thread that joined");
            } finally {
                TENANT.remove();
            }
        }
        assertEquals(List.of("outer"), seen);
    }

    @Test
    void tasksStartedAfterTheRegistrationIsClosedCarryNothing() {
        ContextPropagation.Registration r = ContextPropagation.register(ContextPropagation.threadLocal(TENANT));
        r.close();
        r.close(); // idempotent
        TENANT.set("acme");
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            assertNull(Task.fromCallable(TENANT::get).startOn(pool).join());
        } finally {
            TENANT.remove();
        }
    }

    @Test
    void badInput() {
        assertThrows(NullPointerException.class, () -> ContextPropagation.register(null));
        assertThrows(NullPointerException.class, () -> ContextPropagation.threadLocal(null));
        ContextPropagator<String, String> p = ContextPropagation.threadLocal(TENANT);
        try (ContextPropagation.Registration r = ContextPropagation.register(p)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ContextPropagation.register(p));
            assertTrue(e.getMessage().contains("registered already"), e.getMessage());
        }
    }
}
