package dev.coro.scheduler;

import dev.coro.cancel.Cancellable;
import java.time.Duration;

final class ExecutorScheduler implements Scheduler {
    ExecutorScheduler(java.util.concurrent.Executor e) {}
    public void execute(Runnable task) { throw new UnsupportedOperationException("TODO"); }
    public Cancellable schedule(Runnable task, Duration delay) { throw new UnsupportedOperationException("TODO"); }
    public long nanoTime() { return System.nanoTime(); }
    public boolean isCurrent() { return true; }
}
