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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Every door and path of {@link CompletionGate}, and the paper's startup and batch examples. */
class CompletionGateTest {

    @Test
    void negativeCountIsRejectedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CompletionGate(-2));
        assertTrue(e.getMessage().contains("n") && e.getMessage().contains("-2"), e.getMessage());
        CompletionGate gate = new CompletionGate(1);
        assertThrows(NullPointerException.class, () -> gate.within(null));
        assertThrows(NullPointerException.class, () -> gate.tryWithin(null));
        assertThrows(NullPointerException.class, () -> gate.call(null));
        NullPointerException npe = assertThrows(NullPointerException.class, () -> gate.contribute(null));
        assertTrue(npe.getMessage().contains("work"), npe.getMessage());
    }

    @Test
    void zeroExpectedArrivalsIsOpenAtOnce() {
        CompletionGate gate = new CompletionGate(0);
        assertTrue(gate.isOpen());
        assertEquals(0, gate.arrivals());
        assertEquals(1, gate.within(Task.value(1)).join());
        assertEquals(2, gate.tryWithin(Task.value(2)).join());
        IllegalStateException extra = assertThrows(IllegalStateException.class, gate::arrive);
        assertTrue(extra.getMessage().contains("all 0 expected"), extra.getMessage());
        gate.closeAndCheck();
    }

    @Test
    void waitersQueuedBeforeTheLastArrivalAllRunAfterItAndNotBefore() {
        CompletionGate gate = new CompletionGate(3);
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int n = i;
            waiters.add(gate.within(Task.fromRunnable(() -> order.add(n))).toCompletableFuture());
        }
        gate.arrive();
        gate.arrive();
        assertEquals(2, gate.arrivals());
        assertFalse(gate.isOpen());
        assertTrue(order.isEmpty(), "nothing runs before the third arrival");
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.value(0)).join());
        gate.arrive(); // inline scheduler: the queued work runs here, in order, before it returns
        assertTrue(gate.isOpen());
        assertEquals(300, order.size());
        for (int i = 0; i < 300; i++) {
            assertEquals(i, order.get(i));
            assertTrue(waiters.get(i).isDone());
        }
        assertEquals(5, gate.within(Task.value(5)).join(), "later entries are admitted at once");
        assertEquals(0, gate.admittedSnapshot());
        gate.closeAndCheck();
    }

    @Test
    void anArrivalBeyondTheExpectedCountThrowsAndIsNotCounted() {
        CompletionGate gate = new CompletionGate(2);
        gate.arrive();
        gate.arrive();
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::arrive);
        assertTrue(e.getMessage().contains("all 2 expected"), e.getMessage());
        assertEquals(2, gate.arrivals());
        assertTrue(gate.isOpen());
        assertEquals("CompletionGate[2/2]", gate.toString());
    }

    @Test
    void aWaiterCancelledBeforeTheGateOpensNeverRunsAndLeaksNothing() {
        CompletionGate gate = new CompletionGate(1);
        AtomicInteger ran = new AtomicInteger();
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            waiters.add(gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture());
        }
        for (int i = 0; i < 9; i += 2) {
            assertTrue(waiters.get(i).cancel(false));
        }
        assertEquals(0, gate.arrivals(), "a cancelled waiter is not an arrival");
        gate.arrive();
        assertEquals(4, ran.get());
        for (int i = 0; i < 9; i++) {
            assertEquals(i % 2 == 0, waiters.get(i).isCancelled(), "waiter " + i);
        }
        gate.closeAndCheck();
    }

    @Test
    void closeBeforeCompletionResolvesWaitersCancelledAndArrivalsStillCount() {
        CompletionGate gate = new CompletionGate(2);
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> waiter = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        gate.arrive();
        gate.close();
        assertThrows(CancellationException.class, waiter::join);
        gate.arrive(); // counted, admits nothing
        assertEquals(2, gate.arrivals());
        assertFalse(gate.isOpen(), "a closed gate does not admit");
        assertThrows(CancellationException.class, () -> gate.within(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.acquire().join());
        assertThrows(CancellationException.class, () -> gate.call(ran::incrementAndGet));
        assertEquals(0, ran.get());
        assertThrows(IllegalStateException.class, gate::arrive, "the count rule holds after close too");
        gate.closeAndCheck();
    }

    @Test
    void closeAfterTheGateOpenedCancelsLaterEntriesWhileAdmittedWorkFinishes() {
        CompletionGate gate = new CompletionGate(1);
        gate.arrive();
        Admission held = gate.acquire().join();
        gate.close();
        assertFalse(gate.isOpen());
        assertThrows(CancellationException.class, () -> gate.within(Task.value(1)).join());
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("1 admitted"), live.getMessage());
        held.exit();
        gate.closeAndCheck();
    }

    @Test
    void contributeArrivesWhenTheWorkCompletesWithAValue() {
        CompletionGate gate = new CompletionGate(2);
        CompletableFuture<String> dependent = gate.within(Task.value("after both")).toCompletableFuture();
        Task<Integer> first = gate.contribute(Task.value(1));
        assertEquals(0, gate.arrivals(), "building the task does nothing");
        assertEquals(1, first.join());
        assertEquals(1, gate.arrivals());
        assertFalse(dependent.isDone());
        assertEquals(2, gate.contribute(Task.value(2)).join());
        assertEquals("after both", dependent.join());
        IllegalStateException extra = assertThrows(IllegalStateException.class,
                () -> gate.contribute(Task.value(3)).join());
        assertTrue(extra.getMessage().contains("all 2 expected"), extra.getMessage());
    }

    @Test
    void aContributionThatFailsOrIsCancelledClosesTheGateSoDependentsNeverHang() {
        CompletionGate failing = new CompletionGate(2);
        CompletableFuture<Integer> dependent = failing.within(Task.value(1)).toCompletableFuture();
        assertEquals(7, failing.contribute(Task.value(7)).join());
        IllegalStateException boom = new IllegalStateException("index corrupt");
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> failing.contribute(Task.<Integer>failure(boom)).join()));
        assertTrue(failing.isClosed());
        assertThrows(CancellationException.class, dependent::join);
        assertEquals(1, failing.arrivals());

        CompletionGate cancelled = new CompletionGate(1);
        CompletableFuture<Integer> other = cancelled.within(Task.value(1)).toCompletableFuture();
        assertThrows(CancellationException.class, () -> cancelled.contribute(Task.cancelled()).join());
        assertTrue(cancelled.isClosed());
        assertThrows(CancellationException.class, other::join);
    }

    /** The paper's startup example: three tasks run concurrently; requests are accepted after all three. */
    @Test
    void startupCompletionOfThreeTasksExample() {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "startup")) {
            CompletionGate startupDone = new CompletionGate(3);
            AtomicBoolean indexLoaded = new AtomicBoolean();
            AtomicBoolean databaseConnected = new AtomicBoolean();
            AtomicBoolean cacheWarm = new AtomicBoolean();
            AtomicInteger accepted = new AtomicInteger();
            AtomicInteger tooEarly = new AtomicInteger();
            Scope scope = Scope.on(pool);
            Task<Void> acceptRequests = Task.fromRunnable(() -> {
                if (!(indexLoaded.get() && databaseConnected.get() && cacheWarm.get())) {
                    tooEarly.incrementAndGet();
                }
                accepted.incrementAndGet();
            });
            for (int i = 0; i < 10; i++) {
                scope.spawn(startupDone.within(acceptRequests)); // spawned first: they wait
            }
            scope.spawn(startupDone.contribute(Task.fromRunnable(() -> indexLoaded.set(true))));
            scope.spawn(startupDone.contribute(Task.fromRunnable(() -> databaseConnected.set(true))));
            scope.spawn(startupDone.contribute(Task.fromRunnable(() -> cacheWarm.set(true))));
            scope.joinBlocking(); // joins the queued and the admitted work alike
            assertEquals(10, accepted.get());
            assertEquals(0, tooEarly.get(), "requests accepted only after all three startup tasks");
            assertEquals(3, startupDone.arrivals());
            startupDone.closeAndCheck();
        }
    }

    /** The paper's batch example: the summary is written once, after every file is processed. */
    @Test
    void batchSummaryExample() {
        List<String> files = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            files.add("file-" + i + ".txt");
        }
        try (WorkStealingPool pool = WorkStealingPool.create(2, "batch")) {
            CompletionGate batchDone = new CompletionGate(files.size());
            AtomicIntegerArray processed = new AtomicIntegerArray(files.size());
            int[] summary = {-1}; // plain: written by the summary, read after the scope's join
            Scope scope = Scope.on(pool);
            scope.spawn(batchDone.within(Task.fromRunnable(() -> {
                int done = 0;
                for (int i = 0; i < files.size(); i++) {
                    done += processed.get(i);
                }
                summary[0] = done;
            })));
            for (int i = 0; i < files.size(); i++) {
                int n = i;
                scope.spawn(batchDone.contribute(Task.fromRunnable(() -> processed.incrementAndGet(n))));
            }
            scope.joinBlocking();
            assertEquals(files.size(), summary[0], "the summary saw every file processed");
            batchDone.closeAndCheck();
        }
    }

    /**
     * Arrivals from many threads racing entries from others: every waiter runs exactly once, none
     * before the last arrival, and each sees every contributor's plain write.
     */
    @Test
    void manyThreadsArriveWhileOthersEnter() throws Exception {
        int arrivers = 4;
        int perArriver = 50;
        int enterers = 2;
        int perEnterer = 400;
        int n = arrivers * perArriver;
        CompletionGate gate = new CompletionGate(n);
        int[] contributed = new int[n]; // plain: each slot written before its arrival
        AtomicInteger bad = new AtomicInteger();
        AtomicIntegerArray ran = new AtomicIntegerArray(enterers * perEnterer);
        CountDownLatch allEnded = new CountDownLatch(enterers * perEnterer);
        CyclicBarrier start = new CyclicBarrier(arrivers + enterers);
        List<Thread> threads = new ArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(2, "completion-many")) {
            for (int e = 0; e < enterers; e++) {
                int base = e * perEnterer;
                threads.add(Thread.ofPlatform().start(() -> {
                    ReadinessGateTest.await(start);
                    for (int i = 0; i < perEnterer; i++) {
                        int w = base + i;
                        gate.within(Task.fromRunnable(() -> {
                            for (int c = 0; c < n; c++) {
                                if (contributed[c] != 1) {
                                    bad.incrementAndGet();
                                    break;
                                }
                            }
                            ran.incrementAndGet(w);
                        }).startOn(pool)).andFinally(allEnded::countDown).toCompletableFuture();
                    }
                }));
            }
            for (int a = 0; a < arrivers; a++) {
                int base = a * perArriver;
                threads.add(Thread.ofPlatform().start(() -> {
                    ReadinessGateTest.await(start);
                    for (int i = 0; i < perArriver; i++) {
                        contributed[base + i] = 1;
                        gate.arrive();
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            allEnded.await();
        }
        assertEquals(0, bad.get(), "a dependent ran before every contribution, or without seeing it");
        for (int i = 0; i < enterers * perEnterer; i++) {
            assertEquals(1, ran.get(i), "waiter " + i);
        }
        assertEquals(n, gate.arrivals());
        assertThrows(IllegalStateException.class, gate::arrive);
        gate.closeAndCheck();
    }

    /**
     * The last arrival racing the cancellation of a queued waiter from another thread: whichever
     * wins, the waiter's work ran exactly when it ended with a value, the younger waiter is admitted
     * either way, and nothing stays counted (closeAndCheck passes).
     */
    @Test
    @Tag("stress")
    void lastArrivalRacingCancelLeavesNothingCounted() throws Exception {
        int rounds = Stress.scaled(2_000);
        CyclicBarrier barrier = new CyclicBarrier(2);
        int cancelWon = 0;
        for (int round = 0; round < rounds; round++) {
            CompletionGate gate = new CompletionGate(2);
            gate.arrive();
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
                ReadinessGateTest.await(barrier);
                waiter.cancel(false);
            });
            ReadinessGateTest.await(barrier);
            gate.arrive();
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
        System.out.println("lastArrivalRacingCancelLeavesNothingCounted: cancel won " + cancelWon + " of " + rounds);
    }
}
