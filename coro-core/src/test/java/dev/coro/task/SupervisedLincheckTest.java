package dev.coro.task;

import dev.coro.LincheckSupport;
import dev.coro.Stress;
import dev.coro.scheduler.Scheduler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks a supervisor {@link Scope}'s bookkeeping of failures nobody observed: children
 * failing while waits on their handles start (directly, and through {@link Task#whenAll} over the
 * handle, which registers on the child without a fiber). {@link #validate()} then fails the
 * children still running, closes the scope with this thread's uncaught-exception handler
 * collecting, and checks that exactly the children whose handle no wait ever started were reported,
 * each once: the race between a child's end (add to the list, then RUNNING -> FAILED) and the start
 * of a wait (-> OBSERVED, then remove) neither loses a report nor reports an observed failure.
 *
 * <p>The model: two children on {@link Scheduler#inline()}, each waiting on a {@link Promise} of its
 * own; {@link #fail} fails that promise, so the child ends inline, before {@code fail} returns.
 */
@Param(name = "c", gen = IntGen.class, conf = "0:1")
public class SupervisedLincheckTest {
    private static final int CHILDREN = 2;

    private final Scope scope = Scope.supervisorOn(Scheduler.inline());
    private final List<Promise<Integer>> promises = new ArrayList<>();
    private final List<Task<Integer>> handles = new ArrayList<>();
    private final RuntimeException[] errors = new RuntimeException[CHILDREN];
    /** Written by the thread whose wait started (several may), read by validate(). */
    private final boolean[] observed = new boolean[CHILDREN];

    /** Spawns the children. */
    public SupervisedLincheckTest() {
        for (int c = 0; c < CHILDREN; c++) {
            Promise<Integer> p = new Promise<>();
            promises.add(p);
            handles.add(scope.spawn(p.task()));
            errors[c] = new RuntimeException("child " + c);
        }
    }

    /**
     * Fails child {@code c} (it ends inline); answers whether this call failed it. Never run
     * in parallel with another fail: a losing fail returns while the winner is still ending the
     * child inline, so a wait started after it may find the child running, which the sequential
     * model (where a fail is one step) cannot express; the race under test is a child's end against
     * the start of a wait, not two fails (found by the stress mode in CI's bounded pass).
     */
    @Operation(nonParallelGroup = "fail")
    public boolean fail(@Param(name = "c") int c) {
        return promises.get(c).fail(errors[c]);
    }

    /** Starts a wait on child {@code c}'s handle; answers whether it ended at once (the child had failed). */
    @Operation
    public boolean observe(@Param(name = "c") int c) {
        observed[c] = true;
        CompletableFuture<Outcome<Integer>> f = handles.get(c).outcome().toCompletableFuture();
        return f.isDone();
    }

    /** Starts a whenAll over child {@code c}'s handle (no fiber for the handle); as {@link #observe}. */
    @Operation
    public boolean observeInWhenAll(@Param(name = "c") int c) {
        observed[c] = true;
        CompletableFuture<List<Integer>> f = Task.whenAll(List.of(handles.get(c))).toCompletableFuture();
        return f.isDone();
    }

    /** After each run: fail the rest, close, and check the reports (see the class comment). */
    @Validate
    public void validate() {
        for (int c = 0; c < CHILDREN; c++) {
            promises.get(c).fail(errors[c]);
        }
        List<Throwable> reported = new ArrayList<>();
        Thread th = Thread.currentThread();
        Thread.UncaughtExceptionHandler previous = th.getUncaughtExceptionHandler();
        th.setUncaughtExceptionHandler((t, e) -> reported.add(e));
        try {
            scope.close();
        } finally {
            th.setUncaughtExceptionHandler(previous);
        }
        List<Throwable> expected = new ArrayList<>();
        for (int c = 0; c < CHILDREN; c++) {
            if (!observed[c]) {
                expected.add(errors[c]);
            }
        }
        if (reported.size() != expected.size() || !reported.containsAll(expected)) {
            throw new AssertionError("reported " + reported + ", expected the unobserved " + expected);
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(3).invocations(100) // sized for the default run; ./coro stress scales it
                .threads(2).actorsPerThread(2).actorsBefore(0).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(2).actorsPerThread(3)
                .stress();
    }

    /**
     * Regression: a whenAll over a handle, started after a wait on the same handle had found the
     * child failed, registered on the child's cell because the cell had not fired yet (the child
     * was between writing its result and firing its waiters) and so looked pending. A wait that
     * finds the result written must answer at once, as Completion's own wait does.
     */
    @Test
    void aWatchStartedAfterTheFailureEndsAtOnceRegression() {
        check().scenarios(
                        LincheckSupport.scenario(SupervisedLincheckTest.class, null,
                                "fail 0 | observe 0; observeInWhenAll 0", null),
                        LincheckSupport.scenario(SupervisedLincheckTest.class, null,
                                "fail 0; fail 1 | observeInWhenAll 1; observe 0", null))
                .iterations(0).invocations(Stress.scaled(500))
                .modelCheck("aWatchStartedAfterTheFailureEndsAtOnceRegression");
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(SupervisedLincheckTest.class).spec(Spec.class);
    }

    /** The sequential specification: a wait ends at once exactly when its child has failed. */
    public static final class Spec {
        private final boolean[] failed = new boolean[CHILDREN];

        /** Creates a specification with every child running. */
        public Spec() {}

        /** See {@link SupervisedLincheckTest#fail(int)}. */
        public boolean fail(int c) {
            boolean first = !failed[c];
            failed[c] = true;
            return first;
        }

        /** See {@link SupervisedLincheckTest#observe(int)}. */
        public boolean observe(int c) {
            return failed[c];
        }

        /** See {@link SupervisedLincheckTest#observeInWhenAll(int)}. */
        public boolean observeInWhenAll(int c) {
            return failed[c];
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && Arrays.equals(failed, s.failed);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(failed);
        }
    }
}
