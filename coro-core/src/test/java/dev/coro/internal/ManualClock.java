package dev.coro.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A {@link TimeSource} on virtual time for engine tests: time moves only by {@link #advance}, which
 * runs the timers that come due, on the calling thread, after the clock has moved (a timer already
 * due when scheduled runs at the next advance). It counts the
 * timers scheduled and keeps only the pending ones, so a test can check "one timer per engine".
 * Thread-safe (one monitor).
 */
final class ManualClock implements TimeSource {
    private final PriorityQueue<Timer> timers = new PriorityQueue<>();
    private long now;
    private long seq;
    private int scheduled;

    private static final class Timer implements Comparable<Timer> {
        final long due;
        final long seq;
        final Runnable action;
        boolean cancelled;

        Timer(long due, long seq, Runnable action) {
            this.due = due;
            this.seq = seq;
            this.action = action;
        }

        @Override
        public int compareTo(Timer o) {
            return due != o.due ? Long.compare(due, o.due) : Long.compare(seq, o.seq);
        }
    }

    ManualClock() {}

    ManualClock(long start) {
        this.now = start;
    }

    @Override
    public synchronized long nanoTime() {
        return now;
    }

    @Override
    public synchronized Runnable scheduleAt(Runnable action, long deadlineNanos) {
        Timer t = new Timer(deadlineNanos, seq++, action);
        timers.add(t);
        scheduled++;
        return () -> {
            synchronized (this) {
                t.cancelled = true;
                timers.remove(t);
            }
        };
    }

    /** Moves the clock forward by {@code nanos} without running any timer: timers that are late. */
    synchronized void moveWithoutTimers(long nanos) {
        now += nanos;
    }

    /** Moves the clock forward by {@code nanos}, then runs every timer that came due, in due order. */
    void advance(long nanos) {
        List<Runnable> due = new ArrayList<>();
        synchronized (this) {
            now += nanos;
            while (!timers.isEmpty() && timers.peek().due <= now) {
                Timer t = timers.poll();
                if (!t.cancelled) {
                    due.add(t.action);
                }
            }
        }
        for (Runnable r : due) {
            r.run();
        }
    }

    /** The timers scheduled so far, cancelled or not. */
    synchronized int scheduled() {
        return scheduled;
    }

    /** The timers neither run nor cancelled. */
    synchronized int pending() {
        return timers.size();
    }
}
