package dev.coro.gate;

import dev.coro.internal.PermitLane;
import dev.coro.task.Task;
import java.util.concurrent.Callable;

/**
 * A gate over a budget of {@code long} units that each operation draws its own cost from (one of
 * P4215's future gates, a weighted semaphore): bytes of images being decoded, rows of queries in
 * flight, tokens of requests to a model. Work enters with {@link #within(long, Task)} and gives its
 * cost back when it completes.
 *
 * <p><b>Admission rule.</b> An operation of cost {@code c} is admitted while the units not held by
 * admitted operations cover {@code c}.
 *
 * <p><b>Fairness.</b> Strictly FIFO, whatever the costs: a large request at the head of the line is
 * not starved by a stream of small ones, because nobody overtakes it. The price: a small request
 * queued behind a large one waits until the large one is admitted, even while the free units would
 * cover the small one (head-of-line blocking, on purpose: the alternative starves large requests).
 * Units freed while the head lacks some are set aside for it (a newcomer never takes them), so the
 * head is admitted as soon as enough admitted work has left. Every waiter is eventually admitted
 * while admitted work completes and the gate stays open.
 *
 * <p><b>Try.</b> {@link #tryWithin(long, Task)} and {@link #tryAcquire(long)} admit only if the
 * free units cover the cost now and nobody is queued; otherwise they complete on the cancelled
 * channel without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter on the cancelled channel, and
 * every later acquisition completes cancelled without running its work; admitted work runs to its
 * end. {@link #closeAndCheck()} (the destruction rule: a gate must outlive the work it admitted) closes and throws
 * {@link IllegalStateException} if admitted work remains.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel, gives up its place and takes nothing; if the hand-off won the race, the work is admitted
 * and gives its cost back when it ends. Either way the budget is left exactly as it was found,
 * including for a waiter cancelled while part of its cost was already set aside for it (that part
 * goes back, to the next waiter or to the free units).
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread whose work leaves the gate already runs that scheduler, otherwise by submission.
 * An operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> {@code budget <= 0}, or a cost {@code <= 0} or above the budget (it could
 * never be admitted): {@link IllegalArgumentException} naming both; a null task or body:
 * {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, entering and leaving
 * are one atomic instruction each. Actions of an operation before it leaves the gate happen-before
 * the admission of a waiter that its units let in.
 *
 * {@snippet :
 * BudgetGate memory = new BudgetGate(256L << 20);                       // 256 MiB of decoders
 * Task<Image> image = memory.within(file.size() * 4, decode(file));     // waits for its bytes
 * }
 */
public final class BudgetGate extends AdmissionGate {
    /* Rule: a permit lane of `budget` units whose waiter's weight is its cost (the tag, a Long). The
     * lane's overview (PermitLane) holds the state machine; its P3 needs every weight <= the budget,
     * which the doors check. */

    /** Creates an open gate with {@code budget} free units.
     *
     * @param budget the units, held at most at once by admitted operations
     * @throws IllegalArgumentException if {@code budget <= 0}
     */
    public BudgetGate(long budget) {
        super(new Budget(checkBudget(budget)));
    }

    private static long checkBudget(long budget) {
        if (budget <= 0) {
            throw new IllegalArgumentException("budget must be positive, got " + budget);
        }
        return budget;
    }

    /**
     * Returns a task that waits until {@code cost} units are admitted to the caller and completes with
     * the {@link Admission}, whose {@link Admission#exit()} gives them back. Prefer
     * {@link #within(long, Task)}, which gives them back on every completion path by construction. The
     * task may be started any number of times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing; if the admission won the race, it completes with the admission, which must be exited.
     * After {@link #close()} a run completes cancelled.
     *
     * @param cost the units to take
     * @return the acquiring task
     * @throws IllegalArgumentException if {@code cost <= 0} or {@code cost > budget()}
     */
    public Task<Admission> acquire(long cost) {
        return door(cost).acquire();
    }

    /**
     * Returns a task that completes with an {@link Admission} of {@code cost} units if the free units
     * cover it now and nobody is queued, and otherwise completes on the cancelled channel without
     * queueing.
     *
     * @param cost the units to take
     * @return the trying task
     * @throws IllegalArgumentException if {@code cost <= 0} or {@code cost > budget()}
     */
    public Task<Admission> tryAcquire(long cost) {
        return door(cost).tryAcquire();
    }

    /**
     * Returns a task that waits until {@code cost} units are admitted to it, then runs {@code work},
     * then gives them back when {@code work} completes on any channel. If the wait is cancelled, or
     * the gate is closed, the task completes cancelled and {@code work} does not run. The task ends
     * with {@code work}'s outcome.
     *
     * @param cost the units {@code work} holds while it runs
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws IllegalArgumentException if {@code cost <= 0} or {@code cost > budget()}
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(long cost, Task<T> work) {
        return door(cost).within(work);
    }

    /**
     * Returns a task that runs {@code work} holding {@code cost} units only if they are free now and
     * nobody is queued (and no other thread is deciding an admission at that instant): otherwise it
     * completes on the cancelled channel, without queueing and without running {@code work}.
     *
     * @param cost the units {@code work} holds while it runs
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws IllegalArgumentException if {@code cost <= 0} or {@code cost > budget()}
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithin(long cost, Task<T> work) {
        return door(cost).tryWithin(work);
    }

    /**
     * Blocks the calling thread until {@code cost} units are admitted to it (parking only the virtual
     * thread on a virtual thread), runs {@code body}, gives them back and returns the body's value:
     * {@code within(cost, Task.fromCallable(body)).join()}.
     *
     * @param cost the units {@code body} holds while it runs
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws IllegalArgumentException if {@code cost <= 0} or {@code cost > budget()}
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(long cost, Callable<? extends T> body) {
        return door(cost).call("call", body);
    }

    /**
     * Returns the budget.
     *
     * @return the units held at most at once
     */
    public long budget() {
        return lane().permits();
    }

    /**
     * Returns the free units: a snapshot for monitoring, exact when no operation is entering or
     * leaving the gate.
     *
     * @return free units, between 0 and the budget
     */
    public long available() {
        return lane().freePermits();
    }

    private Door door(long cost) {
        if (cost <= 0 || cost > budget()) {
            throw new IllegalArgumentException("cost must be between 1 and the budget " + budget()
                    + ", got " + cost);
        }
        return new Door(cost, cost); // the tag is the cost, boxed once per door
    }

    private PermitLane lane() {
        return (PermitLane) engine;
    }

    @Override
    public String toString() {
        return "BudgetGate[budget=" + budget() + ", available=" + available() + (isClosed() ? ", closed]" : "]");
    }

    /** The lane whose waiter's weight is its cost. */
    private static final class Budget extends PermitLane {
        Budget(long budget) {
            super(budget);
        }

        @Override
        protected long ruleWeight(Object tag) {
            return (Long) tag;
        }
    }
}
