package dev.coro.task;

import dev.coro.LincheckSupport;
import dev.coro.cancel.CancellationSource;
import dev.coro.internal.TokenSignals;
import dev.coro.scheduler.Scheduler;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks a fiber's one registration on its cancellation token (Fiber's overview), with two
 * runs under one caller's token: one waits again and again under its run's token (the fiber's own
 * registration: the W-then-R handshake of each wait), the other, having waited once under its run's
 * token, waits again and again inside a scope (a second token: a registration of each wait alone).
 * Racing threads complete the current wait of either run and cancel the caller's token. The runs
 * are on the inline scheduler, so a completion runs its task on to its next wait on the completing
 * thread, and a cancellation runs both to their end on the cancelling thread.
 *
 * <p>What {@link #validate()} checks after every run: a completion that began after the first cancel
 * had returned was refused (that cancel ran every callback of the token, so the wait in progress was
 * cancelled, or the task ended at its next wait); once the token is cancelled both runs have ended,
 * so no wait was left pending after its token fired (F1); until then each run has passed exactly as
 * many waits as completions were accepted, and each is linked once on the caller's token. A
 * completion races other completions of the same wait (one wins), so it answers nothing;
 * {@link #cancel()} is linearizable (the first wins).
 */
public class FiberTokenLincheckTest {
    /** Waits of each task: more than the completions a scenario can make, so only a cancel ends it. */
    private static final int ROUNDS = 8;

    private final CancellationSource source = new CancellationSource();
    private final Waits home = new Waits();
    private final Waits scoped = new Waits();
    private final TaskHandle<Void> homeRun;
    private final TaskHandle<Void> scopedRun;
    /** Set once the first cancel has returned: every callback of the token has run by then. */
    private volatile boolean cancelReturned;
    /** A completion that began after a cancel returned was accepted: the cancel missed that wait. */
    private volatile boolean acceptedAfterCancel;

    /** One run's waits: its current completer, the completions accepted, the waits passed. */
    private static final class Waits {
        final AtomicReference<Completer<Integer>> current = new AtomicReference<>();
        final AtomicInteger accepted = new AtomicInteger();
        final AtomicInteger passed = new AtomicInteger();

        Task<Void> rounds() {
            return Task.<Integer>create(current::set).then(Task.fromRunnable(passed::incrementAndGet)).repeat(ROUNDS);
        }
    }

    public FiberTokenLincheckTest() {
        homeRun = home.rounds().start(Scheduler.inline(), source.token());
        AtomicReference<Completer<Integer>> first = new AtomicReference<>();
        scopedRun = Task.<Integer>create(first::set).then(Scope.scoped(scope -> scoped.rounds()))
                .start(Scheduler.inline(), source.token());
        first.get().complete(0); // the fiber is registered on its run's token; now it waits in the scope
    }

    /** Completes the current wait of the run that waits under its own token, if still open. */
    @Operation
    public void completeHome() {
        complete(home);
    }

    /** Completes the current wait of the run that waits inside a scope, if still open. */
    @Operation
    public void completeScoped() {
        complete(scoped);
    }

    private void complete(Waits waits) {
        boolean afterCancel = cancelReturned;
        if (waits.current.get().complete(1)) {
            waits.accepted.incrementAndGet();
            if (afterCancel) {
                acceptedAfterCancel = true;
            }
        }
    }

    /** Cancels the caller's token, and so both runs. */
    @Operation
    public boolean cancel() {
        boolean first = source.cancel();
        if (first) { // only the first cancel runs the callbacks; a later one may return before they ran
            cancelReturned = true;
        }
        return first;
    }

    /** After each run: see the class comment. */
    @Validate
    public void validate() {
        if (acceptedAfterCancel) {
            throw new AssertionError("a wait accepted a completion after the cancel had returned: a lost cancellation");
        }
        if (source.token().isCancelled()) {
            if (!homeRun.isDone() || !scopedRun.isDone()) {
                throw new AssertionError("the token was cancelled but a run still waits: a lost cancellation");
            }
            return;
        }
        if (homeRun.isDone() || scopedRun.isDone()) {
            throw new AssertionError("a run ended with neither a cancel nor all its completions");
        }
        for (Waits w : new Waits[] {home, scoped}) {
            if (w.passed.get() != w.accepted.get()) {
                throw new AssertionError("completions accepted: " + w.accepted.get() + ", waits passed: " + w.passed.get());
            }
        }
        if (TokenSignals.of(source.token()).linkedCount() != 2) {
            throw new AssertionError("each running task should be linked once on the caller's token, found "
                    + TokenSignals.of(source.token()).linkedCount());
        }
    }

    @Test
    void modelChecking() { // sized for the default run; ./coro stress scales the iterations by 20
        check().scaledIterations(10).invocations(500)
                .threads(2).actorsPerThread(3).actorsBefore(1).actorsAfter(0)
                .modelCheck();
    }

    /**
     * The two races of one wait, each on its own and explored deeper than the generated runs reach:
     * a completion that runs its task into the next wait under the run's token (the W-then-R
     * handshake) against a cancel, and the same into the next wait inside the scope (that wait's
     * own registration) against a cancel.
     */
    @Test
    void modelCheckingAWaitStartsAsTheTokenFires() {
        LincheckSupport.lincheck(getClass()).spec(Spec.class)
                .scenarios(aHomeWaitStartsAsTheTokenFires(), aScopeWaitStartsAsTheTokenFires())
                .iterations(0).invocations(10000)
                .modelCheck("modelCheckingAWaitStartsAsTheTokenFires");
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(3)
                .stress();
    }

    /** Every run of this test: the sequential specification, and the two races of one wait. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(FiberTokenLincheckTest.class).spec(Spec.class)
                .scenarios(aHomeWaitStartsAsTheTokenFires(), aScopeWaitStartsAsTheTokenFires());
    }

    /** A completion runs the first task into its next wait under its run's token as a cancel comes. */
    static ExecutionScenario aHomeWaitStartsAsTheTokenFires() {
        return LincheckSupport.scenario(FiberTokenLincheckTest.class, null, "completeHome | cancel", "completeHome");
    }

    /** A completion runs the second task into its next wait inside the scope as a cancel comes. */
    static ExecutionScenario aScopeWaitStartsAsTheTokenFires() {
        return LincheckSupport.scenario(FiberTokenLincheckTest.class, null, "completeScoped | cancel", "completeScoped");
    }

    /** The sequential specification: only the first cancel answers true. */
    public static final class Spec {
        private boolean cancelled;

        /** No answer. */
        public void completeHome() {}

        /** No answer. */
        public void completeScoped() {}

        /** The first cancel wins. */
        public boolean cancel() {
            boolean first = !cancelled;
            cancelled = true;
            return first;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && s.cancelled == cancelled;
        }

        @Override
        public int hashCode() {
            return Boolean.hashCode(cancelled);
        }
    }
}
