package dev.coro.redis;

import dev.coro.gate.Gate;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.sync.WaitingPrimitive;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * A capacity gate shared by every JVM that opens a gate of the same name on one Redis: at most
 * {@code capacity} operations admitted at once across all of them. The fleet-wide twin of
 * {@link dev.coro.gate.CapacityGate}, behind the same {@link Gate} interface: work enters with
 * {@link #within(Task)} and leaves when it completes, on every completion path, in whichever JVM it
 * runs. Waiting takes no thread.
 *
 * <p><b>Admission rule.</b> An operation is admitted while fewer than {@code capacity} live leases
 * are held in Redis under the gate's name. Every admission holds a <em>lease</em> that this gate
 * object renews while the work runs (one renewal loop per gate object, every third of the lease
 * time). A lease that is not renewed (its JVM died, was paused or cut off from Redis) expires after
 * {@linkplain Builder#leaseTime(Duration) the lease time} on Redis's clock, and its slot returns.
 *
 * <p><b>Fencing.</b> Every admission carries a fencing token ({@link #withinFenced(LongFunction)}):
 * a number that is higher for every later admission of the gate, across all JVMs. A resource that
 * remembers the highest token it has seen can refuse a holder whose lease has lapsed: its token is
 * lower than the one of the holder admitted in its place. The gate cannot stop a paused JVM from
 * acting on a lapsed lease by itself; the token is what lets the resource do it.
 *
 * <p><b>Lost lease.</b> When a renewal finds the lease gone (expired, because renewals did not reach
 * Redis in time), or no renewal has succeeded for a whole lease time, the admitted work's
 * cancellation token is cancelled: the work ends at its next wait, cooperatively.
 *
 * <p><b>Fairness.</b> FIFO across JVMs: a waiter that is not admitted at once takes a ticket and
 * joins a queue in Redis; a slot goes to the oldest ticket, and a newcomer takes a free slot only
 * when every queued waiter could have one too (no barging). Waiters are told of a release by a
 * Redis pub/sub message; if a message is lost, the next {@linkplain Builder#recheckInterval(Duration)
 * re-check} finds the free slot, so a lost message costs at most one interval. A waiter whose JVM
 * died is dropped from the queue when its place's lease lapses.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} admits only if a slot is free and no queued waiter is
 * owed one; otherwise it completes on the cancelled channel, without queueing and without running
 * the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter of this gate object on the cancelled
 * channel and every later acquisition cancelled without running its work; admitted work runs to its
 * end and releases its slot. The gate's connections close when the last of its admitted work has
 * left. Other gate objects of the same name are not affected.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and leaves nothing in Redis: its place in the queue is removed, and if the admission won
 * the race, its lease is released at once (the work does not run).
 *
 * <p><b>Redis out of reach.</b> Every round trip is bounded by
 * {@linkplain Builder#redisTimeout(Duration) the Redis timeout}: an acquisition that gets no answer
 * in time fails with {@link RedisGateException}, and so does a queued wait when a re-check or a
 * renewal made for it gets none (so within a third of the lease time plus the Redis timeout).
 * Whatever Redis kept of such a waiter expires with its lease. Admitted work whose renewals have
 * had no answer for a whole lease time is cancelled, as for a lost lease.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler, by submission; with a
 * scheduler that runs work on the waking thread (the inline scheduler, as {@link Task#start()}
 * uses), that is the Redis client's I/O thread: start gated work on a pool, or join it from a
 * (virtual) thread.
 *
 * <p><b>Nothing left behind.</b> Every key of the gate expires twice the lease time after its last
 * use, and the sorted sets vanish as soon as they are empty, so an idle gate leaves no key.
 *
 * <p><b>Safety argument and its assumptions.</b> Redis never holds more than {@code capacity} live
 * leases of a gate: each admission is decided by one script, atomically, on the server's clock. The
 * work of a lease runs in its JVM, which learns that the lease is gone at its next renewal (at most a
 * third of the lease time plus a round trip later) and then cancels the work, cooperatively. So the
 * operations running at one instant are at most {@code capacity}, plus those whose lease has lapsed
 * and that have not yet noticed or stopped: a holder paused (a long GC, SIGSTOP) or cut off past its
 * lease, one whose clock runs more than three times slower than the server's, one whose renewals
 * take more than two thirds of the lease time to arrive, or work that ignores cancellation. A
 * resource that needs the bound strictly checks fencing tokens. A Redis failover to a replica that
 * missed the last writes, or a restart without persistence, forgets leases: their holders learn it at
 * their next renewal and are cancelled, and until then the bound can be exceeded. Fencing tokens
 * are drawn from a counter that is never lower than the server's time in microseconds, so they keep
 * increasing after the counter's key expires with an idle gate or is lost in a restart, unless the
 * server's clock is set back.
 *
 * <p><b>Monitoring.</b> {@link #addListener(WaitListener)} reports each acquisition of this gate
 * object as the local gates do (so a metrics binder for any {@link WaitingPrimitive} takes it):
 * admitted, with the time it waited (0 when admitted at its first round trip); cancelled while it
 * waited (by its token or by {@link #close()}); timed out, when it failed with
 * {@link RedisGateException}. A refused try is not reported.
 *
 * <p><b>Bad input.</b> A null argument: {@link NullPointerException}; a capacity below 1, an empty
 * name or one with braces, a non-positive duration: {@link IllegalArgumentException}, naming the
 * argument and the rule.
 *
 * <p>Thread-safe: every method may be called from any thread.
 *
 * {@snippet :
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * try (RedisCapacityGate payments = RedisCapacityGate.open(client, "payments", 8)) {
 *     Task<Receipt> paid = payments.within(charge(order));           // at most 8 across the fleet
 *     Task<Void> written = payments.withinFenced(token -> store.write(entry, token));
 * }
 * }
 */
public final class RedisCapacityGate implements Gate {
    /* Rule: LeaseQueue (its implementation overview), one lane for the whole gate, of capacity
     * slots. */

    private final LeaseQueue queue;
    private final int capacity;
    private final Task<LeaseQueue.Waiter> enter;
    private final Task<LeaseQueue.Waiter> tryEnter;

    private RedisCapacityGate(LeaseQueue queue, int capacity) {
        this.queue = queue;
        this.capacity = capacity;
        this.enter = queue.door("", false);
        this.tryEnter = queue.door("", true);
    }

    /**
     * Opens a gate object with the default lease time (10 s), re-check interval (1 s) and Redis
     * timeout (5 s), connecting to the Redis of {@code client}'s default URI; blocks until connected
     * and subscribed. As {@code builder(client, name, capacity).open()}.
     *
     * @param client the Lettuce client; the gate opens its own two connections with it
     * @param name the gate's name: every gate object of this name on this Redis shares the capacity
     * @param capacity the most operations admitted at once across all of them
     * @return the open gate
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace, or {@code capacity < 1}
     * @throws RedisGateException if Redis cannot be reached within the Redis timeout
     */
    public static RedisCapacityGate open(RedisClient client, String name, int capacity) {
        return builder(client, name, capacity).open();
    }

    /**
     * Returns a builder for a gate object; see {@link #open(RedisClient, String, int)}.
     *
     * @param client the Lettuce client, whose default URI names the Redis
     * @param name the gate's name
     * @param capacity the most operations admitted at once across every gate object of this name
     * @return the builder
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace, or {@code capacity < 1}
     */
    public static Builder builder(RedisClient client, String name, int capacity) {
        return new Builder(client, name, capacity);
    }

    /**
     * The settings of a {@link RedisCapacityGate}: lease time, re-check interval, Redis timeout and
     * the scheduler of its timers. Not thread-safe; {@link #open()} may be called more than once,
     * each call opening a gate object of its own.
     */
    public static final class Builder {
        private final GateSettings settings;
        private final int capacity;

        private Builder(RedisClient client, String name, int capacity) {
            this.settings = new GateSettings(client, name);
            if (capacity < 1) {
                throw new IllegalArgumentException("capacity must be positive, got " + capacity);
            }
            this.capacity = capacity;
        }

        /**
         * Sets how long an admission's lease lasts without renewal (default 10 s): the time after
         * which the slot of a dead or cut-off holder returns. Renewals run every third of it.
         *
         * @param leaseTime the lease time, at least 30 ms
         * @return this builder
         * @throws NullPointerException if {@code leaseTime} is null
         * @throws IllegalArgumentException if {@code leaseTime} is shorter than 30 ms
         */
        public Builder leaseTime(Duration leaseTime) {
            settings.leaseTime(leaseTime);
            return this;
        }

        /**
         * Sets how often waiters re-check the gate without a notice (default 1 s): the most a lost
         * pub/sub message can delay an admission, and how soon the slot of an expired lease is seen.
         *
         * @param recheckInterval the interval, positive
         * @return this builder
         * @throws NullPointerException if {@code recheckInterval} is null
         * @throws IllegalArgumentException if {@code recheckInterval} is zero or negative
         */
        public Builder recheckInterval(Duration recheckInterval) {
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
        public Builder redisTimeout(Duration redisTimeout) {
            settings.redisTimeout(redisTimeout);
            return this;
        }

        /**
         * Sets the scheduler whose timers run the renewal and the re-check (default
         * {@link Scheduler#inline()}, whose timers fire on Coro's shared timer thread). The timer
         * actions only send commands; they never block.
         *
         * @param timers the scheduler
         * @return this builder
         * @throws NullPointerException if {@code timers} is null
         */
        public Builder timers(Scheduler timers) {
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
        public RedisCapacityGate open() {
            return new RedisCapacityGate(new LeaseQueue(settings, capacity, false), capacity);
        }
    }

    // ---------------------------------------------------------------- doors

    /**
     * Returns a task that waits for admission, runs {@code work}, and leaves the gate when
     * {@code work} completes on any channel. As {@link #withinFenced(LongFunction)} for work that
     * does not need the fencing token.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return withinFenced(token -> work);
    }

    /**
     * Returns a task that waits for admission (without a thread), then runs the task that
     * {@code work} makes of the admission's fencing token, and releases the slot when it completes
     * on any channel (value, error or cancellation). The task ends with the work's outcome once Redis
     * has taken the slot back, so an acquisition anywhere that starts after it ends can have the slot;
     * if Redis does not answer the release within the Redis timeout, the task ends anyway and the
     * lease expires by itself. Every run waits for its own admission.
     *
     * <p>The token is higher than that of every earlier admission of the gate, in any JVM; pass it
     * to the resource the gate protects, so it can refuse a holder whose lease has lapsed.
     *
     * <p>Cancellation: a run cancelled while it waits completes cancelled, {@code work} is not called,
     * and nothing of it stays in Redis. If its lease is lost while the work runs, the work's
     * cancellation token is cancelled. After {@link #close()} a run completes cancelled. A run whose
     * round trip to Redis fails or times out fails with {@link RedisGateException}.
     *
     * @param work makes the work from the fencing token
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null (a null task from it fails the run with
     *     {@link NullPointerException})
     */
    public <T> Task<T> withinFenced(LongFunction<? extends Task<T>> work) {
        Objects.requireNonNull(work, "work");
        return queue.run(enter, work);
    }

    /**
     * Returns a task that runs {@code work} under the gate only if a slot is free now and no queued
     * waiter is owed one; otherwise it completes on the cancelled channel without queueing and
     * without running {@code work}. One round trip either way. Admitted work leaves the gate on every
     * completion path, as with {@link #within(Task)}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return tryWithinFenced(token -> work);
    }

    /**
     * As {@link #tryWithin(Task)}, giving the work the admission's fencing token, as
     * {@link #withinFenced(LongFunction)} does.
     *
     * @param work makes the work from the fencing token
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithinFenced(LongFunction<? extends Task<T>> work) {
        Objects.requireNonNull(work, "work");
        return queue.run(tryEnter, work);
    }

    // ---------------------------------------------------------------- state

    /**
     * Closes this gate object: every waiter of it completes on the cancelled channel (its place in
     * Redis removed), and every later acquisition completes cancelled without running its work.
     * Admitted work runs to its end and releases its slot; once the last has, the gate's connections
     * and timers stop. Idempotent; never throws. Gate objects of the same name elsewhere are not
     * affected.
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
     * Returns the capacity this gate object admits against.
     *
     * @return the capacity
     */
    public int capacity() {
        return capacity;
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
     * Adds a listener told how each acquisition of this gate object ended: admitted (with the time
     * it waited, 0 when admitted at its first round trip), cancelled while waiting (by its token or
     * by {@link #close()}), or timed out (failed with {@link RedisGateException}). A refused try is
     * not reported. Acquisitions of other gate objects of the same name are theirs to report.
     * Listeners are called on the thread that ended the wait (often the Redis client's I/O thread):
     * they must be quick and must not block.
     *
     * {@snippet :
     * LongAdder outages = new LongAdder();
     * gate.addListener((outcome, waitedNanos) -> {
     *     if (outcome == WaitListener.Outcome.TIMED_OUT) {
     *         outages.increment();
     *     }
     * });
     * }
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    @Override
    public void addListener(WaitListener listener) {
        queue.addListener(listener);
    }

    /**
     * Returns how many acquisitions of this gate object wait in the Redis queue: a snapshot, which
     * may still count a waiter cancelled a moment ago. Waiters of other gate objects of the same name
     * are not counted.
     *
     * @return the waiters of this gate object
     */
    @Override
    public int queueLength() {
        return queue.queueLength();
    }

    @Override
    public String toString() {
        return "RedisCapacityGate[name=" + queue.name() + ", capacity=" + capacity + ", queued here="
                + queue.queueLength() + (queue.isClosed() ? ", closed]" : "]");
    }

    /**
     * Test hook: acts as a JVM that dies. Stops renewing and re-checking and drops both connections
     * at once, without releasing or cancelling anything; leases and places left in Redis expire.
     */
    void crash() {
        queue.crash();
    }
}
