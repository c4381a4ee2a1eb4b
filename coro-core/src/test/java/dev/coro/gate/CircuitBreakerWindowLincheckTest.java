package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.gate.CircuitBreakerGate.State;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores two closed {@link CircuitBreakerGate}s that never open (minimum calls above the
 * scenario), one with a count window and one with a time window of ten 10-tick buckets on a
 * {@link ManualScheduler}: calls that succeed or fail race each other and ticks that move the time
 * window to new buckets (and race the installation of each bucket); each call is also recorded
 * straight into a count window of 2, so that records race for a slot a window apart. Checked after
 * each run, everything quiescent: no count is lost: each gate's window holds every call and every
 * failure; the small window's totals equal the sums over its slots, which hold exactly the last 2
 * claims (I1 of OutcomeWindow). The
 * verdicts of a half-open gate are {@link CircuitBreakerGateLincheckTest}'s.
 */
public class CircuitBreakerWindowLincheckTest {
    private static final int THREADS = 3;

    private final ManualScheduler clock = new ManualScheduler();
    private final CircuitBreakerGate counting = CircuitBreakerGate.builder("counting").clock(clock)
            .countWindow(100).minimumCalls(100).build();
    private final CircuitBreakerGate timed = CircuitBreakerGate.builder("timed").clock(clock)
            .timeWindow(Duration.ofNanos(100)).minimumCalls(100).build();
    /** A count window of 2 recorded into directly, so that the calls wrap around its slots. */
    private final OutcomeWindow.Count small = new OutcomeWindow.Count(2);
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger failures = new AtomicInteger();
    private volatile String broken;

    /** A call that succeeds, through both closed gates. */
    @Operation
    public void succeed() {
        small.record(false, false, 0, counting);
        calls.incrementAndGet();
        expect(counting.within(Task.value(1)).outcome().toCompletableFuture().join(), false);
        expect(timed.within(Task.value(1)).outcome().toCompletableFuture().join(), false);
    }

    /** A call that fails, through both closed gates. */
    @Operation
    public void fail() {
        small.record(true, true, 0, counting);
        calls.incrementAndGet();
        failures.incrementAndGet();
        expect(counting.within(Task.<Integer>failure(new IOException("down"))).outcome().toCompletableFuture().join(), true);
        expect(timed.within(Task.<Integer>failure(new IOException("down"))).outcome().toCompletableFuture().join(), true);
    }

    /** Moves the closed gates' clock by one bucket of the time window. */
    @Operation
    public void tick() {
        clock.advance(10);
    }

    private void expect(Outcome<Integer> o, boolean failed) {
        if (failed != (o instanceof Outcome.Failure<Integer>) || o instanceof Outcome.Cancelled<Integer>) {
            broken = "a closed gate's call ended " + o;
        }
    }

    /** After each run: the properties in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        check(counting);
        check(timed);
        long[] sums = small.sums(0);
        long[] slots = small.recount();
        long n = Math.min(2, calls.get());
        if (sums[0] != slots[0] || sums[1] != slots[1] || sums[2] != slots[2] || sums[0] != n || slots[3] != n
                || sums[1] != sums[2] || sums[1] > failures.get()) {
            throw new AssertionError("a count window of 2 after " + calls + " calls, " + failures + " failed: totals "
                    + java.util.Arrays.toString(sums) + ", slots " + java.util.Arrays.toString(slots));
        }
    }

    private void check(CircuitBreakerGate gate) {
        CircuitBreakerGate.Metrics m = gate.metrics();
        if (m.state() != State.CLOSED || m.calls() != calls.get() || m.failures() != failures.get()) {
            throw new AssertionError(gate.name() + ": " + m + " after " + calls + " calls, " + failures + " failed");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(3).invocations(60)
                .threads(THREADS).actorsPerThread(2).actorsBefore(1).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    private LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass()).scenarios(callsRaceTheFirstBucketAndATick(),
                aRecordPausedForAWholeWindow());
    }

    /**
     * One call claims its place in the small window and pauses while the other thread records two
     * calls, the second to the same slot: the paused one must not overwrite the later verdict.
     */
    static ExecutionScenario aRecordPausedForAWholeWindow() {
        return LincheckSupport.scenario(CircuitBreakerWindowLincheckTest.class,
                null,
                "fail | succeed; succeed",
                null);
    }

    /** Calls race to install the time window's first bucket, and a tick moves it to the next. */
    static ExecutionScenario callsRaceTheFirstBucketAndATick() {
        return LincheckSupport.scenario(CircuitBreakerWindowLincheckTest.class,
                null,
                "fail; succeed | succeed; tick | tick; fail",
                null);
    }
}
