package dev.coro.internal;

import dev.coro.LincheckSupport;
import dev.coro.internal.TestLane.Ask;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * The engine's weights, model-checked: a permit lane of 3 units whose waiters take 1 to 3 units each
 * (PermitLane T1 to T6 with weights, including an arrival that finds part of its weight free and a
 * waiter that departs while partly covered). Checks (LaneLincheck): never more than 3 units in use,
 * free units exactly 3 minus those held, no missed signal: a waiter may still wait only if some
 * waiting waiter needs more units than are free (the head of the line blocks the rest).
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "units", gen = IntGen.class, conf = "1:3")
public class WeightedLaneLincheckTest extends LaneLincheck {

    public WeightedLaneLincheckTest() {
        super(new TestLane(3));
    }

    /** The trying door's decision for {@code units}. */
    @Operation
    public void tryAcquire(@Param(name = "tid") int tid, @Param(name = "units") int units) {
        tryEnter(tid, 0, Ask.weight(units));
    }

    /** Starts a wait for {@code units}, kept as this thread's latest waiter. */
    @Operation
    public void acquire(@Param(name = "tid") int tid, @Param(name = "units") int units) {
        Ask ask = Ask.weight(units);
        start(tid, ask, 0, lanes[0].enter(ask));
    }

    /** Closes the lane. */
    @Operation
    public void close() {
        lanes[0].close();
    }

    @Override
    boolean missed(Waiter w) {
        long free = lanes[0].freePermits();
        for (Waiter other : waiters) {
            if (other.endings.get() == 0 && other.ask.weight() > free) {
                return false; // a waiter that does not fit may block this one (FIFO)
            }
        }
        return true;
    }

    @Override
    ExecutionScenario[] scenarios() {
        return new ExecutionScenario[] {partlyCoveredWaiterDeparts(), heavyHeadAndLightTail()};
    }

    /**
     * Thread 1 holds 2 of 3 units; thread 2 waits for 3 (1 covered at once, as a credit), thread 1
     * releases (2 more go to it) while thread 2 cancels: whatever the order, the 3 units end free.
     */
    static ExecutionScenario partlyCoveredWaiterDeparts() {
        return LincheckSupport.scenario(WeightedLaneLincheckTest.class,
                "tryAcquire 1 2; acquire 2 3",
                "release 1 | cancel 2 | acquire 3 1",
                "release 2; release 3");
    }

    /** A heavy waiter at the head, a light one behind it, releases racing a newcomer's try. */
    static ExecutionScenario heavyHeadAndLightTail() {
        return LincheckSupport.scenario(WeightedLaneLincheckTest.class,
                "tryAcquire 1 3; acquire 2 3; acquire 3 1",
                "release 1 | tryAcquire 2 1; release 2 | cancel 3",
                "release 3");
    }
}
