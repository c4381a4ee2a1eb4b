package dev.coro.channel;

import static dev.coro.channel.Generator.DONE;
import static dev.coro.channel.Generator.STOP;
import static dev.coro.channel.Generator.start;

import dev.coro.cancel.CancellationToken;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.Iterator;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * The stages of a running generator pipeline behind {@link Generator}'s factories, operators and
 * consumers: the sources (pushing their values into a sink in a plain loop, continuing through a task
 * built once when a sink makes them wait), the operator sinks, and the consuming sinks. Each is
 * confined to one run of one producer (one fiber, one value at a time).
 */
final class GeneratorStages {
    private GeneratorStages() {}

    /**
     * The rest of a source's loop after a sink made it wait: {@code wait.then(rest)}, built once per
     * wait task. A cursor answers every emit with the same wait task, so a pulled source composes it
     * once, not once per value (tasks are immutable descriptions, safe to run again).
     */
    static final class Rest {
        private final Task<Void> rest;
        private Task<Void> lastWait;
        private Task<Void> lastRest;

        Rest(Supplier<Task<Void>> loop) {
            this.rest = Task.defer(loop);
        }

        Task<Void> after(Task<Void> wait) {
            if (wait != lastWait) {
                lastRest = wait.then(rest);
                lastWait = wait;
            }
            return lastRest;
        }
    }

    /** Pushes an iterator's values into a sink; the continuation after a waiting sink is built once. */
    static final class Drain<T> implements Supplier<Task<Void>> {
        private final Iterator<? extends T> it;
        private final GeneratorSink<? super T> sink;
        private final Rest rest = new Rest(this);
        private long index;

        Drain(Iterator<? extends T> it, GeneratorSink<? super T> sink) {
            this.it = it;
            this.sink = sink;
        }

        @Override
        public Task<Void> get() {
            while (it.hasNext()) {
                T v = it.next();
                if (v == null) {
                    return Task.failure(new NullPointerException(
                            "fromIterable: element " + index + " is null; generator elements are non-null"));
                }
                index++;
                Task<Void> t = sink.accept(v);
                if (t != DONE) {
                    return t == STOP ? STOP : rest.after(t);
                }
            }
            return DONE;
        }
    }

    /** Pushes a range of integers into a sink. */
    static final class Count implements Supplier<Task<Void>> {
        private final int end;
        private final GeneratorSink<? super Integer> sink;
        private final Rest rest = new Rest(this);
        private int next;

        Count(int start, int end, GeneratorSink<? super Integer> sink) {
            this.next = start;
            this.end = end;
            this.sink = sink;
        }

        @Override
        public Task<Void> get() {
            while (next < end) {
                Task<Void> t = sink.accept(next++);
                if (t != DONE) {
                    return t == STOP ? STOP : rest.after(t);
                }
            }
            return DONE;
        }
    }

    /** Pushes seed, next(seed), ... into a sink, computing each value only when it is asked for. */
    static final class Iterate<T> implements Supplier<Task<Void>> {
        private final Predicate<? super T> hasNext;
        private final UnaryOperator<T> next;
        private final GeneratorSink<? super T> sink;
        private final Rest rest = new Rest(this);
        private T current;
        private boolean started;

        Iterate(T seed, Predicate<? super T> hasNext, UnaryOperator<T> next, GeneratorSink<? super T> sink) {
            this.current = seed;
            this.hasNext = hasNext;
            this.next = next;
            this.sink = sink;
        }

        @Override
        public Task<Void> get() {
            for (;;) {
                if (started) {
                    T following = next.apply(current);
                    if (following == null) {
                        return Task.failure(new NullPointerException("iterate: next returned null for " + current
                                + "; generator elements are non-null"));
                    }
                    current = following;
                }
                started = true;
                if (!hasNext.test(current)) {
                    return DONE;
                }
                Task<Void> t = sink.accept(current);
                if (t != DONE) {
                    return t == STOP ? STOP : rest.after(t);
                }
            }
        }
    }

    static final class MapSink<T, R> extends GeneratorSink<T> {
        private final GeneratorSink<? super R> down;
        private final Function<? super T, ? extends R> fn;

        MapSink(GeneratorSink<? super R> down, Function<? super T, ? extends R> fn) {
            super(down.run);
            this.down = down;
            this.fn = fn;
        }

        @Override
        Task<Void> accept(T value) {
            return pass(value, false);
        }

        @Override
        Task<Void> acceptLast(T value) {
            return pass(value, true);
        }

        private Task<Void> pass(T value, boolean last) {
            R r;
            try {
                r = fn.apply(value);
            } catch (Throwable e) {
                return fail(e);
            }
            if (r == null) {
                return fail(nullResult("map", value));
            }
            return last ? down.acceptLast(r) : down.accept(r);
        }
    }

    static final class FilterSink<T> extends GeneratorSink<T> {
        private final GeneratorSink<? super T> down;
        private final Predicate<? super T> predicate;

        FilterSink(GeneratorSink<? super T> down, Predicate<? super T> predicate) {
            super(down.run);
            this.down = down;
            this.predicate = predicate;
        }

        @Override
        Task<Void> accept(T value) {
            return pass(value, false);
        }

        @Override
        Task<Void> acceptLast(T value) {
            return pass(value, true);
        }

        /** A dropped last value ends the run (STOP); a dropped value otherwise asks for the next (DONE). */
        private Task<Void> pass(T value, boolean last) {
            boolean keep;
            try {
                keep = predicate.test(value);
            } catch (Throwable e) {
                return fail(e);
            }
            if (!keep) {
                return last ? STOP : DONE;
            }
            return last ? down.acceptLast(value) : down.accept(value);
        }
    }

    static final class TakeSink<T> extends GeneratorSink<T> {
        private final GeneratorSink<? super T> down;
        private long left;
        /** Whether this stage stopped the producer (its cancellation is then this stage's doing). */
        boolean stopped;

        TakeSink(GeneratorSink<? super T> down, long count) {
            super(down.run);
            this.down = down;
            this.left = count;
        }

        @Override
        Task<Void> accept(T value) {
            if (left == 0) { // the producer went on after the stop
                stopped = true;
                return STOP;
            }
            if (--left > 0) {
                return down.accept(value);
            }
            Task<Void> t = down.acceptLast(value);
            stopped = true;
            return t == DONE || t == STOP ? STOP : t.then(STOP);
        }
    }

    static final class FlatMapSink<T, R> extends GeneratorSink<T> {
        private final GeneratorSink<? super R> down;
        private final Function<? super T, ? extends Generator<? extends R>> fn;

        FlatMapSink(GeneratorSink<? super R> down, Function<? super T, ? extends Generator<? extends R>> fn) {
            super(down.run);
            this.down = down;
            this.fn = fn;
        }

        @Override
        Task<Void> accept(T value) {
            Generator<? extends R> inner;
            try {
                inner = fn.apply(value);
            } catch (Throwable e) {
                return fail(e);
            }
            if (inner == null) {
                return fail(new NullPointerException("flatMap: the function returned null for " + value));
            }
            Task<Void> run = start(inner, down);
            if (run == DONE || run == STOP) {
                return run;
            }
            // an inner failure is the consumption's failure, not an error at the outer producer's emit
            return run.transform(o -> o instanceof Outcome.Failure<Void> f ? fail(f.error()) : asTask(o));
        }
    }

    static final class Zip<T, U, R> implements Supplier<Task<Void>> {
        private final Cursor<T> a;
        private final Cursor<? extends U> b;
        private final BiFunction<? super T, ? super U, ? extends R> fn;
        private final GeneratorSink<? super R> sink;
        private final Task<Void> rest = Task.defer(this);

        Zip(Cursor<T> a, Cursor<? extends U> b, BiFunction<? super T, ? super U, ? extends R> fn,
                GeneratorSink<? super R> sink) {
            this.a = a;
            this.b = b;
            this.fn = fn;
            this.sink = sink;
        }

        /** The whole zip loop, from its next pair on. */
        Task<Void> rest() {
            return rest;
        }

        @Override
        public Task<Void> get() {
            return a.next().flatMap(x -> x == null ? DONE : b.next().flatMap(y -> y == null ? DONE : pair(x, y)));
        }

        private Task<Void> pair(T x, U y) {
            R r;
            try {
                r = fn.apply(x, y);
            } catch (Throwable e) {
                return sink.fail(e);
            }
            if (r == null) {
                return sink.fail(new NullPointerException("zip: the function returned null for (" + x + ", " + y
                        + "); generator elements are non-null"));
            }
            Task<Void> t = sink.accept(r);
            return t == STOP ? STOP : t == DONE ? rest : t.then(rest);
        }
    }

    static final class ActionSink<T> extends GeneratorSink<T> {
        private final CancellationToken token;
        private final Consumer<? super T> action;

        ActionSink(CancellationToken token, Consumer<? super T> action) {
            super(new Run());
            this.token = token;
            this.action = action;
        }

        @Override
        Task<Void> accept(T value) {
            if (run.failed() || token.isCancelled()) {
                return STOP;
            }
            try {
                action.accept(value);
            } catch (Throwable e) {
                return fail(e);
            }
            return DONE;
        }
    }

    static final class TaskSink<T> extends GeneratorSink<T> {
        private final CancellationToken token;
        private final Function<? super T, ? extends Task<?>> action;

        TaskSink(CancellationToken token, Function<? super T, ? extends Task<?>> action) {
            super(new Run());
            this.token = token;
            this.action = action;
        }

        @Override
        Task<Void> accept(T value) {
            if (run.failed() || token.isCancelled()) {
                return STOP;
            }
            Task<?> work;
            try {
                work = Objects.requireNonNull(action.apply(value), "forEachTask: the action returned a null task");
            } catch (Throwable e) {
                return fail(e);
            }
            return work.transform(o -> switch (o) {
                case Outcome.Value<?> v -> DONE;
                case Outcome.Failure<?> f -> fail(f.error());
                case Outcome.Cancelled<?> c -> STOP;
            });
        }
    }

    static NullPointerException nullResult(String operator, Object value) {
        return new NullPointerException(operator + ": the function returned null for " + value
                + "; generator elements are non-null");
    }

    static Task<Void> asTask(Outcome<Void> o) {
        return switch (o) {
            case Outcome.Value<Void> v -> DONE;
            case Outcome.Failure<Void> f -> Task.failure(f.error());
            case Outcome.Cancelled<Void> c -> STOP;
        };
    }
}
