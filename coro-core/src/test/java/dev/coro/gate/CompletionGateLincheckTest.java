package dev.coro.gate;

import dev.coro.LincheckSupport;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Lincheck explores {@link CompletionGate} ({@code n = }{@link #N}) in model-checking and stress
 * modes, with the admission invariant as the checked state (see {@link GateProbe}; the entry
 * operations answer nothing, because which thread admits a waiter is not a function of the
 * sequential history). {@code arrive} answers whether the arrival was recorded (false: the
 * {@link IllegalStateException} of an arrival beyond n), which Lincheck checks for
 * linearizability: exactly the first n arrivals of some linearization are recorded.
 *
 * <p>Checked at every admission in every explored interleaving: nothing is admitted before n
 * arrivals have been started (the test counts each arrival before calling {@code arrive()}), and
 * nothing started after a {@code close()} returned is admitted. After each run: no waiter waits once
 * n arrivals are recorded and the gate is open (the last arrival's signal is never missed), nor on a
 * closed gate; cancelled waiters have ended; the admission count is exact; {@code arrivals()}
 * matches the recorded arrivals.
 *
 * <p>Mutation-checked: with the gate signalled at the (n-1)-th arrival (and ruleSignal's assert
 * off), the model checker reports "within admitted with 1 of 2 arrivals"; with the arrival counted
 * by a plain read and write instead of the CAS, it reports "arrivals() is 2, recorded 3" (a lost
 * arrival).
 */
public class CompletionGateLincheckTest extends GateProbeLincheck {
    static final int N = 2;

    private final CompletionGate gate = new CompletionGate(N);
    private final AtomicInteger arrivalsStarted = new AtomicInteger();
    private final AtomicInteger recorded = new AtomicInteger();
    private final GateProbe probe = new GateProbe(gate,
            () -> arrivalsStarted.get() >= N ? null : "with " + arrivalsStarted.get() + " of " + N + " arrivals");

    /** Creates the gate and its probe. */
    public CompletionGateLincheckTest() {}

    /**
     * Records one arrival (counting it first as started).
     *
     * @return whether it was recorded; false if n arrivals were already recorded
     */
    @Operation
    public boolean arrive() {
        arrivalsStarted.incrementAndGet();
        try {
            gate.arrive();
            recorded.incrementAndGet();
            return true;
        } catch (IllegalStateException extra) {
            return false;
        }
    }

    /** After each run: the checks of {@link GateProbe#validate}. */
    @Validate
    public void validate() {
        if (gate.arrivals() != recorded.get()) {
            throw new AssertionError("arrivals() is " + gate.arrivals() + ", recorded " + recorded);
        }
        probe.validate(gate.isOpen(), gate::admittedSnapshot);
    }

    @Override
    GateProbe probe() {
        return probe;
    }

    @Override
    List<ExecutionScenario> scenarios() {
        return List.of(lastArrivalRacingCancelAndClose(), racingArrivals());
    }

    /**
     * Two waiters and one arrival before; the last arrival races the cancel of one waiter, a close
     * and a new entry; an extra arrival follows.
     */
    static ExecutionScenario lastArrivalRacingCancelAndClose() {
        return LincheckSupport.scenario(CompletionGateLincheckTest.class,
                "acquire 1; within 2; arrive",
                "arrive; release 1 | cancel 1; close | within 3; arrive",
                null);
    }

    /** Three arrivals racing (one must be refused) while entries queue and try. */
    static ExecutionScenario racingArrivals() {
        return LincheckSupport.scenario(CompletionGateLincheckTest.class,
                null,
                "acquire 1; arrive | arrive; within 2 | arrive; tryWithin",
                null);
    }

}
