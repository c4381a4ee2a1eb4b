package dev.coro.gate;

import dev.coro.LincheckSupport;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;

/**
 * Lincheck explores {@link PredicateGate} in model-checking and stress modes, with the admission
 * invariant as the checked state (see {@link GateProbe}; the operations answer nothing, because
 * which thread admits a waiter, and so evaluates the predicate, is not a function of the
 * sequential history). The predicate is {@code level >= 2}; {@code raise} increments the level
 * (an atomic, so the test's own state has no race) and calls {@code update()}; {@code poison} makes
 * the predicate throw from then on and calls {@code update()}.
 *
 * <p>Checked in every explored interleaving: the predicate never runs concurrently with itself
 * (the gate's ownership is its only protection); nothing is admitted while {@code level < 2} (the
 * level only grows, so an admission justified by a true evaluation still sees it); nothing started
 * after a {@code close()} returned is admitted. After each run: no waiter waits while the predicate
 * holds and the gate is open (no update is missed), nor on a closed gate (also one closed by the
 * predicate's error); cancelled waiters have ended; the admission count is exact; an update after
 * a poisoning update saw the gate closed or threw.
 *
 * <p>Mutation-checked: with {@code ruleTryEnter} not evaluating the predicate, the model checker
 * reports "within admitted at level 0"; with {@code update()} evaluating the predicate on its
 * caller's thread before signalling (outside the gate's ownership), "the predicate ran concurrently
 * with itself"; with a predicate error not closing the gate, "the predicate was poisoned and
 * updated, but the gate is open".
 */
public class PredicateGateLincheckTest extends GateProbeLincheck {
    static final int THRESHOLD = 2;

    private final AtomicInteger level = new AtomicInteger();
    private final AtomicInteger evaluating = new AtomicInteger();
    private volatile boolean poisoned;
    private volatile String overlap;
    private final PredicateGate gate = new PredicateGate(this::predicate);
    private final GateProbe probe = new GateProbe(gate,
            () -> level.get() >= THRESHOLD ? null : "at level " + level.get());

    /** Creates the gate and its probe. */
    public PredicateGateLincheckTest() {}

    private boolean predicate() {
        if (evaluating.getAndIncrement() != 0) {
            overlap = "the predicate ran concurrently with itself";
        }
        try {
            if (poisoned) {
                throw new IllegalArgumentException("poisoned");
            }
            return level.get() >= THRESHOLD;
        } finally {
            evaluating.decrementAndGet();
        }
    }

    /** Raises the level the predicate reads, then tells the gate. */
    @Operation
    public void raise() {
        level.incrementAndGet();
        update();
    }

    /** Makes the predicate throw from now on, then tells the gate. */
    @Operation
    public void poison() {
        poisoned = true;
        update();
    }

    private void update() {
        try {
            gate.update();
        } catch (IllegalStateException e) {
            if (!(e.getCause() instanceof IllegalArgumentException) || !poisoned) {
                throw new AssertionError("update threw without a poisoned predicate", e);
            }
        }
    }

    /** After each run: the checks of {@link GateProbe#validate}. */
    @Validate
    public void validate() {
        if (overlap != null) {
            throw new AssertionError(overlap);
        }
        if (poisoned && !gate.isClosed()) {
            throw new AssertionError("the predicate was poisoned and updated, but the gate is open");
        }
        probe.validate(level.get() >= THRESHOLD && !gate.isClosed(), gate::admittedSnapshot);
    }

    @Override
    GateProbe probe() {
        return probe;
    }

    @Override
    List<ExecutionScenario> scenarios() {
        return List.of(raiseRacingCancelAndClose(), racingUpdates(), poisonRacingRaise());
    }

    /**
     * Two waiters queued at level 0 (one raise before); the raise that makes the predicate true
     * races the cancel of one waiter, a close and a new entry that evaluates the predicate itself.
     */
    static ExecutionScenario raiseRacingCancelAndClose() {
        return LincheckSupport.scenario(PredicateGateLincheckTest.class,
                "acquire 1; within 2; raise",
                "raise; release 1 | cancel 1; close | within 3; tryWithin",
                null);
    }

    /** Two raises from two threads (each update may be left to the other's drain) racing entries. */
    static ExecutionScenario racingUpdates() {
        return LincheckSupport.scenario(PredicateGateLincheckTest.class,
                null,
                "acquire 1; raise | within 2; raise | within 3; release 1",
                null);
    }

    /** A poisoned update racing a raise and an entry: the waiters are resolved, never left waiting. */
    static ExecutionScenario poisonRacingRaise() {
        return LincheckSupport.scenario(PredicateGateLincheckTest.class,
                "within 1; raise",
                "poison | raise | acquire 3",
                null);
    }

}
