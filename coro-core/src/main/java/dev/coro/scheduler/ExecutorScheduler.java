package dev.coro.scheduler;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Durations;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The scheduler of {@link Scheduler#from(Executor)}: hands work to an executor, wrapped so that the
 * thread running it knows it runs this adapter's work ({@link #isCurrent()}). Timers wait on the
 * shared {@link TimerThread}, which then hands the task to the executor (a rejection at that point
 * drops the task: the executor was shut down meanwhile; a task that is a {@link Cancellable} is then
 * cancelled, on the timer thread, as {@link Scheduler#schedule} says).
 *
 * <p>Shutdown is the executor's: its {@link RejectedExecutionException} propagates from
 * {@link #execute}; {@link #schedule} checks {@link ExecutorService#isShutdown()} when the executor is
 * an {@code ExecutorService}.
 */
final class ExecutorScheduler implements Scheduler {
    /** The adapter whose work the current thread is running, or null. */
    private static final ThreadLocal<ExecutorScheduler> CURRENT = new ThreadLocal<>();

    private final Executor executor;

    ExecutorScheduler(Executor executor) {
        if (executor == null) {
            throw new NullPointerException("executor");
        }
        this.executor = executor;
    }

    @Override
    public void execute(Runnable task) {
        if (task == null) {
            throw new NullPointerException("task");
        }
        executor.execute(new Bound(this, task));
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(delay, "delay");
        return scheduleNanos(task, Durations.toNanos(delay));
    }

    @Override
    public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return scheduleNanos(task, Math.max(0, unit.toNanos(delay))); // no Duration
    }

    private Cancellable scheduleNanos(Runnable task, long delayNanos) {
        if (executor instanceof ExecutorService es && es.isShutdown()) {
            throw new RejectedExecutionException(executor + " is shut down");
        }
        return TimerThread.schedule(task, delayNanos, this, null);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public boolean isCurrent() {
        return CURRENT.get() == this;
    }

    @Override
    public String toString() {
        return "Scheduler.from(" + executor + ")";
    }

    /** A task marked with its adapter; sets {@link #CURRENT} while it runs (restoring the outer one). */
    private record Bound(ExecutorScheduler owner, Runnable task) implements Runnable {
        @Override
        public void run() {
            ExecutorScheduler outer = CURRENT.get();
            CURRENT.set(owner);
            try {
                task.run();
            } finally {
                CURRENT.set(outer);
            }
        }

        @Override
        public String toString() {
            return task.toString(); // what executors that list their queue (shutdownNow) show
        }
    }
}
