package dev.coro.gate;

import dev.coro.internal.Blocking;
import dev.coro.internal.PermitLane;
import dev.coro.internal.WaitOrder;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A gate that admits at most {@code capacity} operations at once, earliest deadline first, and fails
 * a waiter whose deadline passes before it is admitted (one of P4215's future gates): a slow service
 * whose late requests should fail fast instead of taking a slot whose answer nobody waits for any
 * more. Work enters with {@link #within(Duration, Task)} (a timeout from the moment it reaches the
 * gate) or {@link #within(long, Task)} (a point on the gate's clock, {@link #nanoTime()}) and leaves
 * when it completes.
 *
 * <p><b>Admission rule.</b> An operation is admitted while fewer than {@code capacity} admitted
 * operations have not yet left, and only before its deadline.
 *
 * <p><b>Fairness.</b> A freed slot goes to the waiting operation with the earliest deadline, the
 * oldest among equal deadlines; a newcomer takes a free slot only when nobody waits (no barging). A
 * waiter with a late deadline waits while earlier deadlines keep arriving: the order is the point.
 *
 * <p><b>Deadlines.</b> Time is the clock of the scheduler the gate was created with (virtual time in
 * tests). A waiter whose deadline passes before admission completes with {@link TimeoutException}
 * on the error channel at its deadline (when the gate's timer fires, never before), takes nothing,
 * and is never admitted. A request whose deadline has already passed when it reaches the gate fails
 * the same way at once, without queueing, even if a slot is free. Once admitted, work is not timed:
 * the deadline is for admission (add {@code work.timeout(...)} to bound the work itself). A deadline
 * beyond the end of the clock's range ({@code Long.MAX_VALUE}, a {@code Duration} of centuries) means
 * never. The gate keeps one timer, for the earliest deadline among its waiters, never one per waiter.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if a slot is free
 * and nobody waits; otherwise they complete on the cancelled channel without queueing and without
 * running the work (a try does not wait, so it has no deadline).
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel (not
 * with a timeout), and every later acquisition completes cancelled without running its work; admitted
 * work runs to its end. {@link #closeAndCheck()} (the destruction rule: a gate must outlive the work it admitted) closes and throws
 * {@link IllegalStateException} if admitted work remains.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel, gives up its place and takes no slot; if the hand-off won the race, the work is admitted
 * and its slot is given back when it ends. Cancellation, expiry and admission race on one CAS: a
 * waiter ends exactly one way, and no slot is lost.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread that frees the slot already runs that scheduler, otherwise by submission. An
 * operation admitted at once continues on the thread that asked. A timeout completes the waiter from
 * the gate's timer, on the waiter's own scheduler.
 *
 * <p><b>Bad input.</b> {@code capacity <= 0}: {@link IllegalArgumentException}; a null task, body,
 * timeout or scheduler: {@link NullPointerException}. A negative or zero timeout is a deadline that
 * has passed (the request fails at once with {@link TimeoutException}), not an error.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, entering and leaving
 * are one atomic instruction each. Actions of an operation before it leaves the gate happen-before the
 * admission of the waiter that takes its slot.
 *
 * {@snippet :
 * DeadlineGate service = new DeadlineGate(8);
 * Task<Quote> quote = service.within(Duration.ofMillis(200), fetchQuote(symbol));
 * // TimeoutException if no slot frees within 200 ms: the caller has moved on by then
 * }
 */
public final class DeadlineGate extends AdmissionGate {
    /* Rule: a permit lane of `capacity` units whose order is by key (a heap) with the deadline as
     * key, and whose engine expires waiters on the scheduler's clock (AdmissionEngine's expiry: one
     * timer for the earliest deadline). A waiter's tag is its absolute deadline (a Long), made when
     * the request reaches the gate (Task.defer), so a Duration counts from the arrival, and a passed
     * deadline fails there without touching the engine. */

    /** The deadlines' clock (package-private: tests reach its scheduler). */
    final SchedulerClock clock;
    private final Door tryDoor = new Door(Long.MAX_VALUE, 1);

    /**
     * Creates an open gate with {@code capacity} free slots on the system clock
     * ({@link Scheduler#inline()}'s: {@link System#nanoTime()}, timers on a shared daemon thread).
     *
     * @param capacity the most operations admitted at once
     * @throws IllegalArgumentException if {@code capacity <= 0}
     */
    public DeadlineGate(int capacity) {
        this(capacity, Scheduler.inline());
    }

    /**
     * Creates an open gate with {@code capacity} free slots whose deadlines are on {@code clock}'s
     * time and timers.
     *
     * @param capacity the most operations admitted at once
     * @param clock the scheduler whose clock and timers the deadlines use
     * @throws IllegalArgumentException if {@code capacity <= 0}
     * @throws NullPointerException if {@code clock} is null
     */
    public DeadlineGate(int capacity, Scheduler clock) {
        this(checkCapacity(capacity), new SchedulerClock(Objects.requireNonNull(clock, "clock")));
    }

    private DeadlineGate(int capacity, SchedulerClock clock) {
        super(new Deadlines(capacity, clock));
        this.clock = clock;
    }

    /**
     * Returns the gate's clock: the time deadlines are points on.
     *
     * @return the scheduler's {@link Scheduler#nanoTime()}
     */
    public long nanoTime() {
        return clock.nanoTime();
    }

    /**
     * Returns a task that waits until this gate admits the caller, for at most {@code timeout} from
     * the moment the task reaches the gate, and completes with the {@link Admission}, whose
     * {@link Admission#exit()} leaves the gate. Prefer {@link #within(Duration, Task)}, which exits on
     * every completion path by construction. The task may be started any number of times; each run
     * has its own deadline.
     *
     * <p>Outcomes: the admission; {@link TimeoutException} on the error channel if the deadline passes
     * first; the cancelled channel if the run is cancelled while it waits or the gate is closed.
     *
     * @param timeout the longest wait for admission
     * @return the acquiring task
     * @throws NullPointerException if {@code timeout} is null
     */
    public Task<Admission> acquire(Duration timeout) {
        long nanos = timeoutNanos(timeout);
        return Task.defer(() -> admitBy(clock.deadlineAfter(nanos), Door::acquire));
    }

    /**
     * Returns a task that waits until this gate admits the caller, at the latest at
     * {@code deadlineNanos} on the gate's clock ({@link #nanoTime()}), and completes with the
     * {@link Admission}; as {@link #acquire(Duration)} otherwise.
     *
     * @param deadlineNanos the latest admission time on the gate's clock
     * @return the acquiring task
     */
    public Task<Admission> acquire(long deadlineNanos) {
        return Task.defer(() -> admitBy(deadlineNanos, Door::acquire));
    }

    /**
     * Returns a task that completes with an {@link Admission} if a slot is free now and nobody waits,
     * and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return tryDoor.tryAcquire();
    }

    /**
     * Returns a task that waits for admission, for at most {@code timeout} from the moment it reaches
     * the gate, then runs {@code work}, then leaves the gate when {@code work} completes on any
     * channel. If the deadline passes first, the task fails with {@link TimeoutException} and
     * {@code work} does not run; if the wait is cancelled, or the gate is closed, the task completes
     * cancelled and {@code work} does not run. Otherwise the task ends with {@code work}'s outcome.
     *
     * @param timeout the longest wait for admission (zero or negative: fails at once)
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code timeout} or {@code work} is null
     */
    public <T> Task<T> within(Duration timeout, Task<T> work) {
        long nanos = timeoutNanos(timeout);
        Objects.requireNonNull(work, "work");
        return Task.defer(() -> admitBy(clock.deadlineAfter(nanos), door -> door.within(work)));
    }

    /**
     * Returns a task that waits for admission until {@code deadlineNanos} on the gate's clock
     * ({@link #nanoTime()}), then runs {@code work}; as {@link #within(Duration, Task)} otherwise.
     *
     * @param deadlineNanos the latest admission time on the gate's clock
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(long deadlineNanos, Task<T> work) {
        Objects.requireNonNull(work, "work");
        return Task.defer(() -> admitBy(deadlineNanos, door -> door.within(work)));
    }

    /**
     * Returns a task that runs {@code work} under this gate only if a slot is free now and nobody
     * waits (and no other thread is deciding an admission at that instant): otherwise it completes on
     * the cancelled channel, without queueing and without running {@code work}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithin(Task<T> work) {
        return tryDoor.tryWithin(work);
    }

    /**
     * Blocks the calling thread until it is admitted, for at most {@code timeout} (parking only the
     * virtual thread on a virtual thread), runs {@code body}, leaves the gate and returns the body's
     * value: {@code within(timeout, Task.fromCallable(body)).join()}.
     *
     * @param timeout the longest wait for admission
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code timeout} or {@code body} is null
     * @throws java.util.concurrent.CompletionException wrapping the {@link TimeoutException} if the
     *     deadline passes first (the body does not run)
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(Duration timeout, Callable<? extends T> body) {
        Blocking.checkAllowed(DeadlineGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(timeout, Task.<T>fromCallable(body)).join();
    }

    /**
     * Returns the capacity.
     *
     * @return the most operations admitted at once
     */
    public int capacity() {
        return (int) lane().permits();
    }

    /**
     * Returns the number of free slots: a snapshot for monitoring, exact when no operation is
     * entering or leaving the gate.
     *
     * @return free slots, between 0 and the capacity
     */
    public int available() {
        return (int) lane().freePermits();
    }

    /**
     * At a request's arrival: fails at once if {@code deadline} has passed, else goes through a door
     * whose tag is the deadline.
     */
    private <R> Task<R> admitBy(long deadline, Function<Door, Task<R>> through) {
        if (deadline <= clock.nanoTime()) {
            return Task.failure(new TimeoutException("DeadlineGate: the deadline had passed when the request arrived"));
        }
        return through.apply(new Door(deadline, 1));
    }

    private PermitLane lane() {
        return (PermitLane) engine;
    }

    @Override
    public String toString() {
        return "DeadlineGate[capacity=" + capacity() + ", available=" + available() + (isClosed() ? ", closed]" : "]");
    }

    /** The lane ordered by deadline, whose waiters expire at it. */
    private static final class Deadlines extends PermitLane {
        Deadlines(int capacity, SchedulerClock clock) {
            super(capacity, WaitOrder.byKey(tag -> (Long) tag), clock);
        }

        @Override
        protected long ruleDeadline(Object tag) {
            return (Long) tag;
        }

        @Override
        protected Throwable ruleTimeout(Object tag) {
            return new TimeoutException("DeadlineGate: the deadline passed before admission");
        }
    }
}
