package dev.coro.gate;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A scheduler on virtual time for gate tests in this module (coro-test's VirtualTimeScheduler lives
 * above it): work runs inline, as on {@link Scheduler#inline()}; time moves only by {@link #advance},
 * which runs the timers that came due on the calling thread, in due order, after the clock has moved.
 * Counts pending timers, so a test can check "one timer per gate". Thread-safe (one monitor). Public for
 * the channel tests' timeouts.
 */
public final class ManualScheduler implements Scheduler {
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private long now;
    private long seq;
    /** Each timer registration first moves the clock one tick, as a concurrent advance might. */
    volatile boolean tickOnSchedule;

    private final class Timer implements Comparable<Timer>, Cancellable {
        final long due;
        final long seq;
        final Runnable action;

        Timer(long due, long seq, Runnable action) {
            this.due = due;
            this.seq = seq;
            this.action = action;
        }

        @Override
        public int compareTo(Timer o) {
            return due != o.due ? Long.compare(due, o.due) : Long.compare(seq, o.seq);
        }

        @Override
        public boolean cancel() {
            synchronized (ManualScheduler.this) {
                return timers.remove(this);
            }
        }
    }

    @Override
    public void execute(Runnable task) {
        Scheduler.inline().execute(task);
    }

    @Override
    public synchronized Cancellable schedule(Runnable task, Duration delay) {
        if (tickOnSchedule) {
            now++;
        }
        long d = delay.isNegative() ? 0 : delay.toNanos();
        Timer t = new Timer(now > Long.MAX_VALUE - d ? Long.MAX_VALUE : now + d, seq++, task);
        timers.add(t);
        return t;
    }

    @Override
    public synchronized Cancellable scheduleAt(Runnable task, long deadlineNanos) {
        if (tickOnSchedule) {
            now++;
        }
        Timer t = new Timer(Math.max(now, deadlineNanos), seq++, task);
        timers.add(t);
        return t;
    }

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public boolean isCurrent() {
        return true;
    }

    /** Moves the clock forward by {@code nanos}, then runs every timer that came due, in due order. */
    public void advance(long nanos) {
        List<Runnable> due = new ArrayList<>();
        synchronized (this) {
            now += nanos;
            while (!timers.isEmpty() && timers.peek().due <= now) {
                due.add(timers.poll().action);
            }
        }
        for (Runnable r : due) {
            r.run();
        }
    }

    /** The timers neither run nor cancelled. */
    public synchronized int pending() {
        return timers.size();
    }
}
