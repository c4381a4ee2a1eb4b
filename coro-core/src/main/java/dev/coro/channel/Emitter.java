package dev.coro.channel;

import dev.coro.task.Task;

/**
 * The producing side of one run of a {@link Generator} made by {@link Generator#create}: the body
 * hands each value to {@link #emit(Object)} and waits for the task it returns.
 *
 * <p><b>Demand.</b> {@code emit(v)} is lazy like every task: nothing happens until the returned task
 * runs. When it runs, it hands {@code v} to the consumer and completes when the consumer asks for the
 * next value (in {@link Generator#forEach}, once the consumer's action for {@code v} has returned; on
 * a {@link Cursor}, at the next {@link Cursor#next()}). So the producer never runs ahead of demand.
 *
 * <p><b>End of demand.</b> When the consumer wants no more values (its cursor was closed, its wait
 * cancelled, a {@link Generator#take} was satisfied, or the consumer's action failed), the emit task
 * completes on the <em>cancelled</em> channel, and so does every later emit of the run; the body
 * should let that cancellation end it (its {@code andFinally} cleanup runs). A body that swallows it
 * and goes on emitting only gets more cancelled emits; its values are dropped.
 *
 * <p><b>Cancel safety.</b> An emit task cancelled by the producer's own cancellation (a
 * {@code timeout} around it, a cancelled sibling in {@code whenAll}) may or may not have handed its
 * value over, as with any cancelled hand-off; the producer may go on and emit again, and the next
 * value then waits for the consumer's next request.
 *
 * <p><b>Thread-safety.</b> The emits of one run must run one after another: an emit that starts while
 * another of the same run is still pending fails with {@link IllegalStateException}, and so does an
 * emit that runs after the body's task has ended. The emitter is valid only for the run it was handed
 * to.
 *
 * {@snippet :
 * Generator<Integer> countdown = Generator.create(emitter ->
 *         Task.forRange(0, 3, i -> emitter.emit(3 - i)));          // 3, 2, 1
 * Generator<Long> powers = Generator.create(emitter ->          // a loop that carries its state
 *         Task.loop(1L, p -> p < 1_000, p -> emitter.emit(p).map(ignored -> p * 2)));
 * }
 *
 * @param <T> the element type
 */
public interface Emitter<T> {
    /**
     * Returns a task that hands {@code value} to the consumer and completes (with a null value) when
     * the consumer asks for the next value, or on the cancelled channel when it wants no more.
     *
     * @param value the value; elements are never null
     * @return the task
     * @throws NullPointerException if {@code value} is null (at once, when the task is built)
     */
    Task<Void> emit(T value);
}
