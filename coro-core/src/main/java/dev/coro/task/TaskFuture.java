package dev.coro.task;

import dev.coro.cancel.CancellationSource;
import dev.coro.internal.Trampoline;
import dev.coro.scheduler.Scheduler;
import java.util.concurrent.CompletableFuture;

/** The future of {@link Task#toCompletableFuture()}: cancelling it cancels the task. */
final class TaskFuture<T> extends CompletableFuture<T> implements Fiber.Listener {
    private final CancellationSource source = new CancellationSource();

    static <T> TaskFuture<T> start(Task<T> task) {
        TaskFuture<T> future = new TaskFuture<>();
        Context ctx = Context.of(Scheduler.inline()).withToken(future.source.token());
        Trampoline.run(new Fiber<>(task, ctx, future), null);
        return future;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void fiberDone(Fiber<?> fiber) {
        Object r = fiber.result;
        if (r == Completion.CANCELLED) {
            super.cancel(false);
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
