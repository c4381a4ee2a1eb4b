package dev.coro.bench;

import dev.coro.io.EventLoop;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.time.Duration;

/**
 * Coro's side of {@link Timers}: {@link EventLoop#schedule}, on a fresh loop per round, scheduled
 * from the main thread ({@code coro}, like the executor and wheel peers) or from the loop thread
 * itself ({@code coroOnLoop}, like the kotlinx peers, whose {@code delay} runs on their thread).
 */
final class CoroTimers {
    private CoroTimers() {}

    /**
     * The delays as {@link Duration}s, one per distinct millisecond value, built before the timed
     * loop: {@code Duration.ofMillis} allocates, and the peers take a {@code (long, TimeUnit)} pair.
     */
    private static Duration[] durations(int[] delays) {
        int max = 0;
        for (int d : delays) {
            max = Math.max(max, d);
        }
        Duration[] out = new Duration[max + 1];
        for (int i = 0; i <= max; i++) {
            out[i] = Duration.ofMillis(i);
        }
        return out;
    }

    /** {@code coro}: the main thread calls {@code loop.schedule} for every timer. */
    static long[] external(int[] delays, Timers.Recorder rec) throws Exception {
        Duration[] ofMillis = durations(delays);
        EventLoop loop = EventLoop.start("timers-coro");
        try {
            long c0 = Timers.cpuNanos();
            long t0 = System.nanoTime();
            scheduleAll(loop, delays, ofMillis, rec);
            long t1 = System.nanoTime();
            long c1 = Timers.cpuNanos();
            rec.awaitAll("coro");
            return new long[] {t0, t1, c1 - c0};
        } finally {
            shutdown(loop, rec);
        }
    }

    /**
     * {@code coroDelay}: the task form, as the README teaches it: the main thread spawns, into a
     * {@code Scope.on(loop)}, one {@code Task.delay(d).then(Task.fromRunnable(fire))} per timer; each
     * starts on the loop (through its inbox) and schedules its delay there.
     */
    static long[] delayTasks(int[] delays, Timers.Recorder rec) throws Exception {
        Duration[] ofMillis = durations(delays);
        EventLoop loop = EventLoop.start("timers-coro");
        try {
            Scope scope = Scope.on(loop);
            long now = 0;
            long c0 = Timers.cpuNanos();
            long t0 = System.nanoTime();
            for (int i = 0; i < delays.length; i++) {
                if ((i & 63) == 0) {
                    now = System.nanoTime();
                }
                int id = i;
                rec.deadlines[i] = now + delays[i] * 1_000_000L;
                scope.spawn(Task.delay(ofMillis[delays[i]]).then(Task.fromRunnable(() -> rec.fire(id))));
            }
            long t1 = System.nanoTime();
            long c1 = Timers.cpuNanos();
            rec.awaitAll("coroDelay");
            scope.joinBlocking();
            return new long[] {t0, t1, c1 - c0};
        } finally {
            shutdown(loop, rec);
        }
    }

    /**
     * {@code coroOnLoop}: one runnable on the loop calls {@code loop.schedule} for every timer (no
     * timer can fire before it returns: the loop is busy scheduling).
     */
    static long[] onLoop(int[] delays, Timers.Recorder rec) throws Exception {
        Duration[] ofMillis = durations(delays);
        EventLoop loop = EventLoop.start("timers-coro");
        try {
            long[] span = new long[3];
            loop.execute(() -> {
                long c0 = Timers.cpuNanos();
                span[0] = System.nanoTime();
                scheduleAll(loop, delays, ofMillis, rec);
                span[1] = System.nanoTime();
                span[2] = Timers.cpuNanos() - c0;
            });
            rec.awaitAll("coroOnLoop"); // the last fire runs after the scheduling runnable: span is visible
            return span;
        } finally {
            shutdown(loop, rec);
        }
    }

    private static void scheduleAll(EventLoop loop, int[] delays, Duration[] ofMillis, Timers.Recorder rec) {
        long now = 0;
        for (int i = 0; i < delays.length; i++) {
            if ((i & 63) == 0) { // as for the peers: one clock read per 64 timers
                now = System.nanoTime();
            }
            int id = i;
            rec.deadlines[i] = now + delays[i] * 1_000_000L;
            loop.schedule(() -> rec.fire(id), ofMillis[delays[i]]);
        }
    }

    /** Checks that the loop holds no timer once all fired, then closes it and waits for its thread. */
    private static void shutdown(EventLoop loop, Timers.Recorder rec) throws InterruptedException {
        int[] pending = {-1};
        if (rec.done.getCount() == 0) {
            java.util.concurrent.CountDownLatch asked = new java.util.concurrent.CountDownLatch(1);
            loop.execute(() -> {
                pending[0] = loop.pendingTimers();
                asked.countDown();
            });
            asked.await();
        }
        loop.shutdownNow();
        if (!loop.awaitTermination(Duration.ofSeconds(Timers.HANG_SECONDS))) {
            throw new IllegalStateException("coro: the EventLoop did not terminate");
        }
        if (pending[0] > 0) {
            throw new IllegalStateException("coro: " + pending[0] + " timers still pending after all fired");
        }
    }
}
