package dev.coro.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.EventType;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;

/**
 * The JFR event of one wait on a primitive of the admission engine (a gate, the mutex): from the
 * moment the waiter queued until it was admitted, cancelled or timed out. An admission on the fast
 * path is no wait and records nothing. Like the JDK's own wait events it has a threshold (20 ms by
 * default, as {@code jdk.JavaMonitorWait}'s in the default settings) and is off unless a recording
 * enables it; while it is off a queued waiter pays one check of that flag and nothing else.
 *
 * <p>Enable it with {@code jfr configure}, a {@code .jfc} file or
 * {@code recording.enable("dev.coro.Wait").withThreshold(Duration.ofMillis(1))}. The system property
 * {@code -Dcoro.jfr=off} (read once, when the first wait queues) removes even the check: no Coro
 * event is ever recorded then.
 */
@Name("dev.coro.Wait")
@Label("Coro Wait")
@Category({"Coro", "Synchronization"})
@Description("A task waited on a Coro gate or mutex: from queueing until it was admitted, cancelled or timed out")
@Threshold("20 ms")
@StackTrace(false)
public final class WaitEvent extends Event {
    /** What the waiter ended with. */
    public static final String ADMITTED = "admitted", CANCELLED = "cancelled", TIMED_OUT = "timed out";

    private static final EventType TYPE = CoroEvents.OFF ? null : EventType.getEventType(WaitEvent.class);

    @Label("Primitive")
    @Description("The class of the gate or mutex the task waited on")
    Class<?> primitive;

    @Label("Weight")
    @Description("What the waiter asked for, in the primitive's units (permits, tokens, bytes; 1 for most)")
    long weight;

    @Label("Outcome")
    @Description("admitted, cancelled (or superseded, or closed) or timed out")
    String outcome;

    private WaitEvent() {}

    /**
     * Starts timing a wait if a recording has this event enabled; otherwise returns null and
     * allocates nothing.
     *
     * @param primitive the class of the primitive waited on
     * @param weight what the waiter asks for
     * @return the started event, or null
     */
    static WaitEvent startIfEnabled(Class<?> primitive, long weight) {
        if (CoroEvents.OFF || !TYPE.isEnabled()) {
            return null;
        }
        WaitEvent e = new WaitEvent();
        e.primitive = primitive;
        e.weight = weight;
        e.begin();
        return e;
    }

    /**
     * Ends the wait with {@code outcome} and commits it if it lasted at least the threshold (on the
     * thread that ended it, which is the event's thread).
     *
     * @param outcome {@link #ADMITTED}, {@link #CANCELLED} or {@link #TIMED_OUT}
     */
    void finish(String outcome) {
        end();
        if (shouldCommit()) {
            this.outcome = outcome;
            commit();
        }
    }
}
