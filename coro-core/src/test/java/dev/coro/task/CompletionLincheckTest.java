package dev.coro.task;

import dev.coro.LincheckSupport;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks the seed-000 completion handshake end to end: a {@link Promise} completed, failed
 * or cancelled by racing completers, while tasks start waiting on it ({@link Promise#task()} run
 * through {@link Task#toCompletableFuture()}, so each wait goes through a fiber's {@link AsyncStep}
 * and is resumed by the completer) and other waits are cancelled.
 *
 * <p>The sequential specification: the first completion wins; a wait started after it answers at
 * once with the result; a wait started before it stays pending. {@link #validate()} then checks
 * that every pending wait was resumed with exactly the winning result (none lost, none resumed
 * twice, cancelled waits cancelled), which is the property the handshake exists for.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:2")
public class CompletionLincheckTest {
    /** What {@link #await()} answers while the promise is pending. */
    static final int PENDING = -1;
    /** What {@link #await()} answers for a cancelled promise. */
    static final int CANCELLED = -2;

    private final Promise<Integer> promise = new Promise<>();
    private final List<CompletableFuture<Integer>> waits = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<Integer>> abandoned = new CopyOnWriteArrayList<>();

    /** Completes with a value. */
    @Operation
    public boolean complete(@Param(name = "v") int v) {
        return promise.complete(v);
    }

    /** Cancels the promise. */
    @Operation
    public boolean cancel() {
        return promise.cancel();
    }

    /** Starts a wait; answers its result if it ended at once, else PENDING. */
    @Operation
    public int await() {
        CompletableFuture<Integer> f = promise.task().toCompletableFuture();
        if (!f.isDone()) {
            waits.add(f);
            return PENDING;
        }
        return f.isCancelled() ? CANCELLED : f.join();
    }

    /** Starts a wait and cancels it at once: must leave no trace on the promise. */
    @Operation
    public void awaitAndCancel() {
        CompletableFuture<Integer> f = promise.task().toCompletableFuture();
        f.cancel(false);
        abandoned.add(f);
    }

    /** After each run: every pending wait ended with the winning result. */
    @Validate
    public void validate() {
        checkWaits(promise.task(), promise.isDone(), waits, abandoned);
    }

    /**
     * The check every model of a completion and its waits shares: while {@code result} has not ended
     * no wait has; once it has, every wait that was pending ended with its result (none lost, none
     * with another) and every abandoned one was cancelled or ended with that result.
     */
    static void checkWaits(Task<Integer> result, boolean ended, List<CompletableFuture<Integer>> waits,
            List<CompletableFuture<Integer>> abandoned) {
        if (!ended) {
            for (CompletableFuture<Integer> f : waits) {
                if (f.isDone()) {
                    throw new AssertionError("a wait ended before the result was set");
                }
            }
            return;
        }
        Integer expected = result.outcome().toCompletableFuture().join() instanceof Outcome.Value<Integer> v
                ? v.value() : null;
        for (CompletableFuture<Integer> f : waits) {
            if (!f.isDone()) {
                throw new AssertionError("a waiter was lost: the result was set but the wait is pending");
            }
            if (expected == null ? !f.isCancelled() : f.isCancelled() || !expected.equals(f.join())) {
                throw new AssertionError("a waiter saw another result than the winner's");
            }
        }
        for (CompletableFuture<Integer> f : abandoned) { // cancelled, or ended with the winner before that
            if (!f.isCancelled() && (expected == null || !expected.equals(f.join()))) {
                throw new AssertionError("an abandoned wait saw another result than the winner's");
            }
        }
    }

    @Test
    void modelChecking() { // sized for the default run; ./coro stress scales the iterations by 20
        check().scaledIterations(10).invocations(300)
                .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(3)
                .stress();
    }

    /** Every run of this test: the sequential specification. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(CompletionLincheckTest.class)
                .spec(Spec.class);
    }

    /** The sequential specification (also the spawn handle's: {@link SpawnHandleLincheckTest}). */
    public static class Spec {
        private Integer result; // null: pending; CANCELLED: cancelled

        /** First completion wins. */
        public boolean complete(int v) {
            if (result != null) {
                return false;
            }
            result = v;
            return true;
        }

        /** First completion wins. */
        public boolean cancel() {
            if (result != null) {
                return false;
            }
            result = CANCELLED;
            return true;
        }

        /** Answers at once when complete. */
        public int await() {
            return result == null ? PENDING : result;
        }

        /** No observable effect. */
        public void awaitAndCancel() {}

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && java.util.Objects.equals(result, s.result);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hashCode(result);
        }
    }
}
