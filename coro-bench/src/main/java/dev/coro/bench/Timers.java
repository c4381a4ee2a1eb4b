package dev.coro.bench;

import dev.coro.bench.peers.KotlinxEventLoopPeers;
import io.netty.util.HashedWheelTimer;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import kotlinx.coroutines.ExecutorCoroutineDispatcher;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * timers: schedule 1,000,000 one-shot timers with seeded random delays of 0 to 1,000 ms on one
 * timer structure, wait until every one has fired, and report how fast they were scheduled and how
 * late they fired. A plain main (like {@link WaiterMemory}), not JMH: one operation is a couple of
 * seconds of wall-clock time and lateness is a distribution, not an average.
 *
 * <p>Per implementation: one unmeasured warm-up round, then {@code --rounds} (5) measured rounds;
 * every round builds a fresh structure (a new executor, wheel, dispatcher or loop), schedules the same
 * delays into it, waits, shuts it down and waits for its thread. Every metric is the median over
 * the measured rounds. Lateness is fire time minus deadline, where the deadline is a
 * {@link System#nanoTime()} read at most 63 timers before the schedule call plus the delay (so it is
 * never later than the structure's own deadline: a reported lateness is never too small), recorded in
 * an HdrHistogram by the one thread that fires the timers; a second histogram holds only the timers
 * with a delay of at least {@link #LATE_START_MILLIS} (the steady state, without the scheduling burst).
 *
 * <p>Besides wall-clock time, the scheduling thread's CPU time during the schedule calls is
 * reported where the scheduling thread is known ({@code sched CPU ms}; n/a for the kotlinx peers,
 * whose scheduling runs inside their own code): on a machine shared with other work, a preempted
 * scheduling thread inflates the wall-clock figure but not this one.
 *
 * <p>Checks, every round: each timer fires exactly once (a per-timer counter), on one thread, and
 * the structure terminates; a round that does not finish within {@code -Dbench.hangSeconds} (60 s)
 * fails with the count of timers that fired, and {@link Watchdog} halts the JVM if even that hangs.
 *
 * <p>Options: {@code --timers N} (1000000), {@code --max-delay-ms M} (1000), {@code --rounds R} (5),
 * {@code --seed S} (42), {@code --quick} (100,000 timers, one measured round), and implementation
 * names to run a subset (see {@link #IMPLS}). Run it with {@code ./coro bench --timers [options]}.
 */
public final class Timers {
    /** Implementations in table order; the first is the baseline. */
    static final List<String> IMPLS = List.of("coro", "coroDelay", "coroOnLoop", "stpe", "nettyWheel1ms", "nettyWheel100ms",
            "kotlinx", "kotlinxEventLoop");

    static final long HANG_SECONDS = Long.getLong("bench.hangSeconds", 60);

    /**
     * The timers with at least this delay (four fifths of them at the default sizes) are due after
     * every fast structure has finished scheduling; the {@code p99>=200ms} column is their p99
     * lateness, the steady state without the scheduling burst.
     */
    static final int LATE_START_MILLIS = 200;

    /** Deadlines are stamped once per this many timers (a power of two): nanoTime is not free. */
    private static final int STAMP_EVERY = 64;

    private Timers() {}

    /** What one implementation's round does: build, schedule all, wait for all, tear down. */
    interface Impl {
        /**
         * Builds a fresh structure, schedules every timer of {@code delays}, waits until {@code rec}
         * has seen them all fire (or the timeout), shuts the structure down and waits for it.
         *
         * @return {@code [t0, t1]}: nanoTime before the first schedule call and after the last; or
         *     {@code [t0, t1, cpu]} with the scheduling thread's CPU time across the calls
         *     ({@link #cpuNanos()})
         */
        long[] run(int[] delaysMillis, Recorder rec) throws Exception;
    }

    /**
     * The per-round record: deadlines (written by the scheduling thread before each schedule call,
     * published to the firing thread by the structure's own hand-off), fire counts and lateness
     * (written by the one firing thread only, published to the main thread by {@link #done}).
     */
    static final class Recorder {
        final int n;
        final long[] deadlines;
        final byte[] fired;
        static final long MAX_LATENESS = TimeUnit.SECONDS.toNanos(600);
        final Histogram lateness = new Histogram(MAX_LATENESS, 3);
        /** Lateness of the timers with a delay of at least {@link #LATE_START_MILLIS}: the steady state. */
        final Histogram latenessLater = new Histogram(MAX_LATENESS, 3);
        final int[] delays;
        final CountDownLatch done = new CountDownLatch(1);
        Thread firer;
        boolean otherThread;
        int count;
        long early;
        long lastFire;
        volatile int published; // count, for the timeout message

        Recorder(int[] delays) {
            this.n = delays.length;
            this.delays = delays;
            this.deadlines = new long[n];
            this.fired = new byte[n];
        }

        /** Called by the structure when timer {@code i} fires. */
        void fire(int i) {
            long now = System.nanoTime();
            Thread t = Thread.currentThread();
            if (firer != t) {
                if (firer != null) {
                    otherThread = true;
                }
                firer = t;
            }
            long late = now - deadlines[i];
            if (late < 0) {
                early++;
                late = 0;
            }
            late = Math.min(late, MAX_LATENESS); // 600 s: clamped, never thrown out of fire()
            lateness.recordValue(late);
            if (delays[i] >= LATE_START_MILLIS) {
                latenessLater.recordValue(late);
            }
            if (fired[i] != Byte.MAX_VALUE) {
                fired[i]++;
            }
            if (++count == n) {
                lastFire = now;
                published = count;
                done.countDown();
            } else if ((count & 0xffff) == 0) {
                published = count;
            }
        }

        /** Waits for the last fire; throws if it does not come within the hang limit. */
        void awaitAll(String impl) throws InterruptedException {
            if (!done.await(HANG_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException(impl + ": only about " + published + " of " + n
                        + " timers fired within " + HANG_SECONDS + " s");
            }
        }

        /** Exactly once each, on one thread; called after the structure has terminated. */
        void verify(String impl) {
            if (otherThread) {
                throw new IllegalStateException(impl + ": timers fired on more than one thread");
            }
            int missing = 0;
            int twice = 0;
            for (byte f : fired) {
                if (f == 0) {
                    missing++;
                } else if (f > 1) {
                    twice++;
                }
            }
            if (missing != 0 || twice != 0 || count != n) {
                throw new IllegalStateException(impl + ": " + missing + " timers never fired and " + twice
                        + " fired more than once (" + count + " fires for " + n + " timers)");
            }
        }
    }

    /** One measured round. */
    record Round(long scheduleNanos, long allFiredNanos, long p50, long p99, long p999, long max, long early,
            long gcNanos, long p99Later, long scheduleCpuNanos) {}

    /** The medians of one implementation's rounds. */
    record Result(String impl, int timers, List<Round> rounds) {
        double median(Function<Round, Long> metric) {
            long[] v = rounds.stream().mapToLong(metric::apply).sorted().toArray();
            return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
        }
    }

    /**
     * Measures and prints the table.
     *
     * Exits with status 1 after printing the error if a round fails (a timer lost or fired twice,
     * a structure that hangs), 0 otherwise.
     *
     * @param args options, see the class comment
     */
    public static void main(String[] args) {
        try {
            measure(args);
        } catch (Throwable e) {
            // exit even if a failed round left a structure's non-daemon thread running
            System.out.flush();
            System.err.println("timers: FAILED");
            e.printStackTrace();
            System.err.flush();
            System.exit(1);
        }
    }

    /** The options ({@link Arguments} reads them). */
    @Command(name = "timers", sortOptions = false,
            description = "How fast one-shot timers are scheduled and how late they fire: Coro and its peers.")
    static final class Settings {
        @Option(names = "--timers", paramLabel = "N", description = "timers per round (default 1,000,000; --quick: 100,000)")
        Integer timers;

        @Option(names = "--max-delay-ms", paramLabel = "M", description = "delays are 0..M ms (default ${DEFAULT-VALUE})")
        int maxDelay = 1000;

        @Option(names = "--rounds", paramLabel = "R", description = "measured rounds (default 5; --quick: 1)")
        Integer rounds;

        @Option(names = "--seed", paramLabel = "S", description = "seed of the delays (default ${DEFAULT-VALUE})")
        long seed = 42;

        @Option(names = "--quick", description = "fewer timers and one round (also -Dbench.quick=true)")
        boolean quick = Boolean.getBoolean("bench.quick");

        @Mixin
        FreshJvms.Options run = new FreshJvms.Options();

        @Mixin
        Arguments.Help help;

        @Mixin
        Arguments.Implementations impls = new Arguments.Implementations(IMPLS);
    }

    private static void measure(String[] args) throws Exception {
        Settings settings = new Settings();
        if (!Arguments.parse(settings, args)) {
            return;
        }
        boolean quick = settings.quick;
        int timers = settings.timers != null ? settings.timers : quick ? 100_000 : 1_000_000;
        int maxDelay = settings.maxDelay;
        int rounds = settings.rounds != null ? settings.rounds : quick ? 1 : 5;
        long seed = settings.seed;
        List<String> impls = new ArrayList<>(settings.impls.names);
        if (timers < 1 || rounds < 1 || maxDelay < 0 || settings.run.warmup < 0) {
            throw new IllegalArgumentException("--timers and --rounds must be >= 1, --max-delay-ms and --warmup >= 0");
        }
        if (impls.isEmpty()) {
            impls.addAll(IMPLS);
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] delays = new int[timers];
        for (int i = 0; i < timers; i++) {
            delays[i] = random.nextInt(maxDelay + 1);
        }
        if (settings.run.freshJvms && !settings.run.child) {
            measureInFreshJvms(settings, impls, timers, maxDelay, rounds, seed);
            return;
        }
        int warmup = settings.run.warmup;
        if (settings.run.child) {
            rounds = 1;
        }
        System.out.printf(Locale.ROOT, "timers: %,d timers, delays 0..%d ms (seed %d), %d warm-up and %d measured "
                + "rounds, heap %d MB, JDK %s, load average %s%n", timers, maxDelay, seed, warmup, rounds,
                Runtime.getRuntime().maxMemory() >> 20, Runtime.version(), loadAverage());
        List<Result> results = new ArrayList<>();
        for (String impl : impls) {
            Impl run = impl(impl);
            List<Round> measured = new ArrayList<>();
            for (int r = 1 - warmup; r <= rounds; r++) {
                Round round = runRound(impl, run, delays);
                System.out.printf(Locale.ROOT, "%s: %s: scheduled in %.1f ms (CPU %s), all fired after %.1f ms, "
                        + "lateness p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms (p99 of delays >= %d ms: %.2f ms), "
                        + "%d early, GC pauses %.0f ms%n", impl,
                        r <= 0 ? "warm-up" : "round " + r, round.scheduleNanos / 1e6,
                        round.scheduleCpuNanos < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f ms",
                                round.scheduleCpuNanos / 1e6),
                        round.allFiredNanos / 1e6,
                        round.p50 / 1e6, round.p99 / 1e6, round.p999 / 1e6, round.max / 1e6, LATE_START_MILLIS,
                        round.p99Later / 1e6, round.early, round.gcNanos / 1e6);
                if (r > 0) {
                    measured.add(round);
                }
            }
            results.add(new Result(impl, timers, measured));
        }
        if (settings.run.child) {
            Round r = results.get(0).rounds().get(0);
            FreshJvms.printResult(impls.get(0), r.scheduleNanos(), r.allFiredNanos(), r.p50(), r.p99(), r.p999(),
                    r.max(), r.early(), r.gcNanos(), r.p99Later(), r.scheduleCpuNanos());
            System.exit(0);
        }
        System.out.print(table(results));
        System.out.println("load average at the end: " + loadAverage());
        System.out.flush();
        System.exit(0); // a peer's leftover non-daemon thread must not keep the JVM alive
    }

    /**
     * {@code --fresh-jvms}: every measured round of every implementation in a JVM of its own (each with
     * its {@code --warmup} rounds first), the implementations interleaved round by round.
     */
    private static void measureInFreshJvms(Settings settings, List<String> impls, int timers, int maxDelay, int rounds,
            long seed) throws Exception {
        System.out.printf(Locale.ROOT, "timers: %,d timers, delays 0..%d ms (seed %d), %d rounds, each in a fresh JVM "
                + "(%d warm-up rounds in it first), implementations interleaved, JDK %s, load average %s%n", timers,
                maxDelay, seed, rounds, settings.run.warmup, Runtime.version(), loadAverage());
        java.util.Map<String, List<Round>> measured = new java.util.LinkedHashMap<>();
        for (String impl : impls) {
            measured.put(impl, new ArrayList<>());
        }
        for (int r = 1; r <= rounds; r++) {
            for (String impl : FreshJvms.order(impls, r)) {
                System.out.printf(Locale.ROOT, "%s: round %d in a fresh JVM%n", impl, r);
                List<String> args = new ArrayList<>(List.of("--child", "--timers", String.valueOf(timers),
                        "--max-delay-ms", String.valueOf(maxDelay), "--seed", String.valueOf(seed),
                        "--warmup", String.valueOf(settings.run.warmup), impl));
                long[] v = FreshJvms.runChild(Timers.class, settings.run.jvmArgs, args);
                measured.get(impl).add(new Round(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]));
            }
        }
        List<Result> results = new ArrayList<>();
        measured.forEach((impl, list) -> results.add(new Result(impl, timers, list)));
        System.out.print(table(results));
        System.out.println("(each round in a fresh JVM with " + settings.run.warmup + " warm-up rounds before it, flags "
                + Pools.HEAP_MIN + " " + Pools.HEAP_MAX + " " + String.join(" ", settings.run.jvmArgs) + "; the heap above is this parent's)");
        System.out.println("load average at the end: " + loadAverage());
        System.out.flush();
        System.exit(0);
    }

    private static Round runRound(String impl, Impl run, int[] delays) throws Exception {
        settle();
        Recorder rec = new Recorder(delays);
        long gc0 = gcMillis();
        long[] span;
        Watchdog.begin("Timers." + impl);
        try {
            span = run.run(delays, rec);
        } finally {
            Watchdog.end();
        }
        long gc = gcMillis() - gc0;
        rec.verify(impl);
        Histogram h = rec.lateness;
        return new Round(span[1] - span[0], rec.lastFire - span[0], h.getValueAtPercentile(50),
                h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(), rec.early,
                gc * 1_000_000L, rec.latenessLater.getValueAtPercentile(99), span.length > 2 ? span[2] : -1);
    }

    /** The calling thread's CPU time in nanoseconds (user and system). */
    static long cpuNanos() {
        return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    /** Milliseconds the JVM's collectors have spent so far (G1: in pauses). */
    private static long gcMillis() {
        long sum = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sum += Math.max(0, gc.getCollectionTime());
        }
        return sum;
    }

    /** Full collections before each round, so the previous round's garbage is not this one's pause. */
    private static void settle() throws InterruptedException {
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(50);
        }
    }

    private static Impl impl(String name) {
        return switch (name) {
            case "coro" -> CoroTimers::external;
            case "coroDelay" -> CoroTimers::delayTasks;
            case "coroOnLoop" -> CoroTimers::onLoop;
            case "stpe" -> Timers::stpe;
            case "nettyWheel1ms" -> (d, rec) -> nettyWheel(d, rec, 1);
            case "nettyWheel100ms" -> (d, rec) -> nettyWheel(d, rec, 100);
            case "kotlinx" -> Timers::kotlinxSingleThread;
            case "kotlinxEventLoop" -> Timers::kotlinxEventLoop;
            default -> throw new IllegalArgumentException(name);
        };
    }

    // ---------------------------------------------------------------- the peers

    /** {@code new ScheduledThreadPoolExecutor(1)}, scheduled from the main thread. */
    private static long[] stpe(int[] delays, Recorder rec) throws Exception {
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(1, named("timers-stpe"));
        try {
            long now = 0;
            long c0 = cpuNanos();
            long t0 = System.nanoTime();
            for (int i = 0; i < delays.length; i++) {
                if ((i & (STAMP_EVERY - 1)) == 0) {
                    now = System.nanoTime();
                }
                int id = i;
                rec.deadlines[i] = now + delays[i] * 1_000_000L;
                ex.schedule(() -> rec.fire(id), delays[i], TimeUnit.MILLISECONDS);
            }
            long t1 = System.nanoTime();
            long c1 = cpuNanos();
            rec.awaitAll("stpe");
            return new long[] {t0, t1, c1 - c0};
        } finally {
            ex.shutdownNow();
            if (!ex.awaitTermination(HANG_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("stpe: the executor did not terminate");
            }
        }
    }

    /**
     * Netty's {@code HashedWheelTimer} with a {@code tickMillis} tick and the default 512 buckets,
     * scheduled from the main thread ({@code newTimeout} is a lock-free queue offer; the worker moves
     * at most 100,000 new timeouts per tick into the wheel).
     */
    private static long[] nettyWheel(int[] delays, Recorder rec, int tickMillis) throws Exception {
        HashedWheelTimer wheel = new HashedWheelTimer(named("timers-wheel"), tickMillis, TimeUnit.MILLISECONDS, 512);
        boolean fired = false;
        try {
            wheel.start(); // the worker's start time is the wheel's clock origin; not part of the schedule loop
            long now = 0;
            long c0 = cpuNanos();
            long t0 = System.nanoTime();
            for (int i = 0; i < delays.length; i++) {
                if ((i & (STAMP_EVERY - 1)) == 0) {
                    now = System.nanoTime();
                }
                int id = i;
                rec.deadlines[i] = now + delays[i] * 1_000_000L;
                wheel.newTimeout(t -> rec.fire(id), delays[i], TimeUnit.MILLISECONDS);
            }
            long t1 = System.nanoTime();
            long c1 = cpuNanos();
            rec.awaitAll("nettyWheel" + tickMillis + "ms");
            fired = true;
            return new long[] {t0, t1, c1 - c0};
        } finally {
            // stop() joins the worker and returns the timeouts it still held
            if (!wheel.stop().isEmpty() && fired) {
                throw new IllegalStateException("the wheel still held timeouts after all had fired");
            }
        }
    }

    /** kotlinx: one-thread dispatcher ({@code newSingleThreadContext}), 1M x launch { delay }. */
    private static long[] kotlinxSingleThread(int[] delays, Recorder rec) throws Exception {
        try (ExecutorCoroutineDispatcher dispatcher = KotlinxEventLoopPeers.kotlinxSingleThreadDispatcher("timers-kotlinx")) {
            return KotlinxEventLoopPeers.kotlinxTimers(delays, rec.deadlines, dispatcher, rec::fire);
        }
    }

    /** kotlinx: {@code runBlocking}'s own event loop on a fresh platform thread, 1M x launch { delay }. */
    private static long[] kotlinxEventLoop(int[] delays, Recorder rec) throws Exception {
        long[][] span = new long[1][];
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(() -> {
            try {
                span[0] = KotlinxEventLoopPeers.kotlinxTimersOnEventLoop(delays, rec.deadlines, rec::fire);
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "timers-kotlinx-loop");
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(HANG_SECONDS));
        if (t.isAlive()) {
            throw new IllegalStateException("kotlinxEventLoop: runBlocking did not return within " + HANG_SECONDS
                    + " s; about " + rec.published + " of " + rec.n + " timers fired");
        }
        if (failure[0] != null) {
            throw new IllegalStateException("kotlinxEventLoop failed", failure[0]);
        }
        rec.awaitAll("kotlinxEventLoop");
        return span[0];
    }

    /**
     * The 1, 5 and 15 minute load averages ({@code /proc/loadavg}), or "n/a": on a 2-core machine
     * another process's work shows in every figure, so the log says how busy the machine was.
     */
    static String loadAverage() {
        try {
            String[] f = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (java.io.IOException | RuntimeException e) {
            return "n/a";
        }
    }

    static ThreadFactory named(String name) {
        return r -> new Thread(r, name);
    }

    // ---------------------------------------------------------------- the table

    static String table(List<Result> results) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%nTimers: schedule N one-shot timers (random 0..max ms), wait for all. "
                + "JDK %s, %d cores, %s. Medians of the measured rounds. Lateness = fire time - deadline. "
                + "coro/x below 1 means Coro is faster / less late.%n", Runtime.version(),
                Runtime.getRuntime().availableProcessors(), gcName()));
        String header = String.format(Locale.ROOT, "%-8s %-18s %9s %11s %12s %12s %12s %8s %8s %8s %8s %11s %6s %6s   %-26s %s%n",
                "workload", "implementation", "timers", "schedule ms", "schedules/s", "sched CPU ms", "all fired ms",
                "p50 ms", "p99 ms", "p99.9 ms", "max ms", "p99>=" + LATE_START_MILLIS + "ms", "early", "GC ms",
                "schedule time coro/x", "p99 coro/x");
        out.append(header).append("-".repeat(header.length() - 1)).append('\n');
        Result base = results.stream().filter(r -> r.impl().equals(IMPLS.get(0))).findFirst().orElse(null);
        for (Result r : results) {
            double sched = r.median(Round::scheduleNanos);
            double p99 = r.median(Round::p99);
            String schedRatio;
            String p99Ratio;
            if (r == base) {
                schedRatio = "baseline";
                p99Ratio = "baseline";
            } else if (base == null) {
                schedRatio = "n/a (no coro result)";
                p99Ratio = "n/a";
            } else {
                schedRatio = String.format(Locale.ROOT, "coro/%s = %.2fx", r.impl(), base.median(Round::scheduleNanos) / sched);
                p99Ratio = String.format(Locale.ROOT, "%.2fx", base.median(Round::p99) / Math.max(1, p99));
            }
            double cpu = r.median(Round::scheduleCpuNanos);
            out.append(String.format(Locale.ROOT, "%-8s %-18s %9d %11.1f %12s %12s %12.1f %8.2f %8.2f %8.2f %8.2f %11.2f %6.0f %6.0f   %-26s %s%n",
                    "timers", r.impl(), r.timers(), sched / 1e6,
                    String.format(Locale.ROOT, "%,.0f", r.timers() / (sched / 1e9)),
                    cpu < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f", cpu / 1e6),
                    r.median(Round::allFiredNanos) / 1e6, r.median(Round::p50) / 1e6, p99 / 1e6,
                    r.median(Round::p999) / 1e6, r.median(Round::max) / 1e6, r.median(Round::p99Later) / 1e6,
                    r.median(Round::early), r.median(Round::gcNanos) / 1e6,
                    schedRatio, p99Ratio));
        }
        return out.toString();
    }

    private static String gcName() {
        List<String> names = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(java.lang.management.GarbageCollectorMXBean::getName).toList();
        String gc = names.stream().anyMatch(g -> g.startsWith("G1 ")) ? "G1" : String.join("+", names);
        return "GC " + gc + ", max heap " + (Runtime.getRuntime().maxMemory() >> 20) + " MB";
    }
}
