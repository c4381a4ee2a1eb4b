package dev.coro.test;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.CoroDebug;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Scheduler} whose clock moves only when the test says so, and whose work runs only inside
 * the test's calls to its run methods, on the test's thread: deterministic tests of code that waits
 * for time, without sleeping.
 *
 * <p><b>Work.</b> {@link #execute} queues a task (FIFO); nothing runs until a run method is called:
 * {@link #runUntilIdle()} runs queued work, including work that work submits, until none is left;
 * {@link #advanceBy(Duration)} and {@link #advanceTo(long)} also move the clock forward;
 * {@link #advanceUntilIdle()} moves it from timer to timer until no work and no timer is left.
 *
 * <p><b>Time.</b> {@link #nanoTime()} starts at 0 and changes only in {@code advance...} calls.
 * {@link #schedule} registers a timer due at {@code nanoTime() + delay}. Timers fire in order of due
 * time, and timers due at the same time in the order they were scheduled; never early. Time
 * advances in steps, to the next due time and no further; at each time, queued work runs first,
 * then the earliest timer due, then the work it caused, then the next timer due, and so on, one
 * timer at a time (so a timer can still cancel another one due at the same time). The work a timer
 * causes thus sees the clock at that timer's due time. A timer due at the current time (a zero
 * delay) fires in the next run call, after the queued work, without any advance.
 *
 * <p><b>Failures.</b> A task that throws does not stop the run: the remaining work runs (and time
 * advances as asked); then the run method throws the first exception, with the later ones attached
 * as {@linkplain Throwable#getSuppressed() suppressed}, so a test cannot miss a failure.
 *
 * <p><b>Threads.</b> {@code execute}, {@code schedule}, {@code Cancellable.cancel},
 * {@link #pendingTimers()} and the other queries may be called from any thread. The run methods must
 * not be called concurrently, nor from inside a task they run: that gets
 * {@link IllegalStateException}. {@link #isCurrent()} is true only on the thread inside a run method.
 *
 * <p><b>No blocking inside.</b> Work queued here runs only inside the test's run calls, so a task
 * that blocks the test's thread waiting for other work of this scheduler would wait for ever. The
 * run methods therefore {@linkplain Scheduler#markNonBlocking mark} the test's thread while they
 * run: a blocking door of Coro ({@code Task.join()}, {@code Scope.joinBlocking()}, a gate's
 * {@code call}, ...) called by a task they run throws {@link IllegalStateException} naming this
 * scheduler, which the run method then rethrows as the task's failure (or the task's own handling
 * reports it). Compose with {@code then}/{@code flatMap} instead.
 *
 * <p><b>Shutdown</b> follows the rule of {@link Scheduler} (the one the work-stealing pool and the
 * event loop follow): after {@link #shutdown()}, {@code execute} and {@code schedule} throw
 * {@link RejectedExecutionException} (from every thread); work already queued still runs when the
 * test runs it; timers still pending are dropped at once, on the thread calling {@code shutdown()}:
 * they never run, and a timer task that is a {@link Cancellable} is cancelled, so a
 * {@code Task.delay} waiting on this scheduler completes on the cancelled channel.
 *
 * <p><b>Bad input.</b> Null tasks and durations get {@link NullPointerException}; a negative delay
 * in {@code schedule} means zero; a negative {@code advanceBy}, an {@code advanceTo} into the past,
 * and a non-positive step limit get {@link IllegalArgumentException}.
 *
 * {@snippet :
 * VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
 * List<String> log = new ArrayList<>();
 * scheduler.schedule(() -> log.add("at 10ms"), Duration.ofMillis(10));
 * scheduler.execute(() -> log.add("now"));
 * scheduler.runUntilIdle();                  // log: [now]
 * scheduler.advanceBy(Duration.ofMillis(9)); // nothing: the timer is due at 10 ms
 * scheduler.advanceBy(Duration.ofMillis(1)); // log: [now, at 10ms]
 * assert scheduler.nanoTime() == 10_000_000;
 * }
 */
public final class VirtualTimeScheduler implements Scheduler {
    /** The default step limit of {@link #advanceUntilIdle()}. */
    public static final int DEFAULT_STEP_LIMIT = 100_000;

    private final Object lock = new Object();
    private final ArrayDeque<Runnable> queue = new ArrayDeque<>(); // guarded by lock
    private final TreeSet<Timer> timers = new TreeSet<>(); // guarded by lock; by due time, then seq
    private long now; // guarded by lock
    private long nextSeq; // guarded by lock
    private boolean shutdown; // guarded by lock
    private volatile Thread runner; // the thread inside a run method, or null

    /** Creates a scheduler at time 0 with nothing queued. Equivalent to {@link #create()}. */
    public VirtualTimeScheduler() {}

    /**
     * Creates a scheduler at time 0 with nothing queued.
     *
     * {@snippet :
     * VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
     * }
     *
     * @return a new scheduler
     */
    public static VirtualTimeScheduler create() {
        return new VirtualTimeScheduler();
    }

    /**
     * Queues {@code task}; it runs in a later run call on the test's thread. Thread-safe.
     *
     * {@snippet :
     * scheduler.execute(() -> System.out.println("runs in runUntilIdle"));
     * scheduler.runUntilIdle();
     * }
     *
     * @param task what to run
     * @throws NullPointerException if {@code task} is null
     * @throws RejectedExecutionException after {@link #shutdown()}
     */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        synchronized (lock) {
            checkRunning();
            queue.addLast(task);
        }
    }

    /**
     * Registers a timer that queues {@code task} when the virtual clock reaches
     * {@code nanoTime() + delay}. Thread-safe.
     *
     * {@snippet :
     * Cancellable timer = scheduler.schedule(() -> System.out.println("late"), Duration.ofSeconds(5));
     * timer.cancel(); // pendingTimers() is back to 0 at once
     * }
     *
     * @param task what to run
     * @param delay how far in the virtual future; zero or negative means at the current time
     * @return a handle whose {@code cancel()} removes the timer at once if it has not fired
     * @throws NullPointerException if {@code task} or {@code delay} is null
     * @throws RejectedExecutionException after {@link #shutdown()}
     */
    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(delay, "delay");
        return scheduleNanos(task, toNanos(delay));
    }

    /**
     * Registers a timer that queues {@code task} when the virtual clock reaches
     * {@code nanoTime() + delay} in {@code unit}s; as {@link #schedule(Runnable, Duration)}, without a
     * {@link Duration}. Thread-safe.
     *
     * {@snippet :
     * scheduler.schedule(() -> System.out.println("tick"), 5, TimeUnit.MILLISECONDS);
     * scheduler.advanceBy(Duration.ofMillis(5)); // prints "tick"
     * }
     *
     * @param task what to run
     * @param delay how far in the virtual future, in {@code unit}s; zero or negative means at the
     *     current time
     * @param unit the unit of {@code delay}
     * @return a handle whose {@code cancel()} removes the timer at once if it has not fired
     * @throws NullPointerException if {@code task} or {@code unit} is null
     * @throws RejectedExecutionException after {@link #shutdown()}
     */
    @Override
    public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return scheduleNanos(task, Math.max(0, unit.toNanos(delay)));
    }

    private Cancellable scheduleNanos(Runnable task, long d) {
        synchronized (lock) {
            checkRunning();
            long due = now + d;
            if (due < now) { // overflow: "never", in practice
                due = Long.MAX_VALUE;
            }
            Timer timer = new Timer(due, nextSeq++, task);
            timers.add(timer);
            return timer;
        }
    }

    /**
     * Registers a timer that queues {@code task} when the virtual clock reaches
     * {@code deadlineNanos} (at once, at the next run, if it has already). Exact even while another
     * thread advances the clock. Thread-safe.
     *
     * @param task what to run
     * @param deadlineNanos when, in virtual nanoseconds
     * @return a handle whose {@code cancel()} removes the timer at once if it has not fired
     * @throws NullPointerException if {@code task} is null
     * @throws RejectedExecutionException after {@link #shutdown()}
     */
    @Override
    public Cancellable scheduleAt(Runnable task, long deadlineNanos) {
        Objects.requireNonNull(task, "task");
        synchronized (lock) {
            checkRunning();
            Timer timer = new Timer(Math.max(now, deadlineNanos), nextSeq++, task);
            timers.add(timer);
            return timer;
        }
    }

    /**
     * Returns the virtual time in nanoseconds: 0 at creation, moved only by the {@code advance...}
     * methods. Thread-safe.
     *
     * @return the current virtual time
     */
    @Override
    public long nanoTime() {
        synchronized (lock) {
            return now;
        }
    }

    /**
     * Returns whether the calling thread is inside one of this scheduler's run methods (and so is
     * running its work).
     *
     * @return {@code true} on the thread running this scheduler's work, while it does
     */
    @Override
    public boolean isCurrent() {
        return runner == Thread.currentThread();
    }

    /**
     * Runs queued work, and work that it queues, until the queue is empty; fires timers due at the
     * current time; never advances the clock.
     *
     * {@snippet :
     * scheduler.execute(() -> scheduler.execute(() -> System.out.println("nested")));
     * int ran = scheduler.runUntilIdle(); // 2
     * }
     *
     * @return how many tasks ran
     * @throws IllegalStateException if called concurrently or from inside a task this scheduler runs
     * @throws RuntimeException the first exception a task threw, with later ones suppressed (or an
     *     {@link Error}, likewise)
     */
    public int runUntilIdle() {
        Run run = enter();
        try {
            runCurrent(run);
        } finally {
            exit(run);
        }
        return run.count;
    }

    /**
     * Moves the clock forward by {@code delta}, firing due timers in order and running the work they
     * cause at each step, then runs the work queued at the final time.
     *
     * {@snippet :
     * scheduler.schedule(() -> System.out.println("fired"), Duration.ofSeconds(1));
     * scheduler.advanceBy(Duration.ofSeconds(1)); // prints "fired"
     * }
     *
     * @param delta how far to move the clock; zero only runs what is due now
     * @return how many tasks ran
     * @throws NullPointerException if {@code delta} is null
     * @throws IllegalArgumentException if {@code delta} is negative, or the clock would overflow
     * @throws IllegalStateException if called concurrently or from inside a task this scheduler runs
     * @throws RuntimeException the first exception a task threw, with later ones suppressed
     */
    public int advanceBy(Duration delta) {
        Objects.requireNonNull(delta, "delta");
        if (delta.isNegative()) {
            throw new IllegalArgumentException("delta must be >= 0, was " + delta);
        }
        long target;
        synchronized (lock) {
            try {
                target = Math.addExact(now, delta.toNanos());
            } catch (ArithmeticException e) {
                throw new IllegalArgumentException("delta " + delta + " moves the clock past Long.MAX_VALUE", e);
            }
        }
        return advanceTo(target);
    }

    /**
     * Moves the clock forward to {@code nanos}, firing due timers in order and running the work they
     * cause at each step, then runs the work queued at the final time.
     *
     * {@snippet :
     * scheduler.advanceTo(5_000_000); // the clock reads 5 ms
     * }
     *
     * @param nanos the time to move to; the current time only runs what is due now
     * @return how many tasks ran
     * @throws IllegalArgumentException if {@code nanos} is before the current time
     * @throws IllegalStateException if called concurrently or from inside a task this scheduler runs
     * @throws RuntimeException the first exception a task threw, with later ones suppressed
     */
    public int advanceTo(long nanos) {
        Run run = enter();
        try {
            synchronized (lock) {
                if (nanos < now) {
                    throw new IllegalArgumentException("nanos must be >= nanoTime() " + now + ", was " + nanos);
                }
            }
            for (;;) {
                runCurrent(run);
                synchronized (lock) {
                    Timer next = timers.isEmpty() ? null : timers.first();
                    if (next == null || next.due > nanos) {
                        now = nanos;
                        break;
                    }
                    now = next.due; // the next step; never past a due timer
                }
            }
            runCurrent(run); // nothing new can be due, but keep the final time's work complete
        } finally {
            exit(run);
        }
        return run.count;
    }

    /**
     * Runs all work, advancing the clock from timer to timer, until no work is queued and no timer
     * is pending; stops with an exception after {@value #DEFAULT_STEP_LIMIT} steps (a timer that
     * keeps rescheduling itself would otherwise never let it end).
     *
     * {@snippet :
     * scheduler.schedule(() -> System.out.println("much later"), Duration.ofDays(1));
     * scheduler.advanceUntilIdle(); // prints it; nanoTime() is one day
     * }
     *
     * @return how many tasks ran
     * @throws IllegalStateException if the step limit is reached, or if called concurrently or from
     *     inside a task this scheduler runs
     * @throws RuntimeException the first exception a task threw, with later ones suppressed
     */
    public int advanceUntilIdle() {
        return advanceUntilIdle(DEFAULT_STEP_LIMIT);
    }

    /**
     * Like {@link #advanceUntilIdle()}, with a limit on the number of clock steps.
     *
     * {@snippet :
     * scheduler.advanceUntilIdle(10); // at most 10 distinct due times
     * }
     *
     * @param maxSteps how many times, at most, the clock may move to a next due time
     * @return how many tasks ran
     * @throws IllegalArgumentException if {@code maxSteps} is not positive
     * @throws IllegalStateException if work or timers remain after {@code maxSteps} steps, or if
     *     called concurrently or from inside a task this scheduler runs
     * @throws RuntimeException the first exception a task threw, with later ones suppressed
     */
    public int advanceUntilIdle(int maxSteps) {
        if (maxSteps <= 0) {
            throw new IllegalArgumentException("maxSteps must be > 0, was " + maxSteps);
        }
        Run run = enter();
        try {
            int steps = 0;
            for (;;) {
                runCurrent(run);
                synchronized (lock) {
                    if (timers.isEmpty()) {
                        break;
                    }
                    if (steps == maxSteps) {
                        run.fail(new IllegalStateException("still " + timers.size() + " timer(s) pending after "
                                + maxSteps + " steps (a timer that keeps rescheduling itself?)"));
                        break;
                    }
                    steps++;
                    now = Math.max(now, timers.first().due);
                }
            }
        } finally {
            exit(run);
        }
        return run.count;
    }

    /**
     * Returns the number of timers that have neither fired nor been cancelled. Thread-safe.
     *
     * @return the pending timer count
     */
    public int pendingTimers() {
        synchronized (lock) {
            return timers.size();
        }
    }

    /**
     * Returns the number of queued tasks that have not started. Thread-safe.
     *
     * @return the queued task count
     */
    public int queuedTasks() {
        synchronized (lock) {
            return queue.size();
        }
    }

    /**
     * Returns the due time of the earliest pending timer, if any. Thread-safe.
     *
     * @return the earliest due time in nanoseconds, or {@link Long#MAX_VALUE} when no timer is
     *     pending
     */
    public long nextDueTime() {
        synchronized (lock) {
            return timers.isEmpty() ? Long.MAX_VALUE : timers.first().due;
        }
    }

    /**
     * Rejects further {@code execute} and {@code schedule} calls and drops every pending timer (the
     * shutdown rule of {@link Scheduler}): queued work stays and still runs in later run calls;
     * pending timers never run, their handles' {@code cancel()} then answers {@code false}, and each
     * timer task that is a {@link Cancellable} is cancelled once, on this thread, before this method
     * returns (a waiting {@code Task.delay} then completes cancelled; its continuation, refused by this
     * scheduler, runs on this thread too). Idempotent: a second call drops nothing. Thread-safe.
     *
     * {@snippet :
     * scheduler.schedule(() -> System.out.println("never"), Duration.ofSeconds(1));
     * scheduler.shutdown();
     * assert scheduler.pendingTimers() == 0;
     * }
     *
     * @throws RuntimeException the first exception a dropped task's {@code cancel()} threw, with later
     *     ones suppressed (every dropped task is still told), so a test cannot miss it; an
     *     {@link Error} likewise
     */
    public void shutdown() {
        List<Runnable> dropped;
        synchronized (lock) {
            if (shutdown) {
                return;
            }
            shutdown = true;
            dropped = new ArrayList<>(timers.size());
            for (Timer t : timers) { // in due order
                dropped.add(t.take());
            }
            timers.clear();
        }
        Run failures = new Run();
        for (Runnable task : dropped) {
            if (task instanceof Cancellable c) {
                try {
                    c.cancel();
                } catch (Throwable e) {
                    failures.fail(e);
                }
            }
        }
        rethrow(failures.failure);
    }

    /**
     * Returns whether {@link #shutdown()} was called.
     *
     * @return {@code true} once shut down
     */
    public boolean isShutdown() {
        synchronized (lock) {
            return shutdown;
        }
    }

    /**
     * Returns a description with the virtual time and the queue and timer counts.
     *
     * @return a string such as {@code VirtualTimeScheduler[now=10000000ns, queued=0, timers=1]}
     */
    @Override
    public String toString() {
        synchronized (lock) {
            return "VirtualTimeScheduler[now=" + now + "ns, queued=" + queue.size()
                    + ", timers=" + timers.size() + "]";
        }
    }

    /**
     * Describes the work still pending, for a failure message: the clock, each queued task and each
     * pending timer (its due time and its task), in the order they would run; then, in debug mode
     * ({@code -Dcoro.debug=true}, {@link CoroDebug}), the task dump: every task suspended in the JVM
     * (its scheduler, what it waits on, and where it was started), else a line saying how to get it.
     *
     * @return the description, one item per line
     */
    public String pendingWork() {
        StringBuilder b = new StringBuilder();
        synchronized (lock) {
            b.append("at ").append(now).append(" ns: ").append(queue.size()).append(" queued, ")
                    .append(timers.size()).append(" timers");
            for (Runnable r : queue) {
                b.append("\n  queued: ").append(r);
            }
            for (Timer t : timers) {
                b.append("\n  timer due at ").append(t.due).append(" ns: ").append(t.task);
            }
        }
        if (!CoroDebug.isEnabled()) {
            return b.append("\n(run with -Dcoro.debug=true to list the suspended tasks and what each waits on)")
                    .toString();
        }
        List<CoroDebug.SuspendedTask> suspended = CoroDebug.suspendedTasks();
        b.append("\nsuspended tasks in this JVM: ").append(suspended.size());
        for (CoroDebug.SuspendedTask t : suspended) {
            b.append("\n").append(t.toString().indent(2).stripTrailing());
        }
        return b.toString();
    }

    // --- running ---

    /** The state of one run call: what ran and what failed. Confined to the runner thread. */
    private static final class Run {
        int count;
        Throwable failure;
        Scheduler previousMark; // the runner thread's non-blocking mark before the run call

        void fail(Throwable t) {
            if (failure == null) {
                failure = t;
            } else if (failure != t) {
                failure.addSuppressed(t);
            }
        }
    }

    private Run enter() {
        synchronized (lock) {
            Thread me = Thread.currentThread();
            Thread r = runner;
            if (r == me) {
                throw new IllegalStateException("a run method was called from inside a task it runs");
            }
            if (r != null) {
                throw new IllegalStateException("another thread is running this scheduler: " + r.getName());
            }
            runner = me;
        }
        Run run = new Run();
        run.previousMark = Scheduler.markNonBlocking(this); // a join in a task run here would never end
        return run;
    }

    private void exit(Run run) {
        Scheduler.markNonBlocking(run.previousMark);
        synchronized (lock) {
            runner = null;
        }
        rethrow(run.failure);
    }

    /** Throws {@code f} (unchecked as it is, a checked one wrapped); nothing if it is null. */
    private static void rethrow(Throwable f) {
        if (f instanceof RuntimeException re) {
            throw re;
        }
        if (f instanceof Error e) {
            throw e;
        }
        if (f != null) { // a checked exception thrown sneakily by a task
            throw new IllegalStateException("a task failed", f);
        }
    }

    /**
     * Runs queued work and timers due at the current time until neither is left: the queue first;
     * when it is empty, the earliest due timer, then again the queue (the work that timer caused).
     */
    private void runCurrent(Run run) {
        for (;;) {
            Runnable task;
            synchronized (lock) {
                task = queue.pollFirst();
                if (task == null) {
                    if (timers.isEmpty() || timers.first().due > now) {
                        return;
                    }
                    task = timers.pollFirst().take(); // fires
                }
            }
            run.count++;
            try {
                task.run();
            } catch (Throwable t) {
                run.fail(t);
            }
        }
    }

    private static long toNanos(Duration delay) {
        if (delay.isNegative()) {
            return 0;
        }
        try {
            return delay.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    private void checkRunning() {
        if (shutdown) {
            throw new RejectedExecutionException(this + " is shut down");
        }
    }

    /** A pending timer; ordered by due time, then by scheduling order. */
    private final class Timer implements Cancellable, Comparable<Timer> {
        final long due;
        final long seq;
        private Runnable task; // guarded by lock; null once fired or cancelled

        Timer(long due, long seq, Runnable task) {
            this.due = due;
            this.seq = seq;
            this.task = task;
        }

        /** Fires: returns the task and forgets it. Called under lock. */
        Runnable take() {
            Runnable t = task;
            task = null;
            return t;
        }

        @Override
        public boolean cancel() {
            synchronized (lock) {
                if (task == null) {
                    return false;
                }
                task = null;
                timers.remove(this);
                return true;
            }
        }

        @Override
        public int compareTo(Timer o) {
            int c = Long.compare(due, o.due);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }

        @Override
        public String toString() {
            return "Timer[due=" + due + "ns]";
        }
    }
}
