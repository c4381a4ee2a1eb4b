package dev.coro.task;

import dev.coro.internal.FastPath;
import dev.coro.internal.TaskDoors;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The node types a {@link Task} description is made of. A task is an immutable tree of these; the
 * {@link Fiber} run loop interprets it. Each node class carries a {@code tag} for the loop's switch.
 */
final class Nodes {
    private Nodes() {}

    static final byte PURE = 0, FAIL = 1, CANCELLED = 2, CALL = 3, DEFER = 4, MAP = 5, FLAT_MAP = 6,
            FOLD = 7, ASYNC = 8, CONTEXT = 9, WITH_CONTEXT = 10, YIELD = 11, SHIFT = 12, FINALLY = 13,
            LOOP = 14, REPEAT = 15, REPEATING = 16, THEN = 17, RUN = 18, APPLY = 19, FOR_RANGE = 20,
            COUNTING = 21, SPAWNED = 22, GUARDED = 23;

    /** A value known now. */
    static final class Pure<T> extends Task<T> {
        final T value;

        Pure(T value) {
            super(PURE);
            this.value = value;
        }
    }

    /** An error known now. */
    static final class Fail<T> extends Task<T> {
        final Throwable error;

        Fail(Throwable error) {
            super(FAIL);
            this.error = error;
        }
    }

    /** The cancelled channel, with a reason or without ({@code box} null). */
    static final class Cancelled<T> extends Task<T> {
        static final Cancelled<?> INSTANCE = new Cancelled<>(null);

        /** Null, or the Completion.Cancelled box that carries the reason up to the result. */
        final Object box;

        Cancelled(Object box) {
            super(CANCELLED);
            this.box = box;
        }
    }

    /** A synchronous computation, run each time the task runs. */
    static final class Call<T> extends Task<T> {
        final Callable<? extends T> body;

        Call(Callable<? extends T> body) {
            super(CALL);
            this.body = body;
        }
    }

    /** A synchronous action, run each time the task runs; its value is null. */
    static final class Run extends Task<Void> {
        final Runnable body;

        Run(Runnable body) {
            super(RUN);
            this.body = body;
        }
    }

    /** A task built when it runs. */
    static final class Defer<T> extends Task<T> {
        final Supplier<? extends Task<? extends T>> supplier;

        Defer(Supplier<? extends Task<? extends T>> supplier) {
            super(DEFER);
            this.supplier = supplier;
        }
    }

    /**
     * A task built when it runs from a function and an argument ({@link TaskDoors#defer}): a
     * {@link Defer} that needs no lambda to capture its argument.
     */
    static final class Apply<A, T> extends Task<T> {
        final Function<? super A, ?> fn;
        final A argument;

        Apply(Function<? super A, ?> fn, A argument) {
            super(APPLY);
            this.fn = fn;
            this.argument = argument;
        }
    }

    /** The task layer's doors for the layers above it (installed by Task's class initialization). */
    static final class Doors extends TaskDoors {
        @Override
        public <A> Object defer(Function<? super A, ?> fn, A argument) {
            return new Apply<>(Objects.requireNonNull(fn, "fn"), argument);
        }

        @Override
        public Object exitFrame(Runnable exit, Predicate<Object> entered) {
            return new Exit(Objects.requireNonNull(exit, "exit"), entered);
        }

        @Override
        public Object guarded(Object enter, Object body, Object exitFrame) {
            Task<?> e = (Task<?>) Objects.requireNonNull(enter, "enter");
            Task<?> b = (Task<?>) Objects.requireNonNull(body, "body");
            Exit x = (Exit) Objects.requireNonNull(exitFrame, "exitFrame");
            if (CoroDebug.ENABLED && x.entered == null) { // the two nodes: a trace names where each was built
                return e.then(b.andFinally(x.cleanup));
            }
            return new Guarded<>(e, b, x);
        }
    }

    /**
     * A node that runs source first and is then the frame that takes source's outcome: the run loop
     * evaluates a source that ends at once right where it meets the node, with no frame (Fiber's
     * fusion), and pushes the node only when source may wait or is a composite itself.
     */
    abstract static sealed class Step<S, T> extends Task<T> permits Map, FlatMap, Fold, Finally, Guarded {
        final Task<? extends S> source;

        Step(byte tag, Task<? extends S> source) {
            super(tag);
            this.source = source;
        }

        Step(byte tag, Task<? extends S> source, boolean site) {
            super(tag, site);
            this.source = source;
        }
    }

    /** source, then a function of its value. Also a stack frame. */
    static final class Map<S, T> extends Step<S, T> {
        final Function<? super S, ? extends T> fn;

        Map(Task<? extends S> source, Function<? super S, ? extends T> fn) {
            super(MAP, source);
            this.fn = fn;
        }
    }

    /**
     * source, then the task a function of its value returns. Also a stack frame. Its subclass
     * {@link Then} (tag THEN) has no function: the task that follows is fixed.
     */
    static sealed class FlatMap<S, T> extends Step<S, T> permits Then {
        final Function<? super S, ? extends Task<? extends T>> fn;

        FlatMap(Task<? extends S> source, Function<? super S, ? extends Task<? extends T>> fn) {
            this(FLAT_MAP, source, fn);
        }

        FlatMap(byte tag, Task<? extends S> source, Function<? super S, ? extends Task<? extends T>> fn) {
            super(tag, source);
            this.fn = fn;
        }
    }

    /**
     * source, then {@code next} if source ended with a value ({@link Task#then}): a flatMap whose
     * function is a constant, read by the run loop without a call. Also a stack frame.
     */
    static final class Then<S, T> extends FlatMap<S, T> {
        final Task<? extends T> next;

        Then(Task<? extends S> source, Task<? extends T> next) {
            super(THEN, source, null);
            this.next = next;
        }
    }

    /**
     * {@link Task#loop}: from {@code initial}, runs {@code body} while {@code condition} holds. The
     * run loop runs it natively: the node is its own stack frame, left on the stack while the loop goes
     * on (the run loop reads it without popping it, and drops it when the loop ends), so an iteration
     * allocates nothing of the loop's own (only what the body builds) and moves no frame.
     */
    static final class Loop<S> extends Task<S> {
        final S initial;
        final Predicate<? super S> condition;
        final Function<? super S, ? extends Task<? extends S>> body;

        Loop(S initial, Predicate<? super S> condition, Function<? super S, ? extends Task<? extends S>> body) {
            super(LOOP);
            this.initial = initial;
            this.condition = condition;
            this.body = body;
        }
    }

    /**
     * {@link Task#forRange}: {@code body(i)} for each {@code i} from {@code start} to {@code end}
     * (exclusive), one after another. Each run of it pushes one {@link Counting} frame (when the range
     * is not empty), which holds the next index and stays on the stack until the range is done: one
     * allocation per run, none per iteration of the loop's own (no boxed index, no state node).
     */
    static final class ForRange extends Task<Void> {
        final int start;
        final int end;
        final IntFunction<? extends Task<?>> body;

        ForRange(int start, int end, IntFunction<? extends Task<?>> body) {
            super(FOR_RANGE);
            this.start = start;
            this.end = end;
            this.body = body;
        }
    }

    /**
     * The stack frame of one run of a {@link ForRange}: mutable, owned by that run's fiber (written and
     * read only by the thread running the fiber, handed between threads with the fiber itself).
     * {@code next < end} while an index is left; {@code next <= end <= Integer.MAX_VALUE}, so the
     * increment never overflows.
     */
    static final class Counting extends Task<Void> {
        final IntFunction<? extends Task<?>> body;
        final int end;
        int next;

        Counting(IntFunction<? extends Task<?>> body, int next, int end) {
            super(COUNTING, false);
            this.body = body;
            this.next = next;
            this.end = end;
        }
    }

    /**
     * {@link Task#repeat}: source, {@code times} times in sequence (at least 2). Each run of it
     * pushes one {@link Repeating} frame, which counts the runs left and stays on the stack until the
     * last run starts: one allocation per run of the repeat, none per iteration.
     */
    static final class Repeat<T> extends Task<T> {
        final Task<T> source;
        final int times;

        Repeat(Task<T> source, int times) {
            super(REPEAT);
            this.source = source;
            this.times = times;
        }
    }

    /**
     * The stack frame of one run of a {@link Repeat}: mutable, owned by that run's fiber (written and
     * read only by the thread running it; a hop or a suspension publishes the fiber's frames). Never
     * handed to user code, so it records no assembly site.
     */
    static final class Repeating extends Task<Object> {
        final Task<?> source;
        /** Runs of source still to start after the one in progress; at least 1 while on the stack. */
        int left;

        Repeating(Task<?> source, int left) {
            super(REPEATING, false);
            this.source = source;
            this.left = left;
        }
    }

    /**
     * source, then a task chosen by the channel it ended on; a null handler passes that channel on
     * unchanged. Also a stack frame.
     */
    static final class Fold<S, T> extends Step<S, T> {
        final Function<Object, Task<?>> onValue;
        final Function<Throwable, Task<?>> onError;
        final Supplier<Task<?>> onCancel;

        @SuppressWarnings("unchecked")
        Fold(Task<? extends S> source, Function<? super S, ? extends Task<? extends T>> onValue,
                Function<? super Throwable, ? extends Task<? extends T>> onError,
                Supplier<? extends Task<? extends T>> onCancel) {
            super(FOLD, source);
            this.onValue = (Function<Object, Task<?>>) (Function<?, ?>) onValue;
            this.onError = (Function<Throwable, Task<?>>) (Function<?, ?>) onError;
            this.onCancel = (Supplier<Task<?>>) (Supplier<?>) onCancel;
        }
    }

    /**
     * Suspends the task until the body's completer is called. When {@code cancelOnToken}, the task's
     * token completes the completer on the cancelled channel (leaf waits); structured nodes that must
     * wait for their children to settle pass {@code false} and cancel the children instead.
     */
    static final class Async<T> extends Task<T> {
        final Consumer<? super Completer<T>> body;
        /** The body as a {@link FastPath}, or null: found once here, not per run. */
        final FastPath fast;
        final boolean cancelOnToken;

        Async(Consumer<? super Completer<T>> body, boolean cancelOnToken) {
            super(ASYNC);
            this.body = body;
            this.fast = body instanceof FastPath f ? f : null;
            this.cancelOnToken = cancelOnToken;
        }

        /**
         * The body of {@code t} if it is a leaf wait that its token cancels (the shape of every wait
         * on a cell: a spawn handle is such a wait whose body is the cell itself), else null. For a
         * {@link Spawned} handle: its child's fiber, or once the child has ended its encoded result
         * (a caller that finds neither a Completion nor an Await there reads it as that result).
         */
        static Object cancellableBody(Task<?> t) {
            if (t instanceof Async<?> a) {
                return a.cancelOnToken ? a.body : null;
            }
            return t instanceof Spawned<?> s ? s.cellAcquire() : null;
        }
    }

    /**
     * A spawn handle ({@link Scope#spawn}): the plain wait on one child, as {@link Completion#awaitTask}
     * is, that lets go of the child's fiber once the child has ended: the first reader that finds the
     * fiber ended puts the fiber's encoded result in its place. A handle kept after its child ended
     * and read (a list of handles to join) then holds this node and the value, not the fiber and its
     * fields. The fiber does not know its handle (its listener is the scope's), so a handle nobody
     * keeps is garbage at once, even while its child waits: a suspended child costs its fiber and its
     * step, not a handle besides.
     *
     * <p>Implementation overview.
     * <ol>
     *   <li>Representation. {@link #cell}: the child's fiber from the spawn until a reader finds it
     *       ended, then the fiber's encoded result (never a {@link Completion} or an
     *       {@link Completion.Await}: such a result, which no user task produces, keeps the fiber, so
     *       a reader can tell the two states apart by type).
     *   <li>Transitions. unset -> fiber: the constructor, on the spawning thread. fiber -> result:
     *       {@link #cellAcquire}, by any reader that reads the fiber's result as set (each such
     *       reader writes the same value, so the writes may race).
     *   <li>Linearization. The child's end is the fiber's write of its result, as for every wait on a
     *       cell; the swap is not a linearization point: a reader that finds the fiber waits on it (or
     *       reads its result at once) exactly as the plain wait does.
     *   <li>Invariant. Whichever of the two a reader finds, it answers with the fiber's result: the
     *       result is written once, before any swap, and every swap copies it.
     *   <li>Memory ordering. The first write is plain, in the constructor: the spawning thread
     *       returns the handle, and whoever it hands the handle to sees the write through that
     *       hand-off, as for any object. A swapping reader read the result with acquire (the fiber's
     *       release of it) and writes it with release; readers read the cell with acquire, so a
     *       reader that finds the result also sees everything the child did before it ended.
     * </ol>
     */
    static final class Spawned<T> extends Task<T> {
        private Object cell;

        Spawned(Fiber<T> fiber) {
            super(SPAWNED);
            this.cell = fiber;
        }

        /**
         * The child's fiber while it runs, else its encoded result: a reader that finds the fiber
         * ended lets go of it here (acquire reads, a release swap).
         */
        Object cellAcquire() {
            Object c = CELL.getAcquire(this);
            if (c instanceof Fiber<?> fiber) {
                Object r = fiber.resultAcquire();
                if (r != null && !(r instanceof Completion) && !(r instanceof Completion.Await<?>)) {
                    CELL.setRelease(this, r); // the same value whoever writes it
                    return r;
                }
            }
            return c;
        }

        private static final VarHandle CELL;

        static {
            try {
                CELL = MethodHandles.lookup().findVarHandle(Spawned.class, "cell", Object.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    /** The running task's context as a value. */
    static final class ContextRead extends Task<Context> {
        static final ContextRead INSTANCE = new ContextRead();

        private ContextRead() {
            super(CONTEXT);
        }
    }

    /**
     * source, run with a context derived from the current one; the previous context (and its
     * scheduler) is restored when source ends, on every channel.
     */
    static final class WithContext<T> extends Task<T> {
        final Task<? extends T> source;
        final UnaryOperator<Context> change;

        WithContext(Task<? extends T> source, UnaryOperator<Context> change) {
            super(WITH_CONTEXT);
            this.source = source;
            this.change = change;
        }
    }

    /** Resubmits the task to its scheduler and continues from there with a null value. */
    static final class Yield extends Task<Void> {
        static final Yield INSTANCE = new Yield();

        private Yield() {
            super(YIELD);
        }
    }

    /** Moves the rest of the run (up to the enclosing context restore) to another scheduler. */
    static final class Shift extends Task<Void> {
        final dev.coro.scheduler.Scheduler target;

        Shift(dev.coro.scheduler.Scheduler target) {
            super(SHIFT);
            this.target = target;
        }
    }

    /**
     * source, then a synchronous cleanup on every channel; the outcome passes through (a failing
     * cleanup replaces a value or a cancellation, and is suppressed into an error). Also a stack
     * frame. A Runnable cannot wait, so unlike a cleanup task it needs no cancellation mask.
     */
    static sealed class Finally<T> extends Step<T, T> permits Exit {
        final Runnable cleanup;

        Finally(Task<? extends T> source, Runnable cleanup) {
            super(FINALLY, source);
            this.cleanup = cleanup;
        }

        /** A frame only: no source, and no site of its own in debug mode. */
        Finally(Runnable cleanup) {
            super(FINALLY, null, false);
            this.cleanup = cleanup;
        }
    }

    /**
     * An owner's exit ({@link TaskDoors#exitFrame}): the frame that runs its cleanup after a
     * {@link Guarded} body, and the owner's test of whether the entry's value means entered (null:
     * always).
     */
    static final class Exit extends Finally<Object> {
        final Predicate<Object> entered;

        Exit(Runnable cleanup, Predicate<Object> entered) {
            super(cleanup);
            this.entered = entered;
        }
    }

    /**
     * {@code enter.then(body.andFinally(exit))} in one node ({@link TaskDoors#guarded}): source is the
     * entry (a lock, a gate's admission); once it ends with a value that {@code exit} takes as entered,
     * the run loop runs body and then the cleanup of {@code exit}, an {@link Exit} the owner made once:
     * right there when body ends at once (the fusion), else by pushing {@code exit} as body's frame
     * before body starts. So the exit runs on every completion path of body, and on none of an entry
     * that did not end with a value; nothing runs between the entry's value and the push (no check
     * of the token), as with the two nodes it stands for. An entry's value that the exit's test says
     * is not entered (a woken waiter of a barging lock that lost its competition) runs the whole node
     * again. Also a stack frame, while the entry runs.
     */
    static final class Guarded<T> extends Step<Object, T> {
        final Task<? extends T> body;
        final Exit exit;

        Guarded(Task<?> enter, Task<? extends T> body, Exit exit) {
            super(GUARDED, enter);
            this.body = body;
            this.exit = exit;
        }
    }
}
