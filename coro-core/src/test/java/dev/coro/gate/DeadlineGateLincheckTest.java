package dev.coro.gate;

import dev.coro.task.Task;
import java.util.concurrent.TimeoutException;
import org.jetbrains.lincheck.datastructures.Operation;

/**
 * {@link PermitGateLincheck} on a {@link DeadlineGate} of capacity 2 on a {@link ManualScheduler}:
 * thread {@code t}'s waiter must be admitted within {@code 1 + t % 3} ticks, and {@code tick} moves
 * the clock one tick (running the gate's timer on the ticking thread if it came due), so expiry races
 * releases, cancels and close. Besides the base checks: a waiter fails with a TimeoutException only at
 * or after its deadline, a waiter still waiting after the run has its deadline ahead, and the gate
 * keeps at most one timer.
 */
public class DeadlineGateLincheckTest extends PermitGateLincheck {
    private final ManualScheduler clock;
    private volatile String early;

    /** Creates the gate under test. */
    public DeadlineGateLincheckTest() {
        super(new DeadlineGate(2, new ManualScheduler()));
        this.clock = (ManualScheduler) ((DeadlineGate) gate).clock.scheduler;
    }

    /** Moves the clock one tick; the gate's timer runs on this thread if it came due. */
    @Operation
    public void tick() {
        clock.advance(1);
    }

    @Override
    Task<Admission> acquireTask(Waiter w) {
        w.deadline = clock.nanoTime() + 1 + w.tid % 3;
        return ((DeadlineGate) gate).acquire(w.deadline);
    }

    @Override
    int modelCheckIterations() {
        return 3; // each run also drives the clock's monitor and timers; the engine's expiry is
                  // model-checked deeper by ExpiryLincheckTest
    }

    @Override
    Object tag(int tid) {
        return Long.MAX_VALUE;
    }

    @Override
    boolean failedRightly(Waiter w, Throwable error) {
        if (!(error instanceof TimeoutException)) {
            return false;
        }
        if (clock.nanoTime() < w.deadline) {
            early = "a waiter timed out at " + clock.nanoTime() + ", before its deadline " + w.deadline;
        }
        return true;
    }

    @Override
    boolean missed(Waiter w) {
        return w.deadline <= clock.nanoTime();
    }

    @Override
    public void validate() {
        super.validate();
        if (early != null) {
            throw new AssertionError(early);
        }
        if (clock.pending() > 1) {
            throw new AssertionError(clock.pending() + " timers pending: one per gate");
        }
    }
}
