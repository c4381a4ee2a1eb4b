package dev.coro.bench;

import dev.coro.bench.Compare.Comparison;
import dev.coro.bench.Compare.Figures;
import dev.coro.bench.Compare.Overhead;
import dev.coro.bench.Compare.Workload;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.ChartEncoder;
import org.knowm.xchart.style.CategoryStyler;
import org.knowm.xchart.style.Styler.LegendLayout;
import org.knowm.xchart.style.Styler.LegendPosition;

/**
 * Writes the benchmark report: a Markdown file with, per comparison of {@link Compare}, a bar chart
 * (PNG, drawn headless with XChart) of the time per item of Coro and each peer, with JMH's score
 * error as error bars, and under it the figures of the console table.
 *
 * <p>It draws and prints the {@link Comparison}s that {@link Compare#comparisons} computed, so the
 * report and the console table always show the same numbers. Not thread-safe: one run writes one
 * report.
 */
final class Report {
    /** The report's Markdown file, in the report directory. */
    static final String MARKDOWN = "report.md";

    /** JMH's results in its own JSON format, in the report directory. */
    static final String RESULTS = "results.json";

    /** Coro's bars. */
    private static final Color CORO = new Color(0x1f, 0x77, 0xb4);

    /** The peers' bars. */
    private static final Color PEER = new Color(0xff, 0x7f, 0x0e);

    /** The bars of the calibrations (the same work with no synchronization). */
    private static final Color CALIBRATION = new Color(0xa0, 0xa0, 0xa0);

    private Report() {}

    /**
     * The report directory: the system property {@code bench.report} if set, else {@code report}
     * next to the code being run ({@code coro-bench/target/benchmarks.jar} or
     * {@code coro-bench/target/classes} give {@code coro-bench/target/report}), whatever the working
     * directory.
     *
     * @return the directory (not created)
     */
    static Path directory() {
        String configured = System.getProperty("bench.report");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured);
        }
        try {
            Path code = Path.of(Report.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return code.toAbsolutePath().getParent().resolve("report");
        } catch (URISyntaxException | RuntimeException e) {
            return Path.of("coro-bench", "target", "report");
        }
    }

    /**
     * Writes {@link #MARKDOWN} and one chart per comparison with a result into {@code dir} (created if
     * missing), after deleting the charts an earlier report left there (PNGs named after a workload;
     * other files stay).
     *
     * @param dir the report directory
     * @param comparisons what to report, in order
     * @param setup the sentence that describes the run (workers, JDK, cores, how to read a ratio)
     * @param withResults whether {@link #RESULTS} holds this run's JSON (the report then links it)
     * @return the Markdown file
     * @throws IOException if a file cannot be written
     */
    static Path write(Path dir, List<Comparison> comparisons, String setup, boolean withResults) throws IOException {
        Files.createDirectories(dir);
        deleteOldCharts(dir);
        Map<Workload, Integer> perWorkload = new HashMap<>();
        for (Comparison c : comparisons) {
            perWorkload.merge(c.workload(), 1, Integer::sum);
        }
        StringBuilder md = new StringBuilder();
        md.append("# Coro benchmark report\n\n").append(setup).append("\n\n");
        md.append("Each chart shows the time per item of every implementation that ran; its error bar is JMH's "
                + "99.9 % confidence interval divided the same way (none with fewer than three measurement "
                + "iterations). The table under it has the console table's figures.\n\n");
        if (withResults) {
            md.append("JMH's results: [").append(RESULTS).append("](").append(RESULTS).append(").\n\n");
        }
        for (Comparison c : comparisons) {
            String name = chartName(c, perWorkload.get(c.workload()) > 1);
            md.append("## ").append(c.workload().label());
            if (!c.params().isEmpty()) {
                md.append(" (").append(c.params()).append(')');
            }
            md.append("\n\n");
            if (c.rows().stream().anyMatch(Figures::ran)) {
                chart(c, dir.resolve(name));
                md.append("![").append(c.workload().label()).append("](").append(name).append(")\n\n");
            }
            markdownTable(md, c);
        }
        Path file = dir.resolve(MARKDOWN);
        Files.writeString(file, md);
        return file;
    }

    /** Deletes the charts an earlier report left in {@code dir}: the PNGs named after a workload, nothing else. */
    private static void deleteOldCharts(Path dir) throws IOException {
        try (DirectoryStream<Path> pngs = Files.newDirectoryStream(dir, "*.png")) {
            for (Path p : pngs) {
                String name = p.getFileName().toString();
                boolean chart = Compare.WORKLOADS.stream().anyMatch(
                        w -> name.equals(w.label() + ".png") || name.startsWith(w.label() + "-"));
                if (chart) {
                    Files.delete(p);
                }
            }
        }
    }

    /**
     * The chart's file name.
     *
     * @param c the comparison
     * @param withParams whether its workload has several parameter sets in this report
     * @return the workload's label (and parameters if {@code withParams}), as a safe file name ending ".png"
     */
    static String chartName(Comparison c, boolean withParams) {
        String name = withParams && !c.params().isEmpty() ? c.workload().label() + "-" + c.params()
                : c.workload().label();
        return name.replaceAll("[^A-Za-z0-9._-]", "-") + ".png";
    }

    /**
     * Appends the comparison's table, and its overhead table if it has one, in Markdown.
     *
     * @param md where to append
     * @param c the comparison
     */
    static void markdownTable(StringBuilder md, Comparison c) {
        String item = c.workload().itemName();
        md.append("| implementation | items | ms/op | ns/").append(item).append(" | ± ns | ").append(item)
                .append("s/s | ratio |\n");
        md.append("|---|---:|---:|---:|---:|---:|---|\n");
        for (Figures f : c.rows()) {
            if (!f.ran()) {
                md.append("| ").append(f.impl()).append(" | | | | | | NO RESULT: the benchmark failed or did not run |\n");
                continue;
            }
            md.append(String.format(Locale.ROOT, "| %s | %d | %.3f | %.1f | %s | %,.0f | %s |%n", f.impl(), f.items(),
                    f.nsPerOp() / 1e6, f.nsPerItem(), Compare.error(f), f.itemsPerSecond(), f.ratio()));
        }
        md.append('\n');
        if (c.overheads().isEmpty()) {
            return;
        }
        Workload w = c.workload();
        md.append(String.format(Locale.ROOT, "Overhead per %s: ns/%s minus that of the same tasks with no gate, on "
                + "Coro (%s) and on the implementation's own runtime.%n%n", item, item, w.workAlone()));
        md.append("| implementation | − ").append(w.workAlone())
                .append(" (ns) | ratio | − own (ns) | ratio | own work alone |\n");
        md.append("|---|---:|---|---:|---|---|\n");
        for (Overhead o : c.overheads()) {
            md.append(String.format(Locale.ROOT, "| %s | %.1f | %s | %.1f | %s | %s |%n", o.impl(), o.overCoroAlone(),
                    o.ratioCoroAlone(), o.overOwnAlone(), o.ratioOwnAlone(), o.ownAlone()));
        }
        md.append('\n');
    }

    /**
     * Draws the comparison's bar chart into {@code file} (PNG): one bar per implementation with a
     * result, its height the time per item and its error bar JMH's score error per item (none with
     * fewer than three measurement iterations). Coro's implementations, the peers and the calibrations each get a
     * colour of their own.
     *
     * @param c the comparison, with at least one result
     * @param file where to write the PNG
     * @throws IOException if the file cannot be written
     */
    static void chart(Comparison c, Path file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        Workload w = c.workload();
        List<String> impls = new ArrayList<>();
        for (Figures f : c.rows()) {
            if (f.ran()) {
                impls.add(f.impl());
            }
        }
        CategoryChart chart = new CategoryChartBuilder().width(Math.max(640, 110 * impls.size())).height(420)
                .title(w.label() + (c.params().isEmpty() ? "" : " (" + c.params() + ")") + ": time per " + w.itemName()
                        + ", lower is better")
                .xAxisTitle("implementation").yAxisTitle("ns per " + w.itemName()).build();
        CategoryStyler styler = chart.getStyler();
        styler.setOverlapped(true);
        styler.setLegendPosition(LegendPosition.OutsideS);
        styler.setLegendLayout(LegendLayout.Horizontal);
        styler.setAvailableSpaceFill(0.7);
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotGridVerticalLinesVisible(false);
        styler.setYAxisMin(0.0);
        styler.setErrorBarsColor(Color.BLACK);
        styler.setLabelsVisible(false); // the table under the chart has the figures
        styler.setYAxisDecimalPattern("#,##0.#");
        if (impls.size() > 5) {
            styler.setXAxisLabelRotation(20);
        }
        List<Color> colors = new ArrayList<>();
        addSeries(chart, colors, "Coro", CORO, c, impls, Kind.CORO);
        addSeries(chart, colors, "peers", PEER, c, impls, Kind.PEER);
        addSeries(chart, colors, "no synchronization (calibration)", CALIBRATION, c, impls, Kind.CALIBRATION);
        styler.setSeriesColors(colors.toArray(Color[]::new));
        try (OutputStream out = Files.newOutputStream(file)) {
            ChartEncoder.saveChart(chart, out, "png");
        }
    }

    /** Which colour an implementation's bar gets. */
    enum Kind {
        /** One of Coro's implementations (its name starts with "coro"). */
        CORO,
        /** A peer library's implementation. */
        PEER,
        /** The same work with no synchronization, to subtract. */
        CALIBRATION
    }

    /**
     * Which bar colour an implementation gets.
     *
     * @param w its workload
     * @param impl the implementation
     * @return a work alone is a calibration, a name starting "coro" is Coro's, the rest are peers
     */
    static Kind kind(Workload w, String impl) {
        if (impl.startsWith("work") || impl.equals(w.workAlone()) || w.ownWorkAlone().containsValue(impl)) {
            return Kind.CALIBRATION;
        }
        return impl.startsWith(Compare.BASELINE) ? Kind.CORO : Kind.PEER;
    }

    /** Adds the series of one kind (all categories, null where another kind's bar stands), if it has a bar. */
    private static void addSeries(CategoryChart chart, List<Color> colors, String name, Color color, Comparison c,
            List<String> impls, Kind kind) {
        List<Double> ns = new ArrayList<>();
        List<Double> errors = new ArrayList<>();
        boolean any = false;
        for (Figures f : c.rows()) {
            if (!f.ran()) {
                continue;
            }
            boolean mine = kind(c.workload(), f.impl()) == kind;
            any |= mine;
            ns.add(mine ? f.nsPerItem() : null);
            errors.add(mine ? (Double.isNaN(f.errorPerItem()) ? 0.0 : f.errorPerItem()) : null);
        }
        if (any) {
            chart.addSeries(name, impls, ns, errors);
            colors.add(color);
        }
    }
}
