package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link PhaseGate} under load: the phase order over many phases on a work-stealing pool, and the
 * broken-barrier rule under cancellations, closes and failures at random moments (never a hang).
 * Waits use a generous timeout only as a hang detector: it fails with a thread dump, it asserts
 * nothing about time.
 */
class PhaseGateStressTest {
    /**
     * The hang detector's limit: far beyond any run of these tests on a loaded machine, and below
     * JUnit's default timeout of 2 minutes (so a hang fails with the thread dump).
     */
    private static final long HANG_SECONDS = 60;

    /**
     * The proof: 1,000 phases of 8 participants on a 2-worker pool. Each participant loops
     * {@code arriveAndWait(phaseWork)}; the work records (phase, participant) and checks with atomic
     * counters, inside the work, that it runs at the phase its participant expects and that every work
     * of the previous phase has ended; it yields halfway, so works of one phase interleave.
     */
    @Test
    @Tag("stress")
    void phaseOrderingOverAThousandPhasesOfEightParticipants() throws Exception {
        int parties = 8;
        int phases = Stress.scaled(1_000);
        PhaseGate gate = new PhaseGate(parties);
        PhaseLog log = new PhaseLog(gate, parties, phases);
        long start = System.nanoTime();
        try (WorkStealingPool pool = WorkStealingPool.create(2, "phase-stress")) {
            List<CompletableFuture<Integer>> participants = new ArrayList<>();
            for (int p = 0; p < parties; p++) {
                participants.add(log.participant(p, phases, -1, null).startOn(pool).toCompletableFuture());
            }
            awaitAll(participants, gate);
            for (CompletableFuture<Integer> f : participants) {
                assertEquals(phases, f.join(), "every participant ran every phase");
            }
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        log.assertClean();
        for (int k = 1; k <= phases; k++) {
            assertEquals(parties, log.started.get(k), "phase " + k + " started");
            assertEquals(parties, log.ended.get(k), "phase " + k + " ended");
            for (int p = 0; p < parties; p++) {
                assertEquals(1, log.ran.get(k * parties + p), "participant " + p + " in phase " + k);
            }
        }
        assertEquals(phases, gate.phase());
        gate.closeAndCheck();
        System.out.println("phaseOrderingOverAThousandPhasesOfEightParticipants: " + phases + " phases x "
                + parties + " participants in " + ms + " ms (" + (ms * 1_000_000L / ((long) phases * parties))
                + " ns per arrival, work included)");
    }

    /**
     * The broken-barrier rule at random moments: in each round, a random gate (2 to 6 parties, 1 to
     * 12 phases) on the pool, and one fault at a random moment (after a random number of phase works
     * have started): a participant cancelled from another thread, a participant's work failing or
     * ending cancelled, or the gate closed from another thread. Every participant must end (no hang);
     * the phase order holds throughout; a participant that did not finish ended cancelled, or with
     * the injected error; and once everything ended, no admitted work remains (closeAndCheck).
     */
    @Test
    @Tag("stress")
    void cancellationsAtRandomMomentsNeverHang() throws Exception {
        int rounds = Stress.scaled(300);
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        int[] faults = new int[4];
        int unfinished = 0;
        try (WorkStealingPool pool = WorkStealingPool.create(2, "phase-cancel")) {
            for (int round = 0; round < rounds; round++) {
                int parties = 2 + random.nextInt(5);
                int phases = 1 + random.nextInt(12);
                int fault = random.nextInt(4); // 0 cancel, 1 work fails, 2 work cancelled, 3 close
                faults[fault]++;
                int victim = random.nextInt(parties);
                int trigger = random.nextInt(parties * phases + 1); // works started before the fault
                PhaseGate gate = new PhaseGate(parties);
                PhaseLog log = new PhaseLog(gate, parties, phases);
                String where = "seed " + seed + ", round " + round + ": " + gate + ", phases " + phases
                        + ", fault " + fault + " on " + victim + " after " + trigger + " works";
                CountDownLatch fire = new CountDownLatch(1);
                log.onStarted = n -> {
                    if (n == trigger) {
                        fire.countDown();
                    }
                };
                List<CompletableFuture<Integer>> participants = new ArrayList<>();
                int failAt = fault == 1 || fault == 2 ? 1 + trigger / parties : -1;
                for (int p = 0; p < parties; p++) {
                    boolean faulty = p == victim && failAt > 0;
                    participants.add(log.participant(p, phases, faulty ? failAt : -1, faulty ? fault : null)
                            .startOn(pool).toCompletableFuture());
                }
                Thread faulter = null;
                if (fault == 0 || fault == 3) {
                    int spins = random.nextInt(200);
                    faulter = Thread.ofPlatform().start(() -> {
                        await(fire);
                        for (int i = 0; i < spins; i++) {
                            Thread.onSpinWait();
                        }
                        if (fault == 0) {
                            participants.get(victim).cancel(false);
                        } else {
                            gate.close();
                        }
                    });
                    if (trigger == 0) {
                        fire.countDown();
                    }
                }
                awaitAll(participants, gate, where);
                log.awaitSettled(where, gate);
                fire.countDown(); // the trigger may lie beyond the works that ran
                if (faulter != null) {
                    faulter.join();
                }
                log.assertClean(where);
                boolean allFinished = true;
                for (int p = 0; p < parties; p++) {
                    Outcome<Integer> o = log.outcomes.get(p);
                    if (o instanceof Outcome.Value<Integer> v) {
                        assertEquals(phases, v.value(), where);
                    } else {
                        allFinished = false;
                        boolean injected = o instanceof Outcome.Failure<Integer> f && f.error() == PhaseLog.INJECTED;
                        assertTrue(o instanceof Outcome.Cancelled<Integer> || (p == victim && injected),
                                where + ": participant " + p + " ended " + o);
                    }
                }
                if (!allFinished) {
                    unfinished++;
                    assertTrue(gate.isClosed(), where + ": someone did not finish, so the gate must have closed");
                }
                gate.closeAndCheck(); // everything ended: no admitted work remains
            }
        }
        System.out.println("cancellationsAtRandomMomentsNeverHang: seed " + seed + ", " + rounds + " rounds (cancel "
                + faults[0] + ", fail " + faults[1] + ", work cancelled " + faults[2] + ", close " + faults[3]
                + "), " + unfinished + " broke before the end");
    }

    /**
     * One arrival waits; the last arrival (which completes the boundary) races a cancel of the first
     * from another thread. Whoever wins, everyone is resolved and the state is exact: both ran, or
     * the first was cancelled without running and the gate broke (the second ran only if it was
     * admitted before the break was applied).
     */
    @Test
    @Tag("stress")
    void cancelRacingTheLastArrivalResolvesEveryoneEitherWay() throws Exception {
        int rounds = Stress.scaled(3_000);
        CyclicBarrier barrier = new CyclicBarrier(2);
        int[] seen = new int[3]; // both ran; first cancelled, second ran; both cancelled
        for (int round = 0; round < rounds; round++) {
            PhaseGate gate = new PhaseGate(2);
            AtomicInteger ranFirst = new AtomicInteger();
            AtomicInteger ranSecond = new AtomicInteger();
            AtomicReference<Outcome<Integer>> first = new AtomicReference<>();
            CountDownLatch settled = new CountDownLatch(1);
            CompletableFuture<Outcome<Integer>> waiting = gate.arriveAndWait(Task.fromCallable(ranFirst::incrementAndGet))
                    .outcome().map(o -> {
                        first.set(o);
                        settled.countDown();
                        return o;
                    }).toCompletableFuture();
            Thread canceller = Thread.ofPlatform().start(() -> {
                await(barrier);
                waiting.cancel(false);
            });
            await(barrier);
            CompletableFuture<Outcome<Integer>> last = gate.arriveAndWait(Task.fromCallable(ranSecond::incrementAndGet))
                    .outcome().toCompletableFuture();
            canceller.join();
            awaitAll(List.of(last), gate, "round " + round + ": the last arrival never ended");
            if (!settled.await(HANG_SECONDS, TimeUnit.SECONDS)) {
                fail("round " + round + ": the first arrival never ended; " + gate + "\n" + threadDump());
            }
            Outcome<Integer> second = last.join();
            String where = "round " + round + ": first " + first.get() + ", second " + second + ", " + gate;
            if (first.get() instanceof Outcome.Value<Integer>) {
                assertEquals(1, ranFirst.get(), where);
                assertTrue(second instanceof Outcome.Value<Integer> && ranSecond.get() == 1, where);
                assertEquals(1, gate.phase(), where);
                seen[0]++;
            } else {
                assertTrue(first.get() instanceof Outcome.Cancelled<Integer>, where);
                assertEquals(0, ranFirst.get(), where);
                assertTrue(gate.isClosed(), where);
                if (second instanceof Outcome.Value<Integer>) {
                    assertEquals(1, ranSecond.get(), where);
                    seen[1]++;
                } else {
                    assertTrue(second instanceof Outcome.Cancelled<Integer> && ranSecond.get() == 0, where);
                    seen[2]++;
                }
            }
            gate.closeAndCheck();
        }
        System.out.println("cancelRacingTheLastArrivalResolvesEveryoneEitherWay: both ran " + seen[0]
                + ", first cancelled and second ran " + seen[1] + ", both cancelled " + seen[2] + " of " + rounds);
    }

    /** The phase work and its checks, shared by the tests above. */
    static final class PhaseLog {
        static final RuntimeException INJECTED = new IllegalStateException("injected phase-work failure");

        final PhaseGate gate;
        final int parties;
        final AtomicIntegerArray started;
        final AtomicIntegerArray ended;
        final AtomicIntegerArray ran;
        final AtomicInteger startedTotal = new AtomicInteger();
        final AtomicReference<String> broken = new AtomicReference<>();
        final List<Outcome<Integer>> outcomes;
        final CountDownLatch settled;
        volatile java.util.function.IntConsumer onStarted = n -> {};

        PhaseLog(PhaseGate gate, int parties, int phases) {
            this.gate = gate;
            this.parties = parties;
            this.started = new AtomicIntegerArray(phases + 2);
            this.ended = new AtomicIntegerArray(phases + 2);
            this.ran = new AtomicIntegerArray((phases + 2) * parties);
            this.outcomes = new java.util.concurrent.CopyOnWriteArrayList<>(new ArrayList<Outcome<Integer>>());
            for (int p = 0; p < parties; p++) {
                outcomes.add(null);
            }
            this.settled = new CountDownLatch(parties);
        }

        /**
         * Participant {@code p}: {@code phases} arrivals, each with its phase work; the value is the
         * number of phases it ran. At phase {@code failAt} its work fails ({@code how} 1) or ends
         * cancelled ({@code how} 2) after its checks.
         */
        Task<Integer> participant(int p, int phases, int failAt, Integer how) {
            return Task.loop(0, k -> k < phases, k -> gate.arriveAndWait(work(p, k + 1, failAt, how)))
                    .outcome()
                    .flatMap(o -> {
                        outcomes.set(p, o);
                        settled.countDown();
                        return o instanceof Outcome.Value<Integer> v ? Task.value(v.value())
                                : o instanceof Outcome.Failure<Integer> f ? Task.<Integer>failure(f.error())
                                : Task.<Integer>cancelled();
                    });
        }

        /** The work of participant {@code p} for its {@code k}-th phase. */
        private Task<Integer> work(int p, int k, int failAt, Integer how) {
            Task<Integer> checked = Task.fromCallable(() -> {
                long phase = gate.phase();
                if (phase != k) {
                    fail("participant " + p + " expected phase " + k + " but was admitted at " + phase);
                }
                if (k > 1 && (started.get(k - 1) != parties || ended.get(k - 1) != parties)) {
                    fail("phase " + k + " work started while phase " + (k - 1) + " had " + started.get(k - 1)
                            + " started and " + ended.get(k - 1) + " ended of " + parties);
                }
                if (started.incrementAndGet(k) > parties) {
                    fail("more than " + parties + " works in phase " + k);
                }
                ran.incrementAndGet(k * parties + p);
                onStarted.accept(startedTotal.incrementAndGet());
                return k;
            });
            Task<Integer> body = checked.flatMap(v -> Task.yieldNow().map(ignored -> v));
            if (k == failAt) {
                body = body.flatMap(v -> how == 1 ? Task.<Integer>failure(INJECTED) : Task.<Integer>cancelled());
            }
            return body.andFinally(() -> {
                if (gate.phase() != k) {
                    fail("phase " + k + " work still ran when phase " + gate.phase() + " completed");
                }
                ended.incrementAndGet(k);
            });
        }

        private void fail(String what) {
            broken.compareAndSet(null, what);
        }

        void awaitSettled(String where, PhaseGate gate) throws InterruptedException {
            if (!settled.await(HANG_SECONDS, TimeUnit.SECONDS)) {
                org.junit.jupiter.api.Assertions.fail(where + ": participants never settled; " + gate + "\n" + threadDump());
            }
        }

        void assertClean() {
            assertClean("");
        }

        void assertClean(String where) {
            assertEquals(null, broken.get(), where);
        }
    }

    private static void awaitAll(List<? extends CompletableFuture<?>> futures, PhaseGate gate) throws Exception {
        awaitAll(futures, gate, "");
    }

    /** The hang detector: waits for every future (any outcome), failing with a thread dump. */
    private static void awaitAll(List<? extends CompletableFuture<?>> futures, PhaseGate gate, String where)
            throws Exception {
        CompletableFuture<Void> all = CompletableFuture.allOf(futures.stream()
                .map(f -> f.handle((v, e) -> null))
                .toArray(CompletableFuture[]::new));
        try {
            all.get(HANG_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail(where + ": hang: participants did not end; " + gate + "\n" + threadDump());
        }
    }

    private static String threadDump() {
        StringBuilder sb = new StringBuilder();
        for (var e : Thread.getAllStackTraces().entrySet()) {
            sb.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
            for (StackTraceElement frame : e.getValue()) {
                sb.append("    at ").append(frame).append('\n');
            }
        }
        return sb.toString();
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
