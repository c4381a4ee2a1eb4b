package dev.coro.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Turns a hung operation into a failed benchmark instead of a stalled suite. JMH cannot stop a
 * benchmark thread that ignores interrupts (a lost wakeup in a pool leaves {@code join()} parked for
 * good, and JMH then waits forever), so every pool benchmark brackets its operation with
 * {@link #begin} and {@link #end}; if one operation runs longer than {@code -Dbench.hangSeconds}
 * (default 60), a daemon thread prints every thread's stack to stderr (JMH relays it into the log)
 * and halts the forked JVM. JMH then reports the benchmark as failed and goes on with the next one,
 * and the comparison table shows it as {@code NO RESULT}.
 *
 * <p>Cost per operation: two {@link System#nanoTime()} calls and two volatile writes, against
 * operations of milliseconds.
 */
final class Watchdog {
    private static final long LIMIT_NANOS = TimeUnit.SECONDS.toNanos(Long.getLong("bench.hangSeconds", 60));

    /** When the running operation started; 0 while none runs. */
    private static volatile long startedAt;

    /** The running operation, for the report. */
    private static volatile String running;

    static {
        Thread t = new Thread(Watchdog::watch, "bench-watchdog");
        t.setDaemon(true);
        t.start();
    }

    private Watchdog() {}

    /**
     * Marks the start of one operation.
     *
     * @param what the benchmark, for the report
     */
    static void begin(String what) {
        running = what;
        startedAt = System.nanoTime();
    }

    /** Marks the end of the operation begun last. */
    static void end() {
        startedAt = 0;
    }

    private static void watch() {
        for (;;) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            long s = startedAt;
            if (s != 0 && System.nanoTime() - s > LIMIT_NANOS) {
                StringBuilder report = new StringBuilder();
                report.append("HANG: one operation of ").append(running).append(" has run for more than ")
                        .append(TimeUnit.NANOSECONDS.toSeconds(LIMIT_NANOS)).append(" s; thread dump follows, then halt\n");
                for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                    Thread th = e.getKey();
                    report.append('"').append(th.getName()).append("\" ").append(th.getState()).append('\n');
                    for (StackTraceElement f : e.getValue()) {
                        report.append("    at ").append(f).append('\n');
                    }
                }
                System.err.print(report);
                System.err.flush();
                Runtime.getRuntime().halt(3);
            }
        }
    }
}
