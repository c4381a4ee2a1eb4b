package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.Stress;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Lincheck test of a condition gate (readiness, predicate, completion), less what is the gate's
 * own: the entry operations delegated to its {@link GateProbe}, and the runs (model checking, short
 * stress, and the long model check) with the same bounds for every gate. A subclass adds its
 * condition operation, its {@code @Validate} and its custom scenarios.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public abstract class GateProbeLincheck {
    /** The subclass's probe (built in its field initializer, where the gate and its condition are). */
    abstract GateProbe probe();

    /** The subclass's custom scenarios, added to every run. */
    abstract List<ExecutionScenario> scenarios();

    /** The try door with a work that records its admission. */
    @Operation
    public void tryWithin() {
        probe().tryWithin();
    }

    /** Starts an acquisition and keeps it as this thread's latest waiter. */
    @Operation
    public void acquire(@Param(name = "tid") int tid) {
        probe().acquire(tid);
    }

    /** Starts a within whose work records its admission. */
    @Operation
    public void within(@Param(name = "tid") int tid) {
        probe().within(tid);
    }

    /** Cancels this thread's latest waiter. */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        probe().cancel(tid);
    }

    /** Exits one admission this thread holds. */
    @Operation
    public void release(@Param(name = "tid") int tid) {
        probe().release(tid);
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        probe().close();
    }

    @Test
    void modelChecking() {
        run(new ModelCheckingOptions(), "modelChecking", 2, 150);
    }

    @Test
    @Tag("stress")
    void stress() {
        run(new StressOptions(), "stress", 3, 300);
    }

    @Test
    @Tag("long")
    void modelCheckingLong() {
        run(new ModelCheckingOptions(), "modelCheckingLong", 30, 1000);
    }

    private void run(Options<?, ?> options, String mode, int iterations, int invocations) {
        long start = System.nanoTime();
        for (ExecutionScenario scenario : scenarios()) {
            options.addCustomScenario(scenario);
        }
        options.iterations(Stress.scaled(iterations))
                .invocationsPerIteration(invocations)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(2)
                .actorsAfter(1);
        options.check(getClass());
        LincheckSupport.report(getClass(), mode, start);
    }
}
