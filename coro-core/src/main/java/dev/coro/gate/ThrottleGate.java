package dev.coro.gate;

import dev.coro.internal.Blocking;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A gate that spaces the starts of the operations it admits by at least a minimum interval on a
 * scheduler's clock, optionally with a bound on how many run at once (one of P4215's future gates):
 * a device that takes a command every 5 ms, an API that forbids two calls within a second, a
 * throttled job runner.
 *
 * <p><b>Admission rule.</b> An operation is admitted when at least {@link #intervalNanos()} have
 * passed since the previous admission (at once, if the gate has been idle that long) and, with a
 * bound, fewer than {@link #maxRunning()} admitted operations have not yet left. Starts are never
 * closer than the interval, and never later than needed: a waiter is admitted at the instant both
 * hold (the interval has passed, and an exit has freed a place if it was full). After a stall (a
 * late timer, a GC pause) the next start comes at once and the rest are spaced from it: unlike a
 * {@link RateGate}, which keeps its schedule and catches up, a throttle never starts two operations
 * closer than the interval on the clock.
 *
 * <p><b>Fairness.</b> Waiters are served in arrival order (FIFO); a newcomer is admitted at once only
 * when nobody waits (no barging).
 *
 * <p><b>Time.</b> The clock of the scheduler the gate was created with, so a virtual-time scheduler
 * drives the gate exactly in tests. The gate keeps one timer, for the first waiter's start, never one
 * per waiter.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if a start is allowed
 * now and nobody waits; otherwise they complete on the cancelled channel without queueing and without
 * running the work.
 *
 * <p><b>Cancellation.</b> A waiter whose task is cancelled completes on the cancelled channel and
 * takes no start: if the gate had just admitted it when the cancellation won the race, its start goes
 * back before anyone else is considered.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread that admits it (a caller, an exit, the gate's timer) already runs that scheduler,
 * otherwise by submission. An operation admitted at once continues on the thread that asked.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and every
 * later request completes cancelled without running its work; admitted work runs to its end.
 * {@link #closeAndCheck()} (the destruction rule: a gate must outlive the work it admitted) closes and throws
 * {@link IllegalStateException} if admitted work of a bounded gate remains.
 *
 * <p><b>Bad input.</b> A zero or negative interval, or {@code maxRunning < 1}:
 * {@link IllegalArgumentException} naming the argument; a null task, body, interval or scheduler:
 * {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions before an admission happen-before
 * the next admission; with a bound, actions of an operation before it leaves happen-before the
 * admission of the waiter that takes its place.
 *
 * {@snippet :
 * ThrottleGate plotter = new ThrottleGate(Duration.ofMillis(5), 1, scheduler);  // a command every 5 ms, one at a time
 * Task<Void> move = plotter.within(device.send(command));
 * }
 */
public final class ThrottleGate extends AdmissionGate implements Gate {
    /* Rule: TokenBucket (its overview) with a burst of 1, so starts are one interval apart at least;
     * bounded by maxRunning when given, in which case admitted work leaves (release 1) on every path.
     * Unbounded, there is nothing to give back, and within spends its start without an exit. */

    private static final Long ONE = 1L;

    private final TokenBucket bucket;
    private final boolean bounded;
    private final Door door;

    /**
     * Creates a gate whose admissions start at least {@code minInterval} apart, on the system clock
     * ({@link Scheduler#inline()}'s), with no bound on the operations running at once.
     *
     * @param minInterval the least time between two starts
     * @throws IllegalArgumentException if {@code minInterval} is zero or negative
     * @throws NullPointerException if {@code minInterval} is null
     */
    public ThrottleGate(Duration minInterval) {
        this(minInterval, Integer.MAX_VALUE, Scheduler.inline());
    }

    /**
     * Creates a gate whose admissions start at least {@code minInterval} apart on {@code clock}, with
     * no bound on the operations running at once.
     *
     * @param minInterval the least time between two starts
     * @param clock the scheduler whose clock and timers the gate uses
     * @throws IllegalArgumentException if {@code minInterval} is zero or negative
     * @throws NullPointerException if an argument is null
     */
    public ThrottleGate(Duration minInterval, Scheduler clock) {
        this(minInterval, Integer.MAX_VALUE, clock);
    }

    /**
     * Creates a gate whose admissions start at least {@code minInterval} apart on {@code clock}, with
     * at most {@code maxRunning} admitted operations at once ({@link Integer#MAX_VALUE}: no bound).
     *
     * @param minInterval the least time between two starts
     * @param maxRunning the most admitted operations that have not left
     * @param clock the scheduler whose clock and timers the gate uses
     * @throws IllegalArgumentException if {@code minInterval} is zero or negative, or
     *     {@code maxRunning < 1}
     * @throws NullPointerException if an argument is null
     */
    public ThrottleGate(Duration minInterval, int maxRunning, Scheduler clock) {
        this(new TokenBucket("ThrottleGate", intervalOf(minInterval), 1, checkMaxRunning(maxRunning), false,
                new SchedulerClock(Objects.requireNonNull(clock, "clock"))));
    }

    private ThrottleGate(TokenBucket bucket) {
        super(bucket);
        this.bucket = bucket;
        this.bounded = bucket.maxRunning != Long.MAX_VALUE;
        this.door = new Door(ONE, 1);
    }

    /**
     * Returns a task that waits for its start, then runs {@code work} (and, with a bound, leaves when
     * {@code work} completes on any channel). The task ends with {@code work}'s outcome, or completes
     * cancelled without running it if the wait is cancelled or the gate is closed.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> within(Task<T> work) {
        return bounded ? door.within(work) : door.spendThen(work);
    }

    /**
     * Returns a task that runs {@code work} only if it may start now and nobody waits; otherwise it
     * completes on the cancelled channel without queueing and without running {@code work}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(Task<T> work) {
        return bounded ? door.tryWithin(work) : door.trySpendThen(work);
    }

    /**
     * Returns a task that waits for its start and completes with the {@link Admission}, whose
     * {@link Admission#exit()} leaves the gate (frees a place of a bounded gate; does nothing
     * otherwise). Prefer {@link #within(Task)}.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquire() {
        return bounded ? door.acquire() : door.acquireSpent();
    }

    /**
     * Returns a task that completes with an {@link Admission} if it may start now and nobody waits,
     * and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return bounded ? door.tryAcquire() : door.tryAcquireSpent();
    }

    /**
     * Blocks the calling thread until its start (parking only the virtual thread on a virtual thread),
     * runs {@code body}, leaves and returns the body's value: {@code within(Task.fromCallable(body)).join()}.
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
        Blocking.checkAllowed(ThrottleGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(Task.<T>fromCallable(body)).join();
    }

    /**
     * Returns the least time between two starts.
     *
     * @return nanoseconds
     */
    public long intervalNanos() {
        return bucket.interval;
    }

    /**
     * Returns the bound on admitted operations at once, or {@link Integer#MAX_VALUE} if none.
     *
     * @return the bound
     */
    public int maxRunning() {
        return bounded ? (int) bucket.maxRunning : Integer.MAX_VALUE;
    }

    @Override
    public String toString() {
        return "ThrottleGate[interval=" + bucket.interval + "ns" + (bounded ? ", maxRunning=" + bucket.maxRunning : "")
                + (isClosed() ? ", closed]" : "]");
    }

    private static long intervalOf(Duration minInterval) {
        Objects.requireNonNull(minInterval, "minInterval");
        if (minInterval.isNegative() || minInterval.isZero()) {
            throw new IllegalArgumentException("minInterval must be positive, got " + minInterval);
        }
        long nanos = dev.coro.internal.Durations.toNanos(minInterval);
        if (nanos > Long.MAX_VALUE / 4) {
            throw new IllegalArgumentException("minInterval must be below 2^61 ns, got " + minInterval);
        }
        return nanos;
    }

    private static long checkMaxRunning(int maxRunning) {
        if (maxRunning < 1) {
            throw new IllegalArgumentException("maxRunning must be positive, got " + maxRunning);
        }
        return maxRunning == Integer.MAX_VALUE ? Long.MAX_VALUE : maxRunning;
    }
}
