package dev.coro.scheduler;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Durations;
import dev.coro.internal.Trampoline;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * The scheduler of {@link Scheduler#inline()}: runs work at once on the submitting thread, through
 * the per-thread {@link Trampoline}, so that nested submissions queue behind the running one instead
 * of deepening the stack. Timers wait on the shared {@link TimerThread} and then run the task inline
 * there (so a timer task that blocks delays every other timer of the process: keep them short).
 * Stateless apart from the trampoline; never shut down.
 *
 * <p>Failures: an exception thrown by the task propagates to the caller of the outermost
 * {@code execute} on that thread (nested work queued behind it still runs first); on the timer
 * thread it goes to that thread's uncaught-exception handler.
 */
final class InlineScheduler implements Scheduler {
    static final InlineScheduler INSTANCE = new InlineScheduler();

    private InlineScheduler() {}

    @Override
    public void execute(Runnable task) {
        if (task == null) {
            throw new NullPointerException("task");
        }
        Trampoline.run(task, null); // null fallback: always queue behind the running work
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(delay, "delay");
        return TimerThread.schedule(task, Durations.toNanos(delay), this, null);
    }

    @Override
    public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return TimerThread.schedule(task, Math.max(0, unit.toNanos(delay)), this, null); // no Duration
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public boolean isCurrent() {
        return true;
    }

    @Override
    public String toString() {
        return "Scheduler.inline()";
    }
}
