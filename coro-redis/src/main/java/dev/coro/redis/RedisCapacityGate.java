package dev.coro.redis;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.sync.WaitingPrimitive;
import dev.coro.task.Completer;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * A capacity gate shared by every JVM that opens a gate of the same name on one Redis: at most
 * {@code capacity} operations admitted at once across all of them. The fleet-wide twin of
 * {@link dev.coro.gate.CapacityGate}: work enters with {@link #within(Task)} and leaves when it
 * completes, on every completion path, in whichever JVM it runs. Waiting takes no thread.
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
public final class RedisCapacityGate implements WaitingPrimitive, AutoCloseable {
    /*
     * Implementation overview.
     *
     * 1. Representation. In Redis, per gate name N (the braces keep the keys in one cluster slot):
     *      coro:gate:{N}:holders  ZSET  lease id -> lease expiry (ms, Redis TIME)
     *      coro:gate:{N}:queue    ZSET  waiter id -> ticket (FIFO order)
     *      coro:gate:{N}:waiters  ZSET  waiter id -> expiry of its place (ms, Redis TIME)
     *      coro:gate:{N}:fence    STRING the sequence: tickets and fencing tokens,
     *                                    next = max(current + 1, TIME in microseconds)
     *      coro:gate:{N}:released pub/sub channel: the ids of the queued waiters that the free slots
     *                                    could admit now, told when a slot or a place is freed
     *    A waiter's id is its lease id once admitted. Locally, per gate object: live (id -> Waiter,
     *    every acquisition from its first dispatch until it ends), queued (ticket -> Waiter, the
     *    waiters with a place in the Redis queue, in FIFO order). Waiter.state, guarded by the
     *    waiter's monitor (held only to read and set it, never across a round trip):
     *      NEW       its first ACQUIRE is being sent or is in flight
     *      QUEUED    Redis holds its place; it waits for a notice or the re-check
     *      ADMITTED  Redis holds its lease; its work runs (lost: a renewal found it gone)
     *      ENDED     cancelled, refused, failed or released: nothing of it should stay in Redis
     *
     * 2. Transitions (each Redis step is one script, atomic on the server):
     *      NEW -ACQUIRE new/try: admitted-> ADMITTED; enqueued-> QUEUED; refused (try)-> ENDED
     *      QUEUED -ACQUIRE queued (pump): admitted-> ADMITTED; not yet-> QUEUED; place gone-> ENDED
     *      ADMITTED -work ends-> ENDED, RELEASE (publishes the admissible heads of the queue)
     *      NEW/QUEUED/ADMITTED-before-hand-over -cancel, close, failure-> ENDED, CANCEL
     *    ACQUIRE first reaps: holders whose lease has passed, waiters whose place has passed
     *    (publishing the admissible heads if that freed anything). An id is admitted if it is queued
     *    at a rank below the free slots, or, new, if the queue is shorter than the free slots.
     *
     * 3. Decision points. Admission, refusal and queueing are decided inside the ACQUIRE script; the
     *    local state follows the reply. The hand-over to the waiting task is the completer's
     *    complete(): if the waiter was cancelled first, the lease is given back by CANCEL.
     *
     * 4. Invariants.
     *    I1 An id is dispatched to ACQUIRE only in state NEW or QUEUED (checked under its monitor).
     *    I2 A reply that finds its waiter ENDED sends CANCEL for the id: CANCEL removes the id from
     *       every key, so whatever order the scripts ran in on the server, the id ends with nothing.
     *    I3 Leases and places that no renewal reaches expire on the server's clock; every key has an
     *       expiry of twice the lease time after its last use.
     *    I4 The pump visits local waiters in ticket order and stops at the first that is not admitted
     *       (a later ticket has a higher rank), or after an admission that took the last free slot.
     *
     * 5. Memory effects. Waiter fields are written under its monitor; the work reads the token after
     *    the completer's hand-over, which orders it. Lettuce completes futures on its I/O threads.
     *
     * 6. Progress and fairness. No thread waits: a waiter is a completer in two maps. FIFO by ticket
     *    across JVMs. Wake-ups: a channel message that names one of this gate object's waiters (only
     *    the gate objects whose waiters can be admitted ask, so a release costs no refused round
     *    trips), the re-check timer (bounded loss), and such a message that raced with a waiter's
     *    enqueue (the counter of messages naming ours is compared after the waiter is registered). The pump is one pass at a time (a work-in-progress counter), one ACQUIRE in
     *    flight per pass.
     *
     * 7. Cancellation races. Cancel against the reply that admits: the state under the monitor decides;
     *    if the completer refuses the hand-over, its cancel action sends CANCEL (I2). Close against
     *    a new acquisition: the acquisition registers in live, then reads closed; close writes closed,
     *    then cancels everything in live; one of them sees the other.
     *
     * 8. Round trips. Admission at once: 1 (ACQUIRE). Admission after a wait: 2 (ACQUIRE new, then
     *    ACQUIRE queued after a notice naming it) plus the re-checks while nothing is freed (one per
     *    interval per gate object with waiters, for its first waiter). Release: 1 (RELEASE). Renewal: 1 per
     *    third of the lease time for all the leases and places of this gate object together.
     *
     * 9. References: the local CapacityGate (P4215's capacity_gate); Kleppmann, "How to do
     *    distributed locking" (fencing tokens); Gray and Cheriton, "Leases" (1989).
     */

    /** The waiter's first ACQUIRE is being sent or is in flight. */
    private static final int NEW = 0;
    /** Redis holds the waiter's place in the queue. */
    private static final int QUEUED = 1;
    /** Redis holds the waiter's lease; its work runs. */
    private static final int ADMITTED = 2;
    /** Cancelled, refused, failed or released. */
    private static final int ENDED = 3;

    private static final String MODE_NEW = "new";
    private static final String MODE_TRY = "try";
    private static final String MODE_QUEUED = "queued";

    private static final Script ACQUIRE = new Script(CapacityScripts.ACQUIRE);
    private static final Script RELEASE = new Script(CapacityScripts.RELEASE);
    private static final Script CANCEL = new Script(CapacityScripts.CANCEL);
    private static final Script RENEW = new Script(CapacityScripts.RENEW);

    private final String name;
    private final int capacity;
    private final long leaseMillis;
    private final Duration leaseTime;
    private final Duration recheckInterval;
    private final Duration redisTimeout;
    private final Scheduler timers;
    private final String[] keys;
    private final String channel;
    /** The prefix of this gate object's waiter ids: random, so ids are unique across the fleet. */
    private final String idPrefix = UUID.randomUUID() + ":";

    private final StatefulRedisConnection<String, String> connection;
    private final RedisAsyncCommands<String, String> redis;
    private final StatefulRedisPubSubConnection<String, String> notices;

    private final AtomicLong nextId = new AtomicLong();
    private final Map<String, Waiter> live = new ConcurrentHashMap<>();
    private final ConcurrentSkipListMap<Long, Waiter> queued = new ConcurrentSkipListMap<>();
    /** Work-in-progress counter of the pump: requests not yet covered by a pass. */
    private final AtomicInteger pumpRequests = new AtomicInteger();
    /** How many notices naming one of this gate object's waiters it has received. */
    private final AtomicLong noticeCount = new AtomicLong();
    /** Round trips sent and not yet answered (or timed out). */
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicBoolean shutDown = new AtomicBoolean();
    private final List<WaitListener> listeners = new CopyOnWriteArrayList<>();
    /** When (System.nanoTime) the last renewal that succeeded was sent. */
    private volatile long lastRenewal = System.nanoTime();
    private volatile boolean closed;
    private volatile Cancellable renewTimer;
    private volatile Cancellable recheckTimer;

    private final Task<Waiter> enter = Task.create(completer -> enter(completer, MODE_NEW));
    private final Task<Waiter> tryEnter = Task.create(completer -> enter(completer, MODE_TRY));

    private RedisCapacityGate(Builder b) {
        this.name = b.name;
        this.capacity = b.capacity;
        this.leaseTime = b.leaseTime;
        this.leaseMillis = b.leaseTime.toMillis();
        this.recheckInterval = b.recheckInterval;
        this.redisTimeout = b.redisTimeout;
        this.timers = b.timers;
        String prefix = "coro:gate:{" + name + "}:";
        this.keys = new String[] {prefix + "holders", prefix + "queue", prefix + "waiters", prefix + "fence"};
        this.channel = prefix + "released";
        StatefulRedisConnection<String, String> c = null;
        StatefulRedisPubSubConnection<String, String> p = null;
        try {
            c = b.client.connect(StringCodec.UTF8);
            p = b.client.connectPubSub(StringCodec.UTF8);
            p.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String from, String message) {
                    if (channel.equals(from)) {
                        onNotice(message);
                    }
                }
            });
            p.async().subscribe(channel).get(redisTimeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            closeQuietly(c, p);
            Thread.currentThread().interrupt();
            throw new RedisGateException(describe("open") + "interrupted while subscribing", e);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            closeQuietly(c, p);
            throw new RedisGateException(describe("open") + "could not connect and subscribe within "
                    + redisTimeout + ": " + e, e);
        }
        this.connection = c;
        this.redis = c.async();
        this.notices = p;
        this.renewTimer = timers.schedule(this::renewTick, renewPeriod());
        this.recheckTimer = timers.schedule(this::recheckTick, recheckInterval);
    }

    private static void closeQuietly(StatefulRedisConnection<?, ?> c, StatefulRedisPubSubConnection<?, ?> p) {
        if (c != null) {
            c.closeAsync();
        }
        if (p != null) {
            p.closeAsync();
        }
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
        private final RedisClient client;
        private final String name;
        private final int capacity;
        private Duration leaseTime = Duration.ofSeconds(10);
        private Duration recheckInterval = Duration.ofSeconds(1);
        private Duration redisTimeout = Duration.ofSeconds(5);
        private Scheduler timers = Scheduler.inline();

        private Builder(RedisClient client, String name, int capacity) {
            this.client = Objects.requireNonNull(client, "client");
            Objects.requireNonNull(name, "name");
            if (name.isEmpty() || name.indexOf('{') >= 0 || name.indexOf('}') >= 0) {
                throw new IllegalArgumentException("name must be non-empty and without braces, got '" + name + "'");
            }
            if (capacity < 1) {
                throw new IllegalArgumentException("capacity must be positive, got " + capacity);
            }
            this.name = name;
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
            Objects.requireNonNull(leaseTime, "leaseTime");
            if (leaseTime.compareTo(Duration.ofMillis(30)) < 0) {
                throw new IllegalArgumentException("leaseTime must be at least 30 ms, got " + leaseTime);
            }
            this.leaseTime = leaseTime;
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
            this.recheckInterval = positive(recheckInterval, "recheckInterval");
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
            this.redisTimeout = positive(redisTimeout, "redisTimeout");
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
            this.timers = Objects.requireNonNull(timers, "timers");
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
            return new RedisCapacityGate(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, got " + d);
            }
            return d;
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
        return enter.flatMap(w -> admitted(w, work));
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
        return tryEnter.flatMap(w -> admitted(w, work));
    }

    private <T> Task<T> admitted(Waiter w, LongFunction<? extends Task<T>> work) {
        return Scope.<T>scoped(scope -> {
            w.onLost(scope::cancel);
            return Objects.requireNonNull(work.apply(w.token), "withinFenced: the work function returned null");
        }).andFinally(Task.<Void>create(done -> release(w).whenComplete((removed, error) -> done.complete(null))));
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
        if (closed) {
            return;
        }
        closed = true;
        for (Waiter w : live.values()) {
            if (end(w, false)) {
                report(w, WaitListener.Outcome.CANCELLED);
                w.completer.cancel();
            }
        }
        maybeShutDown();
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Returns the gate's name.
     *
     * @return the name
     */
    public String name() {
        return name;
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
        return leaseTime;
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
        listeners.add(Objects.requireNonNull(listener, "listener"));
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
        return queued.size();
    }

    @Override
    public String toString() {
        return "RedisCapacityGate[name=" + name + ", capacity=" + capacity + ", queued here=" + queued.size()
                + (closed ? ", closed]" : "]");
    }

    // ---------------------------------------------------------------- acquisition

    /** One acquisition: its id (the lease id once admitted), its completer and its state. */
    private static final class Waiter {
        final String id;
        final Completer<Waiter> completer;
        /** Whether it is a try: refused without waiting, never reported but when admitted. */
        final boolean trying;
        /** When it started, by System.nanoTime. */
        final long startNanos = System.nanoTime();
        /** Guarded by this. */
        int state = NEW;
        /** Guarded by this: whether its first ACQUIRE was dispatched. */
        boolean dispatched;
        /** Guarded by this: whether a renewal found the lease gone. */
        boolean lost;
        /** Guarded by this: what to run when the lease is lost. */
        Runnable onLost;
        /** The ticket (QUEUED), 0 before. Written under the monitor, read without it. */
        volatile long ticket;
        /** The fencing token, set before the hand-over. */
        long token;
        /** The notice count when its first ACQUIRE was sent. */
        long noticesAtDispatch;

        Waiter(String id, Completer<Waiter> completer, boolean trying) {
            this.id = id;
            this.completer = completer;
            this.trying = trying;
        }

        synchronized int state() {
            return state;
        }

        void onLost(Runnable action) {
            boolean now;
            synchronized (this) {
                onLost = action;
                now = lost;
            }
            if (now) {
                action.run();
            }
        }
    }

    private void enter(Completer<Waiter> completer, String mode) {
        Waiter w = new Waiter(idPrefix + nextId.incrementAndGet(), completer, MODE_TRY.equals(mode));
        live.put(w.id, w);
        completer.onCancel(() -> {
            if (end(w, true)) {
                report(w, WaitListener.Outcome.CANCELLED);
            }
        });
        if (closed) { // after live.put: close() either sees w or is seen here (7)
            if (end(w, false)) {
                completer.cancel();
            }
            return;
        }
        synchronized (w) {
            if (w.state != NEW) {
                return; // cancelled before sending: nothing in Redis
            }
            w.dispatched = true;
            w.noticesAtDispatch = noticeCount.get();
            dispatchAcquire(w, mode); // I1
        }
    }

    private void dispatchAcquire(Waiter w, String mode) {
        this.<List<Object>>eval(ACQUIRE, ScriptOutputType.MULTI, w.id, Integer.toString(capacity),
                        Long.toString(leaseMillis), mode, channel)
                .whenComplete((reply, error) -> {
                    boolean admittedOrGone = acquired(w, mode, reply, error);
                    if (MODE_QUEUED.equals(mode)) {
                        pumpContinue(w, admittedOrGone);
                    }
                });
    }

    /**
     * Handles an ACQUIRE reply. Returns whether a pump may go on to the next waiter: this one was
     * admitted and slots are left, or its place has gone; false if it still waits, took the last free
     * slot, or the round trip failed.
     */
    private boolean acquired(Waiter w, String mode, List<Object> reply, Throwable error) {
        if (error != null) {
            fail(w, "acquire", error);
            return false;
        }
        long kind = (Long) reply.get(0);
        if (kind == 1) {
            long token = Long.parseLong((String) reply.get(1));
            boolean slotsLeft = (Long) reply.get(2) > 0;
            boolean handOver;
            synchronized (w) {
                handOver = w.state == NEW || w.state == QUEUED;
                if (handOver) {
                    w.state = ADMITTED;
                    w.token = token;
                }
            }
            if (!handOver) {
                sendCancel(w); // I2
                return slotsLeft;
            }
            long ticket = w.ticket;
            if (ticket != 0) {
                queued.remove(ticket, w);
            }
            if (w.completer.complete(w)) { // refused only if cancelled first: its cancel action sent CANCEL
                tell(WaitListener.Outcome.ADMITTED, ticket == 0 ? 0 : System.nanoTime() - w.startNanos);
            }
            return slotsLeft;
        }
        if (kind == 0 && reply.size() == 2) { // enqueued
            long ticket = Long.parseLong((String) reply.get(1));
            boolean keep;
            synchronized (w) {
                keep = w.state == NEW;
                if (keep) {
                    w.state = QUEUED;
                    w.ticket = ticket;
                }
            }
            if (!keep) {
                sendCancel(w); // I2
                return false;
            }
            queued.put(ticket, w);
            if (noticeCount.get() != w.noticesAtDispatch) {
                requestPump(); // a notice came while the reply was on its way (6)
            }
            return false;
        }
        if (kind == 0) { // refused (try), or not yet (queued)
            if (MODE_TRY.equals(mode) && end(w, false)) {
                w.completer.cancel();
            }
            return false;
        }
        fail(w, "wait", new IllegalStateException("the waiter's place in the Redis queue expired"));
        return true;
    }

    /**
     * Ends {@code w} if it has not ended: forgets it and, if anything of it may be in Redis, sends
     * CANCEL. {@code byToken}: called as the completer's cancel action, which may find the waiter
     * admitted but not handed over. Returns whether this call ended it.
     */
    private boolean end(Waiter w, boolean byToken) {
        boolean send;
        synchronized (w) {
            int s = w.state;
            if (s == ENDED || (s == ADMITTED && !byToken)) {
                return false;
            }
            w.state = ENDED;
            send = w.dispatched;
        }
        if (send) {
            sendCancel(w); // before forget: the connection stays open while the round trip is in flight
        }
        forget(w);
        return true;
    }

    private void fail(Waiter w, String operation, Throwable error) {
        if (end(w, false)) {
            report(w, WaitListener.Outcome.TIMED_OUT);
            w.completer.fail(gateError(operation, error));
        }
    }

    private RedisGateException gateError(String operation, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        String why = cause instanceof TimeoutException
                ? "Redis did not answer within " + redisTimeout
                : cause instanceof IllegalStateException ? cause.getMessage() : "Redis failed: " + cause;
        return new RedisGateException(describe(operation) + why, cause);
    }

    private String describe(String operation) {
        return "gate '" + name + "': " + operation + ": ";
    }

    private void forget(Waiter w) {
        live.remove(w.id, w);
        if (w.ticket != 0) {
            queued.remove(w.ticket, w);
        }
        maybeShutDown();
    }

    private void sendCancel(Waiter w) {
        eval(CANCEL, ScriptOutputType.INTEGER, w.id, channel, Integer.toString(capacity));
    }

    /**
     * Releases {@code w}'s lease: the cleanup of its work, which ends once Redis has answered (or
     * the Redis timeout has passed: the lease then expires by itself, which is all that can be done).
     */
    private CompletableFuture<Long> release(Waiter w) {
        synchronized (w) {
            w.state = ENDED;
        }
        CompletableFuture<Long> released = eval(RELEASE, ScriptOutputType.INTEGER, w.id, channel,
                Integer.toString(capacity)); // even if lost
        forget(w);
        return released;
    }

    private void leaseLost(Waiter w) {
        Runnable action;
        synchronized (w) {
            if (w.state != ADMITTED || w.lost) {
                return;
            }
            w.lost = true;
            action = w.onLost;
        }
        if (action != null) {
            action.run();
        }
    }

    /** Reports a wait that ended without admission (a try's is not a wait: not reported). */
    private void report(Waiter w, WaitListener.Outcome outcome) {
        if (!w.trying) {
            tell(outcome, System.nanoTime() - w.startNanos);
        }
    }

    private void tell(WaitListener.Outcome outcome, long waited) {
        for (WaitListener l : listeners) {
            try {
                l.waitEnded(outcome, waited);
            } catch (RuntimeException | Error e) {
                Thread t = Thread.currentThread();
                t.getUncaughtExceptionHandler().uncaughtException(t, e);
            }
        }
    }

    // ---------------------------------------------------------------- wake-ups

    /** A notice names the waiters that free slots could admit: it matters here if one is ours. */
    private void onNotice(String heads) {
        for (int at = heads.indexOf(idPrefix); at >= 0; at = heads.indexOf(idPrefix, at + 1)) {
            if (at == 0 || heads.charAt(at - 1) == ' ') {
                noticeCount.incrementAndGet();
                requestPump();
                return;
            }
        }
    }

    private void requestPump() {
        if (pumpRequests.getAndIncrement() == 0) {
            pumpPass(Long.MIN_VALUE);
        }
    }

    /** Sends ACQUIRE queued for the first waiting waiter after {@code after}, or ends the pass (I4). */
    private void pumpPass(long after) {
        for (Map.Entry<Long, Waiter> e = queued.higherEntry(after); e != null; e = queued.higherEntry(e.getKey())) {
            Waiter w = e.getValue();
            synchronized (w) {
                if (w.state == QUEUED) {
                    dispatchAcquire(w, MODE_QUEUED); // I1
                    return;
                }
            }
        }
        pumpEnd();
    }

    private void pumpContinue(Waiter w, boolean next) {
        if (next) {
            pumpPass(w.ticket);
        } else {
            pumpEnd();
        }
    }

    private void pumpEnd() {
        // every request so far is covered by the pass that ends; one more pass if any came during it
        if (pumpRequests.getAndSet(0) > 1) {
            requestPump();
        }
    }

    private void recheckTick() {
        if (shutDown.get()) {
            return;
        }
        if (!queued.isEmpty()) {
            requestPump();
        }
        recheckTimer = timers.schedule(this::recheckTick, recheckInterval);
    }

    private Duration renewPeriod() {
        return Duration.ofMillis(Math.max(1, leaseMillis / 3));
    }

    private void renewTick() {
        if (shutDown.get()) {
            return;
        }
        List<String> args = new ArrayList<>();
        args.add(Long.toString(leaseMillis));
        for (Waiter w : live.values()) {
            int s = w.state();
            if (s == QUEUED || s == ADMITTED) {
                args.add(w.id);
            }
        }
        long sent = System.nanoTime();
        if (args.size() == 1) {
            lastRenewal = sent;
        } else {
            this.<List<Object>>eval(RENEW, ScriptOutputType.MULTI, args.toArray(String[]::new))
                    .whenComplete((gone, error) -> renewed(sent, gone, error));
        }
        renewTimer = timers.schedule(this::renewTick, renewPeriod());
    }

    private void renewed(long sent, List<Object> gone, Throwable error) {
        if (error == null) {
            if (sent - lastRenewal > 0) {
                lastRenewal = sent;
            }
            for (Object id : gone) {
                Waiter w = live.get((String) id);
                if (w != null) {
                    if (w.state() == ADMITTED) {
                        leaseLost(w);
                    } else {
                        fail(w, "wait", new IllegalStateException("the waiter's place in the Redis queue expired"));
                    }
                }
            }
            return;
        }
        boolean leasesLapsed = System.nanoTime() - lastRenewal >= TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        for (Waiter w : live.values()) {
            int s = w.state();
            if (s == QUEUED) {
                fail(w, "wait", error); // a wait fails on the first renewal that gets no answer
            } else if (s == ADMITTED && leasesLapsed) {
                leaseLost(w); // no renewal has reached Redis for a whole lease: presume it expired
            }
        }
    }

    // ---------------------------------------------------------------- Redis

    /** A script and its SHA-1, for EVALSHA with a fall back to EVAL when the server lacks it. */
    private record Script(String body, String sha) {
        Script(String body) {
            this(body, sha1(body));
        }

        private static String sha1(String body) {
            try {
                return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                        .digest(body.getBytes(StandardCharsets.UTF_8)));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-1 is required of every JDK", e);
            }
        }
    }

    /** One round trip: EVALSHA (EVAL if the server lacks the script), bounded by the Redis timeout. */
    private <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, String... args) {
        CompletableFuture<T> result = new CompletableFuture<>();
        inFlight.incrementAndGet();
        result.orTimeout(redisTimeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((v, e) -> {
            inFlight.decrementAndGet();
            maybeShutDown();
        });
        try {
            redis.<T>evalsha(script.sha(), type, keys, args).whenComplete((v, e) -> {
                if (e instanceof RedisNoScriptException || e != null && e.getCause() instanceof RedisNoScriptException) {
                    redis.<T>eval(script.body(), type, keys, args).whenComplete((v2, e2) -> settle(result, v2, e2));
                } else {
                    settle(result, v, e);
                }
            });
        } catch (RuntimeException e) { // the connection is closed
            result.completeExceptionally(e);
        }
        return result;
    }

    private static <T> void settle(CompletableFuture<T> result, T value, Throwable error) {
        if (error != null) {
            result.completeExceptionally(error);
        } else {
            result.complete(value);
        }
    }

    private void maybeShutDown() {
        if (closed && live.isEmpty() && inFlight.get() == 0 && shutDown.compareAndSet(false, true)) {
            stop();
            connection.closeAsync();
            notices.closeAsync();
        }
    }

    private void stop() {
        Cancellable t = renewTimer;
        if (t != null) {
            t.cancel();
        }
        t = recheckTimer;
        if (t != null) {
            t.cancel();
        }
    }

    /**
     * Test hook: acts as a JVM that dies. Stops renewing and re-checking and drops both connections
     * at once, without releasing or cancelling anything; leases and places left in Redis expire.
     */
    void crash() {
        shutDown.set(true);
        stop();
        connection.close();
        notices.close();
    }
}
