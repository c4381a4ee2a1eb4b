package dev.coro.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * {@code ./coro bench --rounds-of R REGEX [JMH options]}: the selected benchmarks of one workload, each
 * in a fork of its own, interleaved over {@code R} rounds (round 1 runs them in the workload's
 * order, round 2 starts one later, and so on, so no implementation always goes first), with the
 * cross-core hand-off ({@link CrossCore}) measured before each fork and after a round's last.
 *
 * <p>Why: this 2-core VM moves between two states (its CPUs sharing a cache or not) within minutes,
 * and one JMH run that forks every implementation in turn can give the baseline one state and the
 * peer another. Rounds put each pair in the same minute or so; the summary is the median of the
 * per-round ratios and how many rounds Coro won, beside the same for each state's forks.
 *
 * <p>Prints one line per round (the hand-off readings, each implementation's time per item, Coro's
 * ratio to each peer), then the medians, over all rounds and per state: a fork counts in a state
 * when the readings just before and after it agree on it (the state can change within a round; a
 * fork between two readings that agree ran, almost surely, in that state). JMH's own options apply
 * to every fork ({@code -wi 3 -w 1 -i 5 -r 1}, {@code -p} with one value per parameter,
 * {@code -jvmArgsAppend}, {@code -prof}); {@code -f} is ignored (one fork per benchmark per round).
 */
final class Rounds {
    private Rounds() {}

    /**
     * Runs the rounds and prints them.
     *
     * @param rounds how many rounds, at least 1
     * @param jmhArgs JMH's command line: one regex selecting the benchmarks, and options
     * @param out where to print
     * @return the exit code: 0, or 2 if the selection or a fork failed
     * @throws RunnerException if JMH cannot run
     */
    static int run(int rounds, List<String> jmhArgs, PrintStream out) throws RunnerException {
        if (rounds < 1) {
            throw new IllegalArgumentException("--rounds-of must be at least 1, got " + rounds);
        }
        CommandLineOptions cmd;
        try {
            cmd = new CommandLineOptions(jmhArgs.toArray(String[]::new));
        } catch (org.openjdk.jmh.runner.options.CommandLineOptionException e) {
            out.println("Error parsing arguments: " + e.getMessage());
            return 2;
        }
        Selection selection;
        try {
            selection = select(cmd.getIncludes());
        } catch (IllegalArgumentException e) {
            out.println("--rounds-of: " + e.getMessage());
            return 2;
        }
        Compare.Workload workload = selection.workload();
        List<String> names = selection.impls();
        int n = names.size();
        double[][] perItem = new double[rounds][n];
        double[][] handOffs = new double[rounds][n + 1]; // before each fork, in the order they ran, and after the last
        out.println(String.format(Locale.ROOT, "%s: %d rounds of %s, each in a fork of its own; ns per %s",
                workload.label(), rounds, names, workload.itemName()));
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < n; k++) {
                int i = (r + k) % n; // rotate who goes first (position(r, i, n) == k)
                handOffs[r][k] = CrossCore.handOffNanos(300);
                perItem[r][i] = once(cmd, workload, names.get(i));
                if (Double.isNaN(perItem[r][i])) {
                    out.println("--rounds-of: " + names.get(i) + " gave no result in round " + (r + 1));
                    return 2;
                }
            }
            handOffs[r][n] = CrossCore.handOffNanos(300);
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "round %2d  hand-off", r + 1));
            for (double h : handOffs[r]) {
                line.append(String.format(Locale.ROOT, " %3.0f", h));
            }
            line.append(" ns ");
            for (int i = 0; i < n; i++) {
                line.append(String.format(Locale.ROOT, " %s %.1f", names.get(i), perItem[r][i]));
            }
            int base = names.indexOf(Compare.BASELINE);
            for (int i = 0; i < n; i++) {
                if (i != base) {
                    line.append(String.format(Locale.ROOT, "  coro/%s = %.2fx", names.get(i),
                            perItem[r][base] / perItem[r][i]));
                }
            }
            out.println(line);
        }
        out.print(summary(names, perItem, handOffs));
        return 0;
    }

    /**
     * What a regex selects: one workload and its implementations, in the workload's order.
     *
     * @param workload the workload
     * @param impls the selected implementations, Coro among them
     */
    record Selection(Compare.Workload workload, List<String> impls) {}

    /**
     * The workload and implementations that {@code includes} select, matched as JMH matches them
     * (a find on the benchmark's full name).
     *
     * @param includes the regexes
     * @return the selection
     * @throws IllegalArgumentException unless they select Coro and at least one peer, all of one workload
     */
    static Selection select(List<String> includes) {
        Compare.Workload workload = null;
        List<String> names = new ArrayList<>();
        for (Compare.Workload w : Compare.WORKLOADS) {
            for (String impl : w.impls()) {
                String full = w.type().getName() + "." + impl;
                if (includes.stream().anyMatch(r -> Pattern.compile(r).matcher(full).find())) {
                    if (workload != null && workload != w) {
                        throw new IllegalArgumentException("the regex selects more than one workload ("
                                + workload.label() + ", " + w.label() + "); select one");
                    }
                    workload = w;
                    names.add(impl);
                }
            }
        }
        if (workload == null || !names.contains(Compare.BASELINE) || names.size() < 2) {
            throw new IllegalArgumentException(
                    "the regex must select coro and at least one peer of one workload, got " + names);
        }
        return new Selection(workload, List.copyOf(names));
    }

    /**
     * The medians: over all rounds, then over the forks that ran in each cross-core state. A fork
     * ran in a state when the readings just before and just after it agree on it (both below 100
     * ns: shared cache; both at least 100 ns: none); a fork whose readings disagree counts in the
     * first line only. In a state's line an implementation's time is the median of its forks in
     * that state, and Coro's ratio to a peer the median over the rounds in which both ran in it.
     *
     * @param names the implementations, Coro among them
     * @param perItem per round, each implementation's time per item
     * @param handOffs per round, the hand-off readings: before each fork in the order they ran, and
     *     after the last
     * @return the summary's lines
     */
    static String summary(List<String> names, double[][] perItem, double[][] handOffs) {
        int n = names.size();
        int base = names.indexOf(Compare.BASELINE);
        StringBuilder s = new StringBuilder();
        for (Boolean shared : new Boolean[] {null, true, false}) {
            // in[r][i]: fork i of round r counts in this line
            boolean[][] in = new boolean[perItem.length][n];
            boolean any = false;
            for (int r = 0; r < perItem.length; r++) {
                for (int i = 0; i < n; i++) {
                    int k = position(r, i, n);
                    boolean before = handOffs[r][k] < 100;
                    in[r][i] = shared == null || (before == shared && handOffs[r][k + 1] < 100 == shared);
                    any |= in[r][i] && i == base;
                }
            }
            if (!any) {
                continue;
            }
            s.append(shared == null ? "all rounds (" + perItem.length + "):" : shared ? SHARED : APART);
            for (int i = 0; i < n; i++) {
                double[] times = column(perItem, in, i, i);
                s.append(times.length == 0 ? String.format(Locale.ROOT, " %s -", names.get(i))
                        : String.format(Locale.ROOT, " %s %.1f", names.get(i), median(times))
                                + (shared == null ? "" : " (" + times.length + ")"));
            }
            for (int i = 0; i < n; i++) {
                if (i == base) {
                    continue;
                }
                double[] ratios = column(perItem, in, base, i);
                if (ratios.length == 0) {
                    s.append(String.format(Locale.ROOT, "  coro/%s: no round with both in this state", names.get(i)));
                    continue;
                }
                long wins = Arrays.stream(ratios).filter(x -> x < 1).count();
                s.append(String.format(Locale.ROOT, "  coro/%s median %.2fx, Coro faster in %d of %d",
                        names.get(i), median(ratios), wins, ratios.length));
            }
            s.append('\n');
        }
        return s.toString();
    }

    /**
     * Where implementation {@code i} ran in round {@code r}: round {@code r} runs implementation
     * {@code (r + k) % n} {@code k}-th, so that no implementation always goes first.
     */
    static int position(int r, int i, int n) {
        return Math.floorMod(i - r, n);
    }

    /** Per round in which forks {@code a} and {@code b} both count: a's time over b's (a's own time if a == b). */
    private static double[] column(double[][] perItem, boolean[][] in, int a, int b) {
        return IntStream.range(0, perItem.length)
                .filter(r -> in[r][a] && in[r][b])
                .mapToDouble(r -> a == b ? perItem[r][a] : perItem[r][a] / perItem[r][b])
                .toArray();
    }

    private static final String SHARED = "shared cache (forks between readings < 100 ns):";
    private static final String APART = "no shared cache (forks between readings >= 100 ns):";

    static double median(double[] xs) {
        double[] a = xs.clone();
        Arrays.sort(a);
        int m = a.length / 2;
        return a.length % 2 == 1 ? a[m] : (a[m - 1] + a[m]) / 2;
    }

    /** One fork of one benchmark: its time per item, or NaN if it gave no result. */
    private static double once(CommandLineOptions cmd, Compare.Workload workload, String impl) throws RunnerException {
        // not parent(cmd): JMH adds a parent's includes to the child's, and this fork runs one benchmark
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include("^" + Pattern.quote(workload.type().getName() + "." + impl) + "$")
                .forks(1)
                .verbosity(VerboseMode.SILENT);
        if (cmd.getWarmupIterations().hasValue()) {
            options.warmupIterations(cmd.getWarmupIterations().get());
        }
        if (cmd.getWarmupTime().hasValue()) {
            options.warmupTime(cmd.getWarmupTime().get());
        }
        if (cmd.getMeasurementIterations().hasValue()) {
            options.measurementIterations(cmd.getMeasurementIterations().get());
        }
        if (cmd.getMeasurementTime().hasValue()) {
            options.measurementTime(cmd.getMeasurementTime().get());
        }
        for (java.lang.reflect.Field f : workload.type().getFields()) {
            if (f.isAnnotationPresent(org.openjdk.jmh.annotations.Param.class)
                    && cmd.getParameter(f.getName()).hasValue()) {
                options.param(f.getName(), cmd.getParameter(f.getName()).get().toArray(String[]::new));
            }
        }
        if (cmd.getJvmArgsAppend().hasValue()) {
            options.jvmArgsAppend(cmd.getJvmArgsAppend().get().toArray(String[]::new));
        }
        for (var prof : cmd.getProfilers()) {
            options.addProfiler(prof.getKlass(), prof.getOpts());
        }
        if (Runtime.version().feature() >= 24) {
            options.jvmArgsPrepend("--sun-misc-unsafe-memory-access=allow"); // as Compare does
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        for (RunResult r : results) {
            return r.getPrimaryResult().getScore() / workload.items(r)
                    * nanosPer(r.getPrimaryResult().getScoreUnit());
        }
        return Double.NaN;
    }

    private static double nanosPer(String unit) {
        return switch (unit.substring(0, unit.indexOf('/'))) {
            case "ns" -> 1;
            case "us" -> 1e3;
            case "ms" -> 1e6;
            case "s" -> 1e9;
            default -> throw new IllegalStateException("unexpected score unit " + unit);
        };
    }
}
