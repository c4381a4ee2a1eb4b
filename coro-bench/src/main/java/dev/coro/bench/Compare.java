package dev.coro.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the Coro benchmarks and their peers in one JMH run and prints a comparison table: per
 * workload and implementation, the time per item (operation time divided by the operation's item
 * count), items per second, and Coro's time over the peer's ({@code coro/fjp = 0.85x}: below 1,
 * Coro is faster).
 *
 * <p>Arguments are JMH's own command line ({@code -h} lists them): a regex selects benchmarks
 * ({@code ./coro bench PingPong}), {@code -wi 1 -i 2} changes iterations, {@code -p tasks=20000}
 * changes an item count. Without a regex all of {@code dev.coro.bench} runs. With {@code --quick}
 * (or {@code -Dbench.quick=true}; through the launcher, {@code JDK_JAVA_OPTIONS=-Dbench.quick=true})
 * the defaults shrink to warmup 2 x 0.5 s and measurement 3 x 0.5 s
 * (explicit {@code -wi}, {@code -w}, {@code -i}, {@code -r} still win).
 *
 * <p>A benchmark that fails (its result check throws, or its fork dies) is reported as such in the
 * table, never dropped silently.
 *
 * <p>Besides the table, a run keeps JMH's results in JMH's JSON format ({@code results.json}, unless
 * {@code -rf} or {@code -rff} asks for another file) and writes a Markdown report with one bar chart
 * per workload ({@link Report}), both in {@code coro-bench/target/report/} (the system property
 * {@code bench.report} names another directory). Before each benchmark it prints
 * {@code workload i of n: <workload> <implementation>} ({@link ProgressOutput}).
 *
 * <p>{@code --memory} runs only {@link WaiterMemory} (retained heap per waiter on a held lock) in a
 * JVM of its own, passing it the remaining arguments; a run without a regex (the whole suite) runs
 * it too, after the JMH table. {@code --timers} ({@link Timers}) and {@code --echo}
 * ({@link EchoLoopback}), the EventLoop's plain-main measurements, and {@code --keyed-memory}
 * ({@link KeyedMemory}, retained heap per idle key of the keyed gate and its peers) work the same way,
 * and so does {@code --redis-fleet} ({@link RedisFleet}: a capacity of 8 across 3 JVMs on a private
 * {@code redis-server}, Coro's {@code RedisCapacityGate} against Redisson's semaphores).
 *
 * <p>{@code --rounds-of R} runs the implementations of one workload that the regex selects as forks
 * interleaved over {@code R} rounds and prints each round's ratios and their medians ({@link Rounds}).
 */
public final class Compare {
    /** The implementation every other one in its workload is compared with. */
    static final String BASELINE = "coro";

    /**
     * A workload: its benchmark class, the {@code @Param}s whose product is its item count (none: one
     * item per operation), its implementations, and the implementation that runs the same work on
     * Coro with no synchronization at all (null if none), with the same for the other runtimes
     * ({@code ownWorkAlone}: implementation to its runtime's work alone). With a work alone, the table
     * also prints each other implementation's overhead per item (its time per item minus the Coro
     * work alone's, and minus its own runtime's) and Coro's overhead over each peer's.
     */
    record Workload(Class<?> type, String label, List<String> itemParams, String itemName, List<String> impls,
            String workAlone, Map<String, String> ownWorkAlone) {
        Workload(Class<?> type, String label, List<String> itemParams, String itemName, List<String> impls) {
            this(type, label, itemParams, itemName, impls, null, Map.of());
        }

        /** Items in one operation of {@code r}. */
        long items(RunResult r) {
            long n = 1;
            for (String p : itemParams) {
                n *= Long.parseLong(r.getParams().getParam(p));
            }
            return n;
        }

        /**
         * The item parameters of a result, for headings.
         *
         * @param r a result of this workload
         * @return {@code name=value} pairs joined by commas, empty if the workload has no item parameters
         */
        String describe(RunResult r) {
            StringBuilder d = new StringBuilder();
            for (String p : itemParams) {
                d.append(d.isEmpty() ? "" : ",").append(p).append('=').append(r.getParams().getParam(p));
            }
            return d.toString();
        }

        /** The values of the item parameters of {@code r}, to group its results by. */
        String key(RunResult r) {
            StringBuilder k = new StringBuilder();
            for (String p : itemParams) {
                k.append(r.getParams().getParam(p)).append(',');
            }
            return k.toString();
        }
    }

    static final List<Workload> WORKLOADS = List.of(
            new Workload(SpawnJoin.class, "spawn-join", List.of("tasks"), "task",
                    List.of("coro", "fjp", "virtualThreads", "kotlinx", "reactor")),
            new Workload(SpawnCollect.class, "spawn-collect", List.of("tasks"), "task",
                    List.of("coro", "coroJoin", "coroJoinIntoArray", "fjp")),
            new Workload(SpawnCollectOutside.class, "spawn-collect-outside", List.of("tasks"), "task",
                    List.of("coro", "coroJoinThenHandles", "coroSpawnAll", "fjp", "virtualThreads")),
            new Workload(PingPong.class, "ping-pong", List.of("rounds"), "round trip",
                    List.of("coro", "kotlinx", "virtualThreads")),
            new Workload(TaskOverhead.class, "task-overhead", List.of(), "op",
                    List.of("coro", "completableFuture")),
            new Workload(TaskLoop.class, "task-loop", List.of("n"), "iteration",
                    List.of("coro", "coroRepeat", "coroDeferLoop", "kotlinx")),
            new Workload(MutexContended.class, "mutex-contended", List.of("tasks", "locks"), "lock",
                    List.of("coro", "coroBarging", "coroLoopBody", "coroBargingLoopBody", "coroRangeBody",
                            "coroBargingRangeBody", "kotlinx",
                            "vtReentrantUnfair", "vtReentrantFair", "platformSynchronized")),
            new Workload(MutexUncontended.class, "mutex-uncontended", List.of("ops"), "lock",
                    List.of("coro", "coroBarging", "coroNoLock", "reentrantLock", "kotlinx")),
            new Workload(LoopHandoff.class, "loop-ping-pong", List.of("rounds"), "round trip",
                    List.of("coro", "coroTwoLoops", "kotlinxOneThread")),
            new Workload(GateCapacity.class, "gate-capacity", List.of("tasks"), "task",
                    List.of("coro", "kotlinx", "bulkheadVt", "semaphoreVt", "workAlone", "kotlinxWorkAlone",
                            "vtWorkAlone", "workSerial"),
                    "workAlone", Map.of("kotlinx", "kotlinxWorkAlone", "bulkheadVt", "vtWorkAlone",
                            "semaphoreVt", "vtWorkAlone")),
            new Workload(GateSerial.class, "gate-serial", List.of("tasks", "locks"), "entry",
                    List.of("coro", "coroBarging", "coroMutex", "kotlinx")),
            new Workload(GateKeyed.class, "gate-keyed", List.of("ops"), "op",
                    List.of("coro", "stripedVt", "futureChain", "kotlinx", "workAlone", "tableAlone"),
                    "workAlone", Map.of()),
            new Workload(GateBudget.class, "gate-budget", List.of("ops"), "op",
                    List.of("coro", "semaphoreFairVt", "workAlone"), "workAlone", Map.of()),
            new Workload(GatePriority.class, "gate-priority", List.of("tasks"), "task",
                    List.of("coro", "coroDeadline", "coroCapacity", "queueVt")),
            new Workload(GateRate.class, "gate-rate", List.of("ops"), "admission",
                    List.of("coro", "guavaVt", "resilience4jVt", "workAlone", "vtWorkAlone"),
                    "workAlone", Map.of("guavaVt", "vtWorkAlone", "resilience4jVt", "vtWorkAlone")),
            new Workload(GateLatest.class, "gate-latest", List.of("submissions"), "submission",
                    List.of("coro", "coroLetRunning", "reactorSwitchMap", "kotlinxCollectLatest")),
            new Workload(GateBreaker.class, "gate-breaker", List.of("ops"), "call",
                    List.of("coro", "coroTimed", "resilience4jOnCoro", "resilience4jVt", "workAlone", "vtWorkAlone"),
                    "workAlone", Map.of("resilience4jVt", "vtWorkAlone")),
            new Workload(GateCoalescing.class, "gate-coalescing", List.of("requests"), "request",
                    List.of("coro", "chmFutures", "caffeine")),
            new Workload(ChannelPingPong.class, "channel-ping-pong", List.of("rounds"), "round trip",
                    List.of("coro", "coroLoop", "kotlinxDefault", "kotlinxRunBlocking", "virtualThreads")),
            new Workload(ChannelThroughput.class, "channel-throughput", List.of("pairs", "perProducer"), "element",
                    List.of("coro", "kotlinx", "virtualThreadsArrayBlockingQueue", "virtualThreadsLinkedTransferQueue",
                            "jctoolsSpinFloor")),
            new Workload(ChannelSelect.class, "select", List.of("selects"), "select",
                    List.of("coro", "kotlinx")),
            new Workload(GeneratorPipeline.class, "generator", List.of("n"), "element",
                    List.of("coro", "coroCreate", "coroCreateLoop", "kotlinSequence", "kotlinxFlow")));

    /** What {@code ./coro bench --help} prints; {@code -h} prints JMH's own options. */
    private static final String USAGE = """
            ./coro bench [REGEX] [JMH options]   JMH benchmarks of Coro and its peers in one run, then a table
                                                 of ns per item with ratios, and coro-bench/target/report/
              --quick                            2 x 0.5 s warmup, 3 x 0.5 s measurement
              -f 1 -wi 3 -w 1 -i 5 -r 1          forks, warmup and measurement iterations and times (JMH)
              -h                                 every JMH option
            ./coro bench --rounds-of R REGEX [JMH options]   one workload's implementations, a fork each, interleaved
                                                 over R rounds; per-round ratios and their medians
            ./coro bench --memory [--waiters N] [--rounds R] [--histogram] [--layout] [NAMES]   bytes per suspended waiter
            ./coro bench --timers [--timers N] [--rounds R] [NAMES]                 timers: rate and lateness
            ./coro bench --echo [--quick] [--connections C] [--round-trips N] [NAMES]   TCP echo over loopback
            ./coro bench --keyed-memory [--keys N]                                  heap per idle key of a keyed gate
            ./coro bench --rate-lateness [--waiters N] [--rate R] [--rounds K]      rate gate lateness
            ./coro bench --redis-fleet [--ops N] [--lanes L] [IMPL...]              capacity 8 across 3 JVMs on Redis: Coro, Redisson
            coro-bench/README.md says what each benchmark measures and how each peer is written.""";

    private Compare() {}

    /**
     * Runs the selected benchmarks and prints the table.
     *
     * @param args JMH command-line arguments
     * @throws RunnerException if JMH cannot run at all
     */
    public static void main(String[] args) throws RunnerException {
        System.setProperty("java.awt.headless", "true"); // the report's charts are drawn with no display
        List<String> jmhArgs = new ArrayList<>(List.of(args));
        if (jmhArgs.contains("--help")) {
            System.out.println(USAGE);
            System.exit(0);
            return;
        }
        boolean quick = jmhArgs.remove("--quick") | Boolean.getBoolean("bench.quick");
        if (jmhArgs.remove("--memory")) {
            // the rest of the arguments are WaiterMemory's own (--waiters N, --rounds R, --histogram, names)
            System.exit(runWaiterMemory(jmhArgs));
            return;
        }
        if (jmhArgs.remove("--timers")) { // the rest are Timers' own (--timers N, --rounds R, names)
            if (quick) {
                jmhArgs.add("--quick");
            }
            System.exit(runMain(Timers.class, jmhArgs));
            return;
        }
        if (jmhArgs.remove("--keyed-memory")) { // the rest are KeyedMemory's own (--keys N)
            System.exit(runMain(KeyedMemory.class, jmhArgs));
            return;
        }
        if (jmhArgs.remove("--rate-lateness")) { // the rest are RateLateness's own (--waiters N, --rate R, --rounds K)
            if (quick) {
                jmhArgs.add("--quick");
            }
            System.exit(runMain(RateLateness.class, jmhArgs));
            return;
        }
        if (jmhArgs.remove("--redis-fleet")) { // the rest are RedisFleet's own (--ops N, --lanes L, implementations)
            if (quick) {
                jmhArgs.add("--quick");
            }
            System.exit(runMain(RedisFleet.class, jmhArgs));
            return;
        }
        int roundsOf = jmhArgs.indexOf("--rounds-of");
        if (roundsOf >= 0) { // the rest select one workload (Rounds)
            int rounds;
            try {
                rounds = Integer.parseInt(roundsOf + 1 < jmhArgs.size() ? jmhArgs.get(roundsOf + 1) : "");
            } catch (NumberFormatException e) {
                System.err.println("--rounds-of takes a number of rounds (at least 1), got "
                        + (roundsOf + 1 < jmhArgs.size() ? jmhArgs.get(roundsOf + 1) : "nothing"));
                System.exit(2);
                return;
            }
            jmhArgs.subList(roundsOf, roundsOf + 2).clear();
            if (quick) {
                jmhArgs.addAll(List.of("-wi", "2", "-w", "500ms", "-i", "3", "-r", "500ms"));
            }
            try {
                System.exit(Rounds.run(rounds, jmhArgs, System.out));
            } catch (IllegalArgumentException e) { // a round count below 1
                System.err.println(e.getMessage());
                System.exit(2);
            }
            return;
        }
        if (jmhArgs.remove("--echo")) { // the rest are EchoLoopback's own
            if (quick) {
                jmhArgs.add("--quick");
            }
            System.exit(runMain(EchoLoopback.class, jmhArgs));
            return;
        }
        CommandLineOptions cmd;
        try {
            cmd = new CommandLineOptions(jmhArgs.toArray(String[]::new));
        } catch (CommandLineOptionException e) {
            System.err.println("Error parsing arguments: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (cmd.shouldHelp()) {
            try {
                cmd.showHelp();
            } catch (java.io.IOException e) {
                throw new RunnerException(e);
            }
            return;
        }
        ChainedOptionsBuilder options = new OptionsBuilder().parent(cmd);
        List<String> includes = cmd.getIncludes();
        if (includes.isEmpty()) {
            includes = List.of(Pattern.quote(Compare.class.getPackageName() + "."));
            options.include(includes.get(0));
        }
        if (quick) {
            if (!cmd.getWarmupIterations().hasValue()) options.warmupIterations(2);
            if (!cmd.getWarmupTime().hasValue()) options.warmupTime(TimeValue.milliseconds(500));
            if (!cmd.getMeasurementIterations().hasValue()) options.measurementIterations(3);
            if (!cmd.getMeasurementTime().hasValue()) options.measurementTime(TimeValue.milliseconds(500));
        }
        if (Runtime.version().feature() >= 24 && !cmd.getJvmArgsPrepend().hasValue()) {
            // JMH 1.37 reads field offsets through sun.misc.Unsafe; quiet the JDK 24+ warning in forks
            options.jvmArgsPrepend("--sun-misc-unsafe-memory-access=allow");
        }
        // JMH's results as JSON in the report directory, unless -rf or -rff asks for another file
        Path reportDir = Report.directory();
        boolean json = !cmd.getResultFormat().hasValue() && !cmd.getResult().hasValue();
        if (json) {
            try {
                Files.createDirectories(reportDir);
            } catch (IOException e) {
                throw new RunnerException("cannot create the report directory " + reportDir, e);
            }
            options.resultFormat(ResultFormatType.JSON).result(reportDir.resolve(Report.RESULTS).toString());
        }
        boolean everything = cmd.getIncludes().isEmpty();
        Options built = options.build();
        String before = CrossCore.line("before the run"); // the machine's state, which moves (CrossCore)
        Collection<RunResult> results = new Runner(built, ProgressOutput.create(built)).run();
        String after = CrossCore.line("after the run");
        List<Comparison> comparisons = comparisons(results, includes, cmd.getExcludes());
        System.out.println();
        System.out.print(table(comparisons));
        System.out.println(before);
        System.out.println(after);
        try {
            Path report = Report.write(reportDir, comparisons, setup() + "\n\n" + before + "\n" + after, json);
            System.out.println();
            System.out.println("report: " + report
                    + (json ? ", JMH's results: " + reportDir.resolve(Report.RESULTS) : ""));
        } catch (IOException | RuntimeException e) {
            // the table above has the figures; a report that cannot be written does not fail the run
            System.out.println("report: NOT WRITTEN (" + e + ")");
        }
        if (everything) {
            // the whole suite includes the waiter-memory measurement (a plain main, not JMH)
            System.out.println();
            int rc = runWaiterMemory(quick ? List.of("--rounds", "1") : List.of());
            if (rc != 0) {
                System.out.println("waiter-memory: NO RESULT (the measurement exited with " + rc + ", see above)");
            }
            for (Class<?> main : List.of(Timers.class, EchoLoopback.class)) {
                System.out.println();
                rc = runMain(main, quick ? List.of("--quick") : List.of());
                if (rc != 0) {
                    System.out.println(main.getSimpleName() + ": NO RESULT (the measurement exited with " + rc
                            + ", see above)");
                }
            }
        }
    }

    /**
     * Runs {@link WaiterMemory} in a JVM of its own, with the forks' flags (fixed 2 GB heap, two
     * virtual-thread carriers, two kotlinx threads), so the JMH host's heap does not count.
     *
     * @param args WaiterMemory's arguments
     * @return its exit code
     */
    static int runWaiterMemory(List<String> args) {
        return runMain(WaiterMemory.class, args);
    }

    /**
     * Runs a plain-main measurement ({@link WaiterMemory}, {@link Timers}, {@link EchoLoopback},
     * {@link KeyedMemory}, {@link RateLateness}, {@link RedisFleet}) in
     * a JVM of its own with the forks' flags (and, for Netty on JDK 24+, quiet Unsafe access).
     *
     * @param main the class whose {@code main} to run
     * @param args its arguments
     * @return its exit code
     */
    static int runMain(Class<?> main, List<String> args) {
        List<String> command = new ArrayList<>(List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                Pools.HEAP_MIN, Pools.HEAP_MAX, Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE));
        if (Runtime.version().feature() >= 24) {
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(args);
        try {
            // keep the launcher's JDK_JAVA_OPTIONS (-Dbench.quick) out of it; inherit the console
            ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
            pb.environment().remove("JDK_JAVA_OPTIONS");
            return pb.start().waitFor();
        } catch (java.io.IOException e) {
            System.err.println(main.getSimpleName() + ": cannot start " + command.get(0) + ": " + e);
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    /**
     * One implementation's figures in one comparison: JMH's average time per operation, and that time
     * and its error divided by the operation's item count. {@link #ran} is false for an implementation
     * that was selected but has no result (its benchmark failed or did not run); its times are then NaN.
     *
     * @param impl the implementation (the benchmark method's name)
     * @param ran whether it has a result
     * @param items items in one operation
     * @param nsPerOp JMH's average time per operation, in nanoseconds
     * @param nsPerItem {@code nsPerOp / items}
     * @param errorPerItem JMH's score error (99.9 %) divided the same way; NaN with fewer than three iterations
     * @param coroOverThis the baseline's time over this one's (below 1: Coro is faster); NaN without a baseline
     */
    record Figures(String impl, boolean ran, long items, double nsPerOp, double nsPerItem, double errorPerItem,
            double coroOverThis) {
        /**
         * Items per second at {@link #nsPerItem}.
         *
         * @return {@code 1e9 / nsPerItem}
         */
        double itemsPerSecond() {
            return 1e9 / nsPerItem;
        }

        /**
         * The ratio as the table prints it.
         *
         * @return "baseline", "coro/fjp = 0.85x", or why there is none
         */
        String ratio() {
            if (impl.equals(BASELINE)) {
                return "baseline";
            }
            return Double.isNaN(coroOverThis) ? "coro/" + impl + " = n/a (no coro result)"
                    : String.format(Locale.ROOT, "coro/%s = %.2fx", impl, coroOverThis);
        }
    }

    /**
     * One overhead row of a workload with a work alone: an implementation's time per item minus the
     * Coro work alone's, and minus its own runtime's work alone, each with Coro's overhead over it.
     *
     * @param impl the implementation
     * @param overCoroAlone its ns per item minus the Coro work alone's (NaN if either has no result)
     * @param ratioCoroAlone Coro's {@code overCoroAlone} over this one's, as printed
     * @param overOwnAlone its ns per item minus its own runtime's work alone's
     * @param ratioOwnAlone Coro's overhead over its own work alone over this one's, as printed
     * @param ownAlone the name of its own runtime's work alone
     */
    record Overhead(String impl, double overCoroAlone, String ratioCoroAlone, double overOwnAlone,
            String ratioOwnAlone, String ownAlone) {}

    /**
     * A workload's results at one set of item parameters (one comparison unless {@code -p} gives
     * several values): the selected implementations in the workload's order, baseline first.
     *
     * @param workload the workload
     * @param params the item parameters, as {@code name=value} joined by commas (empty if none)
     * @param rows one per selected implementation
     * @param overheads the overhead rows, empty unless the workload has a work alone
     */
    record Comparison(Workload workload, String params, List<Figures> rows, List<Overhead> overheads) {}

    /**
     * Computes the comparisons of the workloads that {@code includes} and {@code excludes} select, in
     * the order of {@link #WORKLOADS}. The console table and the Markdown report both print these.
     *
     * @param results JMH's results
     * @param includes the include regexes of the run
     * @param excludes its exclude regexes
     * @return one comparison per selected workload and parameter set
     */
    static List<Comparison> comparisons(Collection<RunResult> results, List<String> includes, List<String> excludes) {
        Map<String, List<RunResult>> byBenchmark = new LinkedHashMap<>();
        for (RunResult r : results) {
            byBenchmark.computeIfAbsent(r.getParams().getBenchmark(), k -> new ArrayList<>()).add(r);
        }
        List<Comparison> comparisons = new ArrayList<>();
        for (Workload w : WORKLOADS) {
            // group the results of this workload by parameter set (one group unless -p gives several)
            Map<String, Map<String, RunResult>> byParams = new LinkedHashMap<>();
            List<String> selected = new ArrayList<>();
            for (String impl : w.impls()) {
                String name = w.type().getName() + "." + impl;
                if (!matches(name, includes, excludes)) {
                    continue;
                }
                selected.add(impl);
                for (RunResult r : byBenchmark.getOrDefault(name, List.of())) {
                    String key = w.key(r);
                    byParams.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(impl, r);
                }
            }
            if (selected.isEmpty()) {
                continue;
            }
            if (byParams.isEmpty()) {
                byParams.put("?", Map.of());
            }
            for (Map<String, RunResult> group : byParams.values()) {
                comparisons.add(comparison(w, group, selected));
            }
        }
        return comparisons;
    }

    /** The comparison of {@code selected} in one parameter set of {@code w}. */
    private static Comparison comparison(Workload w, Map<String, RunResult> group, List<String> selected) {
        double baseNs = nsPerItemOf(w, group, BASELINE);
        List<Figures> rows = new ArrayList<>();
        String params = "";
        for (String impl : selected) {
            RunResult r = group.get(impl);
            if (r == null) {
                rows.add(new Figures(impl, false, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN));
                continue;
            }
            params = w.describe(r);
            long items = w.items(r);
            Result<?> primary = r.getPrimaryResult();
            double nsPerItem = nsPerItem(w, r);
            rows.add(new Figures(impl, true, items, toNanos(primary.getScore(), primary.getScoreUnit()), nsPerItem,
                    toNanos(primary.getScoreError(), primary.getScoreUnit()) / items, baseNs / nsPerItem));
        }
        return new Comparison(w, params, rows, w.workAlone() == null ? List.of() : overheads(w, group, selected));
    }

    /**
     * The overhead rows of a workload with a work alone: per implementation that is not a work alone
     * (nor the calibration, whose name starts with "work"), its time per item minus the Coro work
     * alone's, and minus its own runtime's work alone (the same for Coro), each with Coro's overhead
     * over the peer's.
     */
    private static List<Overhead> overheads(Workload w, Map<String, RunResult> group, List<String> selected) {
        double coroAlone = nsPerItemOf(w, group, w.workAlone());
        double baseOverhead = nsPerItemOf(w, group, BASELINE) - coroAlone;
        List<Overhead> rows = new ArrayList<>();
        for (String impl : selected) {
            if (impl.startsWith("work") || w.ownWorkAlone().containsValue(impl) || !group.containsKey(impl)) {
                continue;
            }
            String own = w.ownWorkAlone().getOrDefault(impl, w.workAlone()); // Coro's own is workAlone
            double ns = nsPerItemOf(w, group, impl);
            double overhead = ns - coroAlone;
            double ownOverhead = ns - nsPerItemOf(w, group, own);
            rows.add(new Overhead(impl, overhead, overheadRatio(impl, baseOverhead, overhead), ownOverhead,
                    overheadRatio(impl, baseOverhead, ownOverhead), own));
        }
        return rows;
    }

    /**
     * The sentence above the table and the report: the setup, and how to read a ratio.
     *
     * @return the sentence, without a line break
     */
    static String setup() {
        return String.format(Locale.ROOT, "Coro vs peers, %d workers, JDK %s, %d cores. Time per item = "
                + "JMH average time per operation / items per operation; coro/x below 1 means Coro is faster.",
                Pools.WORKERS, Runtime.version(), Runtime.getRuntime().availableProcessors());
    }

    /**
     * The console table of {@code comparisons}: per row, items, ms/op, ns/item with its error, items per
     * second and the ratio; then the overhead rows of a workload with a work alone.
     *
     * @param comparisons from {@link #comparisons}
     * @return the table, lines ending in a line break
     */
    static String table(List<Comparison> comparisons) {
        StringBuilder out = new StringBuilder();
        out.append(setup()).append('\n');
        String header = String.format(Locale.ROOT, "%-17s %-20s %8s %12s %12s %9s %15s   %s%n",
                "workload", "implementation", "items", "ms/op", "ns/item", "± ns", "items/s", "ratio");
        out.append(header).append("-".repeat(header.length() - 1)).append('\n');
        for (Comparison c : comparisons) {
            Workload w = c.workload();
            for (Figures f : c.rows()) {
                if (!f.ran()) {
                    out.append(String.format(Locale.ROOT, "%-17s %-20s %s%n", w.label(), f.impl(),
                            "NO RESULT: the benchmark failed or was not run (see the JMH log above)"));
                    continue;
                }
                out.append(String.format(Locale.ROOT, "%-17s %-20s %8d %12.3f %12.1f %9s %15s   %s%n",
                        w.label(), f.impl(), f.items(), f.nsPerOp() / 1e6, f.nsPerItem(), error(f),
                        String.format(Locale.ROOT, "%,.0f", f.itemsPerSecond()), f.ratio()));
            }
            if (w.workAlone() != null) {
                out.append(String.format(Locale.ROOT, "%s: overhead per %s = ns/%s minus the ns/%s of the same "
                        + "tasks with no gate, on Coro (%s) and on the implementation's own runtime%n",
                        w.label(), w.itemName(), w.itemName(), w.itemName(), w.workAlone()));
                out.append(String.format(Locale.ROOT, "%-17s %-20s %12s   %-26s %12s   %-26s %s%n", "workload",
                        "implementation", "- " + w.workAlone(), "ratio", "- own", "ratio", "own work alone"));
                for (Overhead o : c.overheads()) {
                    out.append(String.format(Locale.ROOT, "%-17s %-20s %9.1f ns   %-26s %9.1f ns   %-26s %s%n",
                            w.label(), o.impl(), o.overCoroAlone(), o.ratioCoroAlone(), o.overOwnAlone(),
                            o.ratioOwnAlone(), o.ownAlone()));
                }
            }
        }
        return out.toString();
    }

    /**
     * The error per item as the tables print it.
     *
     * @param f the figures
     * @return the error with one decimal, or "n/a" (JMH gives none with fewer than three iterations)
     */
    static String error(Figures f) {
        return Double.isNaN(f.errorPerItem()) ? "n/a" : String.format(Locale.ROOT, "%.1f", f.errorPerItem());
    }

    private static String overheadRatio(String impl, double coro, double peer) {
        if (impl.equals(BASELINE)) {
            return "baseline";
        }
        return Double.isNaN(coro) || Double.isNaN(peer) ? "coro/" + impl + " = n/a"
                : String.format(Locale.ROOT, "coro/%s = %.2fx", impl, coro / peer);
    }

    /** Nanoseconds per item of {@code impl} in {@code group}, NaN if it has no result. */
    private static double nsPerItemOf(Workload w, Map<String, RunResult> group, String impl) {
        RunResult r = group.get(impl);
        return r == null ? Double.NaN : nsPerItem(w, r);
    }

    /** Nanoseconds per item of {@code r}: JMH's average time per operation over the operation's items. */
    private static double nsPerItem(Workload w, RunResult r) {
        Result<?> primary = r.getPrimaryResult();
        return toNanos(primary.getScore(), primary.getScoreUnit()) / w.items(r);
    }

    /** JMH's own selection rule: some include regex is found in the name, and no exclude regex is. */
    private static boolean matches(String name, List<String> includes, List<String> excludes) {
        boolean included = includes.stream().anyMatch(re -> Pattern.compile(re).matcher(name).find());
        boolean excluded = excludes.stream().anyMatch(re -> Pattern.compile(re).matcher(name).find());
        return included && !excluded;
    }

    /** Converts an average-time score in {@code unit} (such as "ns/op" or "ms/op") to nanoseconds. */
    private static double toNanos(double score, String unit) {
        String u = unit.substring(0, unit.indexOf('/'));
        TimeUnit tu = switch (u) {
            case "ns" -> TimeUnit.NANOSECONDS;
            case "us" -> TimeUnit.MICROSECONDS;
            case "ms" -> TimeUnit.MILLISECONDS;
            case "s" -> TimeUnit.SECONDS;
            case "min" -> TimeUnit.MINUTES;
            default -> throw new IllegalArgumentException("not an average-time unit: " + unit);
        };
        return score * tu.toNanos(1);
    }
}
