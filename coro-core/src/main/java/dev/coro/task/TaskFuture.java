package dev.coro.task;

import dev.coro.cancel.CancellationSource;
import dev.coro.internal.SignalList;
import dev.coro.internal.Trampoline;
import dev.coro.scheduler.Scheduler;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * The future of {@link Task#toCompletableFuture()} and {@link TaskHandle#toCompletableFuture()}:
 * completes as the run does; cancelling it cancels the run (through the source it was made with).
 */
final class TaskFuture<T> extends CompletableFuture<T> implements Fiber.Listener {
    private final CancellationSource source;

    TaskFuture(CancellationSource source) {
        this.source = source;
    }

    static <T> TaskFuture<T> start(Task<T> task) {
        TaskFuture<T> future = new TaskFuture<>(new CancellationSource());
        Context ctx = Context.of(Scheduler.inline()).withToken(future.source.token());
        Trampoline.run(new Fiber<>(task, ctx, future), null);
        return future;
    }

    /** A future of a run already started: completes when {@code fiber} does (at once if it has). */
    static <T> TaskFuture<T> of(Fiber<T> fiber, CancellationSource source) {
        TaskFuture<T> future = new TaskFuture<>(source);
        if (!fiber.add(new SignalList.Node() {
            @Override
            protected void onFire() {
                future.fiberDone(fiber);
            }
        })) {
            future.fiberDone(fiber); // fired already: its result is published
        }
        return future;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void fiberDone(Fiber<?> fiber) {
        Object r = fiber.result;
        if (r == Completion.CANCELLED) {
            super.cancel(false);
        } else if (r instanceof Completion.Cancelled) { // cancelled with a reason: isCancelled() still true
            completeExceptionally(new CancellationException(Completion.cancelMessage(r)));
        } else if (r instanceof Completion.Failed f) {
            completeExceptionally(f.error);
        } else {
            complete((T) Completion.decodeValue(r));
        }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        source.cancel();
        return cancelled;
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }
}
