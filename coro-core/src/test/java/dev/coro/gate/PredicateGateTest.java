package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** Every door and path of {@link PredicateGate}, where its predicate runs, and what it sees. */
class PredicateGateTest {

    @Test
    void nullPredicateAndWorkAreRejected() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> new PredicateGate(null));
        assertTrue(e.getMessage().contains("predicate"), e.getMessage());
        PredicateGate gate = new PredicateGate(() -> true);
        assertThrows(NullPointerException.class, () -> gate.within(null));
        assertThrows(NullPointerException.class, () -> gate.tryWithin(null));
        assertThrows(NullPointerException.class, () -> gate.call(null));
    }

    @Test
    void waitersAreAdmittedWhenAnUpdateFindsThePredicateTrueAndNotBefore() {
        int[] loaded = new int[1]; // written and read on this thread only
        PredicateGate gate = new PredicateGate(() -> loaded[0] >= 3); // several updates needed
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            int n = i;
            waiters.add(gate.within(Task.fromRunnable(() -> order.add(n))).toCompletableFuture());
        }
        for (int step = 1; step <= 2; step++) {
            loaded[0] = step;
            gate.update();
            assertTrue(order.isEmpty(), "the predicate is still false after update " + step);
        }
        loaded[0] = 3;
        gate.update(); // inline scheduler: the queued work runs here, in order
        assertEquals(200, order.size());
        for (int i = 0; i < 200; i++) {
            assertEquals(i, order.get(i));
            assertTrue(waiters.get(i).isDone());
        }
        assertEquals(0, gate.admittedSnapshot());
        gate.closeAndCheck();
    }

    /**
     * The predicate is the source of truth: an entry re-evaluates it rather than reusing the last
     * update's answer, in both directions.
     */
    @Test
    void anEntryReEvaluatesThePredicateInsteadOfUsingTheLastUpdate() {
        boolean[] state = {false};
        PredicateGate gate = new PredicateGate(() -> state[0]);
        CompletableFuture<Integer> queued = gate.within(Task.value(1)).toCompletableFuture();
        state[0] = true; // no update: the next entry evaluates the predicate itself
        assertEquals(2, gate.within(Task.value(2)).join());
        assertEquals(1, queued.join(), "the entry's evaluation admitted the queued waiter first");

        state[0] = false; // the last evaluation said true; an entry finds it false again
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.value(3)).join());
        CompletableFuture<Integer> waiting = gate.within(Task.value(4)).toCompletableFuture();
        assertFalse(waiting.isDone());
        state[0] = true;
        gate.update();
        assertEquals(4, waiting.join());
        gate.closeAndCheck();
    }

    @Test
    void tryAdmitsOnlyWhileThePredicateIsTrue() {
        boolean[] state = {false};
        PredicateGate gate = new PredicateGate(() -> state[0]);
        AtomicInteger ran = new AtomicInteger();
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.tryAcquire().join());
        assertEquals(0, ran.get());
        state[0] = true;
        assertEquals(1, gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        Admission a = gate.tryAcquire().join();
        assertEquals(1, gate.admittedSnapshot());
        a.exit();
        assertEquals(2, gate.call(ran::incrementAndGet));
    }

    @Test
    void aWaiterCancelledBeforeThePredicateHoldsNeverRunsAndLeaksNothing() {
        boolean[] state = {false};
        PredicateGate gate = new PredicateGate(() -> state[0]);
        AtomicInteger ran = new AtomicInteger();
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiters.add(gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture());
        }
        for (int i = 1; i < 10; i += 2) {
            assertTrue(waiters.get(i).cancel(false));
        }
        state[0] = true;
        gate.update();
        assertEquals(5, ran.get());
        for (int i = 0; i < 10; i++) {
            assertEquals(i % 2 == 1, waiters.get(i).isCancelled(), "waiter " + i);
        }
        gate.closeAndCheck();
    }

    @Test
    void closeResolvesWaitersCancelledAndThePredicateIsNeverEvaluatedAgain() {
        AtomicInteger evaluations = new AtomicInteger();
        boolean[] state = {false};
        PredicateGate gate = new PredicateGate(() -> {
            evaluations.incrementAndGet();
            return state[0];
        });
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> waiter = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        gate.close();
        assertThrows(CancellationException.class, waiter::join);
        int before = evaluations.get();
        state[0] = true;
        gate.update();
        assertThrows(CancellationException.class, () -> gate.within(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.acquire().join());
        assertEquals(0, ran.get());
        assertEquals(before, evaluations.get(), "no evaluation after close");
        gate.closeAndCheck();
    }

    @Test
    void closeAfterThePredicateHoldsCancelsLaterEntriesWhileAdmittedWorkFinishes() {
        PredicateGate gate = new PredicateGate(() -> true);
        Admission held = gate.acquire().join();
        gate.close();
        assertThrows(CancellationException.class, () -> gate.within(Task.value(1)).join());
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("1 admitted"), live.getMessage());
        held.exit();
        gate.closeAndCheck();
    }

    /** A predicate that throws during update: the gate closes, waiters are resolved, update reports it. */
    @Test
    void aPredicateThatThrowsOnUpdateClosesTheGateAndUpdateRethrows() {
        IllegalArgumentException boom = new IllegalArgumentException("corrupt state");
        boolean[] broken = {false};
        PredicateGate gate = new PredicateGate(() -> {
            if (broken[0]) {
                throw boom;
            }
            return false;
        });
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            waiters.add(gate.within(Task.value(i)).toCompletableFuture());
        }
        broken[0] = true;
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::update);
        assertSame(boom, e.getCause());
        assertTrue(gate.isClosed());
        for (CompletableFuture<Integer> w : waiters) {
            assertThrows(CancellationException.class, w::join, "no waiter is lost");
        }
        assertThrows(CancellationException.class, () -> gate.within(Task.value(9)).join());
        IllegalStateException again = assertThrows(IllegalStateException.class, gate::update);
        assertSame(boom, again.getCause(), "every later update reports it");
        assertEquals("PredicateGate[failed]", gate.toString());
        gate.closeAndCheck();
    }

    /** A predicate that throws when an entry evaluates it: that entry and the queue end cancelled. */
    @Test
    void aPredicateThatThrowsOnEntryClosesTheGate() {
        AtomicInteger calls = new AtomicInteger();
        IllegalStateException boom = new IllegalStateException("boom");
        PredicateGate gate = new PredicateGate(() -> {
            if (calls.incrementAndGet() > 2) {
                throw boom;
            }
            return false;
        });
        CompletableFuture<Integer> queued = gate.within(Task.value(1)).toCompletableFuture(); // 2 evaluations
        AtomicInteger ran = new AtomicInteger();
        assertThrows(CancellationException.class, () -> gate.within(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, queued::join);
        assertEquals(0, ran.get());
        assertTrue(gate.isClosed());
        assertSame(boom, assertThrows(IllegalStateException.class, gate::update).getCause());
        int evaluated = calls.get();
        assertThrows(IllegalStateException.class, gate::update);
        assertEquals(evaluated, calls.get(), "a failed predicate is not evaluated again");
    }

    /** The predicate runs on the thread that owns the decision: update's caller, or an entering one. */
    @Test
    void thePredicateRunsOnTheThreadThatOwnsTheDecision() throws Exception {
        AtomicReference<Thread> lastRan = new AtomicReference<>();
        boolean[] state = {false};
        PredicateGate gate = new PredicateGate(() -> {
            lastRan.set(Thread.currentThread());
            return state[0];
        });
        gate.within(Task.value(1)).toCompletableFuture();
        Thread updater = Thread.ofPlatform().unstarted(() -> {
            state[0] = true; // before update(): visible to the evaluation it causes
            gate.update();
        });
        updater.start();
        updater.join();
        assertSame(updater, lastRan.get(), "update's caller evaluated it");
        Thread enterer = Thread.ofPlatform().unstarted(() -> gate.tryWithin(Task.value(2)).join());
        enterer.start();
        enterer.join();
        assertSame(enterer, lastRan.get(), "the entering thread evaluated it");
        Admission held = gate.acquire().join();
        Thread releaser = Thread.ofPlatform().start(held::exit);
        releaser.join();
        assertSame(releaser, lastRan.get(), "the thread whose work left evaluated it");
    }

    /**
     * How the state the predicate reads is protected. Writer threads each write their own plain
     * slot and then call update(); the predicate reads the slots (plain) and is true when all are
     * written. Entering threads queue work (on a pool) throughout, and the writers update many times
     * while the predicate is still false. Checked: the predicate never ran concurrently with itself,
     * every admitted work sees every slot written (what the predicate promised: nothing was admitted
     * before every writer had written), every waiter ran exactly once. The slots have no
     * synchronization of their own: each is written once, before its writer's update(), whose signal
     * orders it before the evaluation that update causes (an evaluation racing a writer may see its
     * slot early: point 3 of the class javadoc; each slot's one write leaves no partial state).
     */
    @Test
    void thePredicateSeesTheWritesMadeBeforeUpdateAndNeverRunsConcurrently() throws Exception {
        int writers = 4;
        int enterers = 3;
        int perEnterer = 300;
        int[] slots = new int[writers];
        AtomicInteger inPredicate = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        Set<Thread> evaluators = ConcurrentHashMap.newKeySet();
        BooleanSupplier allWritten = () -> {
            if (inPredicate.getAndIncrement() != 0) {
                overlaps.incrementAndGet();
            }
            evaluators.add(Thread.currentThread());
            try {
                for (int i = 0; i < writers; i++) {
                    if (slots[i] != i + 1) {
                        return false;
                    }
                }
                return true;
            } finally {
                inPredicate.decrementAndGet();
            }
        };
        PredicateGate gate = new PredicateGate(allWritten);
        int waiters = enterers * perEnterer;
        CountDownLatch allEnded = new CountDownLatch(waiters);
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger sawPartial = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(writers + enterers);
        List<Thread> threads = new ArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(2, "predicate-writes")) {
            Task<Void> work = Task.fromRunnable(() -> {
                for (int i = 0; i < writers; i++) {
                    if (slots[i] != i + 1) {
                        sawPartial.incrementAndGet();
                    }
                }
                ran.incrementAndGet();
            }).startOn(pool);
            for (int e = 0; e < enterers; e++) {
                threads.add(Thread.ofPlatform().start(() -> {
                    ReadinessGateTest.await(start);
                    for (int i = 0; i < perEnterer; i++) {
                        gate.within(work).andFinally(allEnded::countDown).toCompletableFuture();
                    }
                }));
            }
            for (int w = 0; w < writers; w++) {
                int slot = w;
                threads.add(Thread.ofPlatform().start(() -> {
                    ReadinessGateTest.await(start);
                    for (int round = 0; round < 50; round++) {
                        gate.update(); // updates with the predicate still false, racing the entries
                    }
                    slots[slot] = slot + 1;
                    gate.update();
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            allEnded.await();
        }
        assertEquals(0, overlaps.get(), "the predicate ran concurrently with itself");
        assertEquals(0, sawPartial.get(), "admitted work saw a slot unwritten");
        assertEquals(waiters, ran.get());
        assertEquals(0, gate.admittedSnapshot());
        gate.closeAndCheck();
        System.out.println("thePredicateSeesTheWritesMadeBeforeUpdate: predicate ran on " + evaluators.size() + " threads");
    }

    /** The paper's configuration example, predicate-owned: the configuration is the source of truth. */
    @Test
    void configurationReadinessExamplePredicateOwned() throws Exception {
        AtomicReference<String> config = new AtomicReference<>();
        PredicateGate configLoaded = new PredicateGate(() -> config.get() != null);
        try (WorkStealingPool pool = WorkStealingPool.create(2, "predicate-config")) {
            List<CompletableFuture<String>> replies = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                int request = i;
                replies.add(configLoaded.within(Task.fromCallable(() -> config.get() + ":" + request).startOn(pool))
                        .toCompletableFuture());
            }
            Task<Void> load = Task.fromCallable(() -> "v1").startOn(pool)
                    .map(loaded -> {
                        config.set(loaded);
                        return (Void) null;
                    })
                    .then(Task.fromRunnable(configLoaded::update));
            load.join();
            for (int i = 0; i < 20; i++) {
                assertEquals("v1:" + i, replies.get(i).join());
            }
        }
        configLoaded.closeAndCheck();
    }
}
