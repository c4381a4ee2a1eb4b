package dev.coro.gate;

import dev.coro.sync.WaitingPrimitive;
import dev.coro.task.Task;

/**
 * A gate whose door is {@code within(task)}: the one shape that the local gates of one kind of entry
 * ({@link CapacityGate}, {@link SerialGate}, {@link RateGate}, {@link ThrottleGate},
 * {@link BackpressureGate}, ...) and their fleet-wide twins on Redis ({@code RedisCapacityGate},
 * {@code RedisSerialGate}, {@code RedisRateGate} in the {@code coro-redis} module) share. Code written
 * against {@code Gate} does not care whether the limit holds in one JVM or across many: moving from
 * one to the other is a constructor change.
 *
 * {@snippet :
 * Gate payments = new CapacityGate(8);                              // at most 8 in this JVM
 * // becomes
 * Gate payments = RedisCapacityGate.open(client, "payments", 8);    // at most 8 across the fleet
 *
 * Task<Receipt> paid = payments.within(charge(order));              // the same code either way
 * }
 *
 * <p><b>The contract every implementation keeps.</b> Who is admitted, in what order and at what
 * cost is each gate's rule, which its javadoc states; what follows holds for all of them.
 * <ul>
 *   <li><b>Leaving is structural.</b> Work admitted by {@link #within(Task)} or
 *       {@link #tryWithin(Task)} leaves the gate when it completes, on every completion path: value,
 *       error or cancellation. There is no separate release to forget. (A gate whose rule spends what
 *       it admits, such as a rate, gives nothing back when the work leaves.)</li>
 *   <li><b>Waiting takes no thread.</b> The returned task is a description: each start waits for
 *       its own admission.</li>
 *   <li><b>Try never waits.</b> {@link #tryWithin(Task)} runs the work only if the gate admits it
 *       at once; otherwise the task completes on the cancelled channel, without queueing and without
 *       running the work.</li>
 *   <li><b>A cancelled waiter leaves nothing.</b> A run cancelled while it waits completes on the
 *       cancelled channel, its work is not run, and it holds nothing: its place is given up. If the
 *       admission won the race against the cancellation, nothing is lost either: the admission is
 *       given back at once, or the work starts with the cancellation already signalled and leaves
 *       the gate when it ends, as admitted work always does.</li>
 *   <li><b>Close resolves every waiter.</b> {@link #close()} completes every waiter of this gate
 *       object on the cancelled channel and every later acquisition cancelled without running its
 *       work; admitted work is not interrupted and leaves as usual. Idempotent; never throws.</li>
 * </ul>
 *
 * <p>Bad input: a null work is a {@link NullPointerException} naming {@code work}.
 *
 * <p>Implementations are thread-safe: every method may be called from any thread.
 */
public interface Gate extends WaitingPrimitive, AutoCloseable {
    /**
     * Returns a task that waits for admission (without a thread), runs {@code work}, and leaves the
     * gate when {@code work} completes on any channel. It ends with {@code work}'s outcome, or
     * completes cancelled without running {@code work} if its wait is cancelled or the gate is
     * closed. An implementation may add its own way of failing (a gate on a remote store fails when
     * the store cannot be reached), which its javadoc states.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    <T> Task<T> within(Task<T> work);

    /**
     * Returns a task that runs {@code work} under the gate only if the gate admits it at once;
     * otherwise the task completes on the cancelled channel, without queueing and without running
     * {@code work}. Admitted work leaves the gate on every completion path, as with
     * {@link #within(Task)}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    <T> Task<T> tryWithin(Task<T> work);

    /**
     * Closes the gate: every waiter completes on the cancelled channel, and every later acquisition
     * completes cancelled without running its work. Admitted work runs to its end and leaves as
     * usual. Idempotent; never throws.
     */
    @Override
    void close();

    /**
     * Returns whether {@link #close()} has been called (or the gate's rule closed it).
     *
     * @return whether closed
     */
    boolean isClosed();
}
