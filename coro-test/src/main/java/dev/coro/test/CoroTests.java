package dev.coro.test;

import dev.coro.channel.Channel;
import dev.coro.channel.Generator;
import dev.coro.task.Task;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * Runs a task under test on virtual time, as kotlinx's {@code runTest} does: on a fresh
 * {@link VirtualTimeScheduler}, advancing the clock to the next timer whenever every task is waiting
 * on time, so a test of code that waits minutes takes microseconds. It fails the test, with the
 * pending work listed ({@link VirtualTimeScheduler#pendingWork()}), when the task can never finish
 * (it waits, nothing is queued and no timer is pending: a deadlock, or a wait on something outside
 * virtual time such as real I/O) and when work is still pending after the task completed (a timer
 * or a task leaked past the test).
 *
 * <p>Everything runs on the calling thread. Code under test must take its time and timers from the
 * scheduler it is given (a task's own waits do: {@code Task.delay} and the gates use the scheduler
 * the task runs on, or the one passed to them). It must not block that thread: a blocking door of
 * Coro ({@code Task.join()}, a gate's {@code call}, ...) called by the task fails at once with
 * {@link IllegalStateException} naming the scheduler (see {@link VirtualTimeScheduler}), which
 * {@code runTest} throws as the task's failure, instead of hanging the test.
 *
 * {@snippet :
 * int value = CoroTests.runTest(Task.delay(Duration.ofHours(1)).then(Task.value(42))); // at once
 *
 * long took = CoroTests.runTest(scheduler -> {
 *     RateGate rate = new RateGate(10, 1, scheduler);
 *     return Task.whenAll(List.of(rate.acquire(), rate.acquire(), rate.acquire()))
 *             .map(ignored -> scheduler.nanoTime());
 * }); // 200 ms of virtual time
 * }
 *
 * <p>{@link #verify(Generator)} and its overloads check a sequence step by step on virtual time (see
 * {@link SequenceVerifier}):
 *
 * {@snippet :
 * CoroTests.verify(Generator.range(1, 6)).expectNext(1, 2).expectNextCount(3).expectComplete();
 * }
 */
public final class CoroTests {
    /** The most timer steps one {@code runTest} takes before it fails (an endless loop of timers). */
    public static final int STEP_LIMIT = 1_000_000;

    private CoroTests() {}

    /**
     * Runs {@code task} on a fresh virtual-time scheduler until it completes; see the class comment.
     *
     * @param task the task under test
     * @param <T> its value type
     * @return its value
     * @throws AssertionError if it can never finish, if work is left pending after it, or after
     *     {@link #STEP_LIMIT} timer steps
     * @throws RuntimeException the task's failure (checked ones wrapped in
     *     {@link CompletionException}); {@link java.util.concurrent.CancellationException} if it
     *     completed cancelled
     * @throws NullPointerException if {@code task} is null
     */
    public static <T> T runTest(Task<T> task) {
        Objects.requireNonNull(task, "task");
        return runTest(scheduler -> task);
    }

    /**
     * Runs the task that {@code body} builds, given the virtual-time scheduler (for the gates, pools
     * and clocks the code under test takes), until it completes; see the class comment.
     *
     * @param body builds the task under test
     * @param <T> its value type
     * @return its value
     * @throws AssertionError if it can never finish, if work is left pending after it, or after
     *     {@link #STEP_LIMIT} timer steps
     * @throws RuntimeException the task's failure, as {@link #runTest(Task)}
     * @throws NullPointerException if {@code body} is null or returns null
     */
    public static <T> T runTest(Function<? super VirtualTimeScheduler, ? extends Task<T>> body) {
        Objects.requireNonNull(body, "body");
        VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
        Task<T> task = Objects.requireNonNull(body.apply(scheduler), "body returned null");
        CompletableFuture<T> result = task.startOn(scheduler).toCompletableFuture();
        for (int steps = 0; ; steps++) {
            scheduler.runUntilIdle();
            if (result.isDone()) {
                break;
            }
            if (scheduler.pendingTimers() == 0) {
                throw new AssertionError("runTest: the task waits, but nothing is queued and no timer is pending,"
                        + " so it can never finish (a deadlock, or a wait on something outside virtual time)\n"
                        + scheduler.pendingWork());
            }
            if (steps == STEP_LIMIT) {
                throw new AssertionError("runTest: " + STEP_LIMIT + " timer steps and the task has not finished"
                        + " (timers that keep rescheduling themselves?)\n" + scheduler.pendingWork());
            }
            scheduler.advanceTo(scheduler.nextDueTime());
        }
        assertNothingPending(scheduler, "runTest");
        try {
            return result.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    /**
     * Returns a verifier of {@code generator}'s values on a fresh virtual-time scheduler: each step
     * pulls from one consumption of the generator (opened now; its producer starts at the first step
     * that asks for a value, on that scheduler), and the terminal step also fails if work is left
     * pending on the scheduler. See {@link SequenceVerifier}.
     *
     * {@snippet :
     * Generator<String> retries = Generator.create(emitter -> emitter.emit("try")
     *         .then(Task.delay(Duration.ofSeconds(30))).then(emitter.emit("retry")));
     * Duration took = CoroTests.verify(retries)
     *         .expectNext("try")
     *         .expectNoEvent(Duration.ofSeconds(30))
     *         .expectNext("retry")
     *         .expectComplete();                      // 30 s of virtual time
     * }
     *
     * @param generator the sequence under test
     * @param <T> its element type
     * @return the verifier
     * @throws NullPointerException if {@code generator} is null
     */
    public static <T> SequenceVerifier<T> verify(Generator<T> generator) {
        Objects.requireNonNull(generator, "generator");
        return SequenceVerifier.of(VirtualTimeScheduler.create(), true, generator);
    }

    /**
     * Returns a verifier of {@code generator}'s values on {@code scheduler} (the one the code under
     * test takes its time and timers from, such as a {@link CoroTest}'s); the test owns the check for
     * work left on it. See {@link SequenceVerifier}.
     *
     * @param scheduler the virtual-time scheduler the producer runs on
     * @param generator the sequence under test
     * @param <T> its element type
     * @return the verifier
     * @throws NullPointerException if an argument is null
     */
    public static <T> SequenceVerifier<T> verify(VirtualTimeScheduler scheduler, Generator<T> generator) {
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(generator, "generator");
        return SequenceVerifier.of(scheduler, false, generator);
    }

    /**
     * Returns a verifier of the elements received from {@code channel}, whose senders run on
     * {@code scheduler}: each step receives (one receive at a time) while running the scheduler; the
     * end is the channel closed and drained, an error the cause it was closed with, and
     * {@link SequenceVerifier#thenCancel()} cancels the channel. The test owns the check for work left
     * on the scheduler. See {@link SequenceVerifier}.
     *
     * {@snippet :
     * Channel<Integer> channel = Channel.buffered(4);
     * Task.loop(1, n -> n <= 3, n -> Task.delay(Duration.ofSeconds(1)).then(channel.send(n)).map(x -> n + 1))
     *         .andFinally(channel::close)
     *         .start(scheduler);
     * CoroTests.verify(scheduler, channel).expectNext(1, 2, 3).expectComplete(); // 3 s
     * }
     *
     * @param scheduler the virtual-time scheduler the senders run on
     * @param channel the channel under test
     * @param <T> its element type
     * @return the verifier
     * @throws NullPointerException if an argument is null
     */
    public static <T> SequenceVerifier<T> verify(VirtualTimeScheduler scheduler, Channel<T> channel) {
        Objects.requireNonNull(scheduler, "scheduler");
        Objects.requireNonNull(channel, "channel");
        return SequenceVerifier.of(scheduler, channel);
    }

    /**
     * Runs what is queued on {@code scheduler}, then fails if a task is still queued or a timer
     * still pending: work that leaked past a test.
     *
     * @param scheduler the scheduler
     * @param who who asks, for the message
     * @throws AssertionError listing the pending work, if any
     */
    static void assertNothingPending(VirtualTimeScheduler scheduler, String who) {
        scheduler.runUntilIdle();
        if (scheduler.pendingTimers() > 0 || scheduler.queuedTasks() > 0) {
            throw new AssertionError(who + ": work is still pending after the test: it leaked past the test\n"
                    + scheduler.pendingWork());
        }
    }
}
