package dev.coro.redis;

import dev.coro.gate.Gate;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongFunction;

/**
 * A serial gate shared by every JVM that opens a gate of the same name on one Redis: one operation
 * admitted at a time across all of them, in arrival order, each with a fencing token. The fleet-wide
 * twin of {@link dev.coro.gate.SerialGate}, behind the same {@link Gate} interface: work enters with
 * {@link #within(Task)} or {@link #withinFenced(LongFunction)} and leaves when it completes, on every
 * completion path, in whichever JVM it runs. Waiting takes no thread.
 *
 * <p><b>Admission rule.</b> An operation is admitted when no live lease of the gate is held in
 * Redis. The admission is a <em>lease</em> that this gate object renews while the work runs (one
 * renewal loop per gate object, every third of the lease time); a lease that is not renewed (its JVM
 * died, was paused or cut off from Redis) expires after {@linkplain Builder#leaseTime(Duration) the
 * lease time} on Redis's clock, and the next waiter is admitted. When a renewal finds the lease gone,
 * or no renewal has succeeded for a whole lease time, the work's cancellation token is cancelled.
 *
 * <p><b>Fencing, and what it needs from the resource.</b> Every admission carries a fencing token
 * ({@link #withinFenced(LongFunction)}), higher than the token of every earlier admission of the
 * gate, in any JVM. A lease alone cannot stop a holder that was paused (a long GC, SIGSTOP, a slow
 * network) past its lease from acting when it wakes, after the next holder was admitted: two holders
 * then act at once, and nothing the gate does in the paused JVM can prevent it. The token can: a
 * resource that keeps the highest token it has accepted, and refuses a request whose token is lower,
 * in the same atomic step as the request's effect (a conditional write such as
 * {@code UPDATE ... WHERE fence < :token}, a compare-and-set, a check inside the store's
 * transaction), never applies the late holder's request after it has applied one of a later holder.
 * So, with such a resource, the effects are ordered as the admissions are, whatever pauses, clock
 * drift or message delays do. Without a fenced resource the gate gives mutual exclusion only under
 * the assumptions below.
 *
 * <p><b>Safety argument and its assumptions.</b> Redis never holds two live leases of the gate:
 * each admission is decided by one script, atomically, on the server's clock. The holder's JVM
 * learns that its lease is gone at its next renewal (at most a third of the lease time plus a round
 * trip later) and then cancels the work, cooperatively. So at most one operation runs at an instant,
 * unless a holder's lease lapsed and it has not yet noticed or stopped: a holder paused or cut off
 * past its lease, one whose clock runs more than three times slower than the server's, one whose
 * renewals take more than two thirds of the lease time to arrive, or work that ignores cancellation.
 * A Redis failover to a replica that missed the last writes, or a restart without persistence,
 * forgets the lease: its holder learns it at its next renewal and is cancelled, and until then two
 * holders can run. Fencing tokens are drawn from a counter that is never lower than the server's time
 * in microseconds, so they keep increasing after the counter expires with an idle gate or is lost in
 * a restart, unless the server's clock is set back (or a failover lands on a server whose clock is
 * behind by more than the time since the last admission).
 *
 * <p><b>Fairness.</b> FIFO across JVMs: a waiter that is not admitted at once takes a ticket in a
 * queue in Redis, and the gate goes to the oldest ticket; a newcomer is admitted at once only when
 * nobody waits. Waiters are told of a release by a Redis pub/sub message; a lost message costs at
 * most one {@linkplain Builder#recheckInterval(Duration) re-check interval}. A waiter whose JVM died
 * is dropped from the queue when its place's lease lapses.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} admits only if the gate is free and nobody waits;
 * otherwise it completes on the cancelled channel, without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter of this gate object on the cancelled
 * channel and every later acquisition cancelled without running its work; admitted work runs to its
 * end and releases the gate. The connections close when the last admitted work has left. Gate
 * objects of the same name elsewhere are not affected.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and leaves nothing in Redis: its place is removed, and if the admission won the race, the
 * lease is released at once (the work does not run).
 *
 * <p><b>Redis out of reach.</b> Every round trip is bounded by
 * {@linkplain Builder#redisTimeout(Duration) the Redis timeout}: an acquisition that gets no answer
 * in time fails with {@link RedisGateException}, and so does a queued wait when a re-check or a
 * renewal made for it gets none. Admitted work whose renewals have had no answer for a whole lease
 * time is cancelled, as for a lost lease.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler, by submission; with a
 * scheduler that runs work on the waking thread (the inline scheduler, as {@link Task#start()}
 * uses), that is the Redis client's I/O thread: start gated work on a pool, or join it from a
 * (virtual) thread.
 *
 * <p><b>Cost and state.</b> Entering costs one round trip when the gate is free (two after a wait),
 * leaving one. The gate is {@link RedisCapacityGate}'s machinery with a capacity of 1: a dedicated
 * lock script (SET NX PX) would cost the same round trips and would still need the queue for FIFO
 * order and for skipping dead waiters. Its keys are those of a capacity gate of the same name; every
 * key expires twice the lease time after its last use, so an idle gate leaves no key.
 *
 * <p><b>Monitoring.</b> {@link #addListener(WaitListener)} reports each acquisition of this gate
 * object as the local gates do: admitted (with the time it waited), cancelled while waiting, or
 * timed out (failed with {@link RedisGateException}). A refused try is not reported.
 *
 * <p><b>Bad input.</b> A null argument: {@link NullPointerException}; an empty name or one with
 * braces, a non-positive duration: {@link IllegalArgumentException}, naming the argument and the
 * rule.
 *
 * <p>Thread-safe: every method may be called from any thread.
 *
 * {@snippet :
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * try (RedisSerialGate ledger = RedisSerialGate.open(client, "ledger")) {
 *     // one writer at a time across the fleet; the store refuses a token lower than the last it took
 *     Task<Void> written = ledger.withinFenced(token -> store.writeIfNewer(entry, token));
 * }
 * }
 */
public final class RedisSerialGate implements Gate {
    /* Rule: LeaseQueue (its implementation overview), one lane for the whole gate, of one slot. */

    private final LeaseQueue queue;
    private final Task<LeaseQueue.Waiter> enter;
    private final Task<LeaseQueue.Waiter> tryEnter;

    private RedisSerialGate(LeaseQueue queue) {
        this.queue = queue;
        this.enter = queue.door("", false);
        this.tryEnter = queue.door("", true);
    }

    /**
     * Opens a gate object with the default lease time (10 s), re-check interval (1 s) and Redis
     * timeout (5 s), connecting to the Redis of {@code client}'s default URI; blocks until connected
     * and subscribed. As {@code builder(client, name).open()}.
     *
     * @param client the Lettuce client; the gate opens its own two connections with it
     * @param name the gate's name: every gate object of this name on this Redis admits one at a time
     * @return the open gate
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace
     * @throws RedisGateException if Redis cannot be reached within the Redis timeout
     */
    public static RedisSerialGate open(RedisClient client, String name) {
        return builder(client, name).open();
    }

    /**
     * Returns a builder for a gate object; see {@link #open(RedisClient, String)}.
     *
     * @param client the Lettuce client, whose default URI names the Redis
     * @param name the gate's name
     * @return the builder
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace
     */
    public static Builder builder(RedisClient client, String name) {
        return new Builder(client, name);
    }

    /**
     * The settings of a {@link RedisSerialGate}: lease time, re-check interval, Redis timeout and the
     * scheduler of its timers. Not thread-safe; {@link #open()} may be called more than once, each
     * call opening a gate object of its own.
     */
    public static final class Builder {
        private final GateSettings settings;

        private Builder(RedisClient client, String name) {
            this.settings = new GateSettings(client, name);
        }

        /**
         * Sets how long an admission's lease lasts without renewal (default 10 s): the time after
         * which a dead or cut-off holder's turn passes on. Renewals run every third of it.
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
         * pub/sub message can delay an admission.
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
         * {@link Scheduler#inline()}, whose timers fire on Coro's shared timer thread).
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
        public RedisSerialGate open() {
            return new RedisSerialGate(new LeaseQueue(settings, 1, false));
        }
    }

    /**
     * Returns a task that waits for its turn, runs {@code work}, and releases the gate when
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
     * Returns a task that waits for its turn (without a thread), then runs the task that
     * {@code work} makes of the admission's fencing token, and releases the gate when it completes on
     * any channel. The task ends with the work's outcome once Redis has taken the gate back (or the
     * Redis timeout has passed: the lease then expires by itself). Every run waits for its own turn.
     *
     * <p>The token is higher than that of every earlier admission of the gate, in any JVM: pass it
     * to the resource, which refuses a token lower than the highest it has accepted (see the class
     * description).
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
     * Returns a task that runs {@code work} under the gate only if it is free now and nobody waits;
     * otherwise it completes on the cancelled channel without queueing and without running
     * {@code work}. One round trip either way.
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

    /**
     * Closes this gate object: every waiter of it completes on the cancelled channel (its place in
     * Redis removed), and every later acquisition completes cancelled without running its work.
     * Admitted work runs to its end and releases the gate; once it has, the connections and timers
     * stop. Idempotent; never throws. Gate objects of the same name elsewhere are not affected.
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
     * Returns how many acquisitions of this gate object wait in the Redis queue: a snapshot. Waiters
     * of other gate objects of the same name are not counted.
     *
     * @return the waiters of this gate object
     */
    @Override
    public int queueLength() {
        return queue.queueLength();
    }

    @Override
    public String toString() {
        return "RedisSerialGate[name=" + queue.name() + ", queued here=" + queue.queueLength()
                + (queue.isClosed() ? ", closed]" : "]");
    }

    /** Test hook: acts as a JVM that dies (see {@link LeaseQueue#crash()}). */
    void crash() {
        queue.crash();
    }
}
