package dev.coro.scheduler;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Blocking;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Where work runs, and its clock: runs {@link Runnable}s now ({@link #execute}) or after a delay
 * ({@link #schedule}), and tells the time ({@link #nanoTime}).
 *
 * <p>A task that waits resumes on the scheduler it came from (Coro's resumption rule). When the code
 * that wakes it already runs on that scheduler ({@link #isCurrent()}), Coro may resume the waiter
 * inline, through a trampoline, instead of submitting it.
 *
 * <p><b>Thread-safety.</b> Implementations are thread-safe: any thread may submit.
 *
 * <p><b>Shutdown.</b> This interface has no shutdown method, but every Coro scheduler that has one
 * ({@link WorkStealingPool}, {@code dev.coro.io.EventLoop}, and coro-test's
 * {@code VirtualTimeScheduler}) follows one rule:
 * <ol>
 *   <li><b>New work is refused.</b> From {@code shutdown()} on, {@link #schedule} throws
 *       {@link java.util.concurrent.RejectedExecutionException} from every thread, and so does
 *       {@link #execute} from every thread outside the scheduler.</li>
 *   <li><b>Accepted work still runs.</b> Runnables queued before the shutdown run (an immediate
 *       {@code shutdownNow()}, where there is one, drops them instead).</li>
 *   <li><b>Pending timers are dropped at once</b>, without waiting for their deadlines: they never
 *       run, their handle's {@code cancel()} then answers {@code false}, and a timer task that is a
 *       {@link Cancellable} is cancelled exactly once (see {@link #schedule}), so a
 *       {@code Task.delay} or {@code Task.timeout} waiting on the scheduler completes on the
 *       cancelled channel instead of never.</li>
 * </ol>
 * Where they differ, precisely:
 * <ul>
 *   <li><b>{@code execute} from the scheduler's own threads</b> after {@code shutdown()}: the pool
 *       accepts it until it stops (so that a graph of tasks in flight can finish); the event loop
 *       refuses it like any other (the loop thread only finishes its queue); the virtual-time
 *       scheduler refuses it too.</li>
 *   <li><b>The thread that drops the timers</b>, and so where a dropped {@code Task.delay}'s
 *       continuation runs (the scheduler refusing it): the pool and the virtual-time scheduler drop
 *       them on the thread that calls {@code shutdown()}, before it returns (in the pool, a timer
 *       firing at that very moment is dropped by the timer thread instead); the event loop drops them
 *       on the loop thread, during its shutdown, after {@code shutdown()} has returned (wait with
 *       {@code awaitTermination}).</li>
 *   <li>The event loop also completes its pending I/O operations on the cancelled channel.</li>
 * </ul>
 * {@link #inline()} is never shut down. {@link #from} over an executor has no shutdown of its own:
 * it refuses {@code schedule} once an {@code ExecutorService} under it is shut down, keeps the timers
 * already pending until they are due, and drops a due timer then if the executor refuses its
 * hand-off.
 *
 * <p><b>Bad input.</b> A null runnable, delay or unit gets {@link NullPointerException}; a negative
 * delay is treated as zero; submitting after shutdown gets
 * {@link java.util.concurrent.RejectedExecutionException}.
 *
 * {@snippet :
 * try (WorkStealingPool pool = WorkStealingPool.create(4)) {
 *     pool.execute(() -> System.out.println("on " + Thread.currentThread().getName()));
 *     pool.schedule(() -> System.out.println("later"), Duration.ofMillis(100));
 * }
 * }
 */
public interface Scheduler extends Executor {
    /**
     * Runs {@code task} on this scheduler, soon.
     *
     * @param task what to run
     * @throws NullPointerException if {@code task} is null
     * @throws java.util.concurrent.RejectedExecutionException if the scheduler is shut down
     */
    @Override
    void execute(Runnable task);

    /**
     * Runs {@code task} on this scheduler once {@code delay} has passed on its clock; never early.
     *
     * <p><b>Dropped timers.</b> A scheduler that shuts down (or refuses the task when it comes due)
     * drops the timer: the task never runs. If {@code task} is also a {@link Cancellable}, the
     * scheduler then calls its {@code cancel()} once, on the thread that drops the timer, so that a
     * wait built on the timer can end: {@code Task.delay} and {@code Task.timeout} complete on the
     * cancelled channel this way. A timer cancelled through the returned handle is not dropped: its
     * task is not told.
     *
     * @param task what to run
     * @param delay how long to wait; zero or negative means as soon as possible
     * @return a handle whose {@code cancel()} prevents the run if it has not started; a cancelled
     *     timer keeps no reference to {@code task}
     * @throws NullPointerException if {@code task} or {@code delay} is null
     * @throws java.util.concurrent.RejectedExecutionException if the scheduler is shut down
     */
    Cancellable schedule(Runnable task, Duration delay);

    /**
     * Runs {@code task} on this scheduler once {@code delay} {@code unit}s have passed on its clock;
     * never early. The same as {@link #schedule(Runnable, Duration)} (dropped timers included), for
     * callers that hold a delay as a number and a unit: the schedulers of Coro's core (the pool, the
     * inline scheduler, the executor adapter) convert it to nanoseconds without allocating a
     * {@link Duration}.
     *
     * <p>The default converts it to a {@code Duration} and calls {@link #schedule(Runnable, Duration)}.
     *
     * {@snippet :
     * Cancellable tick = scheduler.schedule(() -> System.out.println("tick"), 250, TimeUnit.MILLISECONDS);
     * }
     *
     * @param task what to run
     * @param delay how long to wait, in {@code unit}s; zero or negative means as soon as possible; a
     *     delay too long for {@code Long.MAX_VALUE} nanoseconds saturates there
     * @param unit the unit of {@code delay}
     * @return a handle whose {@code cancel()} prevents the run if it has not started
     * @throws NullPointerException if {@code task} or {@code unit} is null
     * @throws java.util.concurrent.RejectedExecutionException if the scheduler is shut down
     */
    default Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return schedule(task, Duration.ofNanos(Math.max(0, unit.toNanos(delay))));
    }

    /**
     * Runs {@code task} on this scheduler once its clock ({@link #nanoTime()}) reads at least
     * {@code deadlineNanos}; never early. Unlike {@link #schedule}, the time is absolute, so a clock
     * that moves between the caller's reading and this call does not make the timer late: a
     * virtual-time scheduler, whose clock another thread may advance meanwhile, fires it exactly at
     * the deadline. Dropped timers as with {@link #schedule}.
     *
     * <p>The default schedules the delay left by this scheduler's clock, which is exact for a clock
     * that only moves with real time (where the time between the two readings is the error);
     * virtual-time schedulers override it.
     *
     * @param task what to run
     * @param deadlineNanos when, on this scheduler's clock; a time that has passed means as soon as
     *     possible
     * @return a handle whose {@code cancel()} prevents the run if it has not started
     * @throws NullPointerException if {@code task} is null
     * @throws java.util.concurrent.RejectedExecutionException if the scheduler is shut down
     */
    default Cancellable scheduleAt(Runnable task, long deadlineNanos) {
        long now = nanoTime();
        long delay = deadlineNanos <= now ? 0 : deadlineNanos - now; // may overflow: then very far
        return schedule(task, Duration.ofNanos(delay < 0 ? Long.MAX_VALUE : delay));
    }

    /**
     * Returns this scheduler's clock in nanoseconds, with the meaning of {@link System#nanoTime()}
     * (only differences are meaningful). Virtual-time schedulers return virtual time.
     *
     * @return the current time
     */
    long nanoTime();

    /**
     * Returns whether the calling thread is running this scheduler's work, so that work meant for
     * this scheduler may run inline on it.
     *
     * @return {@code true} when called from this scheduler's own thread(s)
     */
    boolean isCurrent();

    /**
     * Marks the calling thread as one that runs {@code owner}'s work, on which Coro's blocking doors
     * ({@code Task.join()}, {@code Scope.joinBlocking()}, a gate's {@code call},
     * {@code Event.awaitBlocking()}, a channel's {@code sendBlocking}, ...) must not block: from now on
     * they throw {@link IllegalStateException} on this thread, naming {@code owner}, until the mark is
     * changed again. {@code null} removes the mark. Returns the previous mark, so that a scheduler that
     * runs work on a borrowed thread for a while can restore it.
     *
     * <p>For authors of schedulers whose threads run the work their waiters would wait for: the
     * workers of a {@link WorkStealingPool} and the thread of an {@code EventLoop} are marked for their
     * life, and coro-test's {@code VirtualTimeScheduler} marks the test's thread inside its run methods
     * (work queued there runs only when the test runs it, so a join inside would never end). Inline and
     * executor-adapted schedulers ({@link #inline()}, {@link #from}) mark nothing: they run on threads
     * they do not own. It is not a way around the rule: removing a Coro scheduler's mark from its own
     * thread in order to block there brings back the hang the rule prevents.
     *
     * {@snippet :
     * Scheduler previous = Scheduler.markNonBlocking(this);
     * try {
     *     runQueuedWork();                      // a join in here throws at once instead of hanging
     * } finally {
     *     Scheduler.markNonBlocking(previous);
     * }
     * }
     *
     * @param owner the scheduler whose work this thread runs, or null to remove the mark
     * @return the previous mark, or null if there was none
     */
    static Scheduler markNonBlocking(Scheduler owner) {
        return (Scheduler) Blocking.mark(owner);
    }

    /**
     * Returns the scheduler that {@linkplain #markNonBlocking marked} the calling thread, on which
     * Coro's blocking doors refuse to block, or null if they may block here.
     *
     * @return the scheduler whose work this thread runs, or null
     */
    static Scheduler nonBlockingOwner() {
        return (Scheduler) Blocking.owner();
    }

    /**
     * Returns the scheduler that runs work at once on the thread that submits it. Nested submissions
     * are queued on a per-thread trampoline and run when the outer one returns, so chains of
     * submissions never deepen the stack. Its timers fire on a shared daemon timer thread, which then
     * runs the work. {@link #isCurrent()} is always true.
     *
     * @return the inline scheduler (a singleton)
     */
    static Scheduler inline() {
        return InlineScheduler.INSTANCE;
    }

    /**
     * Adapts an {@link Executor}: work is handed to it; timers fire on a shared daemon timer thread,
     * which then hands the work to the executor. {@link #isCurrent()} is true only on threads that are
     * running work submitted through this adapter.
     *
     * @param executor where work runs
     * @return a scheduler over {@code executor}
     * @throws NullPointerException if {@code executor} is null
     */
    static Scheduler from(Executor executor) {
        if (executor instanceof Scheduler s) {
            return s;
        }
        return new ExecutorScheduler(executor);
    }
}
