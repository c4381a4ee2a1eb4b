package dev.coro.task;

import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The node types a {@link Task} description is made of. A task is an immutable tree of these; the
 * {@link Fiber} run loop interprets it. Each node class carries a {@code tag} for the loop's switch.
 */
final class Nodes {
    private Nodes() {}

    static final byte PURE = 0, FAIL = 1, CANCELLED = 2, CALL = 3, DEFER = 4, MAP = 5, FLAT_MAP = 6,
            FOLD = 7, ASYNC = 8, CONTEXT = 9, WITH_CONTEXT = 10, YIELD = 11, SHIFT = 12, FINALLY = 13;

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

    /** A task built when it runs. */
    static final class Defer<T> extends Task<T> {
        final Supplier<? extends Task<? extends T>> supplier;

        Defer(Supplier<? extends Task<? extends T>> supplier) {
            super(DEFER);
            this.supplier = supplier;
        }
    }

    /** source, then a function of its value. Also a stack frame. */
    static final class Map<S, T> extends Task<T> {
        final Task<? extends S> source;
        final Function<? super S, ? extends T> fn;

        Map(Task<? extends S> source, Function<? super S, ? extends T> fn) {
            super(MAP);
            this.source = source;
            this.fn = fn;
        }
    }

    /** source, then the task a function of its value returns. Also a stack frame. */
    static final class FlatMap<S, T> extends Task<T> {
        final Task<? extends S> source;
        final Function<? super S, ? extends Task<? extends T>> fn;

        FlatMap(Task<? extends S> source, Function<? super S, ? extends Task<? extends T>> fn) {
            super(FLAT_MAP);
            this.source = source;
            this.fn = fn;
        }
    }

    /**
     * source, then a task chosen by the channel it ended on; a null handler passes that channel on
     * unchanged. Also a stack frame.
     */
    static final class Fold<S, T> extends Task<T> {
        final Task<? extends S> source;
        final Function<Object, Task<?>> onValue;
        final Function<Throwable, Task<?>> onError;
        final Supplier<Task<?>> onCancel;

        @SuppressWarnings("unchecked")
        Fold(Task<? extends S> source, Function<? super S, ? extends Task<? extends T>> onValue,
                Function<? super Throwable, ? extends Task<? extends T>> onError,
                Supplier<? extends Task<? extends T>> onCancel) {
            super(FOLD);
            this.source = source;
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
        final boolean cancelOnToken;

        Async(Consumer<? super Completer<T>> body, boolean cancelOnToken) {
            super(ASYNC);
            this.body = body;
            this.cancelOnToken = cancelOnToken;
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
    static final class Finally<T> extends Task<T> {
        final Task<? extends T> source;
        final Runnable cleanup;

        Finally(Task<? extends T> source, Runnable cleanup) {
            super(FINALLY);
            this.source = source;
            this.cleanup = cleanup;
        }
    }
}
