package dev.coro.internal;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * The select-able waiter, model-checked: two lanes of one unit each; a select waits in both
 * ({@link SelectTest#selectAny}), plain waiters in one; releases, cancels and a close race it.
 * Besides LaneLincheck's checks per lane (one holder each, no unit lost, no missed signal: a waiter,
 * select or not, still waits only if every lane it waits on is held): a select is admitted at most
 * once, through one lane, and a select cancelled or closed out leaves both lanes' counts exact.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "lane", gen = IntGen.class, conf = "0:1")
public class SelectLincheckTest extends LaneLincheck {
    private final AtomicInteger selectAdmissions = new AtomicInteger();

    public SelectLincheckTest() {
        super(new TestLane(1), new TestLane(1));
    }

    /** Starts a select over both lanes, kept as this thread's latest waiter. */
    @Operation
    public void select(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid, null, 0, 1);
        waiters.add(w);
        latest[tid] = w;
        w.future = SelectTest.selectAny(lanes[0], lanes[1]).outcome().map(o -> {
            if (o instanceof Outcome.Value<Select.Selected> v) {
                selectAdmissions.incrementAndGet();
                return w.ended(new Outcome.Value<>(null), v.value().index());
            }
            return w.ended(o, -1);
        }).toCompletableFuture();
    }

    /** Starts a plain wait on one lane. */
    @Operation
    public void acquire(@Param(name = "tid") int tid, @Param(name = "lane") int lane) {
        start(tid, null, lane, lanes[lane].enter(null));
    }

    /** The trying door's decision on one lane. */
    @Operation
    public void tryAcquire(@Param(name = "tid") int tid, @Param(name = "lane") int lane) {
        tryEnter(tid, lane, null);
    }

    /** Closes one lane. */
    @Operation
    public void close(@Param(name = "lane") int lane) {
        lanes[lane].close();
    }

    @Override
    boolean missed(Waiter w) {
        for (int lane : w.on) {
            if (lanes[lane].freePermits() > 0) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void validate() {
        check();
        int selects = 0;
        for (Waiter w : waiters) {
            if (w.on.length == 2 && w.outcome instanceof Outcome.Value<?>) {
                selects++;
            }
        }
        if (selects != selectAdmissions.get()) {
            throw new AssertionError(selectAdmissions + " select admissions, " + selects + " admitted selects");
        }
    }

    @Override
    ExecutionScenario[] scenarios() {
        return new ExecutionScenario[] {releasesRacingForOneSelect(), cancelRacingBothReleases(), closeRacingAdmission()};
    }

    @Override
    int modelCheckIterations() {
        return 10;
    }

    /** Both lanes held; thread 3's select waits in both; both holders release at once. */
    static ExecutionScenario releasesRacingForOneSelect() {
        return LincheckSupport.scenario(SelectLincheckTest.class,
                "tryAcquire 1 0; tryAcquire 2 1; select 3",
                "release 1 | release 2 | acquire 3 0",
                "release 3; release 3");
    }

    /** Both lanes held, a select waiting; its cancel races both releases. */
    static ExecutionScenario cancelRacingBothReleases() {
        return LincheckSupport.scenario(SelectLincheckTest.class,
                "tryAcquire 1 0; tryAcquire 2 1; select 3",
                "release 1 | release 2 | cancel 3",
                "release 3");
    }

    /** Both lanes held, a select waiting; a close of one lane races the other lane's release. */
    static ExecutionScenario closeRacingAdmission() {
        return LincheckSupport.scenario(SelectLincheckTest.class,
                "tryAcquire 1 0; tryAcquire 2 1; select 3",
                "close 0 | release 2 | acquire 1 1",
                "release 1; release 3; release 1");
    }
}
