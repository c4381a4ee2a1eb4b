package dev.coro.task;

import dev.coro.internal.Trampoline;
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
}
