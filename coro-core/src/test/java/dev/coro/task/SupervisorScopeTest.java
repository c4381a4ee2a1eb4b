package dev.coro.task;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Supervisor scopes: {@link Scope#supervisorOn} and {@link Scope#supervised}. */
class SupervisorScopeTest {
    private final WorkStealingPool pool = WorkStealingPool.create(2, "supervisor-test");
    private final ConcurrentLinkedQueue<Throwable> reported = new ConcurrentLinkedQueue<>();

    @AfterEach
    void tearDown() {
        pool.close();
    }

    @Test
    void aFailingChildLeavesItsSiblingsRunningAndJoinCompletesNormally() throws Throwable {
        collectingReports(() -> {
            Scope scope = Scope.supervisorOn(pool);
            assertTrue(scope.isSupervisor());
            RuntimeException boom = new RuntimeException("boom");
            Promise<Integer> slow = new Promise<>();
            Task<Integer> failing = scope.spawn(Task.failure(boom));
            Task<Integer> sibling = scope.spawn(slow.task().map(x -> x + 1));
            assertSame(boom, assertThrows(RuntimeException.class, failing::join), "seen through the handle");
            assertFalse(scope.isCancelled(), "a child's failure does not cancel a supervisor");
            assertEquals(1, scope.activeCount(), "the sibling still runs");
            slow.complete(41);
            assertEquals(42, sibling.join());
            scope.joinBlocking(); // normally: the failure is the handle's, not the join's
            scope.close();
            assertTrue(reported.isEmpty(), "the failure was observed through its handle: nothing to report");
            assertEquals("Scope[active=0, supervisor, closed]", scope.toString());
        });
    }

    @Test
    void cancellingTheSupervisorCancelsEveryChildAndJoinEndsCancelled() throws Throwable {
        collectingReports(() -> {
            Scope scope = Scope.supervisorOn(pool);
            AtomicInteger cleaned = new AtomicInteger();
            for (int i = 0; i < 5; i++) {
                scope.spawn(Task.never().andFinally(cleaned::incrementAndGet));
            }
            scope.spawn(Task.failure(new RuntimeException("ignored by the supervisor"))).outcome().join();
            assertFalse(scope.isCancelled());
            scope.cancel();
            assertThrows(CancellationException.class, scope::joinBlocking);
            assertEquals(5, cleaned.get(), "every child was cancelled and had ended when join returned");
        });
    }

    @Test
    void closeCancelsTheChildrenStillRunningAndWaits() throws Throwable {
        collectingReports(() -> {
            AtomicInteger ended = new AtomicInteger();
            CountDownLatch waiting = new CountDownLatch(2);
            try (Scope scope = Scope.supervisorOn(pool)) {
                for (int i = 0; i < 2; i++) {
                    scope.spawn(Task.fromRunnable(waiting::countDown).then(Task.never())
                            .andFinally(ended::incrementAndGet));
                }
                assertTrue(waiting.await(10, SECONDS));
            }
            assertEquals(2, ended.get());
            assertTrue(reported.isEmpty(), "cancelled children are not failures");
        });
    }

    @Test
    void aFailureNobodyObservedIsReportedToTheClosingThreadAtClose() throws Throwable {
        collectingReports(() -> {
            RuntimeException unseen = new RuntimeException("unseen");
            RuntimeException seen = new RuntimeException("seen");
            Scope scope = Scope.supervisorOn(pool);
            scope.spawn(Task.failure(unseen)); // its handle is dropped
            Task<Object> watched = scope.spawn(Task.failure(seen));
            scope.joinBlocking(); // both have failed; join says nothing of it
            assertTrue(reported.isEmpty(), "nothing is reported before close: a handle may still be awaited");
            assertSame(seen, assertThrows(RuntimeException.class, watched::join)); // observed after it failed
            scope.close();
            assertEquals(List.of(unseen), List.copyOf(reported));
            scope.close();
            assertEquals(1, reported.size(), "reported once");
        });
    }

    @Test
    void aWaitStartedBeforeTheChildFailsObservesItToo() throws Throwable {
        collectingReports(() -> {
            RuntimeException boom = new RuntimeException("boom");
            Promise<Void> go = new Promise<>();
            Scope scope = Scope.supervisorOn(pool);
            Task<Object> handle = scope.spawn(go.task().then(Task.failure(boom)));
            var outcome = handle.outcome().toCompletableFuture(); // waiting before the failure
            go.complete(null);
            assertInstanceOf(Outcome.Failure.class, outcome.join());
            scope.close();
            assertTrue(reported.isEmpty());
        });
    }

    @Test
    void whenAllOverHandlesObservesEveryChild() throws Throwable {
        collectingReports(() -> {
            Scope scope = Scope.supervisorOn(pool);
            RuntimeException a = new RuntimeException("a");
            List<Task<Integer>> handles = List.of(scope.spawn(Task.failure(a)), scope.spawn(Task.value(2)));
            scope.joinBlocking();
            assertSame(a, assertThrows(RuntimeException.class, () -> Task.whenAll(handles).join()));
            scope.close();
            assertTrue(reported.isEmpty(), "whenAll waited on both handles");
        });
    }

    @Test
    void supervisedCollectsOutcomesWhileSiblingsRunOn() throws Throwable {
        collectingReports(() -> {
            RuntimeException boom = new RuntimeException("boom");
            Promise<Integer> later = new Promise<>();
            Task<List<Outcome<Integer>>> t = Scope.<List<Outcome<Integer>>>supervised(scope -> {
                List<Task<Outcome<Integer>>> outcomes = new ArrayList<>();
                outcomes.add(scope.spawn(Task.<Integer>failure(boom)).outcome());
                // completed only once the failure is in: a fail-fast scope would have cancelled it
                outcomes.add(scope.spawn(later.task()).outcome());
                return outcomes.get(0).then(Task.fromRunnable(() -> later.complete(2))).then(Task.whenAll(outcomes));
            }); // joined from this thread, where a report would go
            List<Outcome<Integer>> result = t.join();
            assertEquals(new Outcome.Failure<Integer>(boom), result.get(0));
            assertEquals(new Outcome.Value<>(2), result.get(1), "the sibling was not cancelled by the failure");
            assertTrue(reported.isEmpty());
        });
    }

    @Test
    void supervisedReportsAFailureNobodyObservedOnTheThreadThatEndsIt() throws Throwable {
        collectingReports(() -> {
            RuntimeException unseen = new RuntimeException("unseen");
            // joined from this thread: the task (and so its end) runs here
            Integer v = Scope.<Integer>supervised(scope -> {
                scope.spawn(Task.failure(unseen));
                return Task.value(5);
            }).join();
            assertEquals(5, v);
            assertEquals(List.of(unseen), List.copyOf(reported));
        });
    }

    @Test
    void aFailingBodyOrACancelledSupervisedTaskCancelsItsChildren() throws Throwable {
        collectingReports(() -> {
            AtomicInteger cleaned = new AtomicInteger();
            RuntimeException body = new RuntimeException("body");
            Task<Object> failing = Scope.supervised(scope -> {
                scope.spawn(Task.never().andFinally(cleaned::incrementAndGet));
                return Task.failure(body);
            }).startOn(pool);
            assertSame(body, assertThrows(RuntimeException.class, failing::join));
            assertEquals(1, cleaned.get());

            CountDownLatch running = new CountDownLatch(1);
            TaskHandle<Object> handle = Scope.supervised(scope -> {
                scope.spawn(Task.fromRunnable(running::countDown).then(Task.never())
                        .andFinally(cleaned::incrementAndGet));
                return Task.never();
            }).start(pool);
            assertTrue(await(running));
            handle.cancel();
            assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
            assertEquals(2, cleaned.get(), "the child had ended when the cancelled task ended");
        });
    }

    @Test
    void badInput() {
        assertEquals("scheduler",
                assertThrows(NullPointerException.class, () -> Scope.supervisorOn(null)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> Scope.supervised(null)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class, () -> Scope.supervisorOn(pool).spawn(null))
                .getMessage());
    }

    /**
     * Runs {@code body} with this thread's uncaught-exception handler collecting into {@link #reported}
     * (tests run on a timeout thread of JUnit's, so the handler is set where the test runs).
     */
    private void collectingReports(Executable body) throws Throwable {
        Thread th = Thread.currentThread();
        Thread.UncaughtExceptionHandler previous = th.getUncaughtExceptionHandler();
        th.setUncaughtExceptionHandler((t, e) -> reported.add(e));
        try {
            body.execute();
        } finally {
            th.setUncaughtExceptionHandler(previous);
        }
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(10, SECONDS);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
