package dev.coro.task;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Coro's debug mode: a dump of every suspended task with what it waits on, and async stack traces.
 * Issue 14's "no silent hang": when a program stops making progress, the dump says which tasks wait,
 * on what, since when, and where each was started.
 *
 * <p><b>The switch.</b> Debug mode is on when the JVM starts with {@code -Dcoro.debug=true}. The
 * property is read once, when this class initializes (the first time any task runs or is built), and
 * the answer never changes: it is a {@code static final} constant, so with debug mode off the JIT
 * removes every probe and the cost is zero. It cannot be turned on at run time; setting the property
 * with {@link System#setProperty} works only before Coro's first task is built.
 *
 * <p><b>What debug mode records.</b>
 * <ul>
 *   <li>Every run of a task (each {@link Task#start}, {@link Task#join}, {@link Scope#spawn}, and each
 *       child of {@link Task#whenAll}) is registered with an id and its <em>creation site</em>: up to
 *       12 stack frames of the code that started it, leaving out Coro's
 *       own classes and the JDK's reflection. A run leaves the registry when it completes; one that
 *       can never complete (it waits on a gate nobody references) is held weakly and leaves it when
 *       collected, so the registry never keeps a task alive.</li>
 *   <li>Every task node records the user frame that built it, and an error leaving a task step carries
 *       an {@link AssemblyTrace} (suppressed) naming the steps it passed through.</li>
 * </ul>
 * Both cost a stack walk per task run and per task node built, and a table entry each: debug mode is
 * for finding a hang or a bug, not for production load.
 *
 * <p><b>The dump.</b> {@link #suspendedTasks()} lists the suspended runs as values, {@link #dump()}
 * as text, one entry per task, oldest run first. A task is listed while it waits on a gate, the
 * mutex, an event, a channel send or receive, a timer ({@link Task#delay}, with the time left on its
 * scheduler's clock), an I/O operation of an {@code EventLoop}, the result of another task or a
 * promise, or any other {@link Task#create} callback. The dump is a snapshot taken without stopping
 * anything: a task may resume while it is taken, and be listed or not.
 *
 * <p>With debug mode off, {@link #dump()} returns a one-line text saying so and how to turn it on (a
 * dump is often printed from a watchdog or a shutdown hook, which should not fail), and
 * {@link #suspendedTasks()} throws {@link IllegalStateException} (an empty list would claim that
 * nothing waits).
 *
 * {@snippet :
 * // java -Dcoro.debug=true -jar app.jar
 * Task<Void> stuck = gate.within(work).startOn(pool);
 * stuck.start();
 * System.err.println(CoroDebug.dump());
 * // Coro task dump: 1 suspended task
 * // task #7 on WorkStealingPool[...], suspended for 1502 ms, waiting on GATE: CapacityGate[permits=0, ...]
 * //     created at com.example.Service.handle(Service.java:42)
 * //     ...
 * for (CoroDebug.SuspendedTask t : CoroDebug.suspendedTasks()) {
 *     if (t.waitingOn().kind() == CoroDebug.WaitKind.TIMER) {
 *         System.err.println("task " + t.id() + " wakes in " + t.waitingOn().remaining());
 *     }
 * }
 * }
 *
 * <p>Thread-safe: every method may be called from any thread at any time.
 */
public final class CoroDebug {
    /** The switch, read once: {@code -Dcoro.debug=true}. A constant, so that off costs nothing. */
    static final boolean ENABLED = Boolean.getBoolean("coro.debug");

    private static final String OFF = "Coro debug mode is off: start the JVM with -Dcoro.debug=true"
            + " to record suspended tasks and assembly traces";

    private CoroDebug() {}

    /**
     * Returns whether debug mode is on (the JVM started with {@code -Dcoro.debug=true}); fixed for the
     * life of the JVM.
     *
     * @return whether debug mode is on
     */
    public static boolean isEnabled() {
        return ENABLED;
    }

    /** What a suspended task waits on, in kinds. */
    public enum WaitKind {
        /** Admission to a gate ({@code dev.coro.gate}). */
        GATE,
        /** The lock of an {@code AsyncMutex}. */
        MUTEX,
        /** An {@code Event} being set. */
        EVENT,
        /** Room in a channel (or a receiver) for a send. */
        CHANNEL_SEND,
        /** An element (or the end) of a channel. */
        CHANNEL_RECEIVE,
        /** A timer: {@link Task#delay}. */
        TIMER,
        /** An I/O operation of an {@code EventLoop}. */
        IO,
        /** The result of another task's run (a join, a handle, a spawned child) or of a {@link Promise}. */
        JOIN,
        /** Anything else: a {@link Task#create} callback, a combinator waiting for its children, a select. */
        OTHER
    }

    /**
     * What one suspended task waits on.
     *
     * @param kind the kind of wait
     * @param description the primitive (its class simple name and its {@code toString}), the
     *     operation and its channel, or the task joined
     * @param remaining for a {@link WaitKind#TIMER}: the time left before it fires, on its scheduler's
     *     clock when the dump was taken (negative: due); null for every other kind
     */
    public record WaitingOn(WaitKind kind, String description, Duration remaining) {
        /**
         * Checks the components.
         *
         * @throws NullPointerException if {@code kind} or {@code description} is null
         */
        public WaitingOn {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(description, "description");
        }

        /**
         * Returns the text the dump shows: the kind, the description and, for a timer, the time left.
         *
         * @return the text
         */
        @Override
        public String toString() {
            return kind + ": " + description + (remaining == null ? "" : ", due in " + millis(remaining.toNanos()));
        }
    }

    /**
     * One suspended task in a {@linkplain #suspendedTasks() dump}.
     *
     * @param id the run's id: unique in this JVM, increasing in the order runs were created
     * @param scheduler the {@code toString} of the scheduler it will resume on
     * @param waitingOn what it waits on
     * @param suspendedAtNanos when the wait began, on the {@link System#nanoTime()} clock
     * @param creationSite the frames that started the run, innermost first, without Coro's own classes
     *     and the JDK's reflection; null if there were none (a run started by Coro itself)
     */
    public record SuspendedTask(long id, String scheduler, WaitingOn waitingOn, long suspendedAtNanos,
            List<StackTraceElement> creationSite) {
        /**
         * Checks and copies the components.
         *
         * @throws NullPointerException if {@code scheduler} or {@code waitingOn} is null, or
         *     {@code creationSite} holds a null
         */
        public SuspendedTask {
            Objects.requireNonNull(scheduler, "scheduler");
            Objects.requireNonNull(waitingOn, "waitingOn");
            creationSite = creationSite == null ? null : List.copyOf(creationSite);
        }

        /**
         * Returns this entry as {@link #dump()} shows it: a line with the id, the scheduler, how long
         * it has waited and on what, then one indented line per frame of its creation site.
         *
         * @return the entry's text
         */
        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder();
            sb.append("task #").append(id).append(" on ").append(scheduler).append(", suspended for ")
                    .append(millis(System.nanoTime() - suspendedAtNanos)).append(", waiting on ").append(waitingOn);
            if (creationSite == null) {
                sb.append("\n    created by Coro (no user frame)");
            } else {
                String lead = "\n    created at ";
                for (StackTraceElement f : creationSite) {
                    sb.append(lead).append(f);
                    lead = "\n               ";
                }
            }
            return sb.toString();
        }
    }

    /**
     * Returns the suspended tasks now, oldest run first: every registered run that is waiting, with
     * what it waits on. A snapshot: a task may resume (or start waiting) while it is taken.
     *
     * @return an immutable list of the suspended tasks
     * @throws IllegalStateException if debug mode is off (the message says how to turn it on)
     */
    public static List<SuspendedTask> suspendedTasks() {
        if (!ENABLED) {
            throw new IllegalStateException(OFF);
        }
        List<SuspendedTask> out = new ArrayList<>();
        for (Map.Entry<Fiber<?>, DebugProbes.FiberInfo> e : DebugProbes.fibers()) {
            AsyncStep step = e.getValue().step();
            if (step == null || step.isSettled()) {
                continue; // running, or resuming
            }
            DebugProbes.FiberInfo info = e.getValue();
            out.add(new SuspendedTask(info.id, String.valueOf(step.context().scheduler()), step.describe(),
                    info.suspendedAt, info.site()));
        }
        out.sort(Comparator.comparingLong(SuspendedTask::id));
        return List.copyOf(out);
    }

    /**
     * Returns the dump as text: a header line with the count, then each {@linkplain #suspendedTasks()
     * suspended task} as its {@link SuspendedTask#toString()}, oldest first. With debug mode off,
     * returns one line saying so and naming the switch ({@code -Dcoro.debug=true}); it never throws.
     *
     * @return the dump
     */
    public static String dump() {
        if (!ENABLED) {
            return OFF;
        }
        return render(suspendedTasks());
    }

    /** The text of a dump of {@code tasks}. */
    static String render(List<SuspendedTask> tasks) {
        StringBuilder sb = new StringBuilder("Coro task dump: ").append(tasks.size())
                .append(tasks.size() == 1 ? " suspended task" : " suspended tasks");
        for (SuspendedTask t : tasks) {
            sb.append('\n').append(t);
        }
        return sb.toString();
    }

    private static String millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos) + " ms";
    }
}
