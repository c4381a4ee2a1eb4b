package dev.coro.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Timespan;

/**
 * Coro's JFR events besides {@link WaitEvent}: a pool worker's park, an event-loop iteration that ran
 * long, a timer that fired late, a task failure that nobody observed. Each follows the JDK's pattern (created, begun and committed where it
 * happens; a disabled event costs a check the JIT folds); the system property {@code -Dcoro.jfr=off}
 * (read once) turns every Coro event off, checks included.
 */
public final class CoroEvents {
    /** {@code -Dcoro.jfr=off}: no Coro event, no check. */
    public static final boolean OFF = "off".equals(System.getProperty("coro.jfr"));

    /** How late a timer must fire to be recorded ({@link TimerLate}). */
    public static final long TIMER_LATE_FLOOR_NANOS = 1_000_000;

    private CoroEvents() {}

    /**
     * A worker of a {@code WorkStealingPool} parked with nothing to do, until it was woken; recorded
     * when the park lasted at least the threshold (20 ms by default, as {@code jdk.ThreadPark}).
     */
    @Name("dev.coro.WorkerPark")
    @Label("Coro Worker Park")
    @Category({"Coro", "Scheduler"})
    @Description("A worker of a Coro WorkStealingPool parked with nothing to do, until it was woken")
    @Threshold("20 ms")
    @StackTrace(false)
    public static final class WorkerPark extends Event {
        /** The pool's name. */
        @Label("Pool")
        public String pool;

        /** The worker's index in its pool. */
        @Label("Worker")
        public int worker;
    }

    /**
     * One iteration of an {@code EventLoop} that ran its ready I/O, its inbox and its due timers for
     * at least the threshold (10 ms by default): while it runs, the loop's other work waits.
     */
    @Name("dev.coro.LoopIteration")
    @Label("Coro Loop Iteration")
    @Category({"Coro", "Scheduler"})
    @Description("An EventLoop iteration whose tasks (ready I/O, inbox, due timers) ran long; the loop's other work waited meanwhile")
    @Threshold("10 ms")
    @StackTrace(false)
    public static final class LoopIteration extends Event {
        /** The loop thread's name. */
        @Label("Loop")
        public String loop;

        /** The time the iteration spent in the selector before it ran its tasks. */
        @Label("Time in Select")
        @Timespan(Timespan.NANOSECONDS)
        public long selectNanos;
    }

    /**
     * A timer fired at least {@link #TIMER_LATE_FLOOR_NANOS} after its due time (the loop or the timer
     * thread was busy or stalled). An instant event: its time is the firing.
     */
    @Name("dev.coro.TimerLate")
    @Label("Coro Timer Late")
    @Category({"Coro", "Scheduler"})
    @Description("A Coro timer fired at least 1 ms after its due time")
    @StackTrace(false)
    public static final class TimerLate extends Event {
        /** The timer's scheduler: an event loop's thread name, or coro-timer for the shared timer thread. */
        @Label("Scheduler")
        public String scheduler;

        /** How long after its due time it fired. */
        @Label("Lateness")
        @Timespan(Timespan.NANOSECONDS)
        public long lateness;
    }

    /**
     * Records that a timer of {@code scheduler} fired {@code lateness} nanoseconds late, if that is at
     * least the floor and a recording enables the event.
     *
     * @param scheduler the scheduler's name
     * @param lateness nanoseconds after the due time
     */
    public static void timerFired(String scheduler, long lateness) {
        if (OFF || lateness < TIMER_LATE_FLOOR_NANOS) {
            return;
        }
        TimerLate e = new TimerLate();
        if (e.isEnabled()) {
            e.scheduler = scheduler;
            e.lateness = lateness;
            e.commit();
        }
    }

    /**
     * A task failed and nobody observed it: a child of a supervisor scope whose handle nobody waited
     * on, found when the scope closed (where it also goes to the closing thread's uncaught-exception
     * handler). Recorded on the closing thread, with its stack.
     */
    @Name("dev.coro.UnobservedFailure")
    @Label("Coro Unobserved Failure")
    @Category({"Coro", "Task"})
    @Description("A task failed and nobody observed the failure (a supervised child whose handle nobody waited on)")
    public static final class UnobservedFailure extends Event {
        /** The scope the task ran in. */
        @Label("Scope")
        public String scope;

        /** The class of the error. */
        @Label("Error Class")
        public Class<?> errorClass;

        /** The error's message, or null. */
        @Label("Message")
        public String message;
    }

    /**
     * Records that a failure of a task in {@code scope} was never observed, if a recording enables
     * the event.
     *
     * @param scope the scope's description
     * @param error the failure
     */
    public static void unobservedFailure(String scope, Throwable error) {
        if (OFF) {
            return;
        }
        UnobservedFailure e = new UnobservedFailure();
        if (e.isEnabled()) {
            e.scope = scope;
            e.errorClass = error.getClass();
            e.message = error.getMessage();
            e.commit();
        }
    }
}
