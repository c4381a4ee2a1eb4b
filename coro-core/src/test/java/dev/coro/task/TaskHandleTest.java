package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.CancellationSource;
import dev.coro.cancel.CancellationToken;
import dev.coro.scheduler.WorkStealingPool;
import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Issue 14, item 3: {@link Task#start()} and the {@link TaskHandle} it returns. */
class TaskHandleTest {
    private final WorkStealingPool pool = WorkStealingPool.create(2, "handle-test");

    @AfterEach
    void closePool() {
        pool.close();
    }

    /** A task that waits until cancelled, counting its starts and its releases. */
    private static Task<String> hanging(AtomicInteger started, AtomicInteger released) {
        return Task.create(c -> {
            started.incrementAndGet();
            c.onCancel(released::incrementAndGet);
        });
    }

    private static <T> Task<T> underToken(Task<T> task, CancellationToken token) {
        return new Nodes.WithContext<>(task, c -> c.withToken(token));
    }

    @Test
    void startRunsTheTaskOnceNowAndEveryDoorReportsIt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        TaskHandle<Integer> handle = Task.fromCallable(runs::incrementAndGet).map(x -> x * 42).start();
        assertTrue(handle.isDone(), "start() runs inline: a synchronous task has ended when it returns");
        assertEquals(42, handle.join());
        assertEquals(42, handle.join());
        assertEquals(new Outcome.Value<>(42), handle.outcome().join());
        assertEquals(42, handle.task().join());
        assertEquals(42, handle.toCompletableFuture().get());
        assertEquals(1, runs.get(), "waiting on the handle never runs the task again");
        assertEquals("TaskHandle[Value[value=42]]", handle.toString());
    }

    @Test
    void startOnASchedulerSubmitsItThere() {
        Promise<Void> go = new Promise<>();
        TaskHandle<String> handle = go.task().then(Task.fromCallable(() -> Thread.currentThread().getName()))
                .start(pool);
        assertFalse(handle.isDone());
        assertEquals("TaskHandle[running]", handle.toString());
        go.complete(null);
        assertTrue(handle.join().startsWith("handle-test-worker-"), "resumed on the pool");
        assertTrue(handle.isDone());
    }

    @Test
    void cancelEndsTheRunAtItsWaitAndTheOutcomeSaysCancelled() {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        TaskHandle<String> handle = hanging(started, released).start();
        assertEquals(1, started.get());
        assertFalse(handle.isDone());
        assertTrue(handle.cancel(), "the first request");
        assertFalse(handle.cancel(), "idempotent");
        assertEquals(1, released.get(), "the wait was released");
        assertTrue(handle.isDone());
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join(), "a value, not an exception");
        assertThrows(CancellationException.class, handle::join);
        assertThrows(CancellationException.class, () -> handle.task().join());
        assertTrue(handle.toCompletableFuture().isCancelled());
    }

    @Test
    void cancelAfterTheRunEndedChangesNothing() {
        TaskHandle<Integer> handle = Task.value(1).start();
        assertFalse(handle.cancel());
        assertEquals(new Outcome.Value<>(1), handle.outcome().join());
    }

    @Test
    void aCancelledWaitIsNotACancelledRun() {
        Promise<String> reply = new Promise<>();
        TaskHandle<String> handle = reply.task().start(pool);
        CancellationSource waiter = new CancellationSource();
        waiter.cancel();
        assertThrows(CancellationException.class, () -> underToken(handle.outcome(), waiter.token()).join(),
                "the wait ends on the cancelled channel");
        assertThrows(CancellationException.class, () -> underToken(handle.task(), waiter.token()).join());
        CompletableFuture<Outcome<String>> pendingWait = handle.outcome().toCompletableFuture();
        pendingWait.cancel(false); // a wait cancelled while pending unregisters; the run goes on
        assertFalse(handle.isDone(), "no wait's cancellation reached the run");
        reply.complete("late");
        assertEquals(new Outcome.Value<>("late"), handle.outcome().join());
        assertEquals("late", handle.join());
    }

    @Test
    void aFailedRunGivesTheSameErrorWithOneJoinSiteHoweverOftenItIsJoined() {
        IllegalStateException boom = new IllegalStateException("boom");
        TaskHandle<Object> handle = Task.failure(boom).start(pool);
        for (int i = 0; i < 1_000; i++) {
            assertSame(boom, assertThrows(IllegalStateException.class, handle::join));
        }
        assertEquals(1, boom.getSuppressed().length);
        assertInstanceOf(JoinSite.class, boom.getSuppressed()[0]);
        assertEquals(new Outcome.Failure<>(boom), handle.outcome().join());
        IOException io = new IOException("disk");
        TaskHandle<Object> checked = Task.failure(io).start();
        assertSame(io, assertThrows(CompletionException.class, checked::join).getCause());
        assertSame(io, assertThrows(ExecutionException.class, () -> checked.toCompletableFuture().get()).getCause());
    }

    @Test
    void anInterruptedJoinAbandonsTheWaitNotTheRun() {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        TaskHandle<String> handle = hanging(started, released).start();
        Thread.currentThread().interrupt();
        CancellationException e = assertThrows(CancellationException.class, handle::join);
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
        assertTrue(e.getMessage().contains("abandoned"), e.getMessage());
        assertFalse(handle.isDone(), "the run goes on");
        assertEquals(0, released.get());
        handle.cancel();
        assertEquals(1, released.get());
        Thread.currentThread().interrupt();
        assertThrows(CancellationException.class, handle::join, "an ended run is reported even when interrupted");
        assertTrue(Thread.interrupted());
        Thread.currentThread().interrupt();
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
        assertTrue(Thread.interrupted());
    }

    @Test
    void theParentTokenCancelsTheRun() {
        CancellationSource parent = new CancellationSource();
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        TaskHandle<String> handle = hanging(started, released).start(pool, parent.token());
        CompletableFuture<Outcome<String>> seen = handle.outcome().toCompletableFuture();
        parent.cancel();
        assertInstanceOf(Outcome.Cancelled.class, seen.join());
        assertTrue(handle.isDone());
        assertFalse(handle.cancel(), "cancelled already, through the parent");
    }

    @Test
    void anAlreadyCancelledParentCancelsTheRunAtItsFirstWait() {
        CancellationSource parent = new CancellationSource();
        parent.cancel();
        AtomicInteger steps = new AtomicInteger();
        TaskHandle<Integer> handle = Task.fromCallable(steps::incrementAndGet).then(Task.<Integer>never())
                .start(pool, parent.token());
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
        assertEquals(1, steps.get(), "the synchronous step before the wait ran");
    }

    @Test
    void endedRunsUnlinkFromALongLivedParent() throws Exception {
        CancellationSource parent = new CancellationSource();
        for (int i = 0; i < 10_000; i++) {
            Promise<Integer> p = new Promise<>();
            TaskHandle<Integer> h = p.task().start(pool, parent.token());
            p.complete(i);
            assertEquals(i, h.join());
        }
        var linkedCount = CancellationToken.class.getDeclaredMethod("linkedCount");
        linkedCount.setAccessible(true);
        assertTrue((int) linkedCount.invoke(parent.token()) <= 64,
                "registrations left on the parent: " + linkedCount.invoke(parent.token()));
        assertFalse(parent.isCancelled());
    }

    @Test
    void startInsideAVirtualThreadBodyTakesItsValuesAndItsToken() throws Exception {
        Context.Key<String> user = Context.Key.named("user");
        Task<String> read = Task.context().map(c -> c.get(user));
        assertEquals("ada", Task.onVirtualThread(() -> read.start().join()).withValue(user, "ada").join());
        AtomicInteger released = new AtomicInteger();
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(1);
        Task<String> hangingOnce = Task.create(c -> {
            c.onCancel(released::incrementAndGet);
            waiting.countDown();
        });
        CompletableFuture<TaskHandle<String>> inner = new CompletableFuture<>();
        CompletableFuture<Object> body = Task.onVirtualThread(() -> {
            inner.complete(hangingOnce.start(pool));
            return Task.never().join();
        }).toCompletableFuture();
        TaskHandle<String> handle = inner.join();
        waiting.await(); // the run waits on the pool (else it would end cancelled before it began)
        body.cancel(false); // cancels the body's task, and with it the run started under its token
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
        assertEquals(1, released.get());
    }

    @Test
    void cancellingAFutureOfTheHandleCancelsTheRun() {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        TaskHandle<String> handle = hanging(started, released).start();
        CompletableFuture<String> first = handle.toCompletableFuture();
        CompletableFuture<String> second = handle.toCompletableFuture();
        assertNotSame(first, second);
        assertTrue(first.cancel(false));
        assertEquals(1, released.get());
        assertTrue(second.isCancelled(), "every future completes as the run did");
        assertInstanceOf(Outcome.Cancelled.class, handle.outcome().join());
    }

    @Test
    void aSchedulerThatRefusesTheStartThrowsAndNothingRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CancellationSource parent = new CancellationSource();
        pool.shutdown();
        Task<Integer> task = Task.fromCallable(runs::incrementAndGet);
        assertThrows(RejectedExecutionException.class, () -> task.start(pool));
        assertThrows(RejectedExecutionException.class, () -> task.start(pool, parent.token()));
        assertEquals(0, runs.get());
        var linkedCount = CancellationToken.class.getDeclaredMethod("linkedCount");
        linkedCount.setAccessible(true);
        assertEquals(0, (int) linkedCount.invoke(parent.token()), "the refused run left no registration");
    }

    @Test
    void cancelRacingCompletionHasOneWinnerThatEveryDoorAgreesOn() throws Exception {
        int cancelledRuns = 0;
        for (int i = 0; i < 2_000; i++) {
            Promise<Integer> p = new Promise<>();
            TaskHandle<Integer> handle = p.task().start();
            CompletableFuture<Integer> future = handle.toCompletableFuture();
            int value = i;
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            pool.execute(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                p.complete(value);
            });
            go.countDown();
            boolean requested = handle.cancel();
            Outcome<Integer> o = handle.outcome().join();
            if (o instanceof Outcome.Cancelled<Integer>) {
                cancelledRuns++;
                assertTrue(requested, "only a cancel request can end the run cancelled");
                assertThrows(CancellationException.class, handle::join);
                assertTrue(future.isCancelled());
            } else {
                assertEquals(new Outcome.Value<>(value), o);
                assertEquals(value, handle.join());
                assertEquals(value, future.join());
            }
            assertTrue(handle.isDone());
            assertEquals(o, handle.outcome().join(), "the outcome never changes");
        }
        assertTrue(cancelledRuns > 0, "the cancel never won once in 2,000 runs");
    }

    @Test
    void badInputIsRejectedByName() {
        Task<Integer> task = Task.value(1);
        assertEquals("scheduler", assertThrows(NullPointerException.class, () -> task.start(null)).getMessage());
        assertEquals("scheduler", assertThrows(NullPointerException.class,
                () -> task.start(null, CancellationToken.NONE)).getMessage());
        assertEquals("parent", assertThrows(NullPointerException.class, () -> task.start(pool, null)).getMessage());
    }
}
