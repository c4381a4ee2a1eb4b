package dev.coro.internal;

import dev.coro.LincheckSupport;
import dev.coro.internal.TestLane.Ask;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;

/**
 * The engine's pluggable order, model-checked: a lane of one unit whose waiters are offered by key
 * (a heap, WaitOrder.byKey) instead of arrival. Besides LaneLincheck's checks (one holder, no unit
 * lost, no missed signal), each admission made by a release must go to a least-key waiter among
 * those that were already queued before that release began: each admission records its key with
 * the waiters the releasing thread saw waiting when it started, and validate checks that none of
 * them had a lesser key, leaving out those whose cancellation was requested (they may depart during
 * the release, and then a greater key is admitted rightly; found by the CI stress run, which counted
 * a key cancelled mid-release). Checked after the run, so the check adds no step to explore.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "key", gen = IntGen.class, conf = "1:3")
public class KeyedOrderLincheckTest extends LaneLincheck {
    /** The waiters queued (and still waiting) when the current release began. */
    private final AtomicReference<List<Waiter>> waitingAtRelease = new AtomicReference<>(List.of());
    /** Each admission's key, with the waiters its release saw waiting. */
    private final ConcurrentLinkedQueue<Admitted> admissions = new ConcurrentLinkedQueue<>();

    private record Admitted(long key, List<Waiter> waitingAtRelease) {}

    @Override
    public void validate() {
        super.validate();
        for (Admitted a : admissions) {
            for (Waiter o : a.waitingAtRelease()) {
                if (o.ask.key() < a.key() && !o.cancelRequested) {
                    throw new AssertionError("a waiter with key " + a.key() + " was admitted before one with key " + o.ask.key());
                }
            }
        }
    }

    public KeyedOrderLincheckTest() {
        super(new TestLane(1, TestLane.byKey(), null));
    }

    /** Starts a wait with {@code key}. */
    @Operation
    public void acquire(@Param(name = "tid") int tid, @Param(name = "key") int key) {
        Ask ask = Ask.key(key);
        start(tid, ask, 0, lanes[0].enter(ask).map(v -> {
            admissions.add(new Admitted(key, waitingAtRelease.get()));
            return v;
        }));
    }

    /** The trying door's decision. */
    @Operation
    public void tryAcquire(@Param(name = "tid") int tid) {
        tryEnter(tid, 0, Ask.key(0));
    }

    /** Notes the least key waiting when a release begins (see the class javadoc). */
    @Override
    void releasing(Runnable release) {
        List<Waiter> waiting = new ArrayList<>();
        for (Waiter w : waiters) {
            if (w.endings.get() == 0 && !w.cancelRequested && w.future != null) {
                waiting.add(w);
            }
        }
        waitingAtRelease.set(waiting);
        release.run();
        waitingAtRelease.set(List.of());
    }

    @Override
    boolean missed(Waiter w) {
        return lanes[0].freePermits() > 0;
    }

    @Override
    ExecutionScenario[] scenarios() {
        return new ExecutionScenario[] {releaseRacingLesserKeyArrival()};
    }

    /** Two waiters queued (keys 3 and 2); a release races a key-1 arrival and a cancel of key 2. */
    static ExecutionScenario releaseRacingLesserKeyArrival() {
        return LincheckSupport.scenario(KeyedOrderLincheckTest.class,
                "tryAcquire 1; acquire 2 3; acquire 3 2",
                "release 1 | acquire 2 1 | cancel 3",
                "release 2; release 3; release 2");
    }
}
