package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.sync.Event;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of every path of {@link PhaseGate}: the boundary, the gate-enforced phase order, FIFO
 * and arrivals beyond the parties, the window (a re-arrival never takes a place in a boundary it has
 * passed), the broken-barrier rule on each cancellation and failure path, close and the destruction
 * rule, the blocking door, and a scope. Tasks run on the inline scheduler unless said otherwise, so
 * every step below happens on the test thread, in order; futures are checked with {@code isDone}
 * before they are joined, so a bug fails instead of hanging.
 */
class PhaseGateTest {

    /** A work that records the phase it was admitted at under {@code name}. */
    private static Task<String> recording(PhaseGate gate, String name, Map<String, Long> phases) {
        return Task.fromCallable(() -> {
            phases.put(name, gate.phase());
            return name;
        });
    }

    /** A work that records its phase, then waits until {@code release} is set. */
    private static Task<String> held(PhaseGate gate, String name, Map<String, Long> phases, Event<Void> release) {
        return recording(gate, name, phases).flatMap(n -> release.await().map(ignored -> n));
    }

    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "expected done: " + f);
        return f.join();
    }

    private static void doneCancelled(CompletableFuture<?> f) {
        assertTrue(f.isDone(), "expected done: " + f);
        assertThrows(CancellationException.class, f::join);
    }

    @Test
    void badPartiesAreRejectedNamingTheValue() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> new PhaseGate(0));
        assertTrue(zero.getMessage().contains("parties") && zero.getMessage().contains("0"), zero.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> new PhaseGate(-3));
        assertTrue(negative.getMessage().contains("-3"), negative.getMessage());
        PhaseGate gate = new PhaseGate(1);
        assertThrows(NullPointerException.class, () -> gate.arriveAndWait(null));
        assertThrows(NullPointerException.class, () -> gate.arriveAndCall(null));
        assertEquals(1, gate.parties());
        assertEquals(0, gate.phase());
    }

    @Test
    void aBoundaryAdmitsTheWorkOnceEveryParticipantHasArrived() {
        PhaseGate gate = new PhaseGate(3);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        CompletableFuture<String> a = gate.arriveAndWait(recording(gate, "a", phases)).toCompletableFuture();
        CompletableFuture<String> b = gate.arriveAndWait(recording(gate, "b", phases)).toCompletableFuture();
        assertFalse(a.isDone() || b.isDone(), "two of three arrived: nobody is admitted");
        assertTrue(phases.isEmpty());
        assertEquals(0, gate.phase());
        assertEquals("c", gate.arriveAndWait(recording(gate, "c", phases)).join()); // the last arrival
        assertEquals("a", done(a));
        assertEquals("b", done(b));
        assertEquals(Map.of("a", 1L, "b", 1L, "c", 1L), phases);
        assertEquals(1, gate.phase());
        assertFalse(gate.isClosed());
        gate.closeAndCheck(); // nothing admitted remains
    }

    @Test
    void aSinglePartyGateAdmitsEveryArrivalAsItsOwnPhase() {
        PhaseGate gate = new PhaseGate(1);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        for (int i = 1; i <= 5; i++) {
            assertEquals("p" + i, gate.arriveAndWait(recording(gate, "p" + i, phases)).join());
        }
        assertEquals(5, gate.phase());
        assertEquals(Map.of("p1", 1L, "p2", 2L, "p3", 3L, "p4", 4L, "p5", 5L), phases);
        gate.closeAndCheck();
    }

    /**
     * The gate itself keeps the order (not only the participants' discipline): arrivals for the next
     * boundary (here from other tasks, which do not wait for the running work) are not admitted while
     * any work of the previous phase runs.
     */
    @Test
    void nextPhaseWorkWaitsForEveryWorkOfThePreviousPhase() {
        PhaseGate gate = new PhaseGate(2);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        Event<Void> releaseA = new Event<>();
        Event<Void> releaseB = new Event<>();
        CompletableFuture<String> a = gate.arriveAndWait(held(gate, "a", phases, releaseA)).toCompletableFuture();
        CompletableFuture<String> b = gate.arriveAndWait(held(gate, "b", phases, releaseB)).toCompletableFuture();
        assertEquals(Map.of("a", 1L, "b", 1L), phases, "phase 1 admitted, both works running");
        CompletableFuture<String> c = gate.arriveAndWait(recording(gate, "c", phases)).toCompletableFuture();
        CompletableFuture<String> d = gate.arriveAndWait(recording(gate, "d", phases)).toCompletableFuture();
        assertFalse(c.isDone() || d.isDone(), "two arrivals for boundary 2, but phase-1 work runs");
        releaseA.set();
        assertEquals("a", done(a));
        assertFalse(c.isDone() || d.isDone(), "b's phase-1 work still runs");
        assertEquals(1, gate.phase());
        releaseB.set(); // the last phase-1 work ends: boundary 2 completes
        assertEquals("b", done(b));
        assertEquals("c", done(c));
        assertEquals("d", done(d));
        assertEquals(2L, phases.get("c"));
        assertEquals(2L, phases.get("d"));
        assertEquals(2, gate.phase());
        gate.closeAndCheck();
    }

    @Test
    void arrivalsBeyondThePartiesCountTowardTheNextBoundaryInArrivalOrder() {
        PhaseGate gate = new PhaseGate(2);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        List<CompletableFuture<String>> arrivals = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            arrivals.add(gate.arriveAndWait(recording(gate, "w" + i, phases)).toCompletableFuture());
        }
        // Inline: w1 completes boundary 1 (w0, w1); w2 waits; w3 completes boundary 2; w4 waits.
        assertEquals(Map.of("w0", 1L, "w1", 1L, "w2", 2L, "w3", 2L), phases);
        for (int i = 0; i < 4; i++) {
            assertEquals("w" + i, done(arrivals.get(i)));
        }
        assertFalse(arrivals.get(4).isDone(), "one arrival toward boundary 3");
        assertEquals(2, gate.phase());
        gate.close();
        doneCancelled(arrivals.get(4));
        assertFalse(phases.containsKey("w4"));
        gate.closeAndCheck();
    }

    /**
     * An arrival is counted once it is queued (the engine tells the rule of every arrival before any
     * decision), so a boundary's arrivals are exactly its oldest queued waiters: a participant that
     * was admitted at boundary 1 and arrives again while boundary 1's other work still runs counts
     * toward boundary 2, and boundary 2 admits only once that work has ended (the Barrier).
     */
    @Test
    void aReArrivalCountsTowardTheNextBoundaryAndWaitsForThePreviousPhase() {
        PhaseGate gate = new PhaseGate(2);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        Event<Void> releaseX = new Event<>();
        CompletableFuture<String> a1 = gate.arriveAndWait(recording(gate, "a1", phases)).toCompletableFuture();
        assertFalse(a1.isDone(), "one arrival of two: boundary 1 is not complete");
        CompletableFuture<String> x1 = gate.arriveAndWait(held(gate, "x1", phases, releaseX)).toCompletableFuture();
        assertEquals("a1", done(a1));
        assertEquals(1, gate.phase());
        CompletableFuture<String> a2 = gate.arriveAndWait(recording(gate, "a2", phases)).toCompletableFuture();
        CompletableFuture<String> x2 = gate.arriveAndWait(recording(gate, "x2", phases)).toCompletableFuture();
        assertFalse(a2.isDone() || x2.isDone(), "boundary 2 waits for x1's phase-1 work");
        assertEquals(1, gate.phase());
        releaseX.set();
        assertEquals("x1", done(x1));
        assertEquals("a2", done(a2));
        assertEquals("x2", done(x2));
        assertEquals(Map.of("a1", 1L, "x1", 1L, "a2", 2L, "x2", 2L), phases);
        gate.closeAndCheck();
    }

    @Test
    void theWorksOfOneBoundaryRunInParallelOnThePool() throws Exception {
        PhaseGate gate = new PhaseGate(2);
        CountDownLatch both = new CountDownLatch(2);
        Task<Boolean> meet = Task.fromCallable(() -> {
            both.countDown();
            return both.await(60, TimeUnit.SECONDS);
        });
        try (WorkStealingPool pool = WorkStealingPool.create(2, "phase-parallel")) {
            CompletableFuture<Boolean> a = gate.arriveAndWait(meet).startOn(pool).toCompletableFuture();
            CompletableFuture<Boolean> b = gate.arriveAndWait(meet).startOn(pool).toCompletableFuture();
            assertTrue(a.get(), "the two works of boundary 1 met");
            assertTrue(b.get(), "the two works of boundary 1 met");
        }
        gate.closeAndCheck();
    }

    // ---- the broken-barrier rule ----

    @Test
    void aQueuedArrivalCancelledBreaksTheGateAndResolvesEveryone() {
        PhaseGate gate = new PhaseGate(3);
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> a = gate.arriveAndWait(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        CompletableFuture<Integer> b = gate.arriveAndWait(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        assertTrue(a.cancel(false));
        assertTrue(gate.isClosed(), "a participant that will not arrive breaks the barrier");
        doneCancelled(b);
        assertThrows(CancellationException.class,
                () -> gate.arriveAndWait(Task.fromCallable(ran::incrementAndGet)).join());
        assertEquals(0, ran.get(), "no work ran");
        assertEquals(0, gate.phase());
        assertTrue(gate.toString().contains("broken"), gate.toString());
        gate.closeAndCheck();
    }

    /**
     * An admission that loses the race to the waiter's cancellation (the owner's admit CAS fails) is
     * undone and breaks the gate. The race itself is explored by PhaseGateLincheckTest and hit by
     * PhaseGateStressTest; here the rule's hooks are driven as the owner drives them, under the
     * engine's ownership, on one thread.
     */
    @Test
    void anAdmissionLostToCancellationBreaksTheGate() {
        PhaseGate gate = new PhaseGate(1);
        PhaseGate.Rule rule = gate.rule();
        gate.engine.runOwned(() -> {
            Object stamp = rule.ruleArrived(null); // one arrival of one: boundary 1 completes
            assertEquals(1L, stamp);
            assertEquals(1, gate.phase());
            assertTrue(rule.ruleCanEnter());
            assertTrue(rule.ruleTryEnter(stamp));
            assertEquals(1, rule.ruleAdmitted());
            rule.ruleUndo(stamp);
            assertEquals(0, rule.ruleAdmitted());
        });
        assertTrue(gate.isClosed());
        assertThrows(CancellationException.class, () -> gate.arriveAndWait(Task.value(1)).join());
        assertTrue(gate.toString().contains("broken"), gate.toString());
        gate.closeAndCheck();
    }

    @Test
    void workThatFailsBreaksTheGateOnceItsPhaseEnds() {
        PhaseGate gate = new PhaseGate(2);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        Event<Void> releaseB = new Event<>();
        IllegalStateException boom = new IllegalStateException("boom");
        CompletableFuture<String> a = gate.arriveAndWait(Task.<String>failure(boom)).toCompletableFuture();
        CompletableFuture<String> b = gate.arriveAndWait(held(gate, "b", phases, releaseB)).toCompletableFuture();
        assertTrue(a.isDone());
        assertSame(boom, assertThrows(CompletionException.class, a::join).getCause(), "a ends with its own error");
        assertTrue(gate.isClosed(), "a will not arrive at boundary 2: the gate breaks");
        assertFalse(b.isDone(), "b's phase-1 work is not interrupted");
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("1 admitted"), live.getMessage());
        CompletableFuture<String> next = gate.arriveAndWait(recording(gate, "next", phases)).toCompletableFuture();
        doneCancelled(next);
        releaseB.set();
        assertEquals("b", done(b));
        assertEquals(Map.of("b", 1L), phases);
        gate.closeAndCheck(); // admitted work ended
    }

    @Test
    void workThatEndsCancelledBreaksTheGateAndTheNextArrivalsAreCancelled() {
        PhaseGate gate = new PhaseGate(2);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        CompletableFuture<String> a = gate.arriveAndWait(Task.<String>cancelled()).toCompletableFuture();
        CompletableFuture<String> b = gate.arriveAndWait(recording(gate, "b", phases)).toCompletableFuture();
        doneCancelled(a);
        assertEquals("b", done(b), "b was admitted with a and runs to its end");
        assertTrue(gate.isClosed());
        doneCancelled(gate.arriveAndWait(recording(gate, "b2", phases)).toCompletableFuture());
        assertEquals(Map.of("b", 1L), phases);
        assertEquals(1, gate.phase());
        gate.closeAndCheck();
    }

    @Test
    void anInterruptedBlockingArrivalBreaksTheGate() throws Exception {
        PhaseGate gate = new PhaseGate(3);
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> a = gate.arriveAndWait(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
            Thread.currentThread().interrupt(); // it waits (2 of 3 arrived), and the wait is cancelled
            try {
                gate.arriveAndCall(ran::incrementAndGet);
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.join();
        assertTrue(thrown.get() instanceof CancellationException, String.valueOf(thrown.get()));
        assertTrue(gate.isClosed());
        assertTrue(a.isDone(), "the waiting participant is resolved");
        assertThrows(CancellationException.class, a::join);
        assertEquals(0, ran.get());
        gate.closeAndCheck();
    }

    // ---- close and the destruction rule ----

    @Test
    void closeCancelsWaitersAndLaterArrivalsWhileAdmittedWorkFinishes() {
        PhaseGate gate = new PhaseGate(2);
        Map<String, Long> phases = new ConcurrentHashMap<>();
        Event<Void> release = new Event<>();
        CompletableFuture<String> a = gate.arriveAndWait(held(gate, "a", phases, release)).toCompletableFuture();
        CompletableFuture<String> b = gate.arriveAndWait(held(gate, "b", phases, release)).toCompletableFuture();
        CompletableFuture<String> c = gate.arriveAndWait(recording(gate, "c", phases)).toCompletableFuture();
        gate.close();
        assertTrue(gate.isClosed());
        doneCancelled(c);
        assertThrows(CancellationException.class, () -> gate.arriveAndWait(recording(gate, "d", phases)).join());
        assertThrows(CancellationException.class, () -> gate.arriveAndCall(() -> "e"));
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("2 admitted"), live.getMessage());
        assertFalse(a.isDone() || b.isDone(), "admitted work is not interrupted by close");
        release.set();
        assertEquals("a", done(a));
        assertEquals("b", done(b));
        assertEquals(Map.of("a", 1L, "b", 1L), phases, "no work ran after close");
        gate.closeAndCheck();
        gate.close(); // idempotent
        assertFalse(gate.toString().contains("broken"), "closed, not broken: " + gate);
    }

    // ---- the blocking door, scopes ----

    @Test
    void theBlockingDoorRunsPhasesAcrossVirtualThreads() throws Exception {
        int parties = 4;
        int phases = 100;
        PhaseGate gate = new PhaseGate(parties);
        AtomicIntegerArray started = new AtomicIntegerArray(phases + 1);
        AtomicIntegerArray ended = new AtomicIntegerArray(phases + 1);
        AtomicReference<String> broken = new AtomicReference<>();
        try (ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Long>> done = new ArrayList<>();
            for (int p = 0; p < parties; p++) {
                done.add(vts.submit(() -> {
                    long sum = 0;
                    for (int k = 1; k <= phases; k++) {
                        sum += gate.arriveAndCall(() -> {
                            int phase = (int) gate.phase();
                            if (phase > 1 && ended.get(phase - 1) != parties) {
                                broken.compareAndSet(null, "phase " + phase + " started before phase "
                                        + (phase - 1) + " ended");
                            }
                            started.incrementAndGet(phase);
                            Thread.yield();
                            ended.incrementAndGet(phase);
                            return (long) phase;
                        });
                    }
                    return sum;
                }));
            }
            for (Future<Long> f : done) {
                long sum;
                try {
                    sum = f.get(60, TimeUnit.SECONDS); // a hang detector only (below JUnit's 2 m), not a timing assertion
                } catch (TimeoutException e) {
                    vts.shutdownNow();
                    throw new AssertionError("hang: a participant never finished; " + gate, e);
                }
                assertEquals((long) phases * (phases + 1) / 2, sum, "each participant ran phases 1.." + phases);
            }
        }
        assertEquals(null, broken.get());
        for (int k = 1; k <= phases; k++) {
            assertEquals(parties, started.get(k), "phase " + k);
        }
        assertEquals(phases, gate.phase());
        gate.closeAndCheck();
    }

    @Test
    void arrivalsSpawnedIntoAScopeAreJoinedByItQueuedOrAdmitted() {
        PhaseGate gate = new PhaseGate(3);
        Set<String> ran = ConcurrentHashMap.newKeySet();
        Scope scope = Scope.on(Scheduler.inline());
        scope.spawn(gate.arriveAndWait(Task.fromRunnable(() -> ran.add("a"))));
        scope.spawn(gate.arriveAndWait(Task.fromRunnable(() -> ran.add("b"))));
        CompletableFuture<Void> joined = scope.join().toCompletableFuture();
        assertFalse(joined.isDone(), "two arrivals are queued in the scope");
        scope.spawn(gate.arriveAndWait(Task.fromRunnable(() -> ran.add("c"))));
        assertTrue(joined.isDone());
        assertEquals(Set.of("a", "b", "c"), ran);
        scope.spawn(gate.arriveAndWait(Task.fromRunnable(() -> ran.add("d"))));
        CompletableFuture<Void> joinedAgain = scope.join().toCompletableFuture();
        assertFalse(joinedAgain.isDone(), "one arrival is queued");
        gate.close();
        assertTrue(joinedAgain.isDone(), "the close resolved it, and the scope joined it");
        assertFalse(ran.contains("d"));
        gate.closeAndCheck();
    }
}
