package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.CancellationSource;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TaskTest {

    @Test
    void valueErrorAndCancelledChannels() {
        assertEquals(42, Task.value(42).join());
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> Task.failure(boom).join());
        assertSame(boom, thrown);
        assertTrue(List.of(thrown.getSuppressed()).stream().anyMatch(s -> s instanceof JoinSite),
                "the caller's stack is attached as suppressed");
        assertThrows(CancellationException.class, () -> Task.cancelled().join());
    }

    @Test
    void checkedErrorsAreWrappedWithTheCallersStack() {
        IOException io = new IOException("disk");
        CompletionException e = assertThrows(CompletionException.class, () -> Task.failure(io).join());
        assertSame(io, e.getCause());
    }

    @Test
    void lazyAndReusable() {
        AtomicInteger runs = new AtomicInteger();
        Task<Integer> task = Task.fromCallable(runs::incrementAndGet);
        assertEquals(0, runs.get(), "building runs nothing");
        assertEquals(1, task.join());
        assertEquals(2, task.join());
        assertEquals(2, runs.get());
    }

    @Test
    void mapFlatMapThenCompose() {
        Task<String> t = Task.value(6).map(x -> x * 7).flatMap(x -> Task.value("v" + x)).then(Task.value("last"));
        assertEquals("last", t.join());
        assertEquals("v42", Task.value(6).map(x -> x * 7).flatMap(x -> Task.value("v" + x)).join());
    }

    @Test
    void exceptionsInFunctionsGoToTheErrorChannel() {
        Task<Integer> t = Task.value(1).map(x -> {
            throw new IllegalArgumentException("bad " + x);
        });
        assertEquals("bad 1", assertThrows(IllegalArgumentException.class, t::join).getMessage());
        Task<Integer> nullTask = Task.value(1).flatMap(x -> null);
        assertThrows(NullPointerException.class, nullTask::join);
    }

    @Test
    void recoverHandlesErrorsOnly() {
        assertEquals(-1, Task.<Integer>failure(new RuntimeException()).recover(e -> -1).join());
        assertEquals(5, Task.value(5).recover(e -> -1).join());
        assertThrows(CancellationException.class, () -> Task.<Integer>cancelled().recover(e -> -1).join());
        assertEquals(7, Task.<Integer>failure(new RuntimeException()).recoverWith(e -> Task.value(7)).join());
    }

    @Test
    void outcomeAndTransformSeeAllThreeChannels() {
        assertEquals(new Outcome.Value<>(1), Task.value(1).outcome().join());
        assertInstanceOf(Outcome.Cancelled.class, Task.cancelled().outcome().join());
        RuntimeException e = new RuntimeException();
        assertEquals(new Outcome.Failure<>(e), Task.failure(e).outcome().join());
        assertEquals("cancelled", Task.cancelled().transform(o -> Task.value(
                o instanceof Outcome.Cancelled ? "cancelled" : "other")).join());
    }

    @Test
    void andFinallyRunsOnEveryChannel() {
        List<String> log = new ArrayList<>();
        assertEquals(1, Task.value(1).andFinally(() -> log.add("v")).join());
        assertThrows(RuntimeException.class, () -> Task.failure(new RuntimeException()).andFinally(() -> log.add("e")).join());
        assertThrows(CancellationException.class, () -> Task.cancelled().andFinally(() -> log.add("c")).join());
        assertEquals(List.of("v", "e", "c"), log);
    }

    @Test
    void aFailingCleanupIsReportedNotLost() {
        RuntimeException original = new RuntimeException("original");
        RuntimeException cleanup = new RuntimeException("cleanup");
        RuntimeException thrown = assertThrows(RuntimeException.class,
                () -> Task.failure(original).andFinally(Task.failure(cleanup)).join());
        assertSame(original, thrown);
        assertTrue(List.of(original.getSuppressed()).contains(cleanup));
        assertSame(cleanup, assertThrows(RuntimeException.class,
                () -> Task.value(1).andFinally(Task.failure(cleanup)).join()));
    }

    @Test
    void aMillionChainedSynchronousStepsUseNoStack() {
        Task<Integer> t = Task.value(0);
        for (int i = 0; i < 1_000_000; i++) {
            t = t.map(x -> x + 1);
        }
        assertEquals(1_000_000, t.join());
        Task<Integer> f = Task.value(0);
        for (int i = 0; i < 1_000_000; i++) {
            f = f.flatMap(x -> Task.value(x + 1));
        }
        assertEquals(1_000_000, f.join());
    }

    @Test
    void aMillionIterationLoopRunsInConstantStackAndMemory() {
        assertEquals(1_000_000, Task.loop(0, i -> i < 1_000_000, i -> Task.value(i + 1)).join());
        AtomicInteger runs = new AtomicInteger();
        assertEquals(1_000_000, Task.fromCallable(runs::incrementAndGet).repeat(1_000_000).join());
        assertEquals(1_000_000, runs.get());
    }

    @Test
    void recursionThroughDeferIsStackSafe() {
        assertEquals(0, countDown(1_000_000).join());
    }

    private static Task<Integer> countDown(int n) {
        return n == 0 ? Task.value(0) : Task.defer(() -> countDown(n - 1));
    }

    @Test
    void createCompletesFromAnotherThread() {
        Task<String> t = Task.create(c -> new Thread(() -> c.complete("hi")).start());
        assertEquals("hi", t.join());
    }

    @Test
    void firstCompletionWins() {
        List<Boolean> results = new ArrayList<>();
        Task<String> t = Task.create(c -> {
            results.add(c.complete("a"));
            results.add(c.complete("b"));
            results.add(c.fail(new RuntimeException()));
            results.add(c.cancel());
        });
        assertEquals("a", t.join());
        assertEquals(List.of(true, false, false, false), results);
    }

    @Test
    void aThrowingBodyFailsTheTask() {
        Task<String> t = Task.create(c -> {
            throw new IllegalStateException("body");
        });
        assertEquals("body", assertThrows(IllegalStateException.class, t::join).getMessage());
    }

    @Test
    void promiseHasManyWaitersAndOneWinner() {
        Promise<String> p = new Promise<>();
        CompletableFuture<String> a = p.task().toCompletableFuture();
        CompletableFuture<Integer> b = p.task().map(String::length).toCompletableFuture();
        assertFalse(a.isDone());
        assertTrue(p.complete("hello"));
        assertFalse(p.complete("again"));
        assertFalse(p.cancel());
        assertEquals("hello", a.join());
        assertEquals(5, b.join());
        assertEquals("hello", p.task().join(), "a waiter after completion does not wait");
    }

    @Test
    void cancellingACompletableFutureCancelsTheTask() {
        AtomicInteger released = new AtomicInteger();
        CompletableFuture<Object> f = Task.create(c -> c.onCancel(released::incrementAndGet)).toCompletableFuture();
        assertTrue(f.cancel(false));
        assertEquals(1, released.get(), "the pending wait was released");
        assertThrows(CancellationException.class, f::join);
    }

    @Test
    void aCancelledWaitOnAPromiseLeavesNothingBehind() {
        Promise<String> p = new Promise<>();
        for (int i = 0; i < 10_000; i++) {
            CompletableFuture<String> f = p.task().toCompletableFuture();
            f.cancel(false);
        }
        assertTrue(p.toString().contains("pending"));
        // the cell is the SignalList inside the promise: every cancelled waiter unlinked itself
        assertTrue(linkedWaiters(p) <= 64, "waiters linked: " + linkedWaiters(p));
    }

    private static int linkedWaiters(Promise<?> p) {
        try {
            var field = Promise.class.getDeclaredField("cell");
            field.setAccessible(true);
            return ((Completion) field.get(p)).linkedCount();
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void fromCompletionStageMapsTheThreeChannels() throws Exception {
        assertEquals(3, Task.fromCompletionStage(() -> CompletableFuture.completedFuture(3)).join());
        RuntimeException e = new RuntimeException("x");
        assertSame(e, assertThrows(RuntimeException.class,
                () -> Task.fromCompletionStage(() -> CompletableFuture.failedFuture(e)).join()));
        CompletableFuture<Integer> cancelledFuture = new CompletableFuture<>();
        cancelledFuture.cancel(false);
        assertThrows(CancellationException.class, () -> Task.fromCompletionStage(() -> cancelledFuture).join());
        CompletableFuture<Integer> pending = new CompletableFuture<>();
        CompletableFuture<Integer> viaTask = Task.fromCompletionStage(() -> pending).toCompletableFuture();
        viaTask.cancel(false);
        assertTrue(pending.isCancelled(), "cancelling the task cancels the future it waits for");
        assertEquals(9, Task.value(9).toCompletableFuture().get());
    }

    @Test
    void whenAllCollectsInOrderAndWhenAnyTakesTheFirst() {
        assertEquals(List.of(1, 2, 3), Task.whenAll(List.of(Task.value(1), Task.value(2), Task.value(3))).join());
        assertEquals(List.of(), Task.whenAll(List.<Task<Integer>>of()).join());
        assertEquals(3, Task.whenAll(Task.value(1), Task.value(2), Integer::sum).join());
        assertEquals("x", Task.whenAny(List.of(Task.<String>never(), Task.value("x"))).join());
    }

    @Test
    void whenAllFirstFailureCancelsTheRestAndWaitsForThem() {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        RuntimeException first = new RuntimeException("first");
        Task<Object> hanging = Task.create(c -> {
            started.incrementAndGet();
            c.onCancel(released::incrementAndGet);
        });
        RuntimeException thrown = assertThrows(RuntimeException.class,
                () -> Task.whenAll(List.of(hanging, Task.failure(first), hanging)).join());
        assertSame(first, thrown);
        assertTrue(started.get() >= 1);
        assertEquals(started.get(), released.get(), "every sibling that started waiting was cancelled before join returned");
    }

    @Test
    void whenAnyCancelsTheLosers() {
        AtomicInteger started = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        Task<String> loser = Task.create(c -> {
            started.incrementAndGet();
            c.onCancel(released::incrementAndGet);
        });
        assertEquals("win", Task.whenAny(List.of(loser, Task.value("win"), loser)).join());
        assertTrue(started.get() >= 1);
        assertEquals(started.get(), released.get());
        assertThrows(CancellationException.class,
                () -> Task.whenAny(List.of(Task.cancelled(), Task.cancelled())).join());
    }

    @Test
    void contextValuesPropagateToChildrenAndAreRestored() {
        Context.Key<String> user = Context.Key.named("user");
        Task<String> read = Task.context().map(c -> c.get(user));
        assertEquals("ada", read.withValue(user, "ada").join());
        assertNull(read.join());
        Task<List<String>> children = Task.whenAll(List.of(read, read));
        assertEquals(List.of("ada", "ada"), children.withValue(user, "ada").join());
        Task<String> restored = read.withValue(user, "inner").then(read).withValue(user, "outer");
        assertEquals("outer", restored.join());
        Context.Key<Integer> typed = Context.Key.named("n", Integer.class, 7);
        assertEquals(7, Task.context().map(c -> c.get(typed)).join(), "unbound keys give their default");
    }

    @Test
    void onVirtualThreadRunsStraightLineCode() {
        Context.Key<String> user = Context.Key.named("user");
        Task<String> body = Task.onVirtualThread(() -> {
            assertTrue(Thread.currentThread().isVirtual());
            String nested = Task.context().map(c -> c.get(user)).join(); // inherits the body's values
            return nested + "!";
        });
        assertEquals("ada!", body.withValue(user, "ada").join());
        assertEquals("boom", assertThrows(IllegalStateException.class,
                () -> Task.onVirtualThread(() -> {
                    throw new IllegalStateException("boom");
                }).join()).getMessage());
    }

    @Test
    void cancellingAVirtualThreadBodyInterruptsItAndWaitsForIt() throws Exception {
        CompletableFuture<Boolean> bodyEnded = new CompletableFuture<>();
        CompletableFuture<Void> started = new CompletableFuture<>();
        CompletableFuture<Outcome<String>> f = Task.onVirtualThread(() -> {
            started.complete(null);
            try {
                Thread.sleep(Long.MAX_VALUE); // stands for any blocking call; ended by the interrupt
                return "never";
            } finally {
                bodyEnded.complete(true);
            }
        }).outcome().toCompletableFuture();
        started.get();
        f.cancel(false);
        assertTrue(bodyEnded.get());
    }

    @Test
    void joinOnAVirtualThreadParksOnlyTheVirtualThread() throws Exception {
        int threads = 10_000; // far more than carrier threads: pinning carriers would deadlock
        Promise<Integer> go = new Promise<>();
        java.util.concurrent.CountDownLatch waiting = new java.util.concurrent.CountDownLatch(threads);
        AtomicInteger sum = new AtomicInteger();
        List<Thread> vts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            vts.add(Thread.ofVirtual().start(() -> {
                waiting.countDown();
                sum.addAndGet(go.task().map(x -> x + 1).join());
            }));
        }
        waiting.await();
        go.complete(1);
        for (Thread t : vts) {
            t.join();
        }
        assertEquals(2 * threads, sum.get());
    }

    @Test
    void joinOnAnInterruptedThreadCancelsTheTask() {
        AtomicInteger released = new AtomicInteger();
        Thread.currentThread().interrupt();
        assertThrows(CancellationException.class, () -> Task.create(c -> c.onCancel(released::incrementAndGet)).join());
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
        assertEquals(1, released.get());
    }

    @Test
    void aCancelledTokenStopsAtTheNextWaitNotBefore() {
        CancellationSource source = new CancellationSource();
        source.cancel();
        AtomicInteger steps = new AtomicInteger();
        Task<Integer> t = Task.fromCallable(steps::incrementAndGet).then(Task.never()).map(x -> 1);
        Task<Outcome<Integer>> underCancelled = new Nodes.WithContext<>(t.outcome(), c -> c.withToken(source.token()));
        assertInstanceOf(Outcome.Cancelled.class, underCancelled.join());
        assertEquals(1, steps.get(), "the synchronous step before the wait still ran");
    }

    @Test
    void badInputIsRejectedWithNamedArguments() {
        assertEquals("fn", assertThrows(NullPointerException.class, () -> Task.value(1).map(null)).getMessage());
        assertEquals("error", assertThrows(NullPointerException.class, () -> Task.failure(null)).getMessage());
        assertEquals("tasks[1] is null", assertThrows(NullPointerException.class,
                () -> Task.whenAll(java.util.Arrays.asList(Task.value(1), null))).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Task.whenAny(List.of()));
        assertEquals("times must be >= 1, was 0",
                assertThrows(IllegalArgumentException.class, () -> Task.value(1).repeat(0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Task.value(1).timeout(java.time.Duration.ZERO));
    }

    @Test
    void toCompletableFutureCarriesErrors() {
        RuntimeException e = new RuntimeException();
        ExecutionException ee = assertThrows(ExecutionException.class,
                () -> Task.failure(e).toCompletableFuture().get());
        assertSame(e, ee.getCause());
    }
}
