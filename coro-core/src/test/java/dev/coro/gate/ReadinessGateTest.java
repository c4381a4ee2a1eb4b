package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every door and path of {@link ReadinessGate}, and the paper's examples. */
class ReadinessGateTest {

    @Test
    void nullWorkIsRejected() {
        ReadinessGate gate = new ReadinessGate();
        assertThrows(NullPointerException.class, () -> gate.within(null));
        assertThrows(NullPointerException.class, () -> gate.tryWithin(null));
        assertThrows(NullPointerException.class, () -> gate.call(null));
        NullPointerException e = assertThrows(NullPointerException.class, () -> gate.readyAfter(null));
        assertTrue(e.getMessage().contains("work"), e.getMessage());
    }

    @Test
    void waitersQueuedBeforeReadinessAllRunAfterSetReadyInArrivalOrder() {
        ReadinessGate gate = new ReadinessGate();
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            int n = i;
            waiters.add(gate.within(Task.fromCallable(() -> {
                order.add(n);
                return n;
            })).toCompletableFuture());
        }
        assertTrue(order.isEmpty(), "nothing runs before readiness");
        assertFalse(gate.isReady());
        gate.setReady(); // inline scheduler: the queued work runs here, in order, before it returns
        assertTrue(gate.isReady());
        assertEquals(500, order.size());
        for (int i = 0; i < 500; i++) {
            assertEquals(i, order.get(i));
            assertEquals(i, waiters.get(i).join());
        }
        assertEquals(0, gate.admittedSnapshot(), "every admitted work was counted out");
        gate.closeAndCheck();
    }

    @Test
    void laterEntriesAreAdmittedAtOnceAndSetReadyIsIdempotent() {
        ReadinessGate gate = new ReadinessGate();
        gate.setReady();
        gate.setReady();
        assertTrue(gate.isReady());
        assertEquals(7, gate.within(Task.value(7)).join());
        assertEquals(8, gate.tryWithin(Task.value(8)).join());
        assertEquals(9, gate.call(() -> 9));
        Admission a = gate.tryAcquire().join();
        Admission b = gate.acquire().join();
        assertEquals(2, gate.admittedSnapshot(), "readiness bounds nothing: both admitted at once");
        a.exit();
        b.exit();
        gate.setReady();
        gate.closeAndCheck();
    }

    @Test
    void tryBeforeReadinessCompletesCancelledWithoutRunning() {
        ReadinessGate gate = new ReadinessGate();
        AtomicInteger ran = new AtomicInteger();
        assertThrows(CancellationException.class,
                () -> gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.tryAcquire().join());
        assertEquals(0, ran.get());
        gate.setReady();
        assertEquals(1, gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
    }

    @Test
    void aWaiterCancelledBeforeReadinessNeverRunsAndLeaksNothing() {
        ReadinessGate gate = new ReadinessGate();
        AtomicInteger ran = new AtomicInteger();
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiters.add(gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture());
        }
        for (int i = 0; i < 10; i += 3) {
            assertTrue(waiters.get(i).cancel(false));
        }
        gate.setReady();
        assertEquals(6, ran.get(), "only the waiters that were not cancelled ran");
        for (int i = 0; i < 10; i++) {
            CompletableFuture<Integer> w = waiters.get(i);
            assertTrue(w.isDone());
            assertEquals(i % 3 == 0, w.isCancelled(), "waiter " + i);
        }
        assertEquals(0, gate.admittedSnapshot());
        gate.closeAndCheck(); // nothing admitted or waiting remains
    }

    @Test
    void closeBeforeReadinessResolvesWaitersCancelledAndLaterEntriesToo() {
        ReadinessGate gate = new ReadinessGate();
        AtomicInteger ran = new AtomicInteger();
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            waiters.add(gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture());
        }
        gate.close();
        assertTrue(gate.isClosed());
        for (CompletableFuture<Integer> w : waiters) {
            assertThrows(CancellationException.class, w::join);
        }
        gate.setReady(); // admits nothing: the gate stays closed
        assertTrue(gate.isReady());
        assertThrows(CancellationException.class, () -> gate.within(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.acquire().join());
        assertThrows(CancellationException.class, () -> gate.call(ran::incrementAndGet));
        assertEquals(0, ran.get(), "no work ran");
        gate.closeAndCheck();
        gate.close(); // idempotent
    }

    @Test
    void closeAfterReadinessCancelsLaterEntriesWhileAdmittedWorkFinishes() {
        ReadinessGate gate = new ReadinessGate();
        gate.setReady();
        Admission held = gate.acquire().join();
        gate.close();
        assertThrows(CancellationException.class, () -> gate.within(Task.value(1)).join());
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.value(1)).join());
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("1 admitted"), live.getMessage());
        held.exit(); // admitted work leaves a closed gate as usual
        gate.closeAndCheck();
    }

    @Test
    void withinCountsOutOnTheErrorAndCancelledChannels() {
        ReadinessGate gate = new ReadinessGate();
        IllegalStateException boom = new IllegalStateException("boom");
        CompletableFuture<Integer> failing = gate.within(Task.<Integer>failure(boom)).toCompletableFuture();
        CompletableFuture<Integer> cancelled = gate.within(Task.<Integer>cancelled()).toCompletableFuture();
        gate.setReady();
        assertSame(boom, assertThrows(CompletionException.class, failing::join).getCause());
        assertThrows(CancellationException.class, cancelled::join);
        assertEquals(0, gate.admittedSnapshot());
        gate.closeAndCheck();
    }

    @Test
    void readyAfterEstablishesReadinessWhenTheWorkSucceeds() {
        ReadinessGate gate = new ReadinessGate();
        AtomicBoolean started = new AtomicBoolean();
        CompletableFuture<String> query = gate.within(Task.fromCallable(() -> started.get() ? "answer" : "too early"))
                .toCompletableFuture();
        Task<String> start = gate.readyAfter(Task.fromCallable(() -> {
            started.set(true);
            return "started";
        }));
        assertFalse(gate.isReady(), "building the task does nothing");
        assertEquals("started", start.join());
        assertTrue(gate.isReady());
        assertEquals("answer", query.join());
    }

    @Test
    void readyAfterClosesTheGateWhenTheWorkFailsOrIsCancelled() {
        ReadinessGate failed = new ReadinessGate();
        CompletableFuture<Integer> waiter = failed.within(Task.value(1)).toCompletableFuture();
        IllegalArgumentException boom = new IllegalArgumentException("no config");
        assertSame(boom, assertThrows(IllegalArgumentException.class,
                () -> failed.readyAfter(Task.failure(boom)).join()));
        assertTrue(failed.isClosed());
        assertFalse(failed.isReady());
        assertThrows(CancellationException.class, waiter::join, "the dependent is resolved, not left waiting");

        ReadinessGate cancelled = new ReadinessGate();
        CompletableFuture<Integer> other = cancelled.within(Task.value(1)).toCompletableFuture();
        assertThrows(CancellationException.class, () -> cancelled.readyAfter(Task.cancelled()).join());
        assertTrue(cancelled.isClosed());
        assertThrows(CancellationException.class, other::join);
    }

    /** The paper's initialization example: queries created before the start wait for it. */
    @Test
    void initializationReadinessExample() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "ready-init")) {
            ReadinessGate initialized = new ReadinessGate();
            AtomicBoolean serviceStarted = new AtomicBoolean();
            AtomicInteger answered = new AtomicInteger();
            AtomicInteger early = new AtomicInteger();
            Scope scope = Scope.on(pool);
            int queries = 100;
            for (int i = 0; i < queries; i++) {
                scope.spawn(initialized.within(Task.fromRunnable(() -> {
                    if (!serviceStarted.get()) {
                        early.incrementAndGet();
                    }
                    answered.incrementAndGet();
                })));
            }
            assertFalse(scope.join().toCompletableFuture().isDone(), "the scope waits for the queued queries");
            scope.spawn(initialized.readyAfter(Task.fromRunnable(() -> serviceStarted.set(true))));
            scope.joinBlocking();
            assertEquals(queries, answered.get());
            assertEquals(0, early.get(), "no query ran before the service had started");
            initialized.closeAndCheck();
        }
    }

    /** The paper's configuration example (explicit design): requests use the loaded configuration. */
    @Test
    void configurationReadinessExample() {
        ReadinessGate configLoaded = new ReadinessGate();
        String[] config = new String[1]; // plain: ordered by setReady's happens-before
        List<CompletableFuture<String>> replies = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int request = i;
            replies.add(configLoaded.within(Task.fromCallable(() -> config[0] + ":" + request)).toCompletableFuture());
        }
        Task<Void> load = Task.fromCallable(() -> "v1")
                .map(loaded -> {
                    config[0] = loaded;
                    return (Void) null;
                })
                .then(Task.fromRunnable(configLoaded::setReady));
        load.join();
        assertEquals(List.of("v1:0", "v1:1", "v1:2"), replies.stream().map(CompletableFuture::join).toList());
        assertEquals("v1:9", configLoaded.within(Task.fromCallable(() -> config[0] + ":9")).join(),
                "a later request proceeds without waiting");
    }

    /**
     * Many threads enter while another establishes readiness: each waiter runs exactly once, none
     * before readiness, and the work queued before it sees what the ready thread wrote.
     */
    @Test
    void manyThreadsEnterWhileReadinessIsEstablished() throws Exception {
        int threads = 4;
        int perThread = 500;
        ReadinessGate gate = new ReadinessGate();
        AtomicBoolean readyWritten = new AtomicBoolean();
        int[] payload = new int[1]; // plain, written before setReady()
        AtomicIntegerArray ran = new AtomicIntegerArray(threads * perThread);
        AtomicInteger bad = new AtomicInteger();
        CountDownLatch allEnded = new CountDownLatch(threads * perThread);
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        try (WorkStealingPool pool = WorkStealingPool.create(2, "ready-many")) {
            List<Thread> enterers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * perThread;
                enterers.add(Thread.ofPlatform().start(() -> {
                    await(start);
                    for (int i = 0; i < perThread; i++) {
                        int n = base + i;
                        gate.within(Task.fromRunnable(() -> {
                            if (!readyWritten.get() || payload[0] != 42) {
                                bad.incrementAndGet();
                            }
                            ran.incrementAndGet(n);
                        }).startOn(pool)).andFinally(allEnded::countDown).toCompletableFuture();
                    }
                }));
            }
            await(start);
            payload[0] = 42;
            readyWritten.set(true);
            gate.setReady();
            for (Thread t : enterers) {
                t.join();
            }
            allEnded.await();
        }
        assertEquals(0, bad.get(), "no work ran before readiness or without its writes");
        for (int i = 0; i < threads * perThread; i++) {
            assertEquals(1, ran.get(i), "waiter " + i);
        }
        assertEquals(0, gate.admittedSnapshot());
        gate.closeAndCheck();
    }

    @Test
    void theBlockingDoorParksVirtualThreadsUntilReady() throws Exception {
        ReadinessGate gate = new ReadinessGate();
        AtomicInteger ranEarly = new AtomicInteger();
        AtomicBoolean ready = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(8);
        try (ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                int n = i;
                results.add(vts.submit(() -> {
                    started.countDown();
                    return gate.call(() -> {
                        if (!ready.get()) {
                            ranEarly.incrementAndGet();
                        }
                        return n;
                    });
                }));
            }
            started.await();
            ready.set(true);
            gate.setReady();
            for (int i = 0; i < 8; i++) {
                assertEquals(i, results.get(i).get());
            }
        }
        assertEquals(0, ranEarly.get());
        gate.closeAndCheck();
    }

    /**
     * setReady racing the cancellation of a queued waiter from another thread: whichever wins, the
     * waiter's work ran exactly when it ended with a value, the younger waiter is admitted either
     * way, and nothing stays counted (closeAndCheck passes).
     */
    @Test
    @Tag("stress")
    void setReadyRacingCancelLeavesNothingCounted() throws Exception {
        int rounds = Stress.scaled(2_000);
        CyclicBarrier barrier = new CyclicBarrier(2);
        int cancelWon = 0;
        for (int round = 0; round < rounds; round++) {
            ReadinessGate gate = new ReadinessGate();
            AtomicInteger ran = new AtomicInteger();
            AtomicReference<Outcome<Integer>> ended = new AtomicReference<>();
            CountDownLatch settled = new CountDownLatch(1);
            CompletableFuture<Void> waiter = gate.within(Task.fromCallable(ran::incrementAndGet)).outcome().map(o -> {
                ended.set(o);
                settled.countDown();
                return (Void) null;
            }).toCompletableFuture();
            CompletableFuture<Integer> next = gate.within(Task.value(2)).toCompletableFuture();
            Thread canceller = Thread.ofPlatform().start(() -> {
                await(barrier);
                waiter.cancel(false);
            });
            await(barrier);
            gate.setReady();
            canceller.join();
            settled.await();
            assertEquals(2, next.join(), "round " + round);
            if (ended.get() instanceof Outcome.Value<Integer>) {
                assertEquals(1, ran.get(), "round " + round + ": admitted, so it ran once");
            } else {
                assertTrue(ended.get() instanceof Outcome.Cancelled<Integer>, "round " + round + ": " + ended.get());
                assertEquals(0, ran.get(), "round " + round + ": cancelled, so it never ran");
                cancelWon++;
            }
            assertEquals(0, gate.admittedSnapshot(), "round " + round);
            gate.closeAndCheck();
        }
        System.out.println("setReadyRacingCancelLeavesNothingCounted: cancel won " + cancelWon + " of " + rounds);
    }

    @Test
    void toStringShowsTheState() {
        ReadinessGate gate = new ReadinessGate();
        assertEquals("ReadinessGate[not ready]", gate.toString());
        gate.setReady();
        gate.close();
        assertEquals("ReadinessGate[ready, closed]", gate.toString());
    }

    static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
