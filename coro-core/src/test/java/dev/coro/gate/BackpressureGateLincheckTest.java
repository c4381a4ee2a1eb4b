package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores {@link BackpressureGate}: acquisitions (each spends a grant) race grants,
 * cancellations, the try door and close. Operations answer nothing (which waiter a grant admits
 * depends on the interleaving). Checked at every admission: never more admissions than grants made.
 * Checked after each run, quiescent:
 * <ul>
 *   <li>no grant lost or spent twice: admissions + available = grants;</li>
 *   <li>no lost wake-up: a waiter waits only while the gate is open and no grant is available;</li>
 *   <li>each waiter ended at most once; one whose cancel was requested has ended.</li>
 * </ul>
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class BackpressureGateLincheckTest {
    private static final int SLOTS = 5;

    private final BackpressureGate gate = new BackpressureGate();
    private final AtomicLong granted = new AtomicLong();
    private final AtomicLong admitted = new AtomicLong();
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    private final Waiter[] latest = new Waiter[SLOTS];
    private volatile String broken;

    /** Creates the gate under test. */
    public BackpressureGateLincheckTest() {}

    /** Starts an acquisition and keeps it as this thread's latest waiter. */
    @Operation
    public void acquire(@Param(name = "tid") int tid) {
        Waiter w = new Waiter();
        waiters.add(w);
        latest[tid] = w;
        w.future = gate.acquire().outcome().map(w::ended).toCompletableFuture();
    }

    /** The try door. */
    @Operation
    public void tryAcquire() {
        Waiter w = new Waiter();
        waiters.add(w);
        w.future = gate.tryAcquire().outcome().map(w::ended).toCompletableFuture();
    }

    /** Grants one admission (counted first: the grant may admit a waiter inline). */
    @Operation
    public void grant() {
        granted.incrementAndGet();
        gate.grant(1);
    }

    /** Cancels this thread's latest waiter (a no-op if it has ended). */
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
        if (admitted.get() + gate.available() != granted.get()) {
            throw new AssertionError(admitted.get() + " admitted + " + gate.available() + " available != "
                    + granted.get() + " granted");
        }
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("a waiter ended " + endings + " times");
            }
            if (endings == 0) {
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled waiter still waits");
                }
                if (gate.isClosed()) {
                    throw new AssertionError("the gate is closed and a waiter waits");
                }
                if (gate.available() != 0) {
                    throw new AssertionError("lost wake-up: a waiter waits and " + gate.available() + " grants are free");
                }
            }
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
        return LincheckSupport.lincheck(getClass()).scenarios(grantRacingCancelAndClose());
    }

    /** Two waiters; a grant races the first one's cancellation, a newcomer's try and close. */
    static ExecutionScenario grantRacingCancelAndClose() {
        return LincheckSupport.scenario(BackpressureGateLincheckTest.class,
                "acquire 3; acquire 4",
                "grant; grant | acquire 1; cancel 1 | tryAcquire; close",
                null);
    }

    /** One acquisition, watched through its outcome. */
    final class Waiter {
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Void ended(Outcome<Admission> outcome) {
            if (outcome instanceof Outcome.Value<Admission>) {
                if (admitted.incrementAndGet() > granted.get()) {
                    broken = admitted.get() + " admitted with " + granted.get() + " granted";
                }
            } else if (!(outcome instanceof Outcome.Cancelled<Admission>)) {
                broken = "an acquisition failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
