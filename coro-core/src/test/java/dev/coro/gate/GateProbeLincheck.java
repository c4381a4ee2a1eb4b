package dev.coro.gate;

import dev.coro.LincheckSupport;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
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
        check().scaledIterations(2).invocations(150).modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(3).invocations(300).stress();
    }

    @Test
    @Tag("long")
    void modelCheckingLong() {
        check().scaledIterations(30).invocations(1000).modelCheck("modelCheckingLong");
    }

    /** Every run: the subclass's scenarios; three threads of three operations, two before, one after. */
    private LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass())
                .scenarios(scenarios().toArray(ExecutionScenario[]::new))
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1);
    }
}
