package dev.coro.gate;

import dev.coro.internal.Durations;
import dev.coro.internal.PermitLane;
import dev.coro.internal.WaitOrder;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A gate that admits at most {@code capacity} operations at once and hands a freed slot to the
 * waiter of highest priority (one of P4215's future gates): interactive requests overtake queued batch
 * work in front of a shared service. Work enters with {@link #within(int, Task)} and leaves when it
 * completes.
 *
 * <p><b>Admission rule.</b> An operation is admitted while fewer than {@code capacity} admitted
 * operations have not yet left.
 *
 * <p><b>Fairness.</b> A freed slot goes to the waiting operation of highest priority (an
 * {@code int}, higher first), the oldest among equal priorities; a newcomer takes a free slot only
 * when nobody waits (no barging). Starvation policy: by default a low-priority waiter is admitted only
 * when no higher one waits, so a steady stream of higher-priority work can hold it back for as long
 * as the stream lasts. With aging ({@link #PriorityGate(int, Duration, Scheduler)}) the rule is one
 * line: <em>waiters are admitted in order of arrival time minus priority times the aging step</em>;
 * that is, every {@code agingStep} a waiter has waited counts as one priority more. So a waiter of
 * priority {@code p} that arrived at {@code t} is admitted before every waiter of priority {@code q}
 * that arrives after {@code t + (q - p) * agingStep}: its wait is bounded by the work admitted before
 * that instant, however long the stream of higher priorities lasts.
 *
 * <p><b>Try.</b> {@link #tryWithin(int, Task)} and {@link #tryAcquire(int)} admit only if a slot
 * is free and nobody waits; otherwise they complete on the cancelled channel without queueing and
 * without running the work (so a try never overtakes a waiter, whatever its priority).
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and
 * every later acquisition completes cancelled without running its work; admitted work runs to its
 * end. {@link #closeAndCheck()} (the destruction rule: a gate must outlive the work it admitted) closes and throws
 * {@link IllegalStateException} if admitted work remains.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel, gives up its place and takes no slot; if the hand-off won the race, the work is admitted
 * and its slot is given back when it ends. Either way no slot is lost (one CAS decides).
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread that frees the slot already runs that scheduler, otherwise by submission. An
 * operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> {@code capacity <= 0}, or an {@code agingStep} that is not positive:
 * {@link IllegalArgumentException}; a null task, body, step or scheduler:
 * {@link NullPointerException}. Every {@code int} is a valid priority.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, entering and leaving
 * are one atomic instruction each. Actions of an operation before it leaves the gate happen-before the
 * admission of the waiter that takes its slot.
 *
 * {@snippet :
 * PriorityGate service = new PriorityGate(4);
 * Task<Page> page = service.within(10, render(request));     // interactive: ahead of the batch
 * Task<Void> report = service.within(0, exportReport());     // batch: when no interactive work waits
 * }
 */
public final class PriorityGate extends AdmissionGate {
    /* Rule: a permit lane of `capacity` units whose order is by key (a heap, AdmissionEngine's
     * WaitOrder.byKey), arrival order among equal keys. A waiter's tag is its priority (an Integer).
     * Without aging the key is -priority. With aging the key is (the time the owner takes the waiter)
     * - priority * step, saturated; the lane then has the scheduler's clock, so that the owner takes
     * every arrival at once (AdmissionEngine: a clock makes the engine take every arrival) and the
     * time read is the arrival's. Comparing two such keys compares effective priorities at any
     * common later time, since both grow at the same rate: the key never has to change. */

    private final long agingStepNanos;

    /**
     * Creates an open gate with {@code capacity} free slots and no aging: a waiter is admitted only
     * when no waiter of higher priority waits.
     *
     * @param capacity the most operations admitted at once
     * @throws IllegalArgumentException if {@code capacity <= 0}
     */
    public PriorityGate(int capacity) {
        super(new PermitLane(checkCapacity(capacity), WaitOrder.byKey(tag -> -(long) (Integer) tag), null) {});
        this.agingStepNanos = 0;
    }

    /**
     * Creates an open gate with {@code capacity} free slots whose waiters age on {@code clock}'s time:
     * each {@code agingStep} a waiter has waited counts as one priority more (see the class
     * description for the bound this gives).
     *
     * @param capacity the most operations admitted at once
     * @param agingStep the wait worth one priority level
     * @param clock the scheduler whose clock measures waiting
     * @throws IllegalArgumentException if {@code capacity <= 0} or {@code agingStep} is zero or
     *     negative
     * @throws NullPointerException if {@code agingStep} or {@code clock} is null
     */
    public PriorityGate(int capacity, Duration agingStep, Scheduler clock) {
        this(checkCapacity(capacity), checkStep(agingStep), new SchedulerClock(Objects.requireNonNull(clock, "clock")));
    }

    private PriorityGate(int capacity, long step, SchedulerClock clock) {
        super(new PermitLane(capacity, WaitOrder.byKey(tag -> agedKey(clock.nanoTime(), (Integer) tag, step)), clock) {});
        this.agingStepNanos = step;
    }

    private static long checkStep(Duration agingStep) {
        Objects.requireNonNull(agingStep, "agingStep");
        if (agingStep.isNegative() || agingStep.isZero()) {
            throw new IllegalArgumentException("agingStep must be positive, got " + agingStep);
        }
        return Durations.toNanos(agingStep);
    }

    /** arrival - priority * step, saturated at the ends of long (keys are only compared). */
    static long agedKey(long arrival, int priority, long step) {
        long lift = (long) priority * step;
        if (Math.multiplyHigh(priority, step) != lift >> 63) { // the product overflowed: saturate
            lift = priority > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
        }
        long key = arrival - lift;
        if (((arrival ^ lift) & (arrival ^ key)) < 0) { // the difference overflowed: saturate
            return lift > 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return key;
    }

    /**
     * Returns a task that waits until this gate admits the caller with {@code priority} and completes
     * with the {@link Admission}, whose {@link Admission#exit()} leaves the gate. Prefer
     * {@link #within(int, Task)}, which exits on every completion path by construction. The task may
     * be started any number of times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing; if the admission won the race, it completes with the admission, which must be exited.
     * After {@link #close()} a run completes cancelled.
     *
     * @param priority the priority: higher first
     * @return the acquiring task
     */
    public Task<Admission> acquire(int priority) {
        return door(priority).acquire();
    }

    /**
     * Returns a task that completes with an {@link Admission} if a slot is free now and nobody waits,
     * and otherwise completes on the cancelled channel without queueing.
     *
     * @param priority the priority (a try never queues, so it matters only for symmetry)
     * @return the trying task
     */
    public Task<Admission> tryAcquire(int priority) {
        return door(priority).tryAcquire();
    }

    /**
     * Returns a task that waits for admission with {@code priority}, then runs {@code work}, then
     * leaves the gate when {@code work} completes on any channel. If the wait is cancelled, or the
     * gate is closed, the task completes cancelled and {@code work} does not run. The task ends with
     * {@code work}'s outcome.
     *
     * @param priority the priority: higher first
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(int priority, Task<T> work) {
        return door(priority).within(work);
    }

    /**
     * Returns a task that runs {@code work} under this gate only if a slot is free now and nobody
     * waits (and no other thread is deciding an admission at that instant): otherwise it completes on
     * the cancelled channel, without queueing and without running {@code work}.
     *
     * @param priority the priority (a try never queues, so it matters only for symmetry)
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithin(int priority, Task<T> work) {
        return door(priority).tryWithin(work);
    }

    /**
     * Blocks the calling thread until it is admitted with {@code priority} (parking only the virtual
     * thread on a virtual thread), runs {@code body}, leaves the gate and returns the body's value:
     * {@code within(priority, Task.fromCallable(body)).join()}.
     *
     * @param priority the priority: higher first
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
    public <T> T call(int priority, Callable<? extends T> body) {
        return door(priority).call("call", body);
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
     * Returns the aging step.
     *
     * @return the wait worth one priority level, or {@link Duration#ZERO} without aging
     */
    public Duration agingStep() {
        return Duration.ofNanos(agingStepNanos);
    }

    private Door door(int priority) {
        return new Door(priority, 1); // the tag is the priority (boxed; small ones are cached)
    }

    private PermitLane lane() {
        return (PermitLane) engine;
    }

    @Override
    public String toString() {
        return "PriorityGate[capacity=" + capacity() + ", available=" + available()
                + (agingStepNanos > 0 ? ", agingStep=" + agingStep() : "") + (isClosed() ? ", closed]" : "]");
    }
}
