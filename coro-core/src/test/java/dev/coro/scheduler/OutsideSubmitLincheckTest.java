package dev.coro.scheduler;

import dev.coro.LincheckSupport;
import java.util.concurrent.RejectedExecutionException;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link WorkStealingPool#execute} from outside the pool against a shutdown: the
 * submission half of the park/wake protocol with InjectionQueue's I4 (an outside submission skips
 * its signal when the task before it is still queued). Its one worker is registered as parked and
 * never started, so a queued task can only be found once someone signals; the shutdown is stopped
 * after its first step (the run-state CAS), before it cancels its timers and wakes everyone, so that
 * the submitters' own signals are all there is (a timer's cancellation may run a task's continuation
 * there, on the shutting-down thread, and it may wait for an accepted task).
 *
 * <p>Results: {@link #execute} answers whether the task was accepted, as a sequential pool would
 * (before the shutdown: yes; after: no). {@link #validate} checks, after every interleaving, that an
 * accepted task still queued has had its worker woken. The race it is about: submitter A offers,
 * submitter B offers behind A's task and skips its signal (A's taker would take B's task or signal),
 * the shutdown lands, A sees it and takes its own task back: now nobody will take A's task, so A
 * must signal for B's.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:3")
public class OutsideSubmitLincheckTest {
    /** One task per number, the same object every time (remove matches by identity). */
    static final Runnable[] TASKS = new Runnable[4];

    static {
        for (int i = 0; i < TASKS.length; i++) {
            int v = i;
            TASKS[i] = new Runnable() {
                @Override
                public void run() {}

                @Override
                public String toString() {
                    return "task " + v;
                }
            };
        }
    }

    private final WorkStealingPool pool = new WorkStealingPool(1, "lincheck"); // one shard, never started
    private final Worker worker = pool.workers[0];

    /** A pool whose only worker is parked, with nothing queued. */
    public OutsideSubmitLincheckTest() {
        pool.idle.announcePark(worker, false);
    }

    /** An outside thread submits task {@code v}; whether it was accepted. */
    @Operation
    public boolean execute(@Param(name = "v") int v) {
        try {
            pool.execute(TASKS[v]);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** The first step of {@link WorkStealingPool#shutdown()}, alone: from now on submissions are refused. */
    @Operation
    public void shutdown() {
        pool.advanceRunState(WorkStealingPool.SHUTDOWN);
    }

    /** An accepted task still queued has had the parked worker woken for it (no lost wake-up). */
    @Validate
    public void validate() {
        if (!pool.injection.isEmpty() && worker.parked) {
            throw new AssertionError("a task is queued, accepted, and nobody was woken for it (the worker is still parked)");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(3).actorsBefore(1).actorsAfter(1)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(OutsideSubmitLincheckTest.class)
                .scenarios(aSubmitterTakesBackTheTaskAnotherCountedOn());
    }

    /** Two submitters on one shard and a shutdown: the removed task is the one the other skipped behind. */
    static ExecutionScenario aSubmitterTakesBackTheTaskAnotherCountedOn() {
        return LincheckSupport.scenario(OutsideSubmitLincheckTest.class,
                null,
                "execute 1 | execute 2 | shutdown",
                null);
    }
}
