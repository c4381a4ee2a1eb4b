package dev.coro.bench;

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
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
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
 * <p>{@code --memory} runs only {@link WaiterMemory} (retained heap per waiter on a held lock) in a
 * JVM of its own, passing it the remaining arguments; a run without a regex (the whole suite) runs
 * it too, after the JMH table. {@code --timers} ({@link Timers}) and {@code --echo}
 * ({@link EchoLoopback}), the EventLoop's plain-main measurements, and {@code --keyed-memory}
 * ({@link KeyedMemory}, retained heap per idle key of the keyed gate and its peers) work the same way.
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
            new Workload(PingPong.class, "ping-pong", List.of("rounds"), "round trip",
                    List.of("coro", "kotlinx", "virtualThreads")),
            new Workload(TaskOverhead.class, "task-overhead", List.of(), "op",
                    List.of("coro", "completableFuture")),
            new Workload(MutexContended.class, "mutex-contended", List.of("tasks", "locks"), "lock",
                    List.of("coro", "kotlinx", "vtReentrantUnfair", "vtReentrantFair", "platformSynchronized")),
            new Workload(MutexUncontended.class, "mutex-uncontended", List.of("ops"), "lock",
                    List.of("coro", "coroNoLock", "reentrantLock", "kotlinx")),
            new Workload(LoopHandoff.class, "loop-ping-pong", List.of("rounds"), "round trip",
                    List.of("coro", "coroTwoLoops", "kotlinxOneThread")),
            new Workload(GateCapacity.class, "gate-capacity", List.of("tasks"), "task",
                    List.of("coro", "kotlinx", "bulkheadVt", "semaphoreVt", "workAlone", "kotlinxWorkAlone",
                            "vtWorkAlone", "workSerial"),
                    "workAlone", Map.of("kotlinx", "kotlinxWorkAlone", "bulkheadVt", "vtWorkAlone",
                            "semaphoreVt", "vtWorkAlone")),
            new Workload(GateSerial.class, "gate-serial", List.of("tasks", "locks"), "entry",
                    List.of("coro", "coroMutex", "kotlinx")),
            new Workload(GateKeyed.class, "gate-keyed", List.of("ops"), "op",
                    List.of("coro", "stripedVt", "futureChain", "kotlinx", "workAlone"),
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
                    List.of("coro", "chmFutures", "caffeine")));

    private Compare() {}

    /**
     * Runs the selected benchmarks and prints the table.
     *
     * @param args JMH command-line arguments
     * @throws RunnerException if JMH cannot run at all
     */
    public static void main(String[] args) throws RunnerException {
        List<String> jmhArgs = new ArrayList<>(List.of(args));
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
        boolean everything = cmd.getIncludes().isEmpty();
        Collection<RunResult> results = new Runner(options.build()).run();
        System.out.println();
        System.out.print(table(results, includes, cmd.getExcludes()));
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
     * Runs a plain-main measurement ({@link WaiterMemory}, {@link Timers}, {@link EchoLoopback}) in
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

    /** The comparison table; rows in the order of {@link #WORKLOADS}, baseline first. */
    static String table(Collection<RunResult> results, List<String> includes, List<String> excludes) {
        Map<String, List<RunResult>> byBenchmark = new LinkedHashMap<>();
        for (RunResult r : results) {
            byBenchmark.computeIfAbsent(r.getParams().getBenchmark(), k -> new ArrayList<>()).add(r);
        }
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "Coro vs peers, %d workers, JDK %s, %d cores. Time per item = "
                + "JMH average time per operation / items per operation; coro/x below 1 means Coro is faster.%n",
                Pools.WORKERS, Runtime.version(), Runtime.getRuntime().availableProcessors()));
        String header = String.format(Locale.ROOT, "%-17s %-20s %8s %12s %12s %9s %15s   %s%n",
                "workload", "implementation", "items", "ms/op", "ns/item", "± ns", "items/s", "ratio");
        out.append(header).append("-".repeat(header.length() - 1)).append('\n');
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
                RunResult base = group.get(BASELINE);
                for (String impl : selected) {
                    RunResult r = group.get(impl);
                    if (r == null) {
                        out.append(String.format(Locale.ROOT, "%-17s %-20s %s%n", w.label(), impl,
                                "NO RESULT: the benchmark failed or was not run (see the JMH log above)"));
                        continue;
                    }
                    long items = w.items(r);
                    Result<?> primary = r.getPrimaryResult();
                    double nsPerOp = toNanos(primary.getScore(), primary.getScoreUnit());
                    double errPerItem = toNanos(primary.getScoreError(), primary.getScoreUnit()) / items;
                    double nsPerItem = nsPerOp / items;
                    String ratio;
                    if (impl.equals(BASELINE)) {
                        ratio = "baseline";
                    } else if (base == null) {
                        ratio = "coro/" + impl + " = n/a (no coro result)";
                    } else {
                        double baseNs = toNanos(base.getPrimaryResult().getScore(), base.getPrimaryResult().getScoreUnit());
                        ratio = String.format(Locale.ROOT, "coro/%s = %.2fx", impl, baseNs / nsPerOp);
                    }
                    out.append(String.format(Locale.ROOT, "%-17s %-20s %8d %12.3f %12.1f %9s %15s   %s%n",
                            w.label(), impl, items, nsPerOp / 1e6, nsPerItem,
                            Double.isNaN(errPerItem) ? "n/a" : String.format(Locale.ROOT, "%.1f", errPerItem),
                            String.format(Locale.ROOT, "%,.0f", 1e9 / nsPerItem), ratio));
                }
                if (w.workAlone() != null) {
                    overhead(out, w, group, selected);
                }
            }
        }
        return out.toString();
    }

    /**
     * The overhead rows of a workload with a work alone: per implementation that is not a work alone
     * (nor the calibration, whose name starts with "work"), its time per item minus the Coro work
     * alone's, and minus its own runtime's work alone (the same for Coro), each with Coro's overhead
     * over the peer's.
     */
    private static void overhead(StringBuilder out, Workload w, Map<String, RunResult> group, List<String> selected) {
        out.append(String.format(Locale.ROOT, "%s: overhead per %s = ns/%s minus the ns/%s of the same tasks "
                + "with no gate, on Coro (%s) and on the implementation's own runtime%n",
                w.label(), w.itemName(), w.itemName(), w.itemName(), w.workAlone()));
        out.append(String.format(Locale.ROOT, "%-17s %-20s %12s   %-26s %12s   %-26s %s%n", "workload", "implementation",
                "- " + w.workAlone(), "ratio", "- own", "ratio", "own work alone"));
        double coroAlone = nsPerItemOf(w, group, w.workAlone());
        double baseOverhead = nsPerItemOf(w, group, BASELINE) - coroAlone;
        for (String impl : selected) {
            if (impl.startsWith("work") || w.ownWorkAlone().containsValue(impl) || !group.containsKey(impl)) {
                continue;
            }
            String own = w.ownWorkAlone().getOrDefault(impl, w.workAlone());
            double ns = nsPerItemOf(w, group, impl);
            double overhead = ns - coroAlone;
            double ownOverhead = ns - nsPerItemOf(w, group, own);
            out.append(String.format(Locale.ROOT, "%-17s %-20s %9.1f ns   %-26s %9.1f ns   %-26s %s%n",
                    w.label(), impl, overhead, overheadRatio(impl, baseOverhead, overhead), ownOverhead,
                    overheadRatio(impl, baseOverhead, ownOverhead), own)); // Coro's own is workAlone
        }
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

    /** Nanoseconds per item of {@code r}. */
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
