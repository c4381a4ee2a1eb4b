package dev.coro.task;

import dev.coro.cancel.Cancellable;
import dev.coro.cancel.CancellationSource;
import dev.coro.cancel.CancellationToken;
import dev.coro.cancel.Registration;
import dev.coro.internal.Blocking;
import dev.coro.scheduler.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A lazy, reusable description of asynchronous work that ends on exactly one of three channels:
 * a <b>value</b>, an <b>error</b>, or <b>cancelled</b>.
 *
 * <p><b>Lazy and reusable.</b> Building a task runs nothing. Each start ({@link #join()}, {@link #start()},
 * {@link #toCompletableFuture()}, {@link Scope#spawn}, or composition inside a running task) runs the
 * whole description again; starting it twice runs the work twice. Exactly one channel is signalled,
 * exactly once, per run.
 *
 * <p><b>Composition.</b> {@link #map}, {@link #flatMap}, {@link #then} continue on the value channel;
 * {@link #recover}, {@link #recoverWith} handle errors; {@link #transform} and {@link #outcome} see all
 * three channels; {@link #andFinally} runs cleanup on every channel. A run is interpreted by a loop
 * with a heap-allocated stack, so a chain of a million synchronously completing steps, or a loop of a
 * million iterations ({@link #loop}, {@link #repeat}, recursion through {@link #defer}), needs no Java
 * stack depth; a loop keeps constant memory.
 *
 * <p><b>Context.</b> Every run carries a {@link Context}: its scheduler, its cancellation token, and user
 * values. Children started by {@link #whenAll}, {@link #whenAny}, {@link #timeout} and {@link Scope}
 * see their parent's values and are cancelled with it.
 *
 * <p><b>Where continuations run.</b> A task that waits (on a timer, another task, a {@link Promise},
 * I/O) resumes on its context's scheduler: inline, through a trampoline, when the thread that wakes it
 * already runs that scheduler, otherwise by submission. {@link #startOn} and {@link #resumeOn} move
 * work between schedulers. If a scheduler shuts down while a task waits, the task resumes on the waking
 * thread rather than being lost.
 *
 * <p><b>Cancellation</b> is cooperative: a cancelled token completes the task's current wait (and every
 * later one) on the cancelled channel; synchronous steps are never interrupted. Cleanup registered with
 * {@link #andFinally} runs with cancellation masked.
 *
 * <p><b>Thread-safety.</b> Task objects are immutable and may be shared and started from any thread.
 * Functions passed to combinators run on the task's scheduler, one step at a time per run; actions
 * before a step completes happen-before the next step of the same run.
 *
 * <p><b>Bad input.</b> Null arguments get {@link NullPointerException} naming the argument; a
 * function that returns a null task makes the run fail with {@link NullPointerException}.
 *
 * {@snippet :
 * try (WorkStealingPool pool = WorkStealingPool.create(4)) {
 *     Task<Integer> answer = Task.fromCallable(() -> 6)
 *             .flatMap(x -> Task.delay(Duration.ofMillis(10)).map(ignored -> x * 7))
 *             .timeout(Duration.ofSeconds(1))
 *             .startOn(pool);
 *     System.out.println(answer.join());   // 42
 * }
 * }
 *
 * @param <T> the value type
 */
public abstract class Task<T> {
    static {
        dev.coro.internal.TaskDoors.install(new Nodes.Doors()); // once: the doors of the layers above
    }

    /** The node kind, for the interpreter's switch. */
    final byte tag;

    Task(byte tag) {
        this(tag, true);
    }

    /** {@code site}: whether debug mode records where the node was built (not for internal frames). */
    Task(byte tag, boolean site) {
        this.tag = tag;
        if (CoroDebug.ENABLED && site) { // a constant: off, the JIT drops the branch
            DebugProbes.assembled(this);
        }
    }

    // ---------------------------------------------------------------- factories

    /**
     * Returns a task that completes with {@code value}.
     *
     * @param value the value (may be null)
     * @param <T> the value type
     * @return the task
     */
    public static <T> Task<T> value(T value) {
        return new Nodes.Pure<>(value);
    }

    /**
     * Returns a task that completes with {@code error} on the error channel.
     *
     * @param error the error
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code error} is null
     */
    public static <T> Task<T> failure(Throwable error) {
        return new Nodes.Fail<>(Objects.requireNonNull(error, "error"));
    }

    /**
     * Returns a task that completes on the cancelled channel.
     *
     * @param <T> the value type
     * @return the task
     */
    @SuppressWarnings("unchecked")
    public static <T> Task<T> cancelled() {
        return (Task<T>) Nodes.Cancelled.INSTANCE;
    }

    /**
     * Returns a task that completes on the cancelled channel and says why: joining it throws a
     * {@link java.util.concurrent.CancellationException} whose message is {@code reason}, and its
     * {@link #toCompletableFuture() future} is cancelled with that message; it is cancelled in every
     * other respect ({@link Outcome.Cancelled}, recovery with {@code transform}, {@code whenAll}).
     *
     * {@snippet :
     * Task<Reply> refused = Task.cancelled("ReplyCache is closed");
     * }
     *
     * @param reason what the cancellation message says
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code reason} is null
     */
    public static <T> Task<T> cancelled(String reason) {
        return new Nodes.Cancelled<>(new Completion.Cancelled(Objects.requireNonNull(reason, "reason")));
    }

    /**
     * Returns a task that ends as {@code outcome} says: with its value, its error (the same
     * instance), or on the cancelled channel. The inverse of {@link #outcome()}: for every task
     * {@code t}, {@code t.outcome().flatMap(Task::fromOutcome)} ends as {@code t} does, which is how
     * an outcome inspected along the way (logged, counted) is re-raised.
     *
     * {@snippet :
     * Task<String> logged = fetch.outcome().flatMap(o -> {
     *     log.info("fetch ended: {}", o);
     *     return Task.fromOutcome(o);   // the value, the same error, or cancelled again
     * });
     * }
     *
     * @param outcome the outcome to re-raise
     * @param <T> the value type
     * @return the task (already decided: it runs nothing)
     * @throws NullPointerException if {@code outcome} is null
     */
    public static <T> Task<T> fromOutcome(Outcome<? extends T> outcome) {
        Objects.requireNonNull(outcome, "outcome");
        return switch (outcome) {
            case Outcome.Value<? extends T> v -> value(v.value());
            case Outcome.Failure<? extends T> f -> failure(f.error());
            case Outcome.Cancelled<? extends T> c -> cancelled();
        };
    }

    /**
     * Returns a task that calls {@code body} each time it runs and completes with its result, or with
     * what it throws on the error channel.
     *
     * @param body the computation
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> Task<T> fromCallable(Callable<? extends T> body) {
        return new Nodes.Call<>(Objects.requireNonNull(body, "body"));
    }

    /**
     * Returns a task that runs {@code body} each time it runs and completes with a null value.
     *
     * @param body the action
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static Task<Void> fromRunnable(Runnable body) {
        return new Nodes.Run(Objects.requireNonNull(body, "body"));
    }

    /**
     * Returns a task that calls {@code supplier} each time it runs and then runs the task it returns.
     * This is how recursive and self-referential tasks are written.
     *
     * @param supplier builds the task to run
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code supplier} is null
     */
    public static <T> Task<T> defer(Supplier<? extends Task<? extends T>> supplier) {
        return new Nodes.Defer<>(Objects.requireNonNull(supplier, "supplier"));
    }

    /**
     * Returns a task that calls {@code supplier} each time it runs and waits for the stage it returns.
     * A stage completed with a {@link CancellationException} ends the task on the cancelled channel;
     * other failures (unwrapped from {@link CompletionException}) on the error channel. Cancelling the
     * task completes it at once and, when the stage is a {@link Future}, calls {@code cancel(false)} on
     * it.
     *
     * @param supplier starts the asynchronous operation
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code supplier} is null
     */
    public static <T> Task<T> fromCompletionStage(Supplier<? extends CompletionStage<? extends T>> supplier) {
        Objects.requireNonNull(supplier, "supplier");
        return create(completer -> {
            CompletionStage<? extends T> stage =
                    Objects.requireNonNull(supplier.get(), "fromCompletionStage: the supplier returned null");
            if (stage instanceof Future<?> future) {
                completer.onCancel(() -> future.cancel(false));
            }
            stage.whenComplete((value, error) -> {
                if (error == null) {
                    completer.complete(value);
                    return;
                }
                Throwable cause = error instanceof CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                if (cause instanceof CancellationException) {
                    completer.cancel();
                } else {
                    completer.fail(cause);
                }
            });
        });
    }

    /**
     * Returns a task that never completes unless cancelled (then it completes on the cancelled
     * channel). Useful in tests and races.
     *
     * @param <T> the value type
     * @return the task
     */
    public static <T> Task<T> never() {
        return create(completer -> {});
    }

    /**
     * Returns a task that completes with a null value once {@code delay} has passed on its
     * scheduler's clock (never early). Cancelling it cancels the timer, which then holds nothing. If
     * the scheduler shuts down first and drops the timer ({@link Scheduler#schedule}), the task
     * completes on the cancelled channel; if it is already shut down, the task fails with its
     * {@link java.util.concurrent.RejectedExecutionException}.
     *
     * @param delay how long to wait; zero or negative completes at once
     * @return the task
     * @throws NullPointerException if {@code delay} is null
     */
    public static Task<Void> delay(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.isNegative() || delay.isZero()) {
            return value(null);
        }
        return create(completer -> {
            Scheduler s = completer.context().scheduler();
            var timer = s.schedule(new DelayTimer(completer), delay);
            completer.onCancel(CoroDebug.ENABLED ? new DebugProbes.TimerWait(timer, s, DebugProbes.nanos(delay))
                    : timer::cancel);
        });
    }

    /**
     * Returns a task that completes with a null value once {@code delay} {@code unit}s have passed on
     * its scheduler's clock (never early); otherwise as {@link #delay(Duration)}, for callers that hold
     * a number and a unit: it schedules through {@link Scheduler#schedule(Runnable, long, TimeUnit)},
     * allocating no {@link Duration}.
     *
     * {@snippet :
     * Task<String> later = Task.delay(250, TimeUnit.MILLISECONDS).then(Task.value("later"));
     * }
     *
     * @param delay how long to wait, in {@code unit}s; zero or negative completes at once
     * @param unit the unit of {@code delay}
     * @return the task
     * @throws NullPointerException if {@code unit} is null
     */
    public static Task<Void> delay(long delay, TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        if (delay <= 0) {
            return value(null);
        }
        return create(completer -> {
            Scheduler s = completer.context().scheduler();
            var timer = s.schedule(new DelayTimer(completer), delay, unit);
            completer.onCancel(CoroDebug.ENABLED ? new DebugProbes.TimerWait(timer, s, unit.toNanos(delay))
                    : timer::cancel);
        });
    }

    /** The timer task of {@link #delay}: completes the wait when it fires, cancels it when dropped. */
    private static final class DelayTimer implements Runnable, Cancellable {
        private final Completer<Void> completer;

        DelayTimer(Completer<Void> completer) {
            this.completer = completer;
        }

        @Override
        public void run() {
            completer.complete(null);
        }

        @Override
        public boolean cancel() { // the scheduler dropped the timer (Scheduler.schedule)
            return completer.cancel();
        }
    }

    /**
     * Returns a task that runs {@code body} each time it runs and then waits until the body (or
     * whatever the body hands the completer to) calls one of the {@link Completer}'s methods. This
     * is the door for adapting callback APIs. If the task is cancelled first, it completes on the
     * cancelled channel and the completer's {@code onCancel} action runs. A body that throws fails
     * the task (unless the completer was already completed).
     *
     * {@snippet :
     * Task<String> fetched = Task.create(completer -> {
     *     Request request = client.send(url, completer::complete, completer::fail);
     *     completer.onCancel(request::abort);
     * });
     * }
     *
     * @param body registers the completion
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> Task<T> create(Consumer<? super Completer<T>> body) {
        return new Nodes.Async<>(Objects.requireNonNull(body, "body"), true);
    }

    /**
     * Returns a task that runs the blocking {@code body} on a new virtual thread each time it runs,
     * and completes with its result: straight-line code in which {@link #join()} plays the part of
     * {@code co_await}. The waiting task resumes on its own scheduler afterwards.
     *
     * <p>Inside the body, {@link Context#current()} is the task's context, and tasks joined from the
     * body inherit its values and cancellation. When the task is cancelled, the virtual thread is
     * interrupted (and joins inside it are cancelled); the task then waits for the body to return and
     * completes on the cancelled channel if the body ends with {@link CancellationException} or
     * {@link InterruptedException} (any {@code CancellationException} from the body means cancelled).
     *
     * {@snippet :
     * Task<String> page = Task.onVirtualThread(() -> {
     *     String user = fetchUser.join();        // suspends this virtual thread only
     *     return render(user, fetchNews.join());
     * });
     * }
     *
     * @param body the blocking body
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> Task<T> onVirtualThread(Callable<? extends T> body) {
        Objects.requireNonNull(body, "body");
        return new Nodes.Async<T>(completer -> {
            Context ctx = completer.context();
            Thread.ofVirtual().name("coro-virtual").start(() -> {
                Context.setCurrent(ctx);
                Registration interrupt = ctx.token().register(Thread.currentThread()::interrupt);
                try {
                    completer.complete(body.call());
                } catch (CancellationException e) {
                    completer.cancel();
                } catch (InterruptedException e) {
                    if (ctx.token().isCancelled()) {
                        completer.cancel();
                    } else {
                        completer.fail(e);
                    }
                } catch (Throwable e) {
                    completer.fail(e);
                } finally {
                    interrupt.unregister();
                    Thread.interrupted();
                    Context.setCurrent(null);
                }
            });
        }, false);
    }

    /**
     * Returns a task whose value is the context of the run that executes it.
     *
     * @return the task
     */
    public static Task<Context> context() {
        return Nodes.ContextRead.INSTANCE;
    }

    /**
     * Returns a task that resubmits the running task to its scheduler and continues from there: a
     * point where other work gets a turn (and where a cancelled task stops).
     *
     * @return the task
     */
    public static Task<Void> yieldNow() {
        return Nodes.Yield.INSTANCE;
    }

    /**
     * Returns a task that runs all {@code tasks} concurrently (each submitted to the scheduler) and
     * completes with their values in order. The first failure cancels the others; the task then waits
     * for all of them to settle and fails with the first failure, later failures added as suppressed.
     * If none failed but some were cancelled, it completes cancelled. Cancelling the task cancels all
     * of them and waits for them to settle.
     *
     * <p>A task that only waits on a handle (from {@link Scope#spawn}, {@link TaskHandle#task()} or
     * {@link TaskHandle#outcome()}) is not run on its own: the wait registers on the handle's run
     * directly (or, for a handle whose run has already ended, reads its result without registering),
     * so collecting the values of many spawned children costs about what joining them does. The
     * list is read-only and allows nulls.
     * Cancelling such a wait (the first failure, or this task's cancellation) leaves the run going.
     *
     * @param tasks the tasks; an empty list completes at once with an empty list
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code tasks} or an element is null (the message names its index)
     */
    public static <T> Task<List<T>> whenAll(List<? extends Task<? extends T>> tasks) {
        List<Task<?>> copy = copyTasks(tasks);
        if (copy.isEmpty()) {
            return value(List.of());
        }
        return new Nodes.Async<>(completer -> Forks.all(copy, AsyncStep.of(completer)), false);
    }

    /**
     * Returns a task that runs {@code first} and {@code second} concurrently and combines their
     * values; failure and cancellation as for {@link #whenAll(List)}.
     *
     * @param first the first task
     * @param second the second task
     * @param combiner combines the two values
     * @param <A> the first value type
     * @param <B> the second value type
     * @param <R> the result type
     * @return the task
     * @throws NullPointerException if any argument is null
     */
    @SuppressWarnings("unchecked")
    public static <A, B, R> Task<R> whenAll(Task<? extends A> first, Task<? extends B> second,
            BiFunction<? super A, ? super B, ? extends R> combiner) {
        Objects.requireNonNull(first, "first");
        Objects.requireNonNull(second, "second");
        Objects.requireNonNull(combiner, "combiner");
        return Task.<Object>whenAll(List.of(first, second))
                .map(values -> combiner.apply((A) values.get(0), (B) values.get(1)));
    }

    /**
     * Returns a task that runs all {@code tasks} concurrently and ends as the first of them to end
     * with a value or an error; the others are cancelled, and the task completes once all have
     * settled. If all end cancelled, it completes cancelled.
     *
     * @param tasks the tasks, at least one
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code tasks} or an element is null (the message names its index)
     * @throws IllegalArgumentException if {@code tasks} is empty
     */
    public static <T> Task<T> whenAny(List<? extends Task<? extends T>> tasks) {
        List<Task<?>> copy = copyTasks(tasks);
        if (copy.isEmpty()) {
            throw new IllegalArgumentException("tasks must not be empty");
        }
        return new Nodes.Async<>(completer -> Forks.any(copy, AsyncStep.of(completer)), false);
    }

    /**
     * Returns a task that, starting from {@code initial}, runs {@code body} while {@code condition}
     * holds, feeding each result to the next iteration, and completes with the last state. Runs in
     * constant stack and memory however many iterations it makes.
     *
     * @param initial the first state
     * @param condition whether to run another iteration
     * @param body one iteration
     * @param <S> the state type
     * @return the task
     * @throws NullPointerException if {@code condition} or {@code body} is null
     */
    public static <S> Task<S> loop(S initial, Predicate<? super S> condition,
            Function<? super S, ? extends Task<? extends S>> body) {
        Objects.requireNonNull(condition, "condition");
        Objects.requireNonNull(body, "body");
        return new Nodes.Loop<>(initial, condition, body);
    }

    /**
     * Returns a task that runs the task {@code body} returns for each index from
     * {@code startInclusive} to {@code endExclusive}, one after another (each starts when the previous
     * one has completed with a value), and completes with null after the last. The first error or
     * cancellation of an iteration ends it on that channel, and no later index runs. An empty range
     * completes at once. This is the counted {@code for} loop of a task: the index is a plain
     * {@code int}, so an iteration builds only what {@code body} builds (no boxed state, no
     * {@code map} to step it, as {@link #loop} over an {@code Integer} needs), and it runs in constant
     * stack and memory however many iterations it makes. {@code body} is called when its iteration
     * starts, on the thread running the task; each run of the returned task starts again at
     * {@code startInclusive}.
     *
     * {@snippet :
     * Task<Void> countdown = Task.forRange(0, 3, i ->
     *         Task.delay(Duration.ofSeconds(1)).then(Task.fromRunnable(() -> System.out.println(3 - i))));
     * }
     *
     * @param startInclusive the first index
     * @param endExclusive one past the last index; at most {@code startInclusive} for an empty range
     * @param body the iteration for one index
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static Task<Void> forRange(int startInclusive, int endExclusive, IntFunction<? extends Task<?>> body) {
        Objects.requireNonNull(body, "body");
        return new Nodes.ForRange(startInclusive, endExclusive, body);
    }

    // ---------------------------------------------------------------- composition

    /**
     * Returns a task that applies {@code fn} to this task's value.
     *
     * @param fn the function; what it throws goes to the error channel
     * @param <R> the result type
     * @return the task
     * @throws NullPointerException if {@code fn} is null
     */
    public final <R> Task<R> map(Function<? super T, ? extends R> fn) {
        return new Nodes.Map<>(this, Objects.requireNonNull(fn, "fn"));
    }

    /**
     * Returns a task that runs the task {@code fn} returns for this task's value.
     *
     * @param fn the function
     * @param <R> the result type
     * @return the task
     * @throws NullPointerException if {@code fn} is null
     */
    public final <R> Task<R> flatMap(Function<? super T, ? extends Task<? extends R>> fn) {
        return new Nodes.FlatMap<>(this, Objects.requireNonNull(fn, "fn"));
    }

    /**
     * Returns a task that runs this task and then, if it ended with a value, {@code next}.
     *
     * @param next what runs second
     * @param <R> the result type
     * @return the task
     * @throws NullPointerException if {@code next} is null
     */
    public final <R> Task<R> then(Task<? extends R> next) {
        return new Nodes.Then<>(this, Objects.requireNonNull(next, "next"));
    }

    /**
     * Returns a task that replaces an error of this task by the value {@code fn} returns for it.
     *
     * @param fn the handler; what it throws becomes the error
     * @return the task
     * @throws NullPointerException if {@code fn} is null
     */
    public final Task<T> recover(Function<? super Throwable, ? extends T> fn) {
        Objects.requireNonNull(fn, "fn");
        return new Nodes.Fold<T, T>(this, null, e -> value(fn.apply(e)), null);
    }

    /**
     * Returns a task that replaces an error of this task by the task {@code fn} returns for it.
     *
     * @param fn the handler
     * @return the task
     * @throws NullPointerException if {@code fn} is null
     */
    public final Task<T> recoverWith(Function<? super Throwable, ? extends Task<? extends T>> fn) {
        return new Nodes.Fold<T, T>(this, null, Objects.requireNonNull(fn, "fn"), null);
    }

    /**
     * Returns a task that never fails: it completes with this task's {@link Outcome} as its value.
     * {@link #fromOutcome(Outcome)} is its inverse (re-raises an outcome as a task), as are
     * {@link Outcome#get()} (as a value or an exception) and {@link Promise#completeWith(Outcome)}.
     * A cancellation of the outcome task itself (its token fired while this task ran) is this task's
     * cancellation, so it completes with {@link Outcome.Cancelled}.
     *
     * @return the task
     */
    public final Task<Outcome<T>> outcome() {
        return transform(Task::value);
    }

    /**
     * Returns a task that runs the task {@code fn} returns for this task's outcome, whatever channel
     * it ended on.
     *
     * @param fn the handler of all three channels
     * @param <R> the result type
     * @return the task
     * @throws NullPointerException if {@code fn} is null
     */
    public final <R> Task<R> transform(Function<? super Outcome<T>, ? extends Task<? extends R>> fn) {
        Objects.requireNonNull(fn, "fn");
        return new Nodes.Fold<T, R>(this,
                v -> fn.apply(new Outcome.Value<>(v)),
                e -> fn.apply(new Outcome.Failure<>(e)),
                () -> fn.apply(new Outcome.Cancelled<>()));
    }

    /**
     * Returns a task that runs {@code cleanup} after this task on every channel, with cancellation
     * masked (the cleanup's waits are not cancelled), and then ends as this task did. If the cleanup
     * fails, its error replaces a value or a cancellation, and is added as suppressed to an error.
     *
     * @param cleanup the cleanup
     * @return the task
     * @throws NullPointerException if {@code cleanup} is null
     */
    public final Task<T> andFinally(Task<?> cleanup) {
        Objects.requireNonNull(cleanup, "cleanup");
        Task<?> masked = new Nodes.WithContext<>(cleanup, ctx -> ctx.withToken(dev.coro.cancel.CancellationToken.NONE));
        return new Nodes.Fold<T, T>(this,
                v -> masked.then(value(v)),
                e -> masked.transform(o -> {
                    if (o instanceof Outcome.Failure<?> f && f.error() != e) {
                        e.addSuppressed(f.error());
                    }
                    return failure(e);
                }),
                () -> masked.then(cancelled()));
    }

    /**
     * Returns a task that runs {@code cleanup} after this task on every channel; see
     * {@link #andFinally(Task)}.
     *
     * @param cleanup the cleanup
     * @return the task
     * @throws NullPointerException if {@code cleanup} is null
     */
    public final Task<T> andFinally(Runnable cleanup) {
        return new Nodes.Finally<>(this, Objects.requireNonNull(cleanup, "cleanup"));
    }

    /**
     * Returns a task that fails with {@link TimeoutException} (on the error channel) if this task has
     * not ended within {@code timeout} on its scheduler's clock. On timeout this task is cancelled and
     * waited for; if it still ends with a value or an error, that outcome is kept. If the scheduler
     * shuts down first and drops the timer ({@link Scheduler#schedule}), this task is cancelled too,
     * and the result is its outcome (cancelled, unless it still ends otherwise), never a timeout.
     *
     * @param timeout the limit; must be positive
     * @return the task
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is zero or negative
     */
    public final Task<T> timeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        }
        return new Nodes.Async<>(completer -> Forks.timeout(this, timeout, AsyncStep.of(completer)), false);
    }

    /**
     * Returns a task that runs this task on {@code scheduler} (submitting it there unless already on
     * it) and then returns to the scheduler it was started from, on every channel. Timers and waits
     * inside use {@code scheduler}.
     *
     * @param scheduler where this task runs
     * @return the task
     * @throws NullPointerException if {@code scheduler} is null
     */
    public final Task<T> startOn(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        return new Nodes.WithContext<>(this, ctx -> ctx.withScheduler(scheduler));
    }

    /**
     * Returns a task that runs this task where it would run, then moves to {@code scheduler}: the
     * steps that follow it (up to the end of the enclosing {@link #startOn} region, if any) run there.
     *
     * @param scheduler where the continuation runs
     * @return the task
     * @throws NullPointerException if {@code scheduler} is null
     */
    public final Task<T> resumeOn(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        Task<Void> shift = new Nodes.Shift(scheduler);
        return new Nodes.Fold<T, T>(this,
                v -> shift.then(value(v)),
                e -> shift.then(failure(e)),
                () -> shift.then(cancelled()));
    }

    /**
     * Returns a task that runs this task again after an error, as {@code policy} says, waiting its
     * delays (jitter applied: {@link RetryPolicy#delayBefore}) on the scheduler's clock; it ends with
     * the first value, or with the last error when the policy gives up (earlier errors are added as
     * suppressed). Before each retry's delay, the policy's {@link RetryPolicy.Listener} is told the
     * attempt, the error and the delay chosen; if it (or the random source) throws, the task fails with
     * that, the error added as suppressed. Cancellation is never retried: a run that ends cancelled,
     * or a cancellation during a delay, ends the task cancelled.
     *
     * @param policy when and how often to retry
     * @return the task
     * @throws NullPointerException if {@code policy} is null
     */
    public final Task<T> retry(RetryPolicy policy) {
        Objects.requireNonNull(policy, "policy");
        return defer(() -> attempt(policy, 1, null));
    }

    private Task<T> attempt(RetryPolicy policy, int attempt, Throwable earlier) {
        return recoverWith(e -> {
            if (earlier != null && earlier != e) {
                e.addSuppressed(earlier);
            }
            if (attempt >= policy.maxAttempts() || !policy.isRetryable(e)) {
                return failure(e);
            }
            Duration wait;
            try {
                wait = policy.delayBefore(attempt + 1);
                policy.retrying(attempt + 1, e, wait);
            } catch (Throwable listenerOrRandom) {
                if (listenerOrRandom != e) {
                    listenerOrRandom.addSuppressed(e);
                }
                return failure(listenerOrRandom);
            }
            return delay(wait).then(defer(() -> attempt(policy, attempt + 1, e)));
        });
    }

    /**
     * Returns a task that runs this task {@code times} times in sequence (stopping at the first error
     * or cancellation) and completes with the last value. Constant stack and memory.
     *
     * @param times how many runs; at least 1
     * @return the task
     * @throws IllegalArgumentException if {@code times < 1}
     */
    public final Task<T> repeat(int times) {
        if (times < 1) {
            throw new IllegalArgumentException("times must be >= 1, was " + times);
        }
        return times == 1 ? this : new Nodes.Repeat<>(this, times);
    }

    /**
     * Returns a task that runs this task with {@code key} bound to {@code value} in its context.
     *
     * @param key the key
     * @param value the value
     * @param <V> the value type
     * @return the task
     * @throws NullPointerException if {@code key} is null
     */
    public final <V> Task<T> withValue(Context.Key<V> key, V value) {
        Objects.requireNonNull(key, "key");
        return new Nodes.WithContext<>(this, ctx -> ctx.with(key, value));
    }

    // ---------------------------------------------------------------- doors out

    /**
     * Runs this task and blocks the calling thread until it ends: returns the value, or throws.
     *
     * <p>The calling thread becomes the task's scheduler while it waits: the task starts inline and
     * its continuations run on this thread, which is parked between them (on a virtual thread, only
     * the virtual thread parks). Called from a body started by {@link #onVirtualThread}, the task
     * inherits that body's context values and cancellation.
     *
     * <p>Errors: an unchecked error is rethrown as the same instance (so it can be caught by its type
     * and compared by identity), with a suppressed {@link JoinSite} carrying the caller's stack. A
     * given error carries at most one join site: the first join that rethrows it adds it, and later
     * joins of the same error add nothing, so joining a failed task (or a failed {@link Promise}) again
     * and again, from one thread or many, never makes the error grow. A checked error is wrapped in a
     * fresh {@link CompletionException} at every join (whose stack is that caller's). A cancelled task throws
     * {@link CancellationException}. If the calling thread is interrupted, the task is cancelled, this
     * method still waits for it to settle (no work is left behind), and the interrupt status is kept.
     *
     * <p><b>Where it may block.</b> On a plain thread, a virtual thread, or inside another join (the
     * nested join runs its task at once on a loop of its own, and the outer join's pending work waits
     * meanwhile, so the inner task must not wait for it), and on the threads of an executor adapted by
     * {@link Scheduler#from} (the executor is yours: blocking it is your call). Not on a thread that
     * runs a Coro scheduler's work, which the task may need: a {@link dev.coro.scheduler.WorkStealingPool}
     * worker, an {@code EventLoop}'s thread, or a thread inside a run method of coro-test's
     * {@code VirtualTimeScheduler} ({@link Scheduler#markNonBlocking}). There it throws
     * {@link IllegalStateException} at once, naming the scheduler, and the task does not start:
     * compose with {@link #then}/{@link #flatMap} instead, or move the blocking code to a virtual
     * thread with {@link #onVirtualThread}. Every blocking door of Coro ({@code Scope.joinBlocking()},
     * a gate's {@code call}, {@code Event.awaitBlocking()}, a channel's {@code sendBlocking}, ...)
     * follows this rule.
     *
     * @return the value
     * @throws CancellationException if the task ended cancelled
     * @throws CompletionException wrapping a checked error
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (see above)
     */
    public final T join() {
        Blocking.checkAllowed(Task.class, "join");
        return ThreadLoop.join(this);
    }

    /**
     * Starts this task now, on the inline scheduler, and returns a handle on the run: cancel it, wait
     * for its {@linkplain TaskHandle#outcome() real outcome}, join it. Like {@link #toCompletableFuture()},
     * the task starts on this thread (right after the work this thread is running inline, if any) and
     * continues on whichever thread wakes it, unless it moves with {@link #startOn}.
     *
     * <p>The run is cancelled by {@link TaskHandle#cancel()}, and also, when called from a body started
     * by {@link #onVirtualThread}, by that body's task's token; it sees that body's context values
     * ({@link Context#current()}). Use {@link #start(Scheduler, CancellationToken)} to name the parent
     * token.
     *
     * {@snippet :
     * TaskHandle<String> reply = request.start();
     * reply.cancel();                          // cooperative: ends at the run's next wait
     * Outcome<String> how = reply.outcome().join();   // Cancelled, unless it ended first
     * }
     *
     * @return the handle of the run
     */
    public final TaskHandle<T> start() {
        return TaskHandle.start(this, Scheduler.inline(), TaskHandle.callersToken(), true);
    }

    /**
     * Starts this task now by submitting it to {@code scheduler} (it runs there, and resumes there
     * after every wait), and returns a handle on the run; otherwise as {@link #start()}.
     *
     * @param scheduler where the run starts and resumes
     * @return the handle of the run
     * @throws NullPointerException if {@code scheduler} is null
     * @throws java.util.concurrent.RejectedExecutionException if {@code scheduler} refuses the
     *     submission (it is shut down); nothing ran
     */
    public final TaskHandle<T> start(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        return TaskHandle.start(this, scheduler, TaskHandle.callersToken(), false);
    }

    /**
     * Starts this task now on {@code scheduler} under {@code parent}: the run has a token of its own,
     * cancelled by {@link TaskHandle#cancel()} and whenever {@code parent} is cancelled (at once, if it
     * already is: the run then ends cancelled at its first wait). When the run ends its token is
     * unlinked from {@code parent}, so a long-lived parent keeps nothing of finished runs. Otherwise as
     * {@link #start(Scheduler)}.
     *
     * {@snippet :
     * CancellationSource request = new CancellationSource();
     * TaskHandle<Void> audit = writeAudit.start(pool, request.token());
     * request.cancel();   // cancels the audit run too
     * }
     *
     * @param scheduler where the run starts and resumes
     * @param parent the caller's token, whose cancellation cancels the run
     * @return the handle of the run
     * @throws NullPointerException if {@code scheduler} or {@code parent} is null
     * @throws java.util.concurrent.RejectedExecutionException if {@code scheduler} refuses the
     *     submission (it is shut down); nothing ran
     */
    public final TaskHandle<T> start(Scheduler scheduler, CancellationToken parent) {
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(parent, "parent");
        return TaskHandle.start(this, scheduler, parent, false);
    }

    /**
     * Starts this task now and returns a future of its outcome. The task runs on the inline scheduler
     * (it starts on this thread, and continues on whichever thread wakes it) unless it moves with
     * {@link #startOn}. Cancelling the future cancels the task: the future completes cancelled at once,
     * the task settles in the background.
     *
     * @return a future of the outcome
     */
    public final CompletableFuture<T> toCompletableFuture() {
        return TaskFuture.start(this);
    }

    @SuppressWarnings("unchecked")
    private static List<Task<?>> copyTasks(List<? extends Task<?>> tasks) {
        Objects.requireNonNull(tasks, "tasks");
        return (List<Task<?>>) (List<?>) Slots.copyOfNonNull(tasks, "tasks"); // chunked: no humongous array
    }
}
