package dev.coro.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.bench.Compare.Comparison;
import dev.coro.bench.Compare.Figures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.AverageTimeResult;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.ResultRole;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.IterationType;
import org.openjdk.jmh.runner.WorkloadParams;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The report and the console table print the same figures, computed once from JMH's results: here
 * from {@link RunResult}s built with JMH's own result classes, as a run of the gate-rate workload
 * with one implementation missing (its benchmark failed) would give them.
 */
class ReportTest {
    private static final byte[] PNG_MAGIC = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

    private static final int OPS = 1000;

    @TempDir
    Path dir;

    /** The gate-rate results: coro 310 ns per admission, guavaVt 620, the work alones 300 and 600; no resilience4jVt. */
    private static List<RunResult> gateRate() {
        return List.of(
                result("coro", 300_000, 310_000, 320_000),
                result("guavaVt", 600_000, 620_000, 640_000),
                result("workAlone", 290_000, 300_000, 310_000),
                result("vtWorkAlone", 590_000, 600_000, 610_000));
    }

    /** A run of {@code GateRate.<impl>} with {@link #OPS} admissions per operation and these iteration times (ns/op). */
    private static RunResult result(String impl, long... nanosPerOp) {
        WorkloadParams params = new WorkloadParams();
        params.put("ops", Integer.toString(OPS), 0);
        IterationParams iteration = new IterationParams(IterationType.MEASUREMENT, nanosPerOp.length,
                TimeValue.milliseconds(200), 1);
        BenchmarkParams benchmark = new BenchmarkParams(GateRate.class.getName() + "." + impl,
                "generated", false, 1, new int[] {1}, List.of(), 1, 0, iteration, iteration, Mode.AverageTime,
                params, TimeUnit.NANOSECONDS, 1, "java", List.of(), "25", "vm", "25", "1.37", TimeValue.minutes(10));
        List<IterationResult> iterations = new ArrayList<>();
        for (long ns : nanosPerOp) {
            IterationResult r = new IterationResult(benchmark, iteration, null);
            r.addResult(new AverageTimeResult(ResultRole.PRIMARY, impl, 1, ns, TimeUnit.NANOSECONDS));
            iterations.add(r);
        }
        return new RunResult(benchmark, List.of(new BenchmarkResult(benchmark, iterations)));
    }

    private static Comparison compare() {
        List<Comparison> comparisons = Compare.comparisons(gateRate(), List.of("GateRate"), List.of());
        assertEquals(1, comparisons.size());
        return comparisons.get(0);
    }

    @Test
    void figuresArePerItemWithCorosTimeOverEachPeers() {
        Comparison c = compare();
        assertEquals("gate-rate", c.workload().label());
        assertEquals("ops=1000", c.params());
        assertEquals(List.of("coro", "guavaVt", "resilience4jVt", "workAlone", "vtWorkAlone"),
                c.rows().stream().map(Figures::impl).toList());
        Figures coro = c.rows().get(0);
        Figures guava = c.rows().get(1);
        assertEquals(310.0, coro.nsPerItem(), 1e-9);
        assertEquals(620.0, guava.nsPerItem(), 1e-9);
        assertEquals(0.5, guava.coroOverThis(), 1e-12);
        assertEquals("coro/guavaVt = 0.50x", guava.ratio());
        assertFalse(c.rows().get(2).ran());
        assertEquals(2, c.overheads().size()); // coro and guavaVt: no row for the missing resilience4jVt
        assertEquals(10.0, c.overheads().get(0).overCoroAlone(), 1e-9);
        assertEquals(20.0, c.overheads().get(1).overOwnAlone(), 1e-9);
    }

    @Test
    void consoleTableAndMarkdownShowTheSameRows() throws IOException {
        Comparison c = compare();
        String table = Compare.table(List.of(c));
        assertTrue(table.contains("coro/guavaVt = 0.50x"), table);
        assertTrue(table.lines().anyMatch(l -> l.matches("gate-rate +resilience4jVt +NO RESULT.*")), table);

        Path md = Report.write(dir, List.of(c), Compare.setup(), true);
        List<String> lines = Files.readAllLines(md);
        assertTrue(lines.contains("## gate-rate (ops=1000)"), lines::toString);
        assertTrue(lines.contains("![gate-rate](gate-rate.png)"), lines::toString);
        assertTrue(lines.contains("| implementation | items | ms/op | ns/admission | ± ns | admissions/s | ratio |"),
                lines::toString);
        String coroError = Compare.error(c.rows().get(0));
        assertFalse(coroError.equals("n/a"), "three iterations give JMH an error");
        assertTrue(lines.contains("| coro | 1000 | 0.310 | 310.0 | " + coroError + " | 3,225,806 | baseline |"),
                lines::toString);
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("| guavaVt | 1000 | 0.620 | 620.0 | ")
                && l.endsWith(" | 1,612,903 | coro/guavaVt = 0.50x |")), lines::toString);
        assertTrue(lines.contains("| resilience4jVt | | | | | | NO RESULT: the benchmark failed or did not run |"),
                lines::toString);
        assertTrue(lines.contains("| guavaVt | 320.0 | coro/guavaVt = 0.03x | 20.0 | coro/guavaVt = 0.50x | vtWorkAlone |"),
                lines::toString);
    }

    @Test
    void chartIsAPngNextToTheReportAndStaleChartsGo() throws IOException {
        Files.write(dir.resolve("gate-rate-ops-10.png"), PNG_MAGIC);
        Files.write(dir.resolve("mine.png"), PNG_MAGIC);
        Report.write(dir, List.of(compare()), Compare.setup(), false);
        Path png = dir.resolve("gate-rate.png");
        assertTrue(Files.size(png) > PNG_MAGIC.length);
        byte[] head = Arrays.copyOf(Files.readAllBytes(png), PNG_MAGIC.length);
        assertArrayEquals(PNG_MAGIC, head);
        assertFalse(Files.exists(dir.resolve("gate-rate-ops-10.png")), "an earlier report's chart is deleted");
        assertTrue(Files.exists(dir.resolve("mine.png")), "a PNG not named after a workload stays");
        assertFalse(Files.readString(dir.resolve(Report.MARKDOWN)).contains(Report.RESULTS));
    }

    @Test
    void workloadWithoutAnyResultGetsNoChart() throws IOException {
        List<Comparison> none = Compare.comparisons(List.of(), List.of("GateRate.coro$"), List.of());
        Report.write(dir, none, Compare.setup(), false);
        String md = Files.readString(dir.resolve(Report.MARKDOWN));
        assertTrue(md.contains("| coro | | | | | | NO RESULT"), md);
        assertFalse(md.contains("!["), md);
        assertFalse(Files.exists(dir.resolve("gate-rate.png")));
    }

    @Test
    void progressCountsEachMethodTimesItsParameterValues() {
        OutputFormat quiet = OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT);
        Options two = new OptionsBuilder().include("GateRate\\.(coro|guavaVt)$").build();
        assertEquals(2, ProgressOutput.count(two, quiet));
        Options four = new OptionsBuilder().include("GateRate\\.(coro|guavaVt)$").param("ops", "10", "20").build();
        assertEquals(4, ProgressOutput.count(four, quiet));
    }

    @Test
    void progressLineNamesTheWorkloadAndImplementation() {
        BenchmarkParams guava = result("guavaVt", 1).getParams();
        assertEquals("workload 2 of 5: gate-rate guavaVt (ops=1000)", ProgressOutput.line(2, 5, guava));
        assertEquals("workload 6 of ?: gate-rate guavaVt (ops=1000)", ProgressOutput.line(6, 5, guava));
    }
}
