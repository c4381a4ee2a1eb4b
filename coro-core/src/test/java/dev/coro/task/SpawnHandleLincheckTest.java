package dev.coro.task;

import dev.coro.LincheckSupport;
import dev.coro.scheduler.Scheduler;
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
 * Lincheck checks a spawn handle ({@code Nodes.Spawned}) while its child ends: the child waits on a
 * {@link Promise} that racing completers complete or cancel, so the child's fiber ends on the
 * completer's thread, and the first wait that finds it ended lets go of the fiber for the fiber's
 * encoded result, while other threads wait on the handle through both of its doors: a task evaluating it
 * ({@link Task#toCompletableFuture()}, the run loop's case) and a collecting join
 * ({@link Task#whenAll(List)}, which Forks reads without a fiber); other waits are cancelled.
 *
 * <p>The sequential specification is the promise's: the first completion wins; a wait started after
 * the child ended answers at once with its result; one started before stays pending.
 * {@link #validate()} then checks that every pending wait was resumed with exactly the child's
 * result, whichever of the fiber or its result the wait read from the handle.
 *
 * <p><b>Mutation</b>, applied by hand to {@code Nodes.Spawned.cellAcquire} and seen to fail here:
 * letting go of the fiber without checking that it has ended (its null result taken for a value).
 */
@Param(name = "v", gen = IntGen.class, conf = "1:2")
public class SpawnHandleLincheckTest {
    /** What a wait answers while the child runs (the completion model's answers). */
    static final int PENDING = CompletionLincheckTest.PENDING;
    /** What a wait answers for a cancelled child. */
    static final int CANCELLED = CompletionLincheckTest.CANCELLED;

    private final Promise<Integer> promise = new Promise<>();
    private final Scope scope = Scope.on(Scheduler.inline());
    private final Task<Integer> handle = scope.spawn(promise.task()); // the child starts and waits here
    private final List<CompletableFuture<Integer>> waits = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<Integer>> abandoned = new CopyOnWriteArrayList<>();

    /** Completes the child's promise: the child ends with the value on this thread. */
    @Operation(nonParallelGroup = "completer")
    public boolean complete(@Param(name = "v") int v) {
        return promise.complete(v);
    }

    /** Cancels the child's promise: the child ends cancelled on this thread. */
    @Operation(nonParallelGroup = "completer")
    public boolean cancel() {
        return promise.cancel();
    }

    /** Waits on the handle in a task of its own. */
    @Operation
    public int await() {
        return answer(handle.toCompletableFuture());
    }

    /** Waits on the handle in a collecting join. */
    @Operation
    public int awaitAll() {
        return answer(Task.whenAll(List.of(handle)).map(values -> values.get(0)).toCompletableFuture());
    }

    /** Starts a wait and cancels it at once: must leave no trace on the handle. */
    @Operation
    public void awaitAndCancel() {
        CompletableFuture<Integer> f = handle.toCompletableFuture();
        f.cancel(false);
        abandoned.add(f);
    }

    private int answer(CompletableFuture<Integer> f) {
        if (!f.isDone()) {
            waits.add(f);
            return PENDING;
        }
        return f.isCancelled() ? CANCELLED : f.join();
    }

    /** After each run: every pending wait ended with the child's result. */
    @Validate
    public void validate() {
        CompletionLincheckTest.checkWaits(handle, promise.isDone(), waits, abandoned); // the child ends with it
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

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(SpawnHandleLincheckTest.class).spec(Spec.class);
    }

    /** The sequential specification: the child's result is the promise's; both doors answer alike. */
    public static final class Spec extends CompletionLincheckTest.Spec {
        /** The same answer through the collecting join. */
        public int awaitAll() {
            return await();
        }
    }
}
