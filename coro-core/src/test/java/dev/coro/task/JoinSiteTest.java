package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import java.io.IOException;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, item 1: {@code join()} marks a failure with the joiner's stack once, not once per join,
 * and the mark is a public type ({@link JoinSite}), so neither a failure joined in a loop nor a
 * scope's suppressed failures show internal classes or grow without bound.
 */
class JoinSiteTest {

    private static long sites(Throwable e) {
        return List.of(e.getSuppressed()).stream().filter(s -> s instanceof JoinSite).count();
    }

    @Test
    void aFailedTaskJoinedAThousandTimesCarriesOneJoinSite() {
        IllegalStateException boom = new IllegalStateException("boom");
        Task<Object> failed = Task.failure(boom);
        for (int i = 0; i < 1_000; i++) {
            assertSame(boom, assertThrows(IllegalStateException.class, failed::join), "the same instance, every time");
        }
        assertEquals(1, boom.getSuppressed().length, "one suppressed in all");
        JoinSite site = assertInstanceOf(JoinSite.class, boom.getSuppressed()[0]);
        assertEquals("joined by thread \"" + Thread.currentThread().getName() + "\"", site.getMessage());
        assertTrue(List.of(site.getStackTrace()).stream()
                        .anyMatch(f -> f.getMethodName().equals("aFailedTaskJoinedAThousandTimesCarriesOneJoinSite")),
                "the site carries the joiner's stack");
    }

    @Test
    void anErrorJoinedAgainAndAgainAlsoCarriesOneSite() {
        AssertionError error = new AssertionError("error channel, not an exception");
        for (int i = 0; i < 1_000; i++) {
            assertSame(error, assertThrows(AssertionError.class, () -> Task.failure(error).join()));
        }
        assertEquals(1, sites(error));
    }

    @Test
    void manyThreadsJoiningOneFailedPromiseAddOneSiteInAll() throws Exception {
        Promise<String> promise = new Promise<>();
        RuntimeException boom = new RuntimeException("boom");
        promise.fail(boom);
        int threads = 8;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Throwable> unexpected = Collections.synchronizedList(new ArrayList<>());
        List<Thread> joiners = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            joiners.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 200; i++) {
                        try {
                            promise.task().join();
                            unexpected.add(new AssertionError("join returned"));
                        } catch (RuntimeException e) {
                            if (e != boom) {
                                unexpected.add(e);
                            }
                        }
                    }
                } catch (Exception e) {
                    unexpected.add(e);
                }
            }));
        }
        for (Thread t : joiners) {
            t.join();
        }
        assertEquals(List.of(), unexpected);
        assertEquals(1, sites(boom), "racing first joins still add exactly one site");
        assertEquals(1, boom.getSuppressed().length);
    }

    @Test
    void aCheckedErrorIsWrappedFreshAtEveryJoinAndNeverMarked() {
        IOException io = new IOException("disk");
        Task<Object> failed = Task.failure(io);
        CompletionException first = assertThrows(CompletionException.class, failed::join);
        CompletionException second = assertThrows(CompletionException.class, failed::join);
        assertNotSame(first, second, "each join's wrapper carries that join's stack");
        assertSame(io, first.getCause());
        assertSame(io, second.getCause());
        assertEquals(0, io.getSuppressed().length, "the checked error itself is left alone");
    }

    @Test
    void anErrorWithSuppressionDisabledIsRethrownUnmarked() {
        RuntimeException bare = new RuntimeException("bare", null, false, false) {};
        assertSame(bare, assertThrows(RuntimeException.class, () -> Task.failure(bare).join()));
        assertEquals(0, bare.getSuppressed().length);
    }

    @Test
    void aScopesSuppressedFailuresCarryNoInternalClassNames() {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "join-site-test")) {
            for (int round = 0; round < 3; round++) {
                Scope scope = Scope.on(pool);
                // every child fails with an error that was joined inside it, so each carries a site
                for (int i = 0; i < 4; i++) {
                    RuntimeException inner = new RuntimeException("child " + i);
                    scope.spawn(Task.onVirtualThread(() -> Task.failure(inner).join()));
                }
                RuntimeException thrown = assertThrows(RuntimeException.class, scope::joinBlocking);
                assertThrows(RuntimeException.class, scope::joinBlocking); // joined twice: still one site
                Set<Throwable> tree = Collections.newSetFromMap(new IdentityHashMap<>());
                collect(thrown, tree);
                for (Throwable t : tree) {
                    Class<?> type = t.getClass();
                    if (type.getName().startsWith("dev.coro.")) {
                        assertTrue(Modifier.isPublic(type.getModifiers()) && type.getEnclosingClass() == null,
                                "only public top-level Coro types in a failure, found " + type.getName());
                    }
                    assertFalse(type.getName().contains("ThreadLoop"), type.getName());
                    assertTrue(sites(t) <= 1, "at most one site on " + t);
                }
                assertEquals(1, sites(thrown));
                assertEquals(3, thrown.getSuppressed().length - 1, "the three later failures, and one site");
            }
        }
    }

    private static void collect(Throwable t, Set<Throwable> into) {
        if (t == null || !into.add(t)) {
            return;
        }
        collect(t.getCause(), into);
        for (Throwable s : t.getSuppressed()) {
            collect(s, into);
        }
    }
}
