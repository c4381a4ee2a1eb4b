package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.Blocking;
import dev.coro.internal.Durations;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;

/**
 * A gate that admits operations at a rate: a token bucket on a scheduler's clock (one of P4215's
 * future gates). Tokens arrive one every {@link #intervalNanos()} and accumulate up to the
 * {@linkplain #burst() burst}; an operation takes one token (or the number of permits it asks for)
 * when it is admitted, and gives nothing back when it ends. Where a team would reach for Guava's or
 * Resilience4j's {@code RateLimiter}, this gate waits without a thread, serves waiters in order
 * without making the next caller pay for a large request, and fails a request at once when its
 * deadline cannot be met.
 *
 * <p><b>Admission rule.</b> A request for {@code n} permits is admitted when the bucket holds
 * {@code n} tokens. With a burst of 1 (the default) starts are evenly spaced, one interval apart;
 * after the gate has been idle for {@code burst} intervals, {@code burst} permits are admitted at
 * once, and never more (but see the schedule, below, for a stall of the JVM).
 *
 * <p><b>Fairness.</b> Waiters are served in arrival order (FIFO), each as soon as its tokens are
 * there; a newcomer is admitted at once only when nobody waits (no barging). A request for many
 * permits waits until they have accumulated; the requests behind it wait for it, and then for their
 * own tokens, which arrive after it: nobody pays in advance for somebody else's request.
 *
 * <p><b>Deadlines.</b> {@link #within(Duration, Task)} and its siblings bound the wait. A request
 * whose turn, by the schedule at its arrival (the requests ahead of it served first), comes at or
 * after its deadline fails at once with {@link TimeoutException}, without waiting; one that can
 * make it waits for its turn, and if its deadline passes first all the same (a timer that fired
 * late), it fails then with {@link TimeoutException}. It is never admitted at or after its
 * deadline. Time is the clock of the scheduler the gate was created with, so a virtual-time
 * scheduler drives the gate exactly in tests. The gate keeps one timer, for the first waiter's
 * tokens or the earliest deadline, never one per waiter.
 *
 * <p><b>The schedule.</b> A backlog keeps its schedule: each queued waiter has a slot, the time at
 * which its tokens are there with every waiter ahead of it admitted on its own slot. When the timer
 * fires late, or the JVM stalls (a GC pause, a descheduled thread), the waiters whose slots have
 * passed are admitted at once when it resumes, and the ones behind keep their slots: 10,000 waiters
 * on 1,000 permits per second take 10 s, not 10 s plus every stall. So the rate holds on the
 * schedule (at most {@code burst} plus one permit per interval in any span of slots), and after a
 * stall the admissions catch up. Where starts must never be closer than the interval on the clock,
 * even after a stall, use {@link ThrottleGate}.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if the tokens are
 * there now and nobody waits; otherwise they complete on the cancelled channel without queueing and
 * without running the work.
 *
 * <p><b>Cancellation.</b> A waiter whose task is cancelled completes on the cancelled channel and
 * takes no token: if the gate had just admitted it when the cancellation won the race, its tokens
 * go back before anyone else is considered. Its place goes to the waiter behind it.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread that admits it already runs that scheduler, otherwise by submission. A request
 * admitted at once continues on the thread that asked; one admitted when its tokens arrive is
 * resumed from the gate's timer, on its own scheduler.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and
 * every later request completes cancelled without running its work. Admitted work is not tracked
 * (a rate spends its tokens), so {@link #closeAndCheck()} never finds any.
 *
 * <p><b>Bad input.</b> A rate that is not positive or above 10<sup>9</sup> per second (one token
 * per nanosecond), a burst below 1, permits below 1 or above the burst: {@link IllegalArgumentException}
 * naming the argument; a null task, body, duration or scheduler: {@link NullPointerException}. A
 * zero or negative timeout is a deadline that has passed: the request fails at once with
 * {@link TimeoutException} unless it is admitted at once.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions before a request is admitted
 * happen-before the admission of the next one.
 *
 * {@snippet :
 * RateGate api = new RateGate(50, 10);            // 50 requests per second, bursts of 10
 * Task<Response> call = api.within(Duration.ofSeconds(2), client.get(url));
 * }
 */
public final class RateGate extends AdmissionGate implements Gate {
    /* Rule: TokenBucket (its overview), unbounded: no exits. A waiter's tag is its permits (a Long)
     * or, with a deadline, a TokenBucket.Ask made when the request reaches the gate (Task.defer). */

    private static final Long ONE = 1L;

    private final TokenBucket bucket;
    private final SchedulerClock clock;
    private final Door one;

    /**
     * Creates a gate of {@code permitsPerSecond} with a burst of 1 on the system clock
     * ({@link Scheduler#inline()}'s).
     *
     * @param permitsPerSecond the rate
     * @throws IllegalArgumentException if the rate is not positive or above 10<sup>9</sup>
     */
    public RateGate(double permitsPerSecond) {
        this(permitsPerSecond, 1);
    }

    /**
     * Creates a gate of {@code permitsPerSecond} with {@code burst} on the system clock.
     *
     * @param permitsPerSecond the rate
     * @param burst the most tokens that accumulate
     * @throws IllegalArgumentException if the rate is not positive or above 10<sup>9</sup>, or
     *     {@code burst < 1}
     */
    public RateGate(double permitsPerSecond, int burst) {
        this(permitsPerSecond, burst, Scheduler.inline());
    }

    /**
     * Creates a gate of {@code permitsPerSecond} with {@code burst} on {@code clock}'s time and
     * timers.
     *
     * @param permitsPerSecond the rate
     * @param burst the most tokens that accumulate
     * @param clock the scheduler whose clock and timers the gate uses
     * @throws IllegalArgumentException if the rate is not positive or above 10<sup>9</sup>, or
     *     {@code burst < 1}
     * @throws NullPointerException if {@code clock} is null
     */
    public RateGate(double permitsPerSecond, int burst, Scheduler clock) {
        this(intervalOf(permitsPerSecond), burst, new SchedulerClock(Objects.requireNonNull(clock, "clock")));
    }

    /**
     * Creates a gate of {@code permits} per {@code period} with {@code burst} on {@code clock}'s
     * time and timers. The interval between tokens is {@code period / permits}, rounded to the
     * nanosecond.
     *
     * @param permits the tokens per period
     * @param period the period
     * @param burst the most tokens that accumulate
     * @param clock the scheduler whose clock and timers the gate uses
     * @throws IllegalArgumentException if {@code permits < 1}, the period is not positive, the
     *     interval would be below a nanosecond, or {@code burst < 1}
     * @throws NullPointerException if {@code period} or {@code clock} is null
     */
    public RateGate(long permits, Duration period, int burst, Scheduler clock) {
        this(intervalOf(permits, period), burst, new SchedulerClock(Objects.requireNonNull(clock, "clock")));
    }

    private RateGate(long interval, int burst, SchedulerClock clock) {
        this(new TokenBucket("RateGate", interval, checkBurst(burst, interval), Long.MAX_VALUE, true, clock), clock);
    }

    private RateGate(TokenBucket bucket, SchedulerClock clock) {
        super(bucket);
        this.bucket = bucket;
        this.clock = clock;
        this.one = new Door(ONE, 1);
    }

    /**
     * Returns a task that waits for one token, then runs {@code work}; the task ends with
     * {@code work}'s outcome, or completes cancelled without running it if the wait is cancelled
     * or the gate is closed.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        return one.spendThen(work);
    }

    /**
     * Returns a task that waits for {@code permits} tokens, then runs {@code work}; as
     * {@link #within(Task)} otherwise.
     *
     * @param permits the tokens the work takes, between 1 and the burst
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws IllegalArgumentException if {@code permits} is below 1 or above the burst
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(long permits, Task<T> work) {
        return door(checkPermits(permits)).spendThen(work);
    }

    /**
     * Returns a task that waits for one token for at most {@code timeout} from the moment it reaches
     * the gate, then runs {@code work}. If its turn by the schedule comes after the deadline, it
     * fails at once with {@link TimeoutException}; if the deadline passes while it waits, it fails
     * then; {@code work} does not run in either case.
     *
     * @param timeout the longest wait for admission
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code timeout} or {@code work} is null
     */
    public <T> Task<T> within(Duration timeout, Task<T> work) {
        return within(1, timeout, work);
    }

    /**
     * Returns a task that waits for {@code permits} tokens for at most {@code timeout}, then runs
     * {@code work}; as {@link #within(Duration, Task)} otherwise.
     *
     * @param permits the tokens the work takes, between 1 and the burst
     * @param timeout the longest wait for admission
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws IllegalArgumentException if {@code permits} is below 1 or above the burst
     * @throws NullPointerException if {@code timeout} or {@code work} is null
     */
    public <T> Task<T> within(long permits, Duration timeout, Task<T> work) {
        long n = checkPermits(permits);
        long nanos = timeoutNanos(timeout);
        Objects.requireNonNull(work, "work");
        return Task.defer(() -> new Door(new TokenBucket.Ask(n, clock.deadlineAfter(nanos), AdmissionEngine.NO_DEADLINE), n).spendThen(work));
    }

    /**
     * Returns a task that runs {@code work} only if a token is there now and nobody waits; otherwise
     * it completes on the cancelled channel without queueing and without running {@code work}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(Task<T> work) {
        return one.trySpendThen(work);
    }

    /**
     * Returns a task that runs {@code work} only if {@code permits} tokens are there now and nobody
     * waits; as {@link #tryWithin(Task)} otherwise.
     *
     * @param permits the tokens the work takes, between 1 and the burst
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws IllegalArgumentException if {@code permits} is below 1 or above the burst
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithin(long permits, Task<T> work) {
        return door(checkPermits(permits)).trySpendThen(work);
    }

    /**
     * Returns a task that waits for one token and completes with an {@link Admission} whose exit
     * does nothing (the token is spent): for code that cannot be written as a task.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquire() {
        return one.acquireSpent();
    }

    /**
     * Returns a task that waits for {@code permits} tokens; as {@link #acquire()} otherwise.
     *
     * @param permits the tokens, between 1 and the burst
     * @return the acquiring task
     * @throws IllegalArgumentException if {@code permits} is below 1 or above the burst
     */
    public Task<Admission> acquire(long permits) {
        return door(checkPermits(permits)).acquireSpent();
    }

    /**
     * Returns a task that completes with an {@link Admission} if a token is there now and nobody
     * waits, and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return one.tryAcquireSpent();
    }

    /**
     * Blocks the calling thread until a token is there (parking only the virtual thread on a
     * virtual thread), runs {@code body} and returns its value: {@code within(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(Callable<? extends T> body) {
        Blocking.checkAllowed(RateGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(Task.<T>fromCallable(body)).join();
    }

    /**
     * Returns the interval between tokens.
     *
     * @return nanoseconds per token
     */
    public long intervalNanos() {
        return bucket.interval;
    }

    /**
     * Returns the burst: the most tokens that accumulate.
     *
     * @return the burst
     */
    public int burst() {
        return (int) bucket.burst;
    }

    /**
     * Returns the gate's clock: the time deadlines are points on.
     *
     * @return the scheduler's {@link Scheduler#nanoTime()}
     */
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public String toString() {
        return "RateGate[interval=" + bucket.interval + "ns, burst=" + bucket.burst + (isClosed() ? ", closed]" : "]");
    }

    private Door door(long permits) {
        return permits == 1 ? one : new Door(permits, permits);
    }

    private long checkPermits(long permits) {
        if (permits < 1 || permits > bucket.burst) {
            throw new IllegalArgumentException("permits must be between 1 and the burst (" + bucket.burst + "), got " + permits);
        }
        return permits;
    }

    static long intervalOf(double permitsPerSecond) {
        if (!(permitsPerSecond > 0) || permitsPerSecond > 1e9) {
            throw new IllegalArgumentException("permitsPerSecond must be positive and at most 1e9, got " + permitsPerSecond);
        }
        return Math.max(1, Math.round(1e9 / permitsPerSecond));
    }

    static long intervalOf(long permits, Duration period) {
        Objects.requireNonNull(period, "period");
        if (permits < 1) {
            throw new IllegalArgumentException("permits must be positive, got " + permits);
        }
        if (period.isNegative() || period.isZero()) {
            throw new IllegalArgumentException("period must be positive, got " + period);
        }
        long interval = Math.round((double) Durations.toNanos(period) / permits);
        if (interval < 1) {
            throw new IllegalArgumentException("permits per period must be at most one per nanosecond, got "
                    + permits + " per " + period);
        }
        return interval;
    }

    static long checkBurst(long burst, long interval) {
        if (burst < 1) {
            throw new IllegalArgumentException("burst must be at least 1, got " + burst);
        }
        if (burst > Long.MAX_VALUE / 4 / interval) {
            throw new IllegalArgumentException("burst times the interval must be below 2^61 ns, got "
                    + burst + " x " + interval + " ns");
        }
        return burst;
    }

}
