package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.internal.PermitLane;
import dev.coro.task.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores {@link LatestOnlyGate}: submissions (acquire, so that the admission is held until
 * this thread's release) race exits, cancellations, the try door and close. Operations answer nothing
 * (which submission is superseded depends on the interleaving, not only the sequential history).
 * Checked at every admission: never two admitted at once. Checked after each run, quiescent:
 * <ul>
 *   <li>at most one submission still waits (the gate keeps only the newest);</li>
 *   <li>no lost wake-up: a submission waits only while the gate is open and an admission is held;</li>
 *   <li>each submission ended at most once; one whose cancel was requested has ended;</li>
 *   <li>the lane's count equals the admissions held (closeAndCheck relies on it).</li>
 * </ul>
 *
 * <p>Mutation-checked: with the engine's queue limit not applied (superseding nobody) the model
 * checker reports "3 submissions wait: only the newest may". The one-permit rule is the serial
 * gate's permit lane, model-checked with it.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class LatestOnlyGateLincheckTest {
    private static final int SLOTS = 5;

    private final LatestOnlyGate gate = new LatestOnlyGate();
    private final AtomicInteger holding = new AtomicInteger();
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    private final ConcurrentLinkedQueue<Admission>[] held = new ConcurrentLinkedQueue[SLOTS];
    private final Waiter[] latest = new Waiter[SLOTS];
    private volatile String broken;

    /** Creates the gate under test. */
    public LatestOnlyGateLincheckTest() {
        for (int i = 0; i < SLOTS; i++) {
            held[i] = new ConcurrentLinkedQueue<>();
        }
    }

    /** Submits (acquire) and keeps it as this thread's latest submission. */
    @Operation
    public void submit(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid);
        waiters.add(w);
        latest[tid] = w;
        w.future = gate.acquire().outcome().map(w::ended).toCompletableFuture();
    }

    /** The try door: admitted only if idle and nobody waits; held until this thread's release. */
    @Operation
    public void tryAcquire(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid);
        waiters.add(w);
        w.future = gate.tryAcquire().outcome().map(w::ended).toCompletableFuture();
    }

    /** Exits one admission this thread holds, if any. */
    @Operation
    public void release(@Param(name = "tid") int tid) {
        Admission a = held[tid].poll();
        if (a != null) {
            holding.decrementAndGet(); // before the exit: it may admit a waiter inline
            a.exit();
        }
    }

    /** Cancels this thread's latest submission (a no-op if it has ended). */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        Waiter w = latest[tid];
        if (w != null) {
            w.cancelRequested = true;
            w.future.cancel(false);
        }
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        gate.close();
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        long holds = 0;
        for (ConcurrentLinkedQueue<Admission> q : held) {
            holds += q.size();
        }
        long laneCount = 1 - ((PermitLane) gate.engine).freePermits(); // quiescent: no units in flight
        if (holds != laneCount) {
            throw new AssertionError(holds + " admissions held but the lane counts " + laneCount);
        }
        int waiting = 0;
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("a submission ended " + endings + " times");
            }
            if (endings == 0) {
                waiting++;
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled submission still waits");
                }
                if (gate.isClosed()) {
                    throw new AssertionError("the gate is closed and a submission waits");
                }
                if (holds == 0) {
                    throw new AssertionError("lost wake-up: a submission waits and nothing runs");
                }
            }
        }
        if (waiting > 1) {
            throw new AssertionError(waiting + " submissions wait: only the newest may");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(3).invocations(150)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    private LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass()).scenarios(supersedingRacingTheExit(), threeSubmissionsWhileOneRuns());
    }

    /** One runs; three submissions race: only the newest of them may still wait at the end. */
    static ExecutionScenario threeSubmissionsWhileOneRuns() {
        return LincheckSupport.scenario(LatestOnlyGateLincheckTest.class,
                "submit 0",
                "submit 1 | submit 2 | submit 3",
                null);
    }

    /**
     * One runs, one waits; a newer submission races the exit (which admits the waiting one) and the
     * waiting one's cancellation: whichever wins, one runs at a time and at most one waits.
     */
    static ExecutionScenario supersedingRacingTheExit() {
        return LincheckSupport.scenario(LatestOnlyGateLincheckTest.class,
                "submit 0; submit 3",
                "release 0 | submit 1; cancel 1 | submit 2",
                "release 3; release 1; release 2");
    }

    /** One submission, watched through its outcome. */
    final class Waiter {
        final int tid;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Waiter(int tid) {
            this.tid = tid;
        }

        Void ended(Outcome<Admission> outcome) {
            if (outcome instanceof Outcome.Value<Admission> v) {
                if (holding.incrementAndGet() > 1) {
                    broken = "two admitted at once";
                }
                held[tid].add(v.value());
            } else if (!(outcome instanceof Outcome.Cancelled<Admission>)) {
                broken = "a submission failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
