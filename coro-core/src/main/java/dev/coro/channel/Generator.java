package dev.coro.channel;

import dev.coro.scheduler.Scheduler;
import dev.coro.task.Context;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Spliterator;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A lazy, reusable description of a sequence of values produced on demand: an asynchronous
 * generator, whose producer may itself wait (timers, I/O, channels, other tasks) between
 * values, and whose consumer waits for each value with a task ({@code co_await generator.next()}).
 *
 * <p><b>Lazy and reusable.</b> Like a {@link Task}, a generator is a description: building one runs
 * nothing, and each consumption ({@link #open()}, {@link #forEach}, {@link #toList()},
 * {@link #iterator()}, {@link #stream()}) runs the producer anew, from the start.
 *
 * <p><b>Demand-driven.</b> The producer runs only when the consumer asks: it starts at the first
 * request and stops at each {@link Emitter#emit emit} until the consumer asks for the next value
 * (through {@link Cursor#next()}, or by returning from its {@code forEach} action). Nothing is
 * computed ahead.
 *
 * <p><b>Elements are never null</b>, so {@link Cursor#next()} can mark the end with {@code null}. A null
 * element is refused with {@link NullPointerException}: at once by {@link #of} and by
 * {@link Emitter#emit}; as the failure of the consumption when an iterable yields one, or when a
 * {@link #map}, {@link #flatMap} or {@link #zip} function (or {@link #iterate}'s {@code next})
 * returns null.
 *
 * <p><b>Errors.</b> A producer that fails ends the consumption with its error, at the point where the
 * consumer would have received its next value. A failure on the consumer side (an operator's
 * function, a {@code forEach} action) is not shown to the producer: its pending emit completes
 * cancelled, it ends through its cleanup, and the consumption then fails with that error (the
 * producer's own error, if its cleanup fails too, is added as suppressed).
 *
 * <p><b>Cancellation.</b> Cancelling the consuming task, closing a {@link Cursor} or a {@link #stream()},
 * or satisfying a {@link #take} ends the producer: its wait completes cancelled and its cleanup
 * ({@code andFinally}, {@code finally}) runs; nothing is left waiting.
 *
 * <p><b>Where it runs.</b> {@link #forEach} and {@link #toList()} run the producer inside the consuming
 * task (the same fiber and context: no hand-off at all); the operators {@link #map}, {@link #filter},
 * {@link #take} and {@link #flatMap} are stages of the same run. A {@link Cursor} (and {@link #zip},
 * which pulls from two) runs the producer as a task of its own on the consumer's scheduler; each value
 * is one hand-off between the two, inline through the trampoline when both run on one thread. A
 * synchronous producer is stack-safe for any number of values and pays no thread hop per value.
 *
 * <p><b>Cost per value.</b> Pushed ({@code forEach}, {@code toList}): the sources {@link #range},
 * {@link #iterate}, {@link #of} and {@link #fromIterable} and the stages {@code map}, {@code filter},
 * {@code take} allocate nothing of their own per value (boxing and the functions' results aside); an
 * {@link Emitter#emit emit} of a {@link #create} body is one small lazy task (one object) plus
 * whatever the body's own loop builds. Pulled (a {@link Cursor}): add the two waits of the hand-off,
 * the consumer's {@code next()} and the producer's wait for the next request (one suspension object
 * each; the second is skipped when the request is already there).
 *
 * <p><b>Thread-safety.</b> Generators are immutable and may be shared and consumed concurrently (each
 * consumption is a separate run). Functions passed to the operators run on the producer's thread, one
 * value at a time.
 *
 * <p><b>Bad input.</b> Null arguments get {@link NullPointerException} naming the argument; a negative
 * count gets {@link IllegalArgumentException}.
 *
 * {@snippet :
 * Generator<Integer> ticks = Generator.create(emitter -> Task.loop(1, n -> n <= 3,
 *         n -> Task.delay(Duration.ofMillis(10)).then(emitter.emit(n)).map(ignored -> n + 1)));
 * List<Integer> squares = ticks.map(n -> n * n).toList().join();          // [1, 4, 9]
 * Task<Void> printed = Generator.range(0, 1_000).filter(n -> n % 7 == 0).forEach(System.out::println);
 * }
 *
 * @param <T> the element type
 */
public abstract class Generator<T> {
    /** What a sink returns when it wants the next value at once (identity-compared). */
    static final Task<Void> DONE = Task.value(null);
    /** What a sink returns when it wants no more values: the cancelled channel (identity-compared). */
    static final Task<Void> STOP = Task.cancelled();

    Generator() {}

    /**
     * Runs one production into {@code sink}, called when the consumption runs (inside a running
     * task). May do synchronous work before it returns the rest of the production as a task.
     */
    abstract Task<Void> produce(GeneratorSink<? super T> sink);

    /** {@link #produce}, with whatever it throws as the production's error. */
    @SuppressWarnings("unchecked")
    static <T> Task<Void> start(Generator<? extends T> generator, GeneratorSink<? super T> sink) {
        try {
            return Objects.requireNonNull(((Generator<T>) generator).produce(sink), "produce");
        } catch (Throwable e) {
            return Task.failure(e);
        }
    }

    // ---------------------------------------------------------------- factories

    /**
     * Returns a generator whose producer is the task {@code body} returns for an {@link Emitter}; the
     * body is called once per consumption. The producer emits with {@code emitter.emit(v)} and waits
     * for that task before it goes on; it may await anything in between. The task's value is ignored
     * (any task type, so that a loop carrying its state needs no conversion; a counted loop of emits
     * is {@link Task#forRange}, which boxes no index); the generator ends when
     * the task ends: with a value (end of the sequence), an error (the consumption fails with it) or
     * cancelled.
     *
     * {@snippet :
     * Generator<String> lines = Generator.create(emitter -> Task.forRange(0, 3,
     *         i -> emitter.emit("line " + i))
     *         .andFinally(() -> System.out.println("closed")));   // runs however the consumer stops
     * }
     *
     * @param body builds the producer's task for one consumption; what it throws, or a null task,
     *     fails that consumption
     * @param <T> the element type
     * @return the generator
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> Generator<T> create(Function<? super Emitter<T>, ? extends Task<?>> body) {
        Objects.requireNonNull(body, "body");
        return new Generator<T>() {
            @Override
            Task<Void> produce(GeneratorSink<? super T> sink) {
                GeneratorEmitter<T> emitter = new GeneratorEmitter<>(sink);
                Task<?> task;
                try {
                    task = Objects.requireNonNull(body.apply(emitter), "create: the body returned a null task");
                } catch (Throwable e) {
                    emitter.end();
                    return Task.failure(e);
                }
                return task.andFinally(emitter::end).map(ignored -> null);
            }
        };
    }

    /**
     * Returns a generator of the given values, in order.
     *
     * @param values the values; the array is copied
     * @param <T> the element type
     * @return the generator
     * @throws NullPointerException if {@code values} or one of its elements is null (the message names
     *     its index)
     */
    @SafeVarargs
    public static <T> Generator<T> of(T... values) {
        Objects.requireNonNull(values, "values");
        List<T> copy = new ArrayList<>(values.length);
        for (int i = 0; i < values.length; i++) {
            copy.add(Objects.requireNonNull(values[i], () -> "values[" + copy.size() + "] is null; generator elements are non-null"));
        }
        return fromIterable(copy);
    }

    /**
     * Returns a generator of the values of {@code values}, iterated anew (a new iterator) by each
     * consumption. A null element fails the consumption with {@link NullPointerException} naming its
     * index; what the iterator throws fails it too.
     *
     * @param values the values
     * @param <T> the element type
     * @return the generator
     * @throws NullPointerException if {@code values} is null
     */
    public static <T> Generator<T> fromIterable(Iterable<? extends T> values) {
        Objects.requireNonNull(values, "values");
        return new Generator<T>() {
            @Override
            Task<Void> produce(GeneratorSink<? super T> sink) {
                return new GeneratorStages.Drain<T>(values.iterator(), sink).get();
            }
        };
    }

    /**
     * Returns a generator of the integers from {@code startInclusive} up to {@code endExclusive}; empty
     * if {@code endExclusive <= startInclusive}.
     *
     * @param startInclusive the first value
     * @param endExclusive the bound
     * @return the generator
     */
    public static Generator<Integer> range(int startInclusive, int endExclusive) {
        return new Generator<Integer>() {
            @Override
            Task<Void> produce(GeneratorSink<? super Integer> sink) {
                return new GeneratorStages.Count(startInclusive, endExclusive, sink).get();
            }
        };
    }

    /**
     * Returns a generator of {@code seed}, {@code next(seed)}, {@code next(next(seed))}, ... while
     * {@code hasNext} holds: a synchronous producer that allocates nothing per value of its own. Each
     * value is computed only when the consumer asks for it.
     *
     * {@snippet :
     * Generator<Integer> powers = Generator.iterate(1, x -> x <= 1024, x -> x * 2);   // 1, 2, 4, ..., 1024
     * }
     *
     * @param seed the first value
     * @param hasNext whether a value belongs to the sequence; the first value that fails it ends it
     * @param next computes the following value; a null result, or what it or {@code hasNext} throws,
     *     fails the consumption
     * @param <T> the element type
     * @return the generator
     * @throws NullPointerException if an argument is null
     */
    public static <T> Generator<T> iterate(T seed, Predicate<? super T> hasNext, UnaryOperator<T> next) {
        Objects.requireNonNull(seed, "seed");
        Objects.requireNonNull(hasNext, "hasNext");
        Objects.requireNonNull(next, "next");
        return new Generator<T>() {
            @Override
            Task<Void> produce(GeneratorSink<? super T> sink) {
                return new GeneratorStages.Iterate<>(seed, hasNext, next, sink).get();
            }
        };
    }

    /**
     * Returns a generator with no values.
     *
     * @param <T> the element type
     * @return the generator
     */
    public static <T> Generator<T> empty() {
        return of();
    }

    // ---------------------------------------------------------------- operators

    /**
     * Returns a generator of {@code fn} applied to each value of this one (a stage of the same run:
     * no hand-off).
     *
     * @param fn the function; a null result, or what it throws, fails the consumption
     * @param <R> the result type
     * @return the generator
     * @throws NullPointerException if {@code fn} is null
     */
    public final <R> Generator<R> map(Function<? super T, ? extends R> fn) {
        Objects.requireNonNull(fn, "fn");
        Generator<T> upstream = this;
        return new Generator<R>() {
            @Override
            Task<Void> produce(GeneratorSink<? super R> sink) {
                return upstream.produce(new GeneratorStages.MapSink<>(sink, fn));
            }
        };
    }

    /**
     * Returns a generator of the values of this one that satisfy {@code predicate} (a stage of the
     * same run: no hand-off; skipped values cost no allocation).
     *
     * @param predicate the test; what it throws fails the consumption
     * @return the generator
     * @throws NullPointerException if {@code predicate} is null
     */
    public final Generator<T> filter(Predicate<? super T> predicate) {
        Objects.requireNonNull(predicate, "predicate");
        Generator<T> upstream = this;
        return new Generator<T>() {
            @Override
            Task<Void> produce(GeneratorSink<? super T> sink) {
                return upstream.produce(new GeneratorStages.FilterSink<>(sink, predicate));
            }
        };
    }

    /**
     * Returns a generator of the first {@code count} values of this one. Once the last of them has been
     * handed over, the producer is ended (its cleanup runs) without waiting for another request; a
     * {@code count} of zero never starts it.
     *
     * @param count how many values, at least zero
     * @return the generator
     * @throws IllegalArgumentException if {@code count} is negative
     */
    public final Generator<T> take(long count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, was " + count);
        }
        Generator<T> upstream = this;
        return new Generator<T>() {
            @Override
            Task<Void> produce(GeneratorSink<? super T> sink) {
                if (count == 0) {
                    return DONE;
                }
                GeneratorStages.TakeSink<T> take = new GeneratorStages.TakeSink<>(sink, count);
                Task<Void> run = start(upstream, take);
                if (run == DONE) {
                    return DONE;
                }
                if (run == STOP) {
                    return take.stopped ? DONE : STOP;
                }
                return run.transform(o -> take.stopped && o instanceof Outcome.Cancelled<Void> ? DONE : GeneratorStages.asTask(o));
            }
        };
    }

    /**
     * Returns a generator of the values of the generators {@code fn} returns for each value of this
     * one, each inner one run to its end before the next outer value is taken (a stage of the same
     * run: no hand-off).
     *
     * @param fn the function; a null generator, or what it throws, fails the consumption; an inner
     *     generator's failure fails it too
     * @param <R> the result type
     * @return the generator
     * @throws NullPointerException if {@code fn} is null
     */
    public final <R> Generator<R> flatMap(Function<? super T, ? extends Generator<? extends R>> fn) {
        Objects.requireNonNull(fn, "fn");
        Generator<T> upstream = this;
        return new Generator<R>() {
            @Override
            Task<Void> produce(GeneratorSink<? super R> sink) {
                return upstream.produce(new GeneratorStages.FlatMapSink<>(sink, fn));
            }
        };
    }

    /**
     * Returns a generator of {@code fn} applied to the values of this generator and {@code other} taken
     * pairwise; it ends when either ends (the other is then closed). Each side is pulled through a
     * {@link Cursor} of its own (a hand-off per value), this side first.
     *
     * @param other the second generator
     * @param fn combines a pair; a null result, or what it throws, fails the consumption
     * @param <U> the other element type
     * @param <R> the result type
     * @return the generator
     * @throws NullPointerException if {@code other} or {@code fn} is null
     */
    public final <U, R> Generator<R> zip(Generator<? extends U> other, BiFunction<? super T, ? super U, ? extends R> fn) {
        Objects.requireNonNull(other, "other");
        Objects.requireNonNull(fn, "fn");
        Generator<T> left = this;
        return new Generator<R>() {
            @Override
            Task<Void> produce(GeneratorSink<? super R> sink) {
                Cursor<T> a = left.open();
                Cursor<? extends U> b = other.open();
                return new GeneratorStages.Zip<T, U, R>(a, b, fn, sink).rest().andFinally(() -> {
                    a.close();
                    b.close();
                });
            }
        };
    }

    // ---------------------------------------------------------------- consumption

    /**
     * Opens a consumption pulled one value at a time: see {@link Cursor}. Nothing runs until the
     * first {@link Cursor#next()}; the producer then runs in that task's context. Close the cursor when
     * done with it (try-with-resources, or {@code andFinally(cursor::close)}); a cursor dropped
     * unclosed leaves its producer suspended at its emit until it is garbage.
     *
     * @return a new cursor
     */
    public final Cursor<T> open() {
        return new GeneratorCursor<>(this, null);
    }

    /**
     * Returns a task that runs the producer and calls {@code action} with each value, in order; it
     * completes when the producer ends. The producer runs inside this task (same fiber and context):
     * no hand-off, and values that pass through synchronous stages cost no allocation of their own.
     * So {@code action} runs where the producer emits: on this task's scheduler, unless the producer
     * moves itself elsewhere ({@link Task#startOn}); actions for successive values never overlap and
     * each happens-before the next. If {@code action} throws, the producer is ended (its emit completes
     * cancelled, its cleanup runs) and the task fails with that error. Cancelling the task ends the
     * producer at its current wait, or at its next emit if it never waits.
     *
     * @param action called with each value
     * @return the task
     * @throws NullPointerException if {@code action} is null
     */
    public final Task<Void> forEach(Consumer<? super T> action) {
        Objects.requireNonNull(action, "action");
        return Task.context().flatMap(ctx -> {
            GeneratorStages.ActionSink<T> sink = new GeneratorStages.ActionSink<>(ctx.token(), action);
            Task<Void> run = start(this, sink);
            return run == DONE && !sink.run.failed() ? DONE : run.transform(sink.run::finish);
        });
    }

    /**
     * Returns a task that runs the producer and, for each value in order, runs the task {@code action}
     * returns and waits for it before the producer goes on (the asynchronous {@link #forEach}). A
     * failing action task (or a throwing {@code action}, or a null task) ends the producer and fails
     * the task with that error; a cancelled action task ends it cancelled.
     *
     * @param action returns the work for each value
     * @return the task
     * @throws NullPointerException if {@code action} is null
     */
    public final Task<Void> forEachTask(Function<? super T, ? extends Task<?>> action) {
        Objects.requireNonNull(action, "action");
        return Task.context().flatMap(ctx -> {
            GeneratorStages.TaskSink<T> sink = new GeneratorStages.TaskSink<>(ctx.token(), action);
            return start(this, sink).transform(sink.run::finish);
        });
    }

    /**
     * Returns a task that runs the producer to its end and completes with all its values, in order, in
     * a new mutable list.
     *
     * @return the task
     */
    public final Task<List<T>> toList() {
        return Task.defer(() -> {
            List<T> values = new ArrayList<>();
            return forEach(values::add).map(ignored -> values);
        });
    }

    /**
     * Returns a blocking iterator over a new consumption, for plain code: {@code hasNext()} waits (with
     * {@link Task#join()}, parking only a virtual thread on a virtual thread) until the producer emits
     * or ends. The producer runs on {@link Scheduler#inline()}: on the iterating thread, and, after a
     * wait of its own, on the thread that wakes it. Reaching the end, or an error, ends the
     * consumption. An iterator cannot be closed: to stop early and end the producer at once, use
     * {@link #stream()} in try-with-resources; a dropped iterator leaves its producer suspended at its
     * emit (holding no thread) until it is garbage. Not thread-safe.
     *
     * <p>The producer's error is thrown by {@code hasNext()} as {@link Task#join()} throws it; an
     * interrupt while waiting cancels the consumption and throws
     * {@link java.util.concurrent.CancellationException}. Like {@link Task#join()}, {@code hasNext()}
     * (and {@code next()}, {@code forEachRemaining}) refuse to block a thread that runs a Coro
     * scheduler's work (a pool worker, an event loop's thread): they throw
     * {@link IllegalStateException} at once, before pulling anything, and the iterator stays usable.
     *
     * @return the iterator
     */
    public final Iterator<T> iterator() {
        return new GeneratorIterator<>(this);
    }

    /**
     * Returns a sequential, ordered stream over a new consumption, for plain code; closing the stream
     * ends the producer (its cleanup runs). Pulling operations ({@code findFirst}, {@code limit},
     * {@code iterator}) wait value by value as {@link #iterator()} does; a stream consumed whole by
     * {@code forEach} (or any operation that takes every element) runs the producer like
     * {@link #forEach} inside one {@link Task#join()}. Use it in try-with-resources when it may stop
     * early.
     *
     * @return the stream
     */
    public final Stream<T> stream() {
        GeneratorIterator<T> it = new GeneratorIterator<>(this);
        return StreamSupport.stream(it, false).onClose(it::close);
    }

    /** The spliterator characteristics of {@link #stream()}. */
    static final int CHARACTERISTICS = Spliterator.ORDERED | Spliterator.NONNULL;

    /** The producer's context of a blocking consumption. */
    static Context blockingContext() {
        return Context.of(Scheduler.inline());
    }
}
