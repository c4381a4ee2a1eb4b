package dev.coro.bench;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * JMH's console output with one more line before each benchmark starts:
 * {@code workload 3 of 10: gate-rate guavaVt (ops=20000)}. JMH itself prints the fork and the
 * iteration ({@code # Fork: 1 of 1}, {@code Iteration 2: ...}); everything else is passed on
 * unchanged to the format JMH would have used.
 *
 * <p>The total is counted before the run from JMH's benchmark list, the same way JMH expands it:
 * each selected method, times its modes, times the values of each of its parameters ({@code -p}
 * overriding the annotation). Used by the JMH host only, from JMH's thread.
 */
final class ProgressOutput implements OutputFormat {
    private final OutputFormat delegate;
    private final PrintStream out;
    private final boolean ownsStream;
    private final int total;
    private int started;

    private ProgressOutput(OutputFormat delegate, PrintStream out, boolean ownsStream, int total) {
        this.delegate = delegate;
        this.out = out;
        this.ownsStream = ownsStream;
        this.total = total;
    }

    /**
     * The output for a run with {@code options}: to the file of {@code -o} if given, else to the
     * console, at {@code -v}'s verbosity.
     *
     * @param options the run's options (includes and excludes already final)
     * @return the output format to give the {@link org.openjdk.jmh.runner.Runner}
     */
    static ProgressOutput create(Options options) {
        PrintStream out = System.out;
        boolean owns = false;
        if (options.getOutput().hasValue()) {
            try {
                out = new PrintStream(options.getOutput().get());
                owns = true;
            } catch (FileNotFoundException e) {
                throw new IllegalArgumentException("cannot write the output file " + options.getOutput().get(), e);
            }
        }
        VerboseMode verbosity = options.verbosity().orElse(VerboseMode.NORMAL);
        OutputFormat format = OutputFormatFactory.createFormatInstance(out, verbosity);
        return new ProgressOutput(format, out, owns, count(options, format));
    }

    /**
     * The number of benchmarks a run will start, counted as JMH expands its list.
     *
     * @param options the run's options
     * @param format where JMH reports a malformed benchmark list
     * @return selected methods times their modes times the values of each of their parameters
     */
    static int count(Options options, OutputFormat format) {
        List<String> includes = options.getIncludes().isEmpty() ? List.of(".*") : options.getIncludes();
        int total = 0;
        for (BenchmarkListEntry e : BenchmarkList.defaultList().find(format, includes, options.getExcludes())) {
            int n = options.getBenchModes().isEmpty() ? (e.getMode() == Mode.All ? Mode.values().length - 1 : 1)
                    : options.getBenchModes().size();
            if (e.getParams().hasValue()) {
                for (Map.Entry<String, String[]> p : e.getParams().get().entrySet()) {
                    n *= options.getParameter(p.getKey()).hasValue() ? options.getParameter(p.getKey()).get().size()
                            : p.getValue().length;
                }
            }
            total += n;
        }
        return total;
    }

    /**
     * The line printed before a benchmark starts.
     *
     * @param number the benchmark's number in the run, from 1
     * @param total the benchmarks counted before the run ("?" is printed if {@code number} exceeds it)
     * @param params the benchmark's parameters, from JMH
     * @return {@code workload <number> of <total>: <workload label> <implementation> (<params>)}
     */
    static String line(int number, int total, BenchmarkParams params) {
        String benchmark = params.getBenchmark();
        int dot = benchmark.lastIndexOf('.');
        String type = benchmark.substring(0, dot);
        String impl = benchmark.substring(dot + 1);
        String label = type.substring(type.lastIndexOf('.') + 1);
        for (Compare.Workload w : Compare.WORKLOADS) {
            if (w.type().getName().equals(type)) {
                label = w.label();
            }
        }
        StringBuilder p = new StringBuilder();
        for (String key : params.getParamsKeys()) {
            p.append(p.isEmpty() ? " (" : ",").append(key).append('=').append(params.getParam(key));
        }
        if (!p.isEmpty()) {
            p.append(')');
        }
        return "workload " + number + " of " + (number > total ? "?" : Integer.toString(total)) + ": " + label + " "
                + impl + p;
    }

    /** Prints the progress line, then JMH's own header for the benchmark. */
    @Override
    public void startBenchmark(BenchmarkParams benchmarkParams) {
        started++;
        delegate.println(line(started, total, benchmarkParams));
        delegate.startBenchmark(benchmarkParams);
    }

    /** Passed on. */
    @Override
    public void iteration(BenchmarkParams benchParams, IterationParams params, int iteration) {
        delegate.iteration(benchParams, params, iteration);
    }

    /** Passed on. */
    @Override
    public void iterationResult(BenchmarkParams benchParams, IterationParams params, int iteration,
            IterationResult data) {
        delegate.iterationResult(benchParams, params, iteration, data);
    }

    /** Passed on. */
    @Override
    public void endBenchmark(BenchmarkResult result) {
        delegate.endBenchmark(result);
    }

    /** Passed on. */
    @Override
    public void startRun() {
        delegate.startRun();
    }

    /** Passed on. */
    @Override
    public void endRun(Collection<RunResult> result) {
        delegate.endRun(result);
    }

    /** Passed on. */
    @Override
    public void print(String s) {
        delegate.print(s);
    }

    /** Passed on. */
    @Override
    public void println(String s) {
        delegate.println(s);
    }

    /** Passed on. */
    @Override
    public void flush() {
        delegate.flush();
    }

    /** Flushes; closes the stream only if it is the file of {@code -o}, never the console. */
    @Override
    public void close() {
        if (ownsStream) {
            delegate.close();
        } else {
            out.flush();
        }
    }

    /** Passed on. */
    @Override
    public void verbosePrintln(String s) {
        delegate.verbosePrintln(s);
    }

    /** Passed on. */
    @Override
    public void write(int b) {
        delegate.write(b);
    }

    /** Passed on. */
    @Override
    public void write(byte[] b) throws IOException {
        delegate.write(b);
    }
}
