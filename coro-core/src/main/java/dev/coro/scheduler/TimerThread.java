package dev.coro.scheduler;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Blocking;
import dev.coro.internal.CoroEvents;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The shared timer of the schedulers that have no clock of their own (the work-stealing pool, the
 * inline scheduler, executor adapters): one daemon thread, {@code coro-timer}, that waits for due
 * times and then hands each due task to its target executor. It never runs the task itself unless the
 * target is the inline scheduler, or the target is the work-stealing pool and the task is a
 * {@link dev.coro.internal.TimerRequest} (it only posts a request; queued behind the pool's work, it
 * would fire late).
 *
 * <p>A {@link Timer} fires or is cancelled, exactly once: {@link Timer#cancel()} and the firing race on
 * one atomic exchange of the task reference, so a timer that reports "cancelled" never runs its task,
 * and a cancelled (or fired) timer keeps no reference to the task or its target. Cancelled timers are
 * removed from the timer queue at once.
 *
 * <p>Failures: a target that rejects the task (it was shut down) drops it, and a task that is a
 * {@link Cancellable} is then cancelled ({@link #dropped}); any other exception from the hand-off
 * goes to the timer thread's uncaught-exception handler, and the timer thread lives on.
 *
 * <p>Thread-safety: all methods may be called from any thread.
 */
final class TimerThread {
    private static final ScheduledThreadPoolExecutor EXECUTOR = createExecutor();

    private TimerThread() {}

    private static ScheduledThreadPoolExecutor createExecutor() {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
            // the inline scheduler's timers run their work here: a blocking door on it would stall
            // every timer in the process, the ones its own wait may need included (Blocking)
            Runnable marked = () -> {
                Blocking.mark(Scheduler.inline());
                r.run();
            };
            Thread t = new Thread(null, marked, "coro-timer", 0, false);
            t.setDaemon(true);
            return t;
        });
        e.setRemoveOnCancelPolicy(true);
        e.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        return e;
    }

    /**
     * Runs {@code target.execute(task)} on the timer thread after {@code delayNanos} (measured with
     * {@link System#nanoTime()}; never early). The caller checks its arguments.
     *
     * @param registry if not null, the timer is in it until it fires or is cancelled (a scheduler uses
     *     this to cancel its pending timers when it shuts down)
     */
    static Timer schedule(Runnable task, long delayNanos, Executor target, Set<Timer> registry) {
        Timer timer = new Timer(task, target, registry);
        if (registry != null) {
            registry.add(timer);
        }
        ScheduledFuture<?> f = EXECUTOR.schedule(timer, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        timer.setFuture(f);
        return timer;
    }

    /** Returns a fresh registry for {@link #schedule}: a concurrent set. */
    static Set<Timer> newRegistry() {
        return ConcurrentHashMap.newKeySet();
    }

    /**
     * Drops every timer in {@code registry} (for a scheduler's shutdown): cancels each, and tells the
     * task of each it cancelled ({@link #dropped}), on the calling thread.
     */
    static void cancelAll(Set<Timer> registry) {
        for (Timer t : registry) {
            t.drop();
        }
    }

    /**
     * Tells a timer task that its scheduler dropped it without running it (Scheduler.schedule's
     * contract): a task that is a {@link Cancellable} is cancelled. An exception from it goes to the
     * calling thread's uncaught-exception handler.
     */
    static void dropped(Runnable task) {
        if (task instanceof Cancellable c) {
            try {
                c.cancel();
            } catch (Throwable e) {
                Thread th = Thread.currentThread();
                try {
                    th.getUncaughtExceptionHandler().uncaughtException(th, e);
                } catch (Throwable ignored) {
                    // nothing left to report to
                }
            }
        }
    }

    /** A pending timer: a {@link Cancellable} handle that is also the timer queue's entry. */
    static final class Timer implements Cancellable, Runnable {
        /* Implementation overview.
         *
         * 1. Representation. task (volatile): the runnable while pending; null once fired or
         *    cancelled (terminal). target, registry: set at construction; target is cleared by
         *    whoever takes the task. future: the timer queue's entry, set once after scheduling.
         * 2. Transitions. pending -> fired: run() exchanges task for null (the timer thread).
         *    pending -> cancelled: cancel() exchanges task for null (any thread); drop() is a
         *    cancel that then tells the task (dropped), for a scheduler's shutdown.
         * 3. Linearization points. run and cancel: the getAndSet of task; isPending: its read.
         * 4. Invariants. I1: exactly one getAndSet returns the task; only its caller reads or
         *    clears target. I2: after either transition no field refers to the task or target.
         * 5. Memory ordering. task: volatile; its constructor write publishes target, and the
         *    winning getAndSet (an acquire) makes it visible to the winner. future: volatile, so a
         *    cancel racing with setFuture either sees it or is seen by it (setFuture re-reads task).
         * 6. Progress. Wait-free apart from the executor calls.
         * 7. Races. cancel vs run: one exchange decides; cancel returns false once run won.
         *    cancel vs setFuture: setFuture cancels the entry itself when task is already null.
         * 8. Resumption. The task is handed to target.execute on the timer thread, never run here
         *    (except when the target is the inline scheduler, which runs it via its trampoline).
         * 9. References. Netty's HashedWheelTimeout (one state CAS decides expire vs cancel).
         */

        private volatile Runnable task; // null once fired or cancelled
        private Executor target; // cleared with task, by whoever takes the task
        private final Set<Timer> registry;
        private volatile ScheduledFuture<?> future;

        Timer(Runnable task, Executor target, Set<Timer> registry) {
            this.target = target;
            this.registry = registry;
            this.task = task; // volatile write last: publishes target
        }

        void setFuture(ScheduledFuture<?> f) {
            future = f;
            if (task == null) { // cancelled before the future was known: remove it from the queue now
                f.cancel(false);
            }
        }

        /**
         * Prevents the run if the timer has not fired yet.
         *
         * @return true if this call cancelled it; false if it had fired or been cancelled
         */
        @Override
        public boolean cancel() {
            return take() != null;
        }

        /** Cancels, and tells the task if this call cancelled it (its scheduler shut down). */
        void drop() {
            Runnable t = take();
            if (t != null) {
                dropped(t);
            }
        }

        private Runnable take() {
            Runnable t = (Runnable) TASK.getAndSet(this, null);
            if (t == null) {
                return null;
            }
            target = null;
            if (registry != null) {
                registry.remove(this);
            }
            ScheduledFuture<?> f = future;
            if (f != null) {
                f.cancel(false); // removes the queue entry (remove-on-cancel policy)
            }
            return t;
        }

        /** Whether it is still pending (neither fired nor cancelled). */
        public boolean isPending() {
            return task != null;
        }

        /** Fires: called by the timer thread. */
        @Override
        public void run() {
            Runnable t = (Runnable) TASK.getAndSet(this, null);
            if (t == null) {
                return;
            }
            ScheduledFuture<?> due = future; // null only if it fired before setFuture: not late then
            if (!CoroEvents.OFF && due != null) {
                CoroEvents.timerFired("coro-timer", -due.getDelay(TimeUnit.NANOSECONDS)); // JFR, if it fired late
            }
            Executor e = target;
            target = null;
            if (registry != null) {
                registry.remove(this);
            }
            try {
                e.execute(t);
            } catch (RejectedExecutionException rejected) {
                dropped(t); // the target shut down before the timer came due: its timers are dropped
            } catch (Throwable ex) {
                Thread th = Thread.currentThread();
                try {
                    th.getUncaughtExceptionHandler().uncaughtException(th, ex);
                } catch (Throwable ignored) {
                    // nothing left to report to; keep the timer thread alive
                }
            }
        }

        private static final VarHandle TASK;

        static {
            try {
                TASK = MethodHandles.lookup().findVarHandle(Timer.class, "task", Runnable.class);
            } catch (ReflectiveOperationException ex) {
                throw new ExceptionInInitializerError(ex);
            }
        }
    }
}
