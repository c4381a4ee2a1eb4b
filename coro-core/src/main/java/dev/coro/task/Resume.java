package dev.coro.task;

import dev.coro.internal.Trampoline;
import dev.coro.internal.WorkerThread;
import dev.coro.scheduler.Scheduler;
import java.util.concurrent.RejectedExecutionException;

/**
 * The one way Coro resumes a waiter (DESIGN principle 3): hand its continuation to the scheduler it
 * came from; inline, through the {@link Trampoline}, when the waking thread already runs that
 * scheduler.
 */
final class Resume {
    private Resume() {}

    /**
     * Resumes {@code continuation} on {@code scheduler}. If the scheduler has shut down and refuses
     * the work, the continuation runs on the waking thread instead: a waiter is never lost.
     */
    static void dispatch(Runnable continuation, Scheduler scheduler) {
        WorkerThread.releaseHeld(); // no waiter runs on a worker while it holds a scope's count-downs (WorkerThread H4)
        if (scheduler.isCurrent()) {
            Trampoline.run(continuation, scheduler);
            return;
        }
        try {
            scheduler.execute(continuation);
        } catch (RejectedExecutionException e) {
            Trampoline.run(continuation, null);
        }
    }

    /**
     * Resumes {@code continuation} through {@code scheduler}'s queue, even when the waking thread
     * runs that scheduler: the waker keeps running, and the continuation runs after it or on another
     * of the scheduler's threads (WaitNode.admitQueued). Refused, it runs on the waking thread, after
     * the work that thread is running inline (the trampoline).
     */
    static void dispatchQueued(Runnable continuation, Scheduler scheduler) {
        WorkerThread.releaseHeld(); // as in dispatch
        try {
            scheduler.execute(continuation);
        } catch (RejectedExecutionException e) {
            Trampoline.run(continuation, null);
        }
    }
}
