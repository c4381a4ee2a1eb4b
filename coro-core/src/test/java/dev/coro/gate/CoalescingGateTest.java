package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Completer;
import dev.coro.task.Context;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * CoalescingGate: N callers share one execution and its outcome (value, error, cancelled); counted
 * cancellation; a late request starts anew; close; the sharing form; where the work runs; bad input.
 * Work is a {@link Load} the test completes by hand, on an inline scheduler (no threads, no time).
 */
class CoalescingGateTest {
    private static final Context.Key<String> USER = Context.Key.named("user");

    /** The loads the gate started, in order: each a pending task the test ends by hand. */
    private final List<Load> loads = new ArrayList<>();

    /** One started execution of the work. */
    static final class Load {
        final String key;
        final Completer<Object> completer;
        final String user;
        volatile boolean cancelled;

        Load(String key, Completer<Object> completer) {
            this.key = key;
            this.completer = completer;
            this.user = completer.context().get(USER);
            completer.onCancel(() -> cancelled = true);
        }
    }

    /** A work that, each time it runs, starts a load of {@code key} that the test completes. */
    private Task<Object> load(String key) {
        return Task.create(c -> loads.add(new Load(key, c)));
    }

    private static <T> CompletableFuture<Outcome<T>> start(Task<T> request) {
        return request.outcome().toCompletableFuture();
    }

    /** Nothing in flight, and no dead execution left listed. */
    private static void assertGone(CoalescingGate<?, ?> gate) {
        assertEquals(List.of(), gate.inFlight(), "in flight");
        assertEquals(0, gate.listed(), "executions left listed");
    }

    private static <T> Outcome<T> done(CompletableFuture<Outcome<T>> f) {
        assertTrue(f.isDone(), "not done");
        return f.join();
    }

    /** N callers, one execution (the joiners' work never runs), the same value instance for all. */
    @Test
    void nCallersShareOneExecutionAndItsValue() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        List<CompletableFuture<Outcome<Object>>> callers = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            callers.add(start(gate.within("k", load("k"))));
        }
        assertEquals(1, loads.size(), "one execution for 100 callers");
        assertEquals(100, gate.callers("k"));
        assertEquals(List.of("k"), gate.inFlight());
        callers.forEach(f -> assertFalse(f.isDone()));
        Object value = new Object();
        loads.get(0).completer.complete(value);
        for (CompletableFuture<Outcome<Object>> f : callers) {
            assertSame(value, assertInstanceOf(Outcome.Value.class, done(f)).value());
        }
        assertGone(gate);
        assertFalse(loads.get(0).cancelled);
    }

    /** N callers, one execution that fails: every caller fails with the same exception instance. */
    @Test
    void nCallersShareTheSameException() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        List<CompletableFuture<Outcome<Object>>> callers = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            callers.add(start(gate.within("k", load("k"))));
        }
        IllegalStateException boom = new IllegalStateException("load failed");
        loads.get(0).completer.fail(boom);
        for (CompletableFuture<Outcome<Object>> f : callers) {
            assertSame(boom, assertInstanceOf(Outcome.Failure.class, done(f)).error());
        }
        assertEquals(1, loads.size());
        assertGone(gate);
    }

    /** An execution that ends cancelled by itself ends every caller cancelled. */
    @Test
    void anExecutionThatEndsCancelledEndsEveryCallerCancelled() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        var a = start(gate.within("k", load("k")));
        var b = start(gate.within("k", load("k")));
        loads.get(0).completer.cancel();
        assertInstanceOf(Outcome.Cancelled.class, done(a));
        assertInstanceOf(Outcome.Cancelled.class, done(b));
        assertGone(gate);
    }

    /**
     * One caller's cancel (the starter's, whose context the work runs in) does not cancel the shared
     * work: it ends cancelled at once, the others get the value.
     */
    @Test
    void oneCallersCancelDoesNotCancelTheSharedWork() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        CompletableFuture<Object> starter = gate.within("k", load("k")).toCompletableFuture();
        var second = start(gate.within("k", load("k")));
        var third = start(gate.within("k", load("k")));
        starter.cancel(false);
        assertTrue(starter.isCancelled());
        assertFalse(loads.get(0).cancelled, "one caller's cancel cancelled the shared work");
        assertEquals(2, gate.callers("k"), "the cancelled caller still counted");
        second.cancel(false);
        assertFalse(loads.get(0).cancelled);
        assertEquals(1, gate.callers("k"));
        loads.get(0).completer.complete("v");
        assertEquals("v", done(third).get());
        assertEquals(1, loads.size());
    }

    /** All callers cancelling cancels the work, and the execution leaves the gate at once. */
    @Test
    void allCallersCancellingCancelsTheSharedWork() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        List<CompletableFuture<Object>> callers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            callers.add(gate.within("k", load("k")).toCompletableFuture());
        }
        for (int i = 0; i < 4; i++) {
            callers.get(i).cancel(false);
            assertFalse(loads.get(0).cancelled, "cancelled with callers left");
        }
        callers.get(4).cancel(false);
        assertTrue(loads.get(0).cancelled, "every caller cancelled, the work was not");
        assertGone(gate);
        assertEquals(0, gate.callers("k"));
        var late = start(gate.within("k", load("k")));
        assertEquals(2, loads.size(), "a request after the cancellation starts a new execution");
        loads.get(1).completer.complete("fresh");
        assertEquals("fresh", done(late).get());
    }

    /** A request that arrives after the execution finished starts a new one: no caching. */
    @Test
    void aLateRequestStartsANewExecution() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        var first = start(gate.within("k", load("k")));
        loads.get(0).completer.complete("one");
        assertEquals("one", done(first).get());
        var late = start(gate.within("k", load("k")));
        assertEquals(2, loads.size(), "the late request was served from the finished execution");
        assertFalse(late.isDone());
        loads.get(1).completer.complete("two");
        assertEquals("two", done(late).get());
        AtomicInteger runs = new AtomicInteger();
        for (int i = 0; i < 3; i++) { // work that ends at once: each request is its own execution
            assertEquals(i + 1, gate.within("k", Task.fromCallable(runs::incrementAndGet)).join());
        }
        assertGone(gate);
    }

    /**
     * Work that ends before its starter has queued (an inline scheduler, a work that ends at once):
     * the starter is answered from the ended execution, not left waiting.
     */
    @Test
    void workThatEndsAtOnceAnswersItsStarter() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        assertEquals("now", done(start(gate.within("k", Task.value("now")))).get());
        IllegalStateException boom = new IllegalStateException("at once");
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, done(start(gate.within("k", Task.failure(boom))))).error());
        assertInstanceOf(Outcome.Cancelled.class, done(start(gate.within("k", Task.cancelled()))));
        assertGone(gate);
    }

    /** Different keys never share; equal keys do, whatever the instance. */
    @Test
    void differentKeysRunSeparately() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        var a = start(gate.within("a", load("a")));
        var b = start(gate.within("b", load("b")));
        var a2 = start(gate.within(new String("a"), load("a")));
        assertEquals(2, loads.size());
        loads.get(1).completer.complete("B");
        assertEquals("B", done(b).get());
        assertFalse(a.isDone());
        loads.get(0).completer.complete("A");
        assertEquals("A", done(a).get());
        assertEquals("A", done(a2).get());
        assertGone(gate);
    }

    /** Close refuses later requests (work not run, no join); in-flight executions go on to their callers. */
    @Test
    void closeRefusesLaterRequestsAndLeavesInFlightOnes() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        var inFlight = start(gate.within("k", load("k")));
        gate.close();
        gate.close();
        assertTrue(gate.isClosed());
        var refused = start(gate.within("k", load("k")));
        var other = start(gate.within("z", load("z")));
        assertInstanceOf(Outcome.Cancelled.class, done(refused));
        assertInstanceOf(Outcome.Cancelled.class, done(other));
        assertEquals(1, loads.size(), "a refused request ran its work");
        assertEquals(1, gate.callers("k"), "a refused request joined");
        loads.get(0).completer.complete("v");
        assertEquals("v", done(inFlight).get());
        assertGone(gate);
        assertThrows(CancellationException.class, () -> gate.call("k", () -> "x"));
        assertTrue(gate.toString().contains("closed"), gate.toString());
    }

    /** The work runs with the starter's context values, not a joiner's; joiners' values are ignored. */
    @Test
    void theWorkRunsWithTheStartersValues() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        var ada = start(gate.within("k", load("k")).withValue(USER, "ada"));
        var bob = start(gate.within("k", load("k")).withValue(USER, "bob"));
        assertEquals("ada", loads.get(0).user);
        loads.get(0).completer.complete("v");
        assertEquals("v", done(ada).get());
        assertEquals("v", done(bob).get());
    }

    /** The work is submitted to the starter's scheduler, never run on the requesting stack there. */
    @Test
    void theWorkIsSubmittedToTheStartersScheduler() {
        QueueScheduler queue = new QueueScheduler();
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        var first = start(gate.within("k", Task.fromCallable(() -> "starter's")).startOn(queue));
        queue.runOne(); // the hop of startOn: the request arrives and submits the work
        assertEquals(1, gate.inFlight().size());
        assertEquals(1, queue.size(), "the work was not submitted");
        assertFalse(first.isDone(), "the work ran inline on the requesting stack");
        var joiner = start(gate.within("k", Task.fromCallable(() -> "joiner's")));
        queue.runAll();
        assertEquals("starter's", done(first).get());
        assertEquals("starter's", done(joiner).get(), "the joiner's work ran");
    }

    /** A scheduler that refuses the execution fails every caller with RejectedExecutionException. */
    @Test
    void aRefusingSchedulerFailsTheCallers() {
        RefusingScheduler refusing = new RefusingScheduler(1); // accepts startOn's hop only
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        AtomicInteger runs = new AtomicInteger();
        var refused = start(gate.within("k", Task.fromCallable(runs::incrementAndGet)).startOn(refusing));
        Throwable e = assertInstanceOf(Outcome.Failure.class, done(refused)).error();
        assertInstanceOf(RejectedExecutionException.class, e);
        assertTrue(e.getMessage().contains("refused the shared execution"), e.getMessage());
        assertEquals(0, runs.get());
        assertGone(gate);
    }

    /** Delivering to 10,000 callers resumed inline does not deepen the stack. */
    @Test
    void tenThousandCallersAreResumedWithoutDeepeningTheStack() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        List<CompletableFuture<Object>> callers = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            callers.add(gate.within("k", load("k")).<Object>map(v -> v + "!").toCompletableFuture());
        }
        loads.get(0).completer.complete("v");
        for (CompletableFuture<Object> f : callers) {
            assertEquals("v!", f.join());
        }
        assertEquals(1, loads.size());
    }

    /** The blocking door: the calling thread runs the body when it starts; errors are thrown as they are. */
    @Test
    void theBlockingDoor() throws Exception {
        CoalescingGate<String, Integer> gate = new CoalescingGate<>();
        assertEquals(42, gate.call("k", () -> 42));
        IllegalArgumentException boom = new IllegalArgumentException("bad");
        assertSame(boom, assertThrows(IllegalArgumentException.class, () -> gate.call("k", () -> {
            throw boom;
        })));
        // eight virtual threads share one body, which waits until all eight have joined
        AtomicInteger bodies = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        List<CompletableFuture<Integer>> results = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            CompletableFuture<Integer> r = new CompletableFuture<>();
            results.add(r);
            Thread.ofVirtual().start(() -> {
                try {
                    r.complete(gate.call("shared", () -> {
                        bodies.incrementAndGet();
                        release.await();
                        return 7;
                    }));
                } catch (Throwable t) {
                    r.completeExceptionally(t);
                }
            });
        }
        while (gate.callers("shared") < 8) {
            Thread.onSpinWait(); // waiting for the callers to arrive, not for time
        }
        release.countDown();
        for (CompletableFuture<Integer> r : results) {
            assertEquals(7, r.get());
        }
        assertEquals(1, bodies.get());
        assertGone(gate);
    }

    // ---- the sharing form ----

    /** A request joins the oldest in-flight execution its key is compatible with, else starts its own. */
    @Test
    void theSharingFormJoinsTheOldestCompatibleExecution() {
        // a request for a prefix is served by a load of any key that starts with it
        CoalescingGate<String, Object> gate = CoalescingGate.sharing((wanted, running) -> running.startsWith(wanted));
        var abc = start(gate.within("abc", load("abc")));
        var abd = start(gate.within("abd", load("abd")));
        var ab = start(gate.within("ab", load("ab")));
        var abcd = start(gate.within("abcd", load("abcd")));
        assertEquals(List.of("abc", "abd", "abcd"), loads.stream().map(l -> l.key).toList(),
                "'ab' should have joined 'abc' (the oldest compatible); 'abcd' has none");
        assertEquals(List.of("abc", "abd", "abcd"), gate.inFlight());
        loads.get(0).completer.complete("ABC");
        assertEquals("ABC", done(abc).get());
        assertEquals("ABC", done(ab).get());
        var ab2 = start(gate.within("ab", load("ab")));
        assertEquals(3, loads.size(), "'ab' should have joined 'abd' once 'abc' finished");
        loads.get(1).completer.complete("ABD");
        assertEquals("ABD", done(abd).get());
        assertEquals("ABD", done(ab2).get());
        loads.get(2).completer.fail(new IllegalStateException("x"));
        assertInstanceOf(Outcome.Failure.class, done(abcd));
        assertGone(gate);
        assertTrue(gate.toString().contains("sharing"), gate.toString());
    }

    /** The sharing form counts cancellation as the keyed form does; a key not compatible with itself starts anew. */
    @Test
    void theSharingFormCountsCancellation() {
        CoalescingGate<String, Object> gate = CoalescingGate.sharing((a, b) -> !a.equals("loner") && a.equals(b));
        var x1 = gate.within("x", load("x")).toCompletableFuture();
        var x2 = gate.within("x", load("x")).toCompletableFuture();
        var l1 = start(gate.within("loner", load("loner")));
        var l2 = start(gate.within("loner", load("loner")));
        assertEquals(3, loads.size(), "a loner joined");
        x1.cancel(false);
        assertFalse(loads.get(0).cancelled);
        x2.cancel(false);
        assertTrue(loads.get(0).cancelled);
        assertEquals(List.of("loner", "loner"), gate.inFlight());
        assertEquals(2, gate.listed(), "the cancelled execution left listed");
        loads.get(1).completer.complete(1);
        loads.get(2).completer.complete(2);
        assertEquals(1, done(l1).get());
        assertEquals(2, done(l2).get());
        assertGone(gate);
    }

    /** A predicate (or a key's equals) that throws fails that request only, leaving nothing behind. */
    @Test
    void aThrowingPredicateFailsThatRequestOnly() {
        IllegalStateException boom = new IllegalStateException("predicate");
        CoalescingGate<String, Object> gate = CoalescingGate.sharing((a, b) -> {
            if (a.equals("bad")) {
                throw boom;
            }
            return a.equals(b);
        });
        var good = start(gate.within("good", load("good")));
        var bad = start(gate.within("bad", load("bad")));
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, done(bad)).error());
        assertEquals(List.of("good"), gate.inFlight());
        loads.get(0).completer.complete("g");
        assertEquals("g", done(good).get());
        assertGone(gate);
        assertEquals(1, loads.size());
    }

    @Test
    void badInput() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        assertEquals("key", assertThrows(NullPointerException.class, () -> gate.within(null, Task.value(1))).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.within("k", null)).getMessage());
        assertEquals("key", assertThrows(NullPointerException.class, () -> gate.call(null, () -> 1)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> gate.call("k", null)).getMessage());
        assertEquals("compatible", assertThrows(NullPointerException.class, () -> CoalescingGate.sharing(null)).getMessage());
        assertEquals("CoalescingGate[inFlight=0]", gate.toString());
    }

    /** A request task is lazy and reusable: building it runs nothing; each start is a new request. */
    @Test
    void aRequestIsLazyAndReusable() {
        CoalescingGate<String, Object> gate = new CoalescingGate<>();
        Task<Object> request = gate.within("k", load("k"));
        assertEquals(0, loads.size());
        var a = start(request);
        var b = start(request);
        assertEquals(1, loads.size());
        assertEquals(2, gate.callers("k"));
        loads.get(0).completer.complete("v");
        assertEquals("v", done(a).get());
        assertEquals("v", done(b).get());
        var c = start(request);
        assertEquals(2, loads.size());
        assertNull(loads.get(1).user);
        loads.get(1).completer.complete("w");
        assertEquals("w", done(c).get());
    }

    /** Runs submissions when told, on the test thread. */
    static final class QueueScheduler implements Scheduler {
        private final List<Runnable> queue = new ArrayList<>();

        @Override
        public void execute(Runnable task) {
            queue.add(task);
        }

        void runOne() {
            queue.remove(0).run();
        }

        int size() {
            return queue.size();
        }

        void runAll() {
            while (!queue.isEmpty()) {
                queue.remove(0).run();
            }
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long nanoTime() {
            return 0;
        }

        @Override
        public boolean isCurrent() {
            return false;
        }
    }

    /** Accepts its first {@code accepts} submissions (run inline), then refuses. */
    static final class RefusingScheduler implements Scheduler {
        private int accepts;

        RefusingScheduler(int accepts) {
            this.accepts = accepts;
        }

        @Override
        public void execute(Runnable task) {
            if (accepts-- <= 0) {
                throw new RejectedExecutionException("shut down");
            }
            task.run();
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long nanoTime() {
            return 0;
        }

        @Override
        public boolean isCurrent() {
            return false;
        }
    }
}
