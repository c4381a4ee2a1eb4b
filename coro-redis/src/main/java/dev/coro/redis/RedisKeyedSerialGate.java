package dev.coro.redis;

import dev.coro.gate.KeyedGate;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.sync.WaitingPrimitive;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * A keyed serial gate shared by every JVM that opens a gate of the same name on one Redis: operations
 * with the same key run one at a time across all of them, in arrival order; operations with
 * different keys run concurrently. The fleet-wide twin of {@link dev.coro.gate.KeyedSerialGate},
 * behind the same {@link KeyedGate} interface: one writer per account, per document, per user,
 * across the fleet. Waiting takes no thread.
 *
 * <p><b>Keys.</b> A key is named in Redis by a function of the caller's
 * ({@linkplain Builder#keyName(Function) keyName}, default {@link String#valueOf(Object)}): two keys
 * are the same key when their names are equal, in any JVM, so the function must give different
 * names to keys that must not wait for each other, and the same name to a key in every JVM. Each key's
 * Redis keys carry the gate's name as a hash tag ({@code coro:gate:{name}:...}), so a Redis Cluster
 * keeps all the keys of one gate in one slot.
 *
 * <p><b>Admission rule.</b> An operation with key {@code k} is admitted when no live lease of
 * {@code k} is held in Redis. The admission is a lease that this gate object renews while the work
 * runs (one renewal loop per gate object, for all its keys together, every third of the lease time);
 * a lease that is not renewed expires after {@linkplain Builder#leaseTime(Duration) the lease time}
 * on Redis's clock and the key's next waiter is admitted. When a renewal finds the lease gone, the
 * work's cancellation token is cancelled.
 *
 * <p><b>Fencing.</b> Every admission carries a fencing token ({@link #withinFenced(Object,
 * LongFunction)}), higher than that of every earlier admission of the gate, whatever its key, in any
 * JVM: so higher than every earlier admission of the same key. The tokens are per gate, not per key,
 * because a per-key counter could only stay increasing by outliving its key's idle time (a key left
 * in Redis for every key ever used), while the gate's one counter is one key. What the token
 * guarantees, what it needs from the resource, and the assumptions of the lease are as for
 * {@link RedisSerialGate}, key by key.
 *
 * <p><b>Fairness.</b> FIFO per key across JVMs: each key with waiters has a queue in Redis; a
 * newcomer is admitted at once only when nobody waits for its key. Across keys nothing is ordered.
 * Waiters are told of a release by a message on the gate's one pub/sub channel (one channel per
 * gate, not per key: a gate object subscribes once, however many keys it uses, where a channel per
 * key would cost a subscription round trip per key and 100,000 subscriptions for 100,000 keys); the
 * message names the key's waiter that may go, so only its gate object asks Redis. A lost message
 * costs at most one {@linkplain Builder#recheckInterval(Duration) re-check interval}; a waiter whose
 * JVM died is dropped from its key's queue when its place's lease lapses.
 *
 * <p><b>State in Redis.</b> A key has state in Redis only while it has a holder or waiters: its
 * holder, queue and waiter sets are removed when they empty, so a key used once costs nothing
 * afterwards (and a key whose holder died expires twice the lease time after its last use). The
 * gate's counter expires twice the lease time after the last admission; an idle gate leaves no key.
 * Locally, a gate object keeps state for a key only while one of its operations holds or waits for it.
 *
 * <p><b>Try.</b> {@link #tryWithin(Object, Task)} admits only if the key is free and nobody waits
 * for it; otherwise it completes on the cancelled channel, without queueing and without running the
 * work.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter of this gate object, of every key, on the
 * cancelled channel, and every later acquisition cancelled without running its work; admitted work
 * runs to its end and releases its key. Gate objects of the same name elsewhere are not affected.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and leaves nothing in Redis: its place is removed, and if the admission won the race, the
 * key is released at once (the work does not run).
 *
 * <p><b>Redis out of reach.</b> Every round trip is bounded by
 * {@linkplain Builder#redisTimeout(Duration) the Redis timeout}: an acquisition that gets no answer
 * in time fails with {@link RedisGateException}, and so does a queued wait when a re-check or a
 * renewal made for it gets none. Admitted work whose renewals have had no answer for a whole lease
 * time is cancelled.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler, by submission; with the
 * inline scheduler, that is the Redis client's I/O thread: start gated work on a pool, or join it
 * from a (virtual) thread.
 *
 * <p><b>Cost.</b> Entering a free key costs one round trip (two after a wait), leaving one; a
 * release publishes only when the key has waiters. The renewal is one round trip per third of the
 * lease time for up to 256 keys held or waited for here; the re-check, one round trip per interval
 * for each key that has waiters here. It is {@link RedisCapacityGate}'s machinery with one lane of
 * capacity 1 per key.
 *
 * <p><b>Monitoring.</b> {@link #addListener(WaitListener)} reports each acquisition of this gate
 * object as the local gates do: admitted (with the time it waited), cancelled while waiting, or
 * timed out (failed with {@link RedisGateException}). A refused try is not reported.
 *
 * <p><b>Bad input.</b> A null argument, or a key whose name is null: {@link NullPointerException};
 * an empty name or one with braces, a non-positive duration: {@link IllegalArgumentException},
 * naming the argument and the rule.
 *
 * <p>Thread-safe: every method may be called from any thread.
 *
 * {@snippet :
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * try (RedisKeyedSerialGate<UUID> accounts = RedisKeyedSerialGate.open(client, "accounts")) {
 *     // one writer per account across the fleet; different accounts run at once
 *     Task<Void> debit = accounts.withinFenced(accountId, token -> ledger.debit(accountId, amount, token));
 * }
 * }
 *
 * @param <K> the key type
 */
public final class RedisKeyedSerialGate<K> implements KeyedGate<K>, WaitingPrimitive {
    /* Rule: LeaseQueue (its implementation overview), one lane of one slot per key, named by keyName. */

    private final LeaseQueue queue;
    private final Function<? super K, String> keyName;

    private RedisKeyedSerialGate(LeaseQueue queue, Function<? super K, String> keyName) {
        this.queue = queue;
        this.keyName = keyName;
    }

    /**
     * Opens a gate object whose keys are named by {@link String#valueOf(Object)}, with the default
     * lease time (10 s), re-check interval (1 s) and Redis timeout (5 s); blocks until connected and
     * subscribed. As {@code RedisKeyedSerialGate.<K>builder(client, name).open()}.
     *
     * @param client the Lettuce client; the gate opens its own two connections with it
     * @param name the gate's name: every gate object of this name on this Redis shares the keys
     * @param <K> the key type
     * @return the open gate
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace
     * @throws RedisGateException if Redis cannot be reached within the Redis timeout
     */
    public static <K> RedisKeyedSerialGate<K> open(RedisClient client, String name) {
        return RedisKeyedSerialGate.<K>builder(client, name).open();
    }

    /**
     * Returns a builder for a gate object; see {@link #open(RedisClient, String)}.
     *
     * @param client the Lettuce client, whose default URI names the Redis
     * @param name the gate's name
     * @param <K> the key type
     * @return the builder
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace
     */
    public static <K> Builder<K> builder(RedisClient client, String name) {
        return new Builder<>(client, name);
    }

    /**
     * The settings of a {@link RedisKeyedSerialGate}: how keys are named, lease time, re-check
     * interval, Redis timeout and the scheduler of its timers. Not thread-safe; {@link #open()} may
     * be called more than once, each call opening a gate object of its own.
     *
     * @param <K> the key type
     */
    public static final class Builder<K> {
        private final GateSettings settings;
        private Function<? super K, String> keyName = String::valueOf;

        private Builder(RedisClient client, String name) {
            this.settings = new GateSettings(client, name);
        }

        /**
         * Sets how a key is named in Redis (default {@link String#valueOf(Object)}). Keys with equal
         * names are the same key across the fleet, so the function must be the same in every JVM and
         * give different names to keys that must not wait for each other. It is called once per
         * {@code within}, on the caller's thread; it must not return null.
         *
         * @param keyName the function from a key to its name
         * @return this builder
         * @throws NullPointerException if {@code keyName} is null
         */
        public Builder<K> keyName(Function<? super K, String> keyName) {
            this.keyName = Objects.requireNonNull(keyName, "keyName");
            return this;
        }

        /**
         * Sets how long an admission's lease lasts without renewal (default 10 s): the time after
         * which a dead or cut-off holder's key passes on. Renewals run every third of it.
         *
         * @param leaseTime the lease time, at least 30 ms
         * @return this builder
         * @throws NullPointerException if {@code leaseTime} is null
         * @throws IllegalArgumentException if {@code leaseTime} is shorter than 30 ms
         */
        public Builder<K> leaseTime(Duration leaseTime) {
            settings.leaseTime(leaseTime);
            return this;
        }

        /**
         * Sets how often waiters re-check their keys without a notice (default 1 s): the most a lost
         * pub/sub message can delay an admission.
         *
         * @param recheckInterval the interval, positive
         * @return this builder
         * @throws NullPointerException if {@code recheckInterval} is null
         * @throws IllegalArgumentException if {@code recheckInterval} is zero or negative
         */
        public Builder<K> recheckInterval(Duration recheckInterval) {
            settings.recheckInterval(recheckInterval);
            return this;
        }

        /**
         * Sets how long a round trip to Redis may take before the operation fails with
         * {@link RedisGateException} (default 5 s).
         *
         * @param redisTimeout the timeout, positive
         * @return this builder
         * @throws NullPointerException if {@code redisTimeout} is null
         * @throws IllegalArgumentException if {@code redisTimeout} is zero or negative
         */
        public Builder<K> redisTimeout(Duration redisTimeout) {
            settings.redisTimeout(redisTimeout);
            return this;
        }

        /**
         * Sets the scheduler whose timers run the renewal and the re-check (default
         * {@link Scheduler#inline()}, whose timers fire on Coro's shared timer thread).
         *
         * @param timers the scheduler
         * @return this builder
         * @throws NullPointerException if {@code timers} is null
         */
        public Builder<K> timers(Scheduler timers) {
            settings.timers(timers);
            return this;
        }

        /**
         * Opens the gate object: connects (a command connection and a pub/sub connection), subscribes
         * to the gate's channel and starts its renewal and re-check timers. Blocks until subscribed.
         *
         * @return the open gate
         * @throws RedisGateException if Redis cannot be reached within the Redis timeout
         */
        public RedisKeyedSerialGate<K> open() {
            return new RedisKeyedSerialGate<>(new LeaseQueue(settings, 1, true), keyName);
        }
    }

    /**
     * Returns a task that waits for {@code key}'s turn, runs {@code work}, and releases the key when
     * {@code work} completes on any channel. As {@link #withinFenced(Object, LongFunction)} for work
     * that does not need the fencing token.
     *
     * @param key the key: operations with keys of the same name run one at a time, in arrival order
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null, or the key's name is null
     */
    @Override
    public <T> Task<T> within(K key, Task<T> work) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(work, "work");
        return withinFenced(key, token -> work);
    }

    /**
     * Returns a task that waits for {@code key}'s turn (without a thread), then runs the task that
     * {@code work} makes of the admission's fencing token, and releases the key when it completes on
     * any channel. The task ends with the work's outcome once Redis has taken the key back (or the
     * Redis timeout has passed: the lease then expires by itself). Every run waits for its own turn.
     *
     * <p>Cancellation: a run cancelled while it waits completes cancelled, {@code work} is not called,
     * and nothing of it stays in Redis. If its lease is lost while the work runs, the work's
     * cancellation token is cancelled. After {@link #close()} a run completes cancelled. A run whose
     * round trip to Redis fails or times out fails with {@link RedisGateException}.
     *
     * @param key the key
     * @param work makes the work from the fencing token
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null, or the key's name is null
     */
    public <T> Task<T> withinFenced(K key, LongFunction<? extends Task<T>> work) {
        String lane = nameOf(key);
        Objects.requireNonNull(work, "work");
        return queue.run(queue.door(lane, false), work);
    }

    /**
     * Returns a task that runs {@code work} with {@code key} only if the key is free now and nobody
     * waits for it; otherwise it completes on the cancelled channel without queueing and without
     * running {@code work}. One round trip either way.
     *
     * @param key the key
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null, or the key's name is null
     */
    @Override
    public <T> Task<T> tryWithin(K key, Task<T> work) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(work, "work");
        return tryWithinFenced(key, token -> work);
    }

    /**
     * As {@link #tryWithin(Object, Task)}, giving the work the admission's fencing token, as
     * {@link #withinFenced(Object, LongFunction)} does.
     *
     * @param key the key
     * @param work makes the work from the fencing token
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null, or the key's name is null
     */
    public <T> Task<T> tryWithinFenced(K key, LongFunction<? extends Task<T>> work) {
        String lane = nameOf(key);
        Objects.requireNonNull(work, "work");
        return queue.run(queue.door(lane, true), work);
    }

    private String nameOf(K key) {
        Objects.requireNonNull(key, "key");
        String name = keyName.apply(key);
        if (name == null) {
            throw new NullPointerException("keyName returned null for key " + key);
        }
        return name;
    }

    /**
     * Closes this gate object: every waiter of it, of every key, completes on the cancelled channel
     * (its place in Redis removed), and every later acquisition completes cancelled without running
     * its work. Admitted work runs to its end and releases its key; once the last has, the
     * connections and timers stop. Idempotent; never throws. Gate objects of the same name elsewhere
     * are not affected.
     */
    @Override
    public void close() {
        queue.close();
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    @Override
    public boolean isClosed() {
        return queue.isClosed();
    }

    /**
     * Returns the gate's name.
     *
     * @return the name
     */
    public String name() {
        return queue.name();
    }

    /**
     * Returns the lease time.
     *
     * @return the lease time
     */
    public Duration leaseTime() {
        return queue.leaseTime();
    }

    /**
     * Returns how many keys this gate object's operations hold or wait for: a snapshot for
     * monitoring. Keys used only by other gate objects of the same name are not counted.
     *
     * @return the keys in use here
     */
    public int activeKeys() {
        return queue.activeLanes();
    }

    /**
     * Adds a listener told how each acquisition of this gate object ended: admitted (with the time
     * it waited, 0 when admitted at its first round trip), cancelled while waiting, or timed out
     * (failed with {@link RedisGateException}). A refused try is not reported. Listeners are called
     * on the thread that ended the wait (often the Redis client's I/O thread): they must be quick and
     * must not block.
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    @Override
    public void addListener(WaitListener listener) {
        queue.addListener(listener);
    }

    /**
     * Returns how many acquisitions of this gate object wait in a key's Redis queue: a snapshot.
     * Waiters of other gate objects of the same name are not counted.
     *
     * @return the waiters of this gate object
     */
    @Override
    public int queueLength() {
        return queue.queueLength();
    }

    @Override
    public String toString() {
        return "RedisKeyedSerialGate[name=" + queue.name() + ", active keys here=" + queue.activeLanes()
                + ", queued here=" + queue.queueLength() + (queue.isClosed() ? ", closed]" : "]");
    }

    /** Test hook: acts as a JVM that dies (see {@link LeaseQueue#crash()}). */
    void crash() {
        queue.crash();
    }
}
