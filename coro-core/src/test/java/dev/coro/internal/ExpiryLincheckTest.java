package dev.coro.internal;

import dev.coro.LincheckSupport;
import dev.coro.internal.TestLane.Ask;
import java.util.concurrent.TimeoutException;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * The engine's expiry, model-checked: a lane of one unit on a {@link ManualClock}; waiters ask to be
 * admitted within 1 to 3 ticks, {@code tick} moves the clock one tick (firing the engine's timer on
 * the ticking thread), and releases, cancels and the timer race. Besides LaneLincheck's checks: a
 * waiter ends with a TimeoutException only at or after its deadline (never early), a waiter still
 * waiting when the run is over has a deadline in the future (none was missed), at most one timer is
 * pending, and an expired waiter takes no unit.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "ticks", gen = IntGen.class, conf = "1:3")
public class ExpiryLincheckTest extends LaneLincheck {
    private final ManualClock clock;

    public ExpiryLincheckTest() {
        super(new TestLane(1, WaitOrder.arrival(), new ManualClock()));
        this.clock = (ManualClock) lanes[0].clock;
    }

    /** Starts a wait that expires {@code ticks} from now. */
    @Operation
    public void acquire(@Param(name = "tid") int tid, @Param(name = "ticks") int ticks) {
        Ask ask = Ask.until(clock.nanoTime() + ticks);
        start(tid, ask, 0, lanes[0].enter(ask));
    }

    /** The trying door's decision. */
    @Operation
    public void tryAcquire(@Param(name = "tid") int tid) {
        tryEnter(tid, 0, null);
    }

    /** Moves the clock one tick; the engine's timer fires on this thread if it came due. */
    @Operation
    public void tick() {
        clock.advance(1);
    }

    @Override
    void failed(Waiter w, Throwable error) {
        if (!(error instanceof TimeoutException)) {
            super.failed(w, error);
        } else if (clock.nanoTime() < w.ask.deadline()) {
            breakWith("a waiter expired early: at " + clock.nanoTime() + ", deadline " + w.ask.deadline());
        }
    }

    @Override
    boolean missed(Waiter w) {
        return lanes[0].freePermits() > 0 || w.ask.deadline() <= clock.nanoTime();
    }

    @Override
    public void validate() {
        check();
        if (clock.pending() > 1) {
            throw new AssertionError(clock.pending() + " timers pending: one per engine");
        }
    }

    @Override
    ExecutionScenario[] scenarios() {
        return new ExecutionScenario[] {tickRacingReleaseAndCancel()};
    }

    @Override
    int modelCheckIterations() {
        return 5; // each run also drives the clock's monitor and heap: the slowest of these tests
    }

    /** Two waiters due in 1 and 2 ticks; the tick that expires the first races a release and a cancel. */
    static ExecutionScenario tickRacingReleaseAndCancel() {
        return LincheckSupport.scenario(ExpiryLincheckTest.class,
                "tryAcquire 1; acquire 2 1; acquire 3 2",
                "tick | release 1 | cancel 3",
                "tick; tick; release 2; release 3");
    }
}
