package dev.coro.redis;

import dev.coro.cancel.Cancellable;
import dev.coro.gate.Gate;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.task.Completer;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;

/**
 * A rate gate shared by every JVM that opens a gate of the same name on one Redis: a token bucket on
 * Redis's clock, so that the admissions of the whole fleet together stay within {@code permits} per
 * period and the {@code burst}. The fleet-wide twin of {@link dev.coro.gate.RateGate}: work enters
 * with {@link #within(Task)} and takes one token; tokens are spent, not given back when the work
 * ends. Waiting takes no thread and no connection: a waiter holds a reservation in Redis and waits on
 * a timer of this JVM.
 *
 * <p><b>Admission rule.</b> Tokens arrive one every {@linkplain #interval() interval} and accumulate
 * up to the burst. A request reaches Redis and reserves, in one script, the first <em>slot</em> at
 * which the bucket holds a token for it with every earlier reservation of the fleet served: now if a
 * token is there (it is admitted at once), otherwise later (it is told how long to wait, and waits on
 * {@linkplain Builder#timers(Scheduler) the gate's scheduler's timer}). After an idle period of
 * {@code burst} intervals, {@code burst} requests are admitted at once, and never more.
 *
 * <p><b>Fairness.</b> FIFO across JVMs, in the order the requests reach Redis: each reservation's
 * slot is after every earlier one's, so a newcomer never takes a token a waiter was promised (no
 * barging), and nobody polls, re-checks or is woken by a message.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} admits only if a token is there now and no reservation is
 * waiting for it; otherwise it completes on the cancelled channel without reserving anything and
 * without running the work. One round trip either way.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and its work does not run. Its reservation is given back if it is still the fleet's
 * latest (nobody reserved after it): the bucket is then as if it had never asked. Otherwise the
 * token stays spent: the reservations behind it keep their slots (moving them would take a round
 * trip per waiter), so the rate errs low, never high.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter of this gate object on the cancelled
 * channel (giving back its reservation as a cancellation does), and every later request completes
 * cancelled without running its work. Admitted work is not tracked: its token is spent. Other gate
 * objects of the same name are not affected.
 *
 * <p><b>Redis out of reach.</b> A request whose round trip gets no answer within
 * {@linkplain Builder#redisTimeout(Duration) the Redis timeout} fails with {@link RedisGateException}.
 * A waiter that already holds a reservation needs Redis no more: it is admitted at its slot.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler, by submission: from the Redis
 * client's I/O thread when it is admitted at once, from the timer's thread after a wait. With a
 * scheduler that runs work on the waking thread (the inline scheduler, as {@link Task#start()} uses),
 * that is the I/O or timer thread itself: start gated work on a pool, or join it from a (virtual)
 * thread.
 *
 * <p><b>Round trips.</b> One per admission, waited or not (the reservation); one more for a waiter
 * cancelled after it reserved (the give-back). No renewal, no subscription.
 *
 * <p><b>Nothing left behind.</b> The gate's one key, {@code coro:gate:{name}:rate}, expires when the
 * bucket is full again (after its last reservation's slot plus {@code burst} intervals at most); an
 * absent key is a full bucket, so an idle gate leaves no key.
 *
 * <p><b>Safety argument and its assumptions.</b> Every reservation is decided by one script,
 * atomically, on the server's clock ({@code TIME} inside the script; no JVM's clock takes part in
 * the decision), by the generic cell rate algorithm: each reservation's slot is at least one interval
 * after the previous one's beyond the first {@code burst}, so the slots of the whole fleet in any
 * span {@code T} of server time number at most {@code burst + T / interval}. A waiter starts its work
 * no earlier than its slot: the reply leaves Redis after the decision, and the waiter then waits the
 * whole time to its slot on its own clock, which is right as long as the JVM's clock does not run
 * faster than the server's. It may start later (the reply's travel, a busy or paused JVM), and work
 * that starts late can bunch up with the work behind it, as at the local {@link dev.coro.gate.RateGate}:
 * the bound holds on the slots. Assumptions: one clock, the server's. If it steps back, waits get
 * longer; if it steps forward, up to {@code burst} extra admissions. A Redis failover to a replica
 * that missed the last writes, or a restart without persistence, forgets reservations: the bucket
 * can then admit up to the forgotten reservations plus {@code burst} more than the rate.
 *
 * <p><b>Monitoring.</b> {@link #addListener(WaitListener)} reports each request of this gate object
 * as the local gates do: admitted, with the time it waited (0 when admitted at its first reply);
 * cancelled while it waited (by its token or by {@link #close()}); timed out, when it failed with
 * {@link RedisGateException}. A refused try is not reported.
 *
 * <p><b>Bad input.</b> A null argument: {@link NullPointerException}; an empty name or one with
 * braces, a rate that is not positive or is above one per microsecond (Redis {@code TIME}'s
 * resolution), a burst below 1, a bucket ({@code burst} times the interval) above 2<sup>40</sup>
 * microseconds, a non-positive duration: {@link IllegalArgumentException}, naming the argument and
 * the rule.
 *
 * <p>Thread-safe: every method may be called from any thread.
 *
 * {@snippet :
 * RedisClient client = RedisClient.create("redis://localhost:6379");
 * try (RedisRateGate partner = RedisRateGate.builder(client, "partner-api", 100).burst(10).open()) {
 *     Task<Response> call = partner.within(http.get(url));   // 100/s, bursts of 10, across the fleet
 * }
 * }
 */
public final class RedisRateGate implements Gate {
    /*
     * Implementation overview.
     *
     * 1. Representation. In Redis, per gate name N, one hash (the braces keep it in one cluster slot):
     *      coro:gate:{N}:rate  tat   the theoretical arrival time (GCRA), microseconds of Redis TIME:
     *                                the bucket is full at any time t >= tat and holds
     *                                (burst * interval - (tat - t)) / interval tokens before
     *                          last  the id of the latest reservation
     *                          undo  tat before the latest reservation
     *    The key expires at tat (PEXPIRE, rounded up to the millisecond): absent means full. Why a
     *    reservation model (the slot decided at arrival, the waiter sleeping on its own timer) rather
     *    than a queue with wake-ups: a rate's slots are known at arrival, so one round trip decides and
     *    no notice, re-check or lease is needed. Locally, per gate object: live (a LiveWaiters:
     *    id -> Waiter, every request from its dispatch until it ends). Waiter.state, guarded by its
     *    monitor (held only to read and set it, never across a round trip):
     *      NEW      its ACQUIRE is being sent or is in flight
     *      WAITING  reserved; its timer is armed for the slot
     *      ADMITTED handed over (or being handed over) to its work
     *      ENDED    cancelled, refused or failed
     *
     * 2. Transitions (each Redis step is one script, atomic on the server):
     *      NEW -ACQUIRE: wait 0-> ADMITTED; wait > 0-> WAITING (timer armed); refused (try)-> ENDED
     *      WAITING -timer-> ADMITTED
     *      NEW/WAITING/ADMITTED-before-hand-over -cancel, close, failure-> ENDED, CANCEL (if reserved)
     *    ACQUIRE: now = TIME; due = max(now, tat - (burst - n) * interval); a try with due > now is
     *    refused; else tat = max(tat, due) + n * interval, last = id, undo = the old tat, and the reply
     *    is the wait (due - now) and the slot (due). CANCEL: if last = id, tat = undo.
     *
     * 3. Decision points. The slot is decided inside ACQUIRE; the local state follows the reply. The
     *    hand-over is the completer's complete(): if the waiter was cancelled first, the reservation
     *    is given back by CANCEL.
     *
     * 4. Invariants.
     *    I1 A reservation's slot is after every earlier reservation's (tat only grows but by CANCEL),
     *       and the slots satisfy GCRA's bound: at most burst + T / interval in any span T.
     *    I2 CANCEL changes tat only for the latest reservation, to its value before it: the state is
     *       then as if that request never came, so no slot given to another is moved or shared.
     *    I3 A reply that finds its waiter ENDED sends CANCEL for the id (the CANCEL sent when it ended
     *       may have run before the ACQUIRE, if the ACQUIRE was re-sent as EVAL after NOSCRIPT).
     *    I4 The key expires at tat: an absent key and an expired one both mean a full bucket.
     *
     * 5. Memory effects. Waiter fields are written under its monitor; Lettuce completes futures on
     *    its I/O threads, the timer runs on the scheduler's timer thread; the completer's hand-over
     *    orders what the work sees.
     *
     * 6. Progress and fairness. No thread waits: a waiter is a completer in a map and a timer. FIFO by
     *    arrival at Redis, across JVMs (I1).
     *
     * 7. Cancellation races. Cancel against the reply: the state under the monitor decides; a reply
     *    finding ENDED sends CANCEL (I3). Cancel against the timer: the state decides; the loser does
     *    nothing. Cancel against the hand-over: if the completer refuses complete(), its cancel action
     *    ends the waiter from ADMITTED and sends CANCEL (the work never ran). Close against a new
     *    request: the request registers in live, then reads closed; close writes closed, then cancels
     *    everything in live; one of them sees the other (LiveWaiters, shared with LeaseQueue, does
     *    both sides).
     *
     * 8. Round trips. 1 per admission (ACQUIRE); 1 more per waiter cancelled after reserving (CANCEL).
     *
     * 9. References: the local RateGate and its TokenBucket (the same GCRA, there on the scheduler's
     *    clock); ATM Forum, Traffic Management Specification 4.0 (the generic cell rate algorithm).
     */

    /** The request's ACQUIRE is being sent or is in flight. */
    private static final int NEW = 0;
    /** Reserved: the waiter's timer is armed for its slot. */
    private static final int WAITING = 1;
    /** Handed over, or being handed over, to its work. */
    private static final int ADMITTED = 2;
    /** Cancelled, refused or failed. */
    private static final int ENDED = 3;

    private static final String MODE_WAIT = "wait";
    private static final String MODE_TRY = "try";

    /** The largest bucket, burst times interval, in microseconds: far below Lua's 2^53 exact integers. */
    private static final long MAX_BUCKET_MICROS = 1L << 40;

    private static final GateLink.Script ACQUIRE = new GateLink.Script(RateScripts.ACQUIRE);
    private static final GateLink.Script CANCEL = new GateLink.Script(RateScripts.CANCEL);

    private final String name;
    private final long intervalMicros;
    private final int burst;
    private final Duration redisTimeout;
    private final Scheduler timers;
    private final String[] keys;
    private final String intervalArg;
    private final String burstArg;

    private final GateLink link;

    private final LiveWaiters<Waiter> live = new LiveWaiters<>(this::end);
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicBoolean shutDown = new AtomicBoolean();

    private final Task<Waiter> enter = Task.create(completer -> enter(completer, MODE_WAIT));
    private final Task<Waiter> tryEnter = Task.create(completer -> enter(completer, MODE_TRY));

    private RedisRateGate(Builder b) {
        this.name = b.settings.name;
        this.intervalMicros = b.intervalMicros;
        this.burst = b.burst;
        this.redisTimeout = b.settings.redisTimeout;
        this.timers = b.settings.timers;
        this.keys = new String[] {"coro:gate:{" + name + "}:rate"};
        this.intervalArg = Long.toString(intervalMicros);
        this.burstArg = Integer.toString(burst);
        // no channel: a waiter knows its slot from its one round trip, so nothing need tell it of releases
        this.link = new GateLink(b.settings, null, null, this::maybeShutDown, ACQUIRE, CANCEL);
    }

    /**
     * Opens a gate object of {@code permitsPerSecond} with a burst of 1 and the default Redis timeout
     * (5 s), connecting to the Redis of {@code client}'s default URI; blocks until connected. As
     * {@code builder(client, name, permitsPerSecond).open()}.
     *
     * @param client the Lettuce client; the gate opens its own connection with it
     * @param name the gate's name: every gate object of this name on this Redis shares the bucket
     * @param permitsPerSecond the rate, across all of them
     * @return the open gate
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace, or the rate is not
     *     positive or above 10<sup>6</sup> per second
     * @throws RedisGateException if Redis cannot be reached within the Redis timeout
     */
    public static RedisRateGate open(RedisClient client, String name, double permitsPerSecond) {
        return builder(client, name, permitsPerSecond).open();
    }

    /**
     * Returns a builder for a gate object of {@code permitsPerSecond}. The interval between tokens
     * is a second divided by the rate, rounded up to the microsecond (so the rate is never above the
     * one asked for).
     *
     * @param client the Lettuce client, whose default URI names the Redis
     * @param name the gate's name
     * @param permitsPerSecond the rate, across every gate object of this name
     * @return the builder
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace, or the rate is not
     *     positive or above 10<sup>6</sup> per second
     */
    public static Builder builder(RedisClient client, String name, double permitsPerSecond) {
        if (!(permitsPerSecond > 0) || permitsPerSecond > 1e6) {
            throw new IllegalArgumentException("permitsPerSecond must be positive and at most 1e6 (one per microsecond,"
                    + " the resolution of Redis TIME), got " + permitsPerSecond);
        }
        double micros = Math.ceil(1e6 / permitsPerSecond);
        if (micros > MAX_BUCKET_MICROS) {
            throw new IllegalArgumentException("permitsPerSecond must give an interval of at most 2^40 microseconds, got "
                    + permitsPerSecond);
        }
        return new Builder(client, name, (long) micros);
    }

    /**
     * Returns a builder for a gate object of {@code permits} per {@code period}. The interval between
     * tokens is {@code period / permits}, rounded up to the microsecond.
     *
     * @param client the Lettuce client, whose default URI names the Redis
     * @param name the gate's name
     * @param permits the tokens per period, across every gate object of this name
     * @param period the period
     * @return the builder
     * @throws NullPointerException if {@code client}, {@code name} or {@code period} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace, {@code permits < 1},
     *     the period is not positive, or the interval would be below a microsecond or above
     *     2<sup>40</sup> microseconds
     */
    public static Builder builder(RedisClient client, String name, long permits, Duration period) {
        Objects.requireNonNull(period, "period");
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be positive, got " + permits);
        }
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive, got " + period);
        }
        long periodMicros; // rounded up
        try {
            periodMicros = Math.addExact(Math.multiplyExact(period.getSeconds(), 1_000_000L), (period.getNano() + 999) / 1000);
        } catch (ArithmeticException e) {
            periodMicros = Long.MAX_VALUE;
        }
        if (periodMicros < permits) {
            throw new IllegalArgumentException("permits per period must be at most one per microsecond, got "
                    + permits + " per " + period);
        }
        long micros = periodMicros / permits + (periodMicros % permits == 0 ? 0 : 1);
        if (micros > MAX_BUCKET_MICROS) {
            throw new IllegalArgumentException("period / permits must be at most 2^40 microseconds, got "
                    + permits + " per " + period);
        }
        return new Builder(client, name, micros);
    }

    /**
     * The settings of a {@link RedisRateGate}: burst, Redis timeout and the scheduler of its timers.
     * Not thread-safe; {@link #open()} may be called more than once, each call opening a gate object
     * of its own.
     */
    public static final class Builder {
        private final GateSettings settings;
        private final long intervalMicros;
        private int burst = 1;

        private Builder(RedisClient client, String name, long intervalMicros) {
            this.settings = new GateSettings(client, name);
            this.intervalMicros = intervalMicros;
        }

        /**
         * Sets the burst (default 1): the most tokens that accumulate, so the most requests admitted
         * at once after an idle period. Every gate object of one name must use the same rate and
         * burst; the bucket follows the settings of each request as it arrives.
         *
         * @param burst the burst, at least 1
         * @return this builder
         * @throws IllegalArgumentException if {@code burst < 1}, or {@code burst} times the interval
         *     is above 2<sup>40</sup> microseconds
         */
        public Builder burst(int burst) {
            if (burst < 1) {
                throw new IllegalArgumentException("burst must be at least 1, got " + burst);
            }
            if (burst > MAX_BUCKET_MICROS / intervalMicros) {
                throw new IllegalArgumentException("burst times the interval must be at most 2^40 microseconds, got "
                        + burst + " x " + intervalMicros + " us");
            }
            this.burst = burst;
            return this;
        }

        /**
         * Sets how long a round trip to Redis may take before the request fails with
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
         * Sets the scheduler whose timers wake waiters at their slots (default
         * {@link Scheduler#inline()}, whose timers fire on Coro's shared timer thread). A timer only
         * hands the waiter over; it never blocks.
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
         * Opens the gate object: connects and loads its script. Blocks until done.
         *
         * @return the open gate
         * @throws RedisGateException if Redis cannot be reached within the Redis timeout
         */
        public RedisRateGate open() {
            return new RedisRateGate(this);
        }
    }

    // ---------------------------------------------------------------- doors

    /**
     * Returns a task that waits for a token of the fleet's bucket (without a thread), then runs
     * {@code work}; the task ends with {@code work}'s outcome. The token is spent: nothing is given
     * back when the work ends. Every run waits for its own token.
     *
     * <p>Cancellation: a run cancelled while it waits completes cancelled and {@code work} does not
     * run; its reservation is given back if it is still the latest in Redis, otherwise its token stays
     * spent. After {@link #close()} a run completes cancelled. A run whose round trip to Redis fails or
     * times out fails with {@link RedisGateException}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return enter.flatMap(w -> work);
    }

    /**
     * As {@link #within(Task)}, giving the work its slot: the time on Redis's clock, in microseconds
     * since the epoch, at which the bucket had its token. The work starts at or after it (on a JVM
     * whose clock keeps pace with the server's); the slots of the whole fleet never exceed the bucket
     * in any span of time, which makes them the thing to log or check.
     *
     * @param work makes the work from the slot
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null (a null task from it fails the run with
     *     {@link NullPointerException})
     */
    public <T> Task<T> withinSlot(LongFunction<? extends Task<T>> work) {
        Objects.requireNonNull(work, "work");
        return enter.flatMap(w -> Objects.requireNonNull(work.apply(w.slot), "withinSlot: the work function returned null"));
    }

    /**
     * Returns a task that runs {@code work} only if a token is there now and no reservation waits
     * for one; otherwise it completes on the cancelled channel without reserving anything and without
     * running {@code work}. One round trip either way.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return tryEnter.flatMap(w -> work);
    }

    // ---------------------------------------------------------------- state

    /**
     * Closes this gate object: every waiter of it completes on the cancelled channel (its
     * reservation given back if it is the latest), and every later request completes cancelled
     * without running its work. Admitted work is not affected. Once the last round trip has been
     * answered the connection closes. Idempotent; never throws. Gate objects of the same name
     * elsewhere are not affected.
     */
    @Override
    public void close() {
        if (live.close()) {
            maybeShutDown();
        }
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    @Override
    public boolean isClosed() {
        return live.isClosed();
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
     * Returns the interval between tokens, in whole microseconds.
     *
     * @return the interval
     */
    public Duration interval() {
        return Duration.ofNanos(intervalMicros * 1000);
    }

    /**
     * Returns the burst: the most tokens that accumulate.
     *
     * @return the burst
     */
    public int burst() {
        return burst;
    }

    /**
     * Adds a listener told how each request of this gate object ended: admitted (with the time it
     * waited, 0 when admitted at its first reply), cancelled while waiting (by its token or by
     * {@link #close()}), or timed out (failed with {@link RedisGateException}). A refused try is not
     * reported. Listeners are called on the thread that ended the wait (the Redis client's I/O thread
     * or the timer's): they must be quick and must not block.
     *
     * {@snippet :
     * LongAdder waited = new LongAdder();
     * gate.addListener((outcome, waitedNanos) -> waited.add(waitedNanos));
     * }
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    @Override
    public void addListener(WaitListener listener) {
        live.addListener(listener);
    }

    /**
     * Returns how many requests of this gate object hold a reservation and wait for its slot: a
     * snapshot, which may still count a waiter cancelled a moment ago. Waiters of other gate objects
     * of the same name are not counted.
     *
     * @return the waiters of this gate object
     */
    @Override
    public int queueLength() {
        return waiting.get();
    }

    @Override
    public String toString() {
        return "RedisRateGate[name=" + name + ", interval=" + intervalMicros + "us, burst=" + burst
                + ", waiting here=" + waiting.get() + (live.isClosed() ? ", closed]" : "]");
    }

    // ---------------------------------------------------------------- requests

    /** One request: its id (the reservation's), its completer and its state. */
    private static final class Waiter extends LiveWaiters.Entry<Waiter> {
        /** Guarded by this. */
        int state = NEW;
        /** Guarded by this: whether Redis may hold a reservation of it (its ACQUIRE was sent, not refused). */
        boolean reserved;
        /** Guarded by this: the timer of a WAITING waiter. */
        Cancellable timer;
        /** The slot, microseconds of Redis TIME; written before the hand-over, which orders it. */
        long slot;

        Waiter(String id, Completer<Waiter> completer, boolean trying) {
            super(id, completer, trying);
        }
    }

    private void enter(Completer<Waiter> completer, String mode) {
        Waiter w = new Waiter(live.nextId(), completer, MODE_TRY.equals(mode));
        if (!live.register(w)) { // closed: w ended (7)
            return;
        }
        synchronized (w) {
            if (w.state != NEW) {
                return; // cancelled before sending: nothing in Redis
            }
            w.reserved = true;
        }
        this.<List<Object>>eval(ACQUIRE, ScriptOutputType.MULTI, w.id, intervalArg, burstArg, "1", mode)
                .whenComplete((reply, error) -> acquired(w, reply, error));
    }

    private void acquired(Waiter w, List<Object> reply, Throwable error) {
        if (error != null) {
            fail(w, error);
            return;
        }
        boolean reserved = (Long) reply.get(0) == 1;
        long waitMicros = (Long) reply.get(1);
        int next;
        synchronized (w) {
            if (w.state != NEW) { // ended while in flight: its CANCEL may have run before this ACQUIRE (I3)
                next = ENDED;
            } else if (!reserved) {
                w.reserved = false; // a try refused: nothing of it in Redis
                next = NEW;
            } else {
                w.slot = (Long) reply.get(2);
                next = waitMicros <= 0 ? ADMITTED : WAITING;
                w.state = next;
                if (next == WAITING) {
                    waiting.incrementAndGet();
                    w.timer = timers.schedule(() -> due(w), waitMicros, TimeUnit.MICROSECONDS);
                }
            }
        }
        if (next == ADMITTED) {
            handOver(w, 0);
        } else if (next == ENDED && reserved) {
            sendCancel(w); // I3
        } else if (next == NEW && end(w, false)) { // the try refused
            w.completer.cancel();
        }
    }

    private void due(Waiter w) {
        synchronized (w) {
            if (w.state != WAITING) {
                return;
            }
            w.state = ADMITTED;
            w.timer = null;
        }
        waiting.decrementAndGet();
        handOver(w, System.nanoTime() - w.startNanos);
    }

    private void handOver(Waiter w, long waited) {
        forget(w);
        if (w.completer.complete(w)) { // refused only if cancelled first: its cancel action gave it back
            live.admitted(waited);
        }
    }

    /**
     * Ends {@code w} if it has not ended: forgets it, stops its timer and, if Redis may hold its
     * reservation, sends CANCEL. {@code byToken}: called as the completer's cancel action, which may
     * find the waiter admitted but not handed over. Returns whether this call ended it.
     */
    private boolean end(Waiter w, boolean byToken) {
        boolean send;
        Cancellable timer;
        boolean wasWaiting;
        synchronized (w) {
            int s = w.state;
            if (s == ENDED || (s == ADMITTED && !byToken)) {
                return false;
            }
            w.state = ENDED;
            send = w.reserved;
            timer = w.timer;
            w.timer = null;
            wasWaiting = s == WAITING;
        }
        if (wasWaiting) {
            waiting.decrementAndGet();
        }
        if (timer != null) {
            timer.cancel();
        }
        if (send) {
            sendCancel(w); // before forget: the connection stays open while the round trip is in flight
        }
        forget(w);
        return true;
    }

    private void fail(Waiter w, Throwable error) {
        live.fail(w, () -> link.failure("acquire", error));
    }

    private void forget(Waiter w) {
        live.remove(w);
        maybeShutDown();
    }

    private void sendCancel(Waiter w) {
        eval(CANCEL, ScriptOutputType.INTEGER, w.id);
    }

    // ---------------------------------------------------------------- Redis

    /** One round trip on the gate's key, bounded by the Redis timeout. */
    private <T> CompletableFuture<T> eval(GateLink.Script script, ScriptOutputType type, String... args) {
        return link.eval(script, type, keys, args);
    }

    private void maybeShutDown() {
        if (live.closedAndDrained() && link.idle() && shutDown.compareAndSet(false, true)) {
            link.closeAsync();
        }
    }
}
