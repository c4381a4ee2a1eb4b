package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.sync.Event;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck explores {@link PhaseGate} ({@link #PARTIES} parties) in model-checking and stress modes,
 * with the phase invariant as the checked state.
 *
 * <p><b>Why the operations answer nothing.</b> As in PermitGateLincheck: which thread admits an
 * arrival, and when, is not a function of the sequential history (a thread that cannot own the
 * decision leaves its signal or release to the owner), so every operation returns nothing and the
 * checked property is the state. Inside every admitted work (in every interleaving explored):
 * <ul>
 *   <li>an arrival is admitted at a later boundary than the one completed when it arrived (a
 *       participant never takes a place in a boundary it has passed: the window, P4);</li>
 *   <li>at most {@link #PARTIES} works are admitted per boundary, and at least {@code k * PARTIES}
 *       arrivals began before boundary {@code k} admitted anyone;</li>
 *   <li>every work of boundary {@code k - 1} was admitted and has ended before any work of boundary
 *       {@code k} starts (Barrier, P2), and no boundary completes while a work runs.</li>
 * </ul>
 * And in {@link #validate()} after each run, with everything quiescent:
 * <ul>
 *   <li>each arrival ended at most once; a cancelled arrival has ended;</li>
 *   <li>no missed admission: while the gate is open, every completed boundary has admitted all its
 *       arrivals, and if no work runs, fewer than {@link #PARTIES} arrivals wait; once closed, no
 *       arrival waits;</li>
 *   <li>the destruction rule: closeAndCheck throws exactly when admitted work still runs, and
 *       leaves no arrival waiting.</li>
 * </ul>
 *
 * <p><b>Operations.</b> {@code arrive} starts {@code gate.arriveAndWait(work)} (inline scheduler),
 * where the work checks the invariants and then waits for its release; {@code finish} releases the
 * thread's oldest running work (it ends with a value); {@code cancel} cancels the thread's latest
 * arrival, wherever it is (waiting for a window, queued, being admitted, or running its work, which
 * then ends cancelled); {@code close} closes the gate.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class PhaseGateLincheckTest {
    static final int PARTIES = 2;
    static final int THREADS = 3;
    private static final int SLOTS = THREADS + 2;
    private static final int MAX_PHASES = 32;

    private final PhaseGate gate = new PhaseGate(PARTIES);
    private volatile String broken;
    private final List<Arrival> arrivals = new CopyOnWriteArrayList<>();
    private final AtomicInteger begun = new AtomicInteger();
    private final AtomicIntegerArray admittedAt = new AtomicIntegerArray(MAX_PHASES);
    private final AtomicIntegerArray endedAt = new AtomicIntegerArray(MAX_PHASES);
    // Slot tid is touched only by the thread that runs tid's operations.
    private final Arrival[] latest = new Arrival[SLOTS];

    /** Creates the gate. */
    public PhaseGateLincheckTest() {}

    /** Arrives with a work that checks the invariants and then waits for its release. */
    @Operation
    public void arrive(@Param(name = "tid") int tid) {
        Arrival a = new Arrival(tid, gate.phase());
        begun.incrementAndGet();
        arrivals.add(a);
        latest[tid] = a;
        a.future = gate.arriveAndWait(a.work()).outcome().map(a::ended).toCompletableFuture();
    }

    /** Releases this thread's oldest running work: it ends with a value and leaves the gate. */
    @Operation
    public void finish(@Param(name = "tid") int tid) {
        for (Arrival a : arrivals) {
            if (a.tid == tid && a.admitted && !a.releaseRequested) {
                a.releaseRequested = true;
                a.release.set();
                return;
            }
        }
    }

    /** Cancels this thread's latest arrival (a no-op if it has ended). */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        Arrival a = latest[tid];
        if (a != null) {
            a.cancelRequested = true;
            a.future.cancel(false);
        }
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        gate.close();
    }

    private void fail(String what) {
        if (broken == null) {
            broken = what;
        }
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        int waiting = 0;
        int running = 0;
        for (Arrival a : arrivals) {
            int endings = a.endings.get();
            if (endings > 1) {
                throw new AssertionError("arrival of thread " + a.tid + " ended " + endings + " times");
            }
            if (endings == 0) {
                if (a.cancelRequested) {
                    throw new AssertionError("a cancelled arrival of thread " + a.tid + " has not ended");
                }
                if (a.admitted) {
                    running++;
                } else {
                    waiting++;
                }
            }
        }
        long phase = gate.phase();
        int admitted = 0;
        for (int k = 0; k < MAX_PHASES; k++) {
            admitted += admittedAt.get(k);
        }
        if (!gate.isClosed()) {
            if (admitted != phase * PARTIES) {
                throw new AssertionError("missed admission: " + phase + " boundaries completed but " + admitted
                        + " admitted, " + waiting + " waiting");
            }
            if (running == 0 && waiting >= PARTIES) {
                throw new AssertionError("missed boundary: " + waiting + " arrivals wait and no work runs");
            }
        } else if (waiting != 0) {
            throw new AssertionError("the gate is closed and " + waiting + " arrivals still wait");
        }
        boolean threw = false;
        try {
            gate.closeAndCheck();
        } catch (IllegalStateException e) {
            threw = true;
        }
        if (threw != (running > 0)) {
            throw new AssertionError("closeAndCheck " + (threw ? "threw" : "passed") + " with " + running
                    + " works running");
        }
        for (Arrival a : arrivals) {
            if (a.endings.get() == 0 && !a.admitted) {
                throw new AssertionError("closeAndCheck left an arrival of thread " + a.tid + " waiting");
            }
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(8).invocations(300)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    /**
     * The same check, longer and with more operations per thread (about 2 minutes here; not scaled):
     * {@code -Pstress}, or {@code -Dgroups=long -Dcoro.test.excludedGroups=none}.
     */
    @Test
    @Tag("long")
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void modelCheckingLong() {
        check().iterations(30).invocations(1000)
                .threads(THREADS).actorsPerThread(4).actorsBefore(2).actorsAfter(2)
                .modelCheck("modelCheckingLong");
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(10).invocations(1000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /** Every run of this test: the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(PhaseGateLincheckTest.class)
                .scenarios(
                        reArrivalRacingTheLateArrival(),
                        cancelRacingTheBoundary(),
                        closeRacingTheNextBoundary());
    }

    /**
     * Threads 1 and 2 complete boundary 1; thread 1 finishes its work and arrives again, possibly
     * while thread 2's waiter is not queued yet (its signal precedes its push): the window (P4).
     * Thread 3 arrives too and releases thread 2's work, so boundary 2 can complete.
     */
    static ExecutionScenario reArrivalRacingTheLateArrival() {
        return LincheckSupport.scenario(PhaseGateLincheckTest.class,
                null,
                "arrive 1; finish 1; arrive 1 | arrive 2 | arrive 3; finish 2",
                "finish 1; finish 3");
    }

    /**
     * One arrival waits; the last arrival of boundary 1 races its cancel (queued cancel, lost
     * hand-off, or cancelled work), and a third arrival races both.
     */
    static ExecutionScenario cancelRacingTheBoundary() {
        return LincheckSupport.scenario(PhaseGateLincheckTest.class,
                "arrive 1",
                "cancel 1 | arrive 2; finish 2 | arrive 3",
                null);
    }

    /**
     * Boundary 1 admitted threads 1 and 2, thread 3 waits for boundary 2; the works end and their
     * participants arrive again while the gate is closed.
     */
    static ExecutionScenario closeRacingTheNextBoundary() {
        return LincheckSupport.scenario(PhaseGateLincheckTest.class,
                "arrive 1; arrive 2; arrive 3",
                "finish 1; arrive 1 | finish 2; arrive 2 | close",
                null);
    }


    /** One arriveAndWait run, watched through its work and its outcome. */
    final class Arrival {
        final int tid;
        final long phaseAtArrival;
        final Event<Void> release = new Event<>();
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean admitted;
        volatile long phase;
        volatile boolean releaseRequested;
        volatile boolean cancelRequested;

        Arrival(int tid, long phaseAtArrival) {
            this.tid = tid;
            this.phaseAtArrival = phaseAtArrival;
        }

        Task<Void> work() {
            return Task.fromRunnable(this::started).then(release.await()).andFinally(this::workEnded);
        }

        private void started() {
            long k = gate.phase();
            phase = k;
            admitted = true;
            if (k <= phaseAtArrival) {
                fail("an arrival made when boundary " + phaseAtArrival + " had completed was admitted at " + k);
            }
            if (k >= MAX_PHASES) {
                fail("phase " + k + " is beyond the test's table");
                return;
            }
            if (admittedAt.incrementAndGet((int) k) > PARTIES) {
                fail("more than " + PARTIES + " admitted at boundary " + k);
            }
            if (begun.get() < k * PARTIES) {
                fail("boundary " + k + " admitted with only " + begun.get() + " arrivals begun");
            }
            if (k > 1 && (admittedAt.get((int) k - 1) != PARTIES || endedAt.get((int) k - 1) != PARTIES)) {
                fail("phase " + k + " work started while phase " + (k - 1) + " had " + admittedAt.get((int) k - 1)
                        + " admitted and " + endedAt.get((int) k - 1) + " ended");
            }
        }

        private void workEnded() {
            long k = phase;
            if (gate.phase() != k) {
                fail("boundary " + gate.phase() + " completed while phase " + k + " work ran");
            }
            if (k < MAX_PHASES) {
                endedAt.incrementAndGet((int) k);
            }
        }

        Void ended(Outcome<Void> outcome) {
            if (outcome instanceof Outcome.Failure<Void> f) {
                fail("arriveAndWait failed: " + f.error());
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
