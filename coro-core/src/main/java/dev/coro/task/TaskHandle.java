package dev.coro.task;

import dev.coro.cancel.CancellationSource;
import dev.coro.cancel.CancellationToken;
import dev.coro.internal.Blocking;
import dev.coro.internal.Trampoline;
import dev.coro.scheduler.Scheduler;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;

/**
 * One run of a {@link Task}, started by {@link Task#start()} or {@link Task#start(Scheduler)}: cancel
 * it, wait for it (as a task or by blocking), or ask whether it has ended. The run goes on whether or
 * not anyone waits for it; the handle never runs the task again.
 *
 * <p><b>The real outcome.</b> {@link #outcome()} tells the run's own ending apart from the end of a
 * wait: a wait that is cancelled (its waiter's token fired) ends on the cancelled channel and leaves
 * the run alone, while a run that ended cancelled gives {@link Outcome.Cancelled} as a value.
 * {@link #task()} and {@link #join()} end as the run did; {@link #toCompletableFuture()} completes as it
 * did.
 *
 * <p><b>Cancellation.</b> The run has a token of its own, cancelled by {@link #cancel()} and by the
 * parent token it was started under (see {@link Task#start(Scheduler, CancellationToken)}). Cancelling
 * is cooperative: the run ends at its next wait, on the cancelled channel (or with a value or an
 * error, if it ends otherwise first). Cancelling a <em>wait</em> on the handle never cancels the run.
 *
 * <p><b>Where waiters continue.</b> A task waiting on {@link #task()} or {@link #outcome()} resumes on its
 * own scheduler (inline through a trampoline when the run ends on that scheduler's thread).
 * {@link #join()} parks the calling thread.
 *
 * <p><b>Thread-safety and memory effects.</b> All methods are thread-safe and lock-free, and may be
 * called any number of times. Actions of the run happen-before a wait on the handle observes its end.
 *
 * {@snippet :
 * try (WorkStealingPool pool = WorkStealingPool.create(4)) {
 *     TaskHandle<String> page = fetchPage.start(pool);   // running now
 *     // ... other work ...
 *     if (userLeft) {
 *         page.cancel();
 *     }
 *     switch (page.outcome().join()) {
 *         case Outcome.Value<String> v -> render(v.value());
 *         case Outcome.Failure<String> f -> log(f.error());
 *         case Outcome.Cancelled<String> c -> {}
 *     }
 * }
 * }
 *
 * @param <T> the value type
 */
public final class TaskHandle<T> {
    private final Fiber<T> fiber;
    private final CancellationSource source;
    private final Task<T> task;
    private final Task<Outcome<T>> outcome;

    private TaskHandle(Task<T> task, Context context, CancellationSource source) {
        this.source = source;
        this.fiber = new Fiber<>(task, context.withToken(source.token()), done -> source.close());
        this.task = fiber.awaitTask();
        this.outcome = fiber.awaitOutcomeTask();
    }

    /**
     * Starts {@code task} with the calling body's context values (see {@link Context#current()}), on
     * {@code scheduler}, under a token of its own linked to {@code parent}.
     *
     * @param inline run it on this thread now (through the trampoline) instead of submitting it
     */
    static <T> TaskHandle<T> start(Task<T> task, Scheduler scheduler, CancellationToken parent, boolean inline) {
        Context base = Context.current();
        CancellationSource source = parent.canBeCancelled()
                ? CancellationSource.linkedTo(parent) : new CancellationSource();
        Context ctx = base == null ? Context.of(scheduler) : base.withScheduler(scheduler);
        TaskHandle<T> handle = new TaskHandle<>(task, ctx, source);
        if (inline) {
            Trampoline.run(handle.fiber, null);
            return handle;
        }
        try {
            scheduler.execute(handle.fiber);
        } catch (RejectedExecutionException e) {
            source.close(); // nothing ran: leave nothing registered on the parent
            throw e;
        }
        return handle;
    }

    /** The token a start without an explicit parent runs under: the calling body's, or none. */
    static CancellationToken callersToken() {
        Context base = Context.current();
        return base == null ? CancellationToken.NONE : base.token();
    }

    /**
     * Requests cancellation of the run. Does not wait: the run ends at its next wait (see the class
     * comment). Idempotent.
     *
     * @return {@code true} if this call was the first to request cancellation and the run had not
     *     ended yet; {@code false} if cancellation was requested before (here or through the parent
     *     token) or the run had already ended
     */
    public boolean cancel() {
        return !fiber.isCompleted() && source.cancel();
    }

    /**
     * Returns whether the run has ended, on any channel.
     *
     * @return {@code true} once the run has a value, an error, or has ended cancelled
     */
    public boolean isDone() {
        return fiber.isCompleted();
    }

    /**
     * Returns a task that waits for the run and completes with its {@link Outcome} as a value, whatever
     * channel the run ended on; at once if it has ended. It never fails. If the wait itself is
     * cancelled (the waiting task's token fires first), the wait ends on the cancelled channel and the
     * run goes on.
     *
     * @return the waiting task (the same instance on every call; start it any number of times)
     */
    public Task<Outcome<T>> outcome() {
        return outcome;
    }

    /**
     * Returns a task that waits for the run and ends as it did: its value, its error (the same
     * instance), or cancelled; at once if it has ended. Cancelling the wait does not cancel the run
     * (and then the wait ends cancelled too: use {@link #outcome()} to tell the two apart).
     *
     * @return the waiting task (the same instance on every call; start it any number of times)
     */
    public Task<T> task() {
        return task;
    }

    /**
     * Blocks until the run ends and returns its value, or throws as {@link Task#join()} does: an
     * unchecked error as the same instance (with one {@link JoinSite}), a checked error wrapped in a
     * {@link CompletionException}, a cancelled run as {@link CancellationException}.
     *
     * <p>If the calling thread is interrupted while it waits (or, inside a body started by
     * {@link Task#onVirtualThread}, that body's task is cancelled), the wait is abandoned: this method
     * throws {@link CancellationException} saying so, keeps the interrupt status, and the run goes on;
     * call {@link #cancel()} to end it. A run that has ended is reported even to an interrupted thread.
     *
     * <p>Like {@link Task#join()}, it refuses to block a thread that runs a Coro scheduler's work.
     *
     * @return the run's value
     * @throws CancellationException if the run ended cancelled, or the wait was abandoned
     * @throws CompletionException wrapping a checked error
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread): see {@link Task#join()}
     */
    public T join() {
        Blocking.checkAllowed(TaskHandle.class, "join");
        Outcome<T> o;
        try {
            o = ThreadLoop.join(outcome);
        } catch (CancellationException e) {
            throw new CancellationException(
                    "the wait for the run was abandoned (interrupted or cancelled); the run goes on: " + this);
        }
        assert o != null && fiber.isCompleted() : "the outcome is known only once the run has ended";
        return ThreadLoop.valueOrThrow(fiber.result); // the run's own encoding: a cancellation's reason too
    }

    /**
     * Returns a new future that completes as the run does (at once if it has ended): with its value,
     * exceptionally with its error, or cancelled. Cancelling the future cancels the run, as
     * {@link #cancel()} does (the future completes cancelled at once, the run settles in the
     * background). Each call returns a new future.
     *
     * @return a future of the run's outcome
     */
    public CompletableFuture<T> toCompletableFuture() {
        return TaskFuture.of(fiber, source);
    }

    /**
     * Returns a description with the run's state.
     *
     * @return {@code TaskHandle[running]}, or {@code TaskHandle[...]} with the outcome once ended
     */
    @Override
    public String toString() {
        return fiber.isCompleted() ? "TaskHandle[" + Completion.toOutcome(fiber.result) + "]"
                : "TaskHandle[running" + (source.isCancelled() ? ", cancel requested" : "") + "]";
    }
}
