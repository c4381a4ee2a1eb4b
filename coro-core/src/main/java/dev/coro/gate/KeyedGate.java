package dev.coro.gate;

import dev.coro.task.Task;

/**
 * A gate whose door takes a key: {@code within(key, task)}. The keyed twin of {@link Gate}, shared by
 * {@link KeyedSerialGate} and its fleet-wide twin on Redis ({@code RedisKeyedSerialGate} in the
 * {@code coro-redis} module), so that moving from one JVM to many is a constructor change.
 *
 * {@snippet :
 * KeyedGate<String> accounts = new KeyedSerialGate<>();                       // one writer per account, here
 * // becomes
 * KeyedGate<String> accounts = RedisKeyedSerialGate.open(client, "accounts");  // ... across the fleet
 *
 * Task<Void> debit = accounts.within(accountId, ledger.debit(accountId, amount));
 * }
 *
 * <p><b>The contract every implementation keeps.</b> How keys are compared and what each key admits
 * is the gate's rule, which its javadoc states; otherwise the contract of {@link Gate} holds, per
 * key: admitted work leaves on every completion path; {@link #tryWithin(Object, Task)} never waits
 * and completes on the cancelled channel when not admitted at once; a cancelled waiter completes on
 * the cancelled channel, its work not run, holding nothing; {@link #close()} completes every waiter
 * of every key on the cancelled channel and every later acquisition cancelled, and lets admitted
 * work run to its end.
 *
 * <p>Bad input: a null key or work is a {@link NullPointerException} naming the argument.
 *
 * <p>Implementations are thread-safe: every method may be called from any thread.
 *
 * @param <K> the key type
 */
public interface KeyedGate<K> extends AutoCloseable {
    /**
     * Returns a task that waits for admission with {@code key} (without a thread), runs
     * {@code work}, and leaves when {@code work} completes on any channel. It ends with
     * {@code work}'s outcome, or completes cancelled without running {@code work} if its wait is
     * cancelled or the gate is closed.
     *
     * @param key the key
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null
     */
    <T> Task<T> within(K key, Task<T> work);

    /**
     * Returns a task that runs {@code work} with {@code key} only if the gate admits it at once;
     * otherwise the task completes on the cancelled channel, without queueing and without running
     * {@code work}.
     *
     * @param key the key
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null
     */
    <T> Task<T> tryWithin(K key, Task<T> work);

    /**
     * Closes the gate: every waiter of every key completes on the cancelled channel, and every later
     * acquisition completes cancelled without running its work. Admitted work runs to its end and
     * leaves as usual. Idempotent; never throws.
     */
    @Override
    void close();

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    boolean isClosed();
}
