package dev.coro.test;

import dev.coro.channel.Channel;
import dev.coro.channel.Cursor;
import dev.coro.channel.Generator;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Step-by-step assertions on the values of a {@link Generator} or a {@link Channel}, run on virtual
 * time (what Reactor's {@code StepVerifier} and kotlinx's Turbine do for a {@code Flux} or a
 * {@code Flow}). Obtained from {@link CoroTests#verify(Generator)} and its overloads.
 *
 * <p><b>Each step runs when it is called.</b> An expectation asks for the next value (a
 * {@link Cursor#next()} of the generator, a {@link Channel#receive()} of the channel), runs the
 * scheduler's work and advances its clock from timer to timer until the value, the end or an error
 * comes, and checks it at once; so a failing step fails on its own line. The chain ends with a
 * terminal step ({@link #expectComplete()}, {@link #expectError(Class)},
 * {@link #expectErrorSatisfies(Consumer)}, {@link #thenCancel()}),
 * which returns the virtual time the whole verification took.
 *
 * <p><b>Demand.</b> A value is asked for only when a step needs one, one at a time, as a consumer
 * pulls: a generator's producer, which runs only on demand, stays where it is between steps (so
 * {@link #thenAwait(Duration)} moves the clock without running it), while a channel's senders, which
 * run by themselves on the scheduler, keep running.
 *
 * <p><b>Failures.</b> A step that does not get what it expects throws an {@link AssertionError} that
 * says what the step expected, what came instead (a value, the end, an error, or that the sequence
 * was cancelled), at which index (values are counted from 0) and at which virtual time. A sequence
 * that can never go on (it waits, nothing is queued on the scheduler and no timer is pending: a
 * deadlock, or a wait on something outside virtual time) fails the step with the pending work
 * listed, as {@link CoroTests#runTest(Task)} does, instead of hanging; so does one that takes more
 * than {@link CoroTests#STEP_LIMIT} timer steps to give the next signal. After a failure the
 * consumption is cancelled as by {@link #thenCancel()}.
 *
 * <p><b>The end.</b> With a scheduler of its own ({@link CoroTests#verify(Generator)}), the terminal
 * step also fails if work is still pending on it afterwards (a timer or a task the sequence leaked).
 * With a scheduler the test gives, the test owns that check ({@link CoroTest} does it). A chain
 * left without a terminal step makes no such check, and leaves a generator's producer suspended.
 *
 * <p><b>Threads.</b> Not thread-safe: call the steps from the test's thread, not from a task the
 * scheduler runs. Every step but the terminal ones returns this verifier; a step after a terminal
 * step (or after a failure) gets {@link IllegalStateException}.
 *
 * {@snippet :
 * Generator<Integer> ticks = Generator.create(emitter -> Task.forRange(1, 6,
 *         n -> Task.delay(Duration.ofSeconds(1)).then(emitter.emit(n))));
 * Duration took = CoroTests.verify(ticks)
 *         .expectNext(1, 2)                           // at 1 s and 2 s
 *         .expectNoEvent(Duration.ofMillis(999))      // value 3 is a second away
 *         .expectNextCount(3)                         // 3, 4, 5
 *         .expectComplete();                          // took: 5 s of virtual time, no real time
 * }
 *
 * @param <T> the element type
 */
public final class SequenceVerifier<T> {
    private final VirtualTimeScheduler scheduler;
    private final boolean ownScheduler;
    private final Supplier<Task<T>> pull;
    private final Runnable stop;
    private final long startNanos;
    /** The pull in flight, or null. */
    private TaskHandle<Signal<T>> pending;
    /** How many values have come so far: the index of the next one. */
    private long index;
    private boolean ended;
    /** How many timer steps one step may take before it fails; {@link CoroTests#STEP_LIMIT} but in tests. */
    private int stepLimit = CoroTests.STEP_LIMIT;

    /** What one pull gave, and when. */
    private record Signal<T>(Outcome<T> outcome, long atNanos) {}

    private SequenceVerifier(VirtualTimeScheduler scheduler, boolean ownScheduler, Supplier<Task<T>> pull,
            Runnable stop) {
        this.scheduler = scheduler;
        this.ownScheduler = ownScheduler;
        this.pull = pull;
        this.stop = stop;
        this.startNanos = scheduler.nanoTime();
    }

    static <T> SequenceVerifier<T> of(VirtualTimeScheduler scheduler, boolean ownScheduler, Generator<T> generator) {
        Cursor<T> cursor = generator.open();
        return new SequenceVerifier<>(scheduler, ownScheduler, cursor::next, cursor::close);
    }

    static <T> SequenceVerifier<T> of(VirtualTimeScheduler scheduler, Channel<T> channel) {
        return new SequenceVerifier<>(scheduler, false, channel::receive, channel::cancel);
    }

    /** Lowers the step limit, for this module's own test of it. */
    SequenceVerifier<T> withStepLimit(int limit) {
        this.stepLimit = limit;
        return this;
    }

    // ---------------------------------------------------------------- steps

    /**
     * Expects the next values to be {@code values}, in order (compared with {@code equals}).
     *
     * @param values the expected values
     * @return this verifier
     * @throws AssertionError if another value, the end, an error or a cancellation comes instead, or
     *     if the sequence can never go on
     * @throws NullPointerException if {@code values} or one of them is null (values are never null)
     * @throws IllegalStateException after a terminal step
     */
    @SafeVarargs
    public final SequenceVerifier<T> expectNext(T... values) {
        Objects.requireNonNull(values, "values");
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                throw new NullPointerException("values[" + i + "] is null; sequence values are never null");
            }
        }
        checkOpen();
        for (T expected : values) {
            String step = "expectNext";
            Signal<T> s = await(step, "expected <" + expected + ">");
            T actual = valueOrFail(step, "expected <" + expected + ">", s);
            if (!expected.equals(actual)) {
                throw fail(step, s, "expected <" + expected + "> but got <" + actual + ">", null);
            }
            index++;
        }
        return this;
    }

    /**
     * Expects {@code count} more values, whatever they are.
     *
     * @param count how many values, at least zero
     * @return this verifier
     * @throws AssertionError if the end, an error or a cancellation comes before them, or if the
     *     sequence can never go on
     * @throws IllegalArgumentException if {@code count} is negative
     * @throws IllegalStateException after a terminal step
     */
    public SequenceVerifier<T> expectNextCount(long count) {
        if (count < 0) {
            throw new IllegalArgumentException("count must be >= 0, was " + count);
        }
        checkOpen();
        for (long i = 0; i < count; i++) {
            String step = "expectNextCount(" + count + ")";
            String expected = "expected value " + (i + 1) + " of " + count;
            valueOrFail(step, expected, await(step, expected));
            index++;
        }
        return this;
    }

    /**
     * Expects a next value and runs {@code assertion} on it (which fails by throwing an
     * {@link AssertionError}, as JUnit's assertions do).
     *
     * {@snippet :
     * CoroTests.verify(orders).assertNext(order -> assertEquals("acme", order.customer())).thenCancel();
     * }
     *
     * @param assertion the checks on the value
     * @return this verifier
     * @throws AssertionError if no value comes (as {@link #expectNext}), or the assertion's failure,
     *     with the index and time added to its message (the original as the cause)
     * @throws NullPointerException if {@code assertion} is null
     * @throws IllegalStateException after a terminal step
     */
    public SequenceVerifier<T> assertNext(Consumer<? super T> assertion) {
        Objects.requireNonNull(assertion, "assertion");
        checkOpen();
        String step = "assertNext";
        Signal<T> s = await(step, "expected a value");
        T actual = valueOrFail(step, "expected a value", s);
        try {
            assertion.accept(actual);
        } catch (AssertionError e) {
            throw fail(step, s, "<" + actual + "> failed the assertion: " + e.getMessage(), e);
        }
        index++;
        return this;
    }

    /**
     * Expects nothing (no value, no end, no error) for {@code duration} of virtual time from now; a
     * signal exactly at its end is allowed (so {@code expectNoEvent(d)} then {@code expectNext(v)}
     * checks that {@code v} comes {@code d} from now). This step asks for the next value and keeps
     * that request for the next step.
     *
     * @param duration how long nothing may come
     * @return this verifier
     * @throws AssertionError if a signal comes before {@code duration} has passed
     * @throws NullPointerException if {@code duration} is null
     * @throws IllegalArgumentException if {@code duration} is negative
     * @throws IllegalStateException after a terminal step
     */
    public SequenceVerifier<T> expectNoEvent(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("duration must be >= 0, was " + duration);
        }
        checkOpen();
        if (duration.isZero()) {
            return this;
        }
        long target = Math.addExact(scheduler.nanoTime(), duration.toNanos());
        startPull();
        scheduler.advanceTo(target - 1);
        if (pending.isDone()) {
            Signal<T> s = pending.join();
            pending = null;
            throw fail("expectNoEvent(" + duration + ")", s, "expected nothing until " + time(target)
                    + " but got " + describe(s.outcome()), failure(s.outcome()));
        }
        scheduler.advanceTo(target);
        return this;
    }

    /**
     * Moves the virtual clock forward by {@code duration}, running what falls due on the way, without
     * asking for a value (a request already made by {@link #expectNoEvent} stays).
     *
     * @param duration how far to move the clock
     * @return this verifier
     * @throws NullPointerException if {@code duration} is null
     * @throws IllegalArgumentException if {@code duration} is negative
     * @throws IllegalStateException after a terminal step
     */
    public SequenceVerifier<T> thenAwait(Duration duration) {
        Objects.requireNonNull(duration, "duration");
        if (duration.isNegative()) {
            throw new IllegalArgumentException("duration must be >= 0, was " + duration);
        }
        checkOpen();
        scheduler.advanceBy(duration);
        return this;
    }

    // ---------------------------------------------------------------- terminal steps

    /**
     * Expects the end: the generator's producer ended, or the channel is closed and drained.
     *
     * @return the virtual time from the verifier's creation to the end
     * @throws AssertionError if a value, an error or a cancellation comes instead, if the sequence
     *     can never go on, or if work is left pending on a scheduler of the verifier's own
     * @throws IllegalStateException after a terminal step
     */
    public Duration expectComplete() {
        checkOpen();
        String step = "expectComplete";
        Signal<T> s = await(step, "expected the end");
        if (!(s.outcome() instanceof Outcome.Value<T> v) || v.value() != null) {
            throw fail(step, s, "expected the end but got " + describe(s.outcome()), failure(s.outcome()));
        }
        return finish();
    }

    /**
     * Expects the sequence to fail with an error of type {@code type} (the producer's error, or the
     * cause a channel was closed with), as itself; a sequence that ends cancelled matches
     * {@code expectError(CancellationException.class)}.
     *
     * @param type the expected type of the error (or a supertype)
     * @return the virtual time from the verifier's creation to the error
     * @throws AssertionError if a value, the end, another error or a cancellation comes instead
     *     (another error is the cause), if the sequence can never go on, or if work is left pending on
     *     a scheduler of the verifier's own
     * @throws NullPointerException if {@code type} is null
     * @throws IllegalStateException after a terminal step
     */
    public Duration expectError(Class<? extends Throwable> type) {
        Objects.requireNonNull(type, "type");
        checkOpen();
        String step = "expectError(" + type.getSimpleName() + ")";
        String expected = "expected an error of type " + type.getName();
        Signal<T> s = await(step, expected);
        boolean matches = switch (s.outcome()) {
            case Outcome.Failure<T> f -> type.isInstance(f.error());
            case Outcome.Cancelled<T> c -> type == CancellationException.class;
            case Outcome.Value<T> v -> false;
        };
        if (!matches) {
            throw fail(step, s, expected + " but got " + describe(s.outcome()), failure(s.outcome()));
        }
        return finish();
    }

    /**
     * Expects the sequence to fail, and runs {@code assertion} on the error (the producer's error or
     * the channel's closing cause, as itself; a {@link CancellationException} if the sequence ends
     * cancelled), for checks that a type cannot make: its identity, its message, its cause.
     *
     * {@snippet :
     * CoroTests.verify(scheduler, channel).expectNext(1).expectErrorSatisfies(e -> assertSame(cause, e));
     * }
     *
     * @param assertion the checks on the error, failing by throwing an {@link AssertionError}
     * @return the virtual time from the verifier's creation to the error
     * @throws AssertionError if a value or the end comes instead, if the sequence can never go on, the
     *     assertion's failure with the index and time added to its message (the original as the
     *     cause), or if work is left pending on a scheduler of the verifier's own
     * @throws NullPointerException if {@code assertion} is null
     * @throws IllegalStateException after a terminal step
     */
    public Duration expectErrorSatisfies(Consumer<? super Throwable> assertion) {
        Objects.requireNonNull(assertion, "assertion");
        checkOpen();
        String step = "expectErrorSatisfies";
        Signal<T> s = await(step, "expected an error");
        Throwable error = switch (s.outcome()) {
            case Outcome.Failure<T> f -> f.error();
            case Outcome.Cancelled<T> c -> new CancellationException("the sequence was cancelled");
            case Outcome.Value<T> v -> throw fail(step, s, "expected an error but got " + describe(v), null);
        };
        try {
            assertion.accept(error);
        } catch (AssertionError e) {
            throw fail(step, s, "the error " + error + " failed the assertion: " + e.getMessage(), e);
        }
        return finish();
    }

    /**
     * Stops consuming, as a consumer that is done early: a generator's cursor is closed (its producer
     * is cancelled at its current wait and its cleanup runs now, on the scheduler), a channel is
     * {@linkplain Channel#cancel() cancelled} (its senders see it end; its elements are dropped).
     *
     * @return the virtual time from the verifier's creation to now
     * @throws AssertionError if work is left pending on a scheduler of the verifier's own
     * @throws IllegalStateException after a terminal step
     */
    public Duration thenCancel() {
        checkOpen();
        cancel();
        return finish();
    }

    // ---------------------------------------------------------------- running

    private void checkOpen() {
        if (ended) {
            throw new IllegalStateException("this verifier has ended (a terminal step ran, or a step failed)");
        }
    }

    private void startPull() {
        if (pending == null) {
            pending = pull.get().outcome().map(o -> new Signal<>(o, scheduler.nanoTime())).start(scheduler);
        }
    }

    /** Runs the scheduler, timer after timer, until the pull in flight gives its signal. */
    private Signal<T> await(String step, String expected) {
        startPull();
        for (int steps = 0; ; steps++) {
            scheduler.runUntilIdle();
            if (pending.isDone()) {
                break;
            }
            if (scheduler.pendingTimers() == 0) {
                throw fail(step, null, expected + " but the sequence waits, nothing is queued and no timer is pending,"
                        + " so it can never go on (a deadlock, or a wait on something outside virtual time)\n"
                        + scheduler.pendingWork(), null);
            }
            if (steps == stepLimit) {
                throw fail(step, null, expected + " but " + stepLimit + " timer steps went by without a"
                        + " signal (timers that keep rescheduling themselves?)\n" + scheduler.pendingWork(), null);
            }
            scheduler.advanceTo(scheduler.nextDueTime());
        }
        Signal<T> s = pending.join();
        pending = null;
        return s;
    }

    /** The value of {@code s}, or the failure of the step. */
    private T valueOrFail(String step, String expected, Signal<T> s) {
        if (s.outcome() instanceof Outcome.Value<T> v && v.value() != null) {
            return v.value();
        }
        throw fail(step, s, expected + " but got " + describe(s.outcome()), failure(s.outcome()));
    }

    /** Ends the verification: cancels the consumption, then fails with the message. */
    private AssertionError fail(String step, Signal<T> s, String what, Throwable cause) {
        long at = s != null ? s.atNanos() : scheduler.nanoTime();
        AssertionError e = new AssertionError(step + ": at index " + index + ", virtual time " + time(at) + ": " + what, cause);
        try {
            cancel();
        } catch (RuntimeException | Error cleanup) { // the assertion is the news; keep the rest attached
            e.addSuppressed(cleanup);
        }
        return e;
    }

    private void cancel() {
        ended = true;
        if (pending != null) {
            pending.cancel();
            pending = null;
        }
        stop.run();
        scheduler.runUntilIdle(); // the producer's cleanup
    }

    private Duration finish() {
        ended = true;
        if (ownScheduler) {
            CoroTests.assertNothingPending(scheduler, "verify");
        }
        return Duration.ofNanos(scheduler.nanoTime() - startNanos);
    }

    private static String time(long nanos) {
        return Duration.ofNanos(nanos).toString();
    }

    private static String describe(Outcome<?> o) {
        return switch (o) {
            case Outcome.Value<?> v -> v.value() == null ? "the end (the sequence completed)" : "<" + v.value() + ">";
            case Outcome.Failure<?> f -> "the error " + f.error();
            case Outcome.Cancelled<?> c -> "a cancellation (the sequence was cancelled)";
        };
    }

    private static Throwable failure(Outcome<?> o) {
        return o instanceof Outcome.Failure<?> f ? f.error() : null;
    }

    /**
     * Describes the verifier's place: the next index and the virtual time.
     *
     * @return a string such as {@code SequenceVerifier[index=2, now=PT1S]}
     */
    @Override
    public String toString() {
        return "SequenceVerifier[index=" + index + ", now=" + time(scheduler.nanoTime()) + (ended ? ", ended" : "") + "]";
    }
}
