package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.gate.CircuitBreakerGate.State;
import dev.coro.gate.CircuitBreakerGate.Transition;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores a {@link CircuitBreakerGate} made half-open with 2 trials at 50 % (on a
 * {@link ManualScheduler} that is never ticked afterwards): trial calls whose work waits until its
 * thread fails or cancels it race each other. Checked after each run, everything quiescent: never
 * more than 2 trials ran at once and never more than 2 were admitted that were not cancelled (I1);
 * a refused call failed with {@link CallNotPermittedException} and an admitted one never did; a
 * failed trial reopened the gate, and the listener was told exactly CLOSED to OPEN, OPEN to
 * HALF_OPEN (the setup) and then, if a trial failed, HALF_OPEN to OPEN, once each, in order. And
 * whether each call was admitted is linearizable against {@link Spec}, so that a call that read the
 * half-open state just before a trial reopened the gate cannot take a place freed after it (I2).
 * The windows of the closed state are {@link CircuitBreakerWindowLincheckTest}'s.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class CircuitBreakerGateLincheckTest {
    private static final int THREADS = 3;
    private static final int TRIALS = 2;

    private final ManualScheduler trialClock = new ManualScheduler();
    private final List<Transition> transitions = new CopyOnWriteArrayList<>();
    private final CircuitBreakerGate trialGate = CircuitBreakerGate.builder("trials").clock(trialClock)
            .countWindow(1).openFor(Duration.ofNanos(1)).halfOpenTrials(TRIALS).failureRateThreshold(50)
            .onStateChange(transitions::add).build();
    private final Trial[] latest = new Trial[THREADS + 2];
    private final List<Trial> trials = new CopyOnWriteArrayList<>();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger mostRunning = new AtomicInteger();
    private volatile String broken;

    public CircuitBreakerGateLincheckTest() {
        trialGate.transitionToOpen();
        trialClock.advance(1); // the timer makes it half-open
    }

    /** A trial call on the half-open gate, whose work waits until this thread fails or cancels it. */
    @Operation
    public boolean trial(@Param(name = "tid") int tid) {
        Trial t = new Trial();
        trials.add(t);
        latest[tid] = t;
        Task<Integer> work = Task.fromRunnable(() -> {
            t.admitted = true;
            mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
        }).then(t.promise.task()).andFinally(running::decrementAndGet);
        trialGate.within(work).outcome().map(t::ended).toCompletableFuture();
        return t.admitted; // admission is decided and the work started on this thread, at once
    }

    /** Fails this thread's latest trial (a no-op if it was refused or has ended). */
    @Operation
    public void failTrial(@Param(name = "tid") int tid) {
        Trial t = latest[tid];
        if (t != null) {
            t.promise.fail(new IOException("still down"));
        }
    }

    /** Cancels this thread's latest trial's work. */
    @Operation
    public void cancelTrial(@Param(name = "tid") int tid) {
        Trial t = latest[tid];
        if (t != null) {
            t.promise.cancel();
        }
    }

    /** After each run: the properties in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        if (mostRunning.get() > TRIALS) {
            throw new AssertionError(mostRunning.get() + " trials ran at once, bound " + TRIALS);
        }
        int held = 0;
        boolean anyFailed = false;
        for (Trial t : trials) {
            if (t.admitted && !(t.outcome instanceof Outcome.Cancelled<Integer>)) {
                held++;
            }
            if (t.outcome instanceof Outcome.Failure<Integer> f && !(f.error() instanceof CallNotPermittedException)) {
                anyFailed = true;
                if (!t.admitted) {
                    throw new AssertionError("a refused call failed with " + f.error());
                }
            }
            if (t.outcome instanceof Outcome.Failure<Integer> f && f.error() instanceof CallNotPermittedException && t.admitted) {
                throw new AssertionError("an admitted trial was refused");
            }
        }
        if (held > TRIALS) {
            throw new AssertionError(held + " trials admitted and not cancelled, bound " + TRIALS);
        }
        List<State> told = transitions.stream().map(Transition::to).toList();
        List<State> expected = anyFailed ? List.of(State.OPEN, State.HALF_OPEN, State.OPEN) : List.of(State.OPEN, State.HALF_OPEN);
        if (!told.equals(expected) || trialGate.state() != expected.get(expected.size() - 1)) {
            throw new AssertionError("transitions told " + transitions + ", state " + trialGate.state() + ", expected " + expected);
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
        return LincheckSupport.lincheck(getClass()).spec(Spec.class)
                .scenarios(aFailingTrialRacesACancelAndANewTrial(), aPlaceFreedAfterTheReopeningIsNoPlace());
    }

    /**
     * A call reads the half-open state; meanwhile a trial fails (reopening the gate) and then the
     * other trial is cancelled, freeing a place: the call must not take it (the period has ended),
     * though the state it read was half-open.
     */
    static ExecutionScenario aPlaceFreedAfterTheReopeningIsNoPlace() {
        return LincheckSupport.scenario(CircuitBreakerGateLincheckTest.class,
                "trial 0; trial 2",
                "failTrial 0; cancelTrial 2 | trial 1",
                null);
    }

    /**
     * The sequential specification: a half-open gate of 2 trials at 50 % whose open period never
     * ends. A trial is admitted while half-open with a place free; a failed trial of the period
     * reopens it; a cancelled one gives its place back while the period lasts.
     */
    public static final class Spec {
        private boolean open;
        private int admitted;
        private final int[] latest = new int[THREADS + 2]; // 0: none or refused, 1: running, 2: ended

        /**
         * The model of {@link CircuitBreakerGateLincheckTest#trial}.
         *
         * @param tid the thread
         * @return whether admitted
         */
        public boolean trial(int tid) {
            boolean ok = !open && admitted < TRIALS;
            if (ok) {
                admitted++;
            }
            latest[tid] = ok ? 1 : 0;
            return ok;
        }

        /**
         * The model of {@link CircuitBreakerGateLincheckTest#failTrial}.
         *
         * @param tid the thread
         */
        public void failTrial(int tid) {
            if (latest[tid] == 1) {
                latest[tid] = 2;
                open = true; // 1 failure of 2 trials: 50 %
            }
        }

        /**
         * The model of {@link CircuitBreakerGateLincheckTest#cancelTrial}.
         *
         * @param tid the thread
         */
        public void cancelTrial(int tid) {
            if (latest[tid] == 1) {
                latest[tid] = 2;
                admitted--;
            }
        }
    }

    /**
     * Both trials in flight; one fails (reopening the gate) while the other is cancelled (freeing a
     * place) and a third call arrives: the third is admitted only into the half-open period (then at
     * most 2 were held), or refused.
     */
    static ExecutionScenario aFailingTrialRacesACancelAndANewTrial() {
        return LincheckSupport.scenario(CircuitBreakerGateLincheckTest.class,
                "trial 0; trial 2",
                "failTrial 0 | trial 1; trial 1 | cancelTrial 2",
                null);
    }

    /** One trial call, watched through its outcome. */
    static final class Trial {
        final Promise<Integer> promise = new Promise<>();
        volatile boolean admitted;
        volatile Outcome<Integer> outcome;

        Void ended(Outcome<Integer> o) {
            outcome = o;
            return null;
        }
    }
}
