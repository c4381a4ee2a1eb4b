package dev.coro.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What a write seen by the other CPU costs on this machine now: two threads hand one cache line back
 * and forth, and the median time of a one-way hand-off is the figure. {@link Compare} prints it before
 * and after a run, because on this VM it is not a constant: over minutes it moves between about 20 ns
 * (the two vCPUs share a cache) and about 190 ns (they do not), and every benchmark whose threads
 * write shared lines moves with it. {@code gate-keyed} was 92 to 96 ms an operation in the first
 * state and mostly 107 to 112 in the second (coro-bench/README.md, Fairness notes).
 *
 * <p>A measurement takes the calling thread and one thread of its own, both spinning, for its whole
 * length (the other thread ends with it): run one at a time, and not beside a benchmark, which it
 * would disturb. Run by hand: {@code java -cp coro-bench/target/benchmarks.jar dev.coro.bench.CrossCore}.
 */
public final class CrossCore {
    /** Rounds in one measurement. */
    private static final int ROUNDS = 9;
    /** Hand-offs between two reads of the clock. */
    private static final int BATCH = 1000;

    private CrossCore() {}

    /**
     * Prints one measurement.
     *
     * @param args ignored
     */
    public static void main(String[] args) {
        System.out.println(line("now"));
    }

    /**
     * One measurement as a line of the report: {@code cross-core hand-off (when): N ns}, with what
     * the figure says.
     *
     * @param when when it was taken ("before the run", ...)
     * @return the line
     */
    static String line(String when) {
        double ns = handOffNanos(300);
        return String.format(Locale.ROOT, "cross-core hand-off (%s): %.0f ns, the median of %d rounds "
                + "(about 20: the two CPUs share a cache; about 190: they do not, and shared-line writes cost more)",
                when, ns, ROUNDS);
    }

    /**
     * Measures the one-way hand-off of a cache line between this thread and another: {@link #ROUNDS}
     * rounds of {@code millis / ROUNDS} each, and their median.
     *
     * @param millis the whole measurement's length
     * @return nanoseconds per one-way hand-off, the median round
     */
    static double handOffNanos(long millis) {
        AtomicLong line = new AtomicLong();
        Thread echo = new Thread(() -> {
            // odd values are this side's turn: answer each with the next even value
            for (long v = 1; v > 0; v += 2) {
                while (line.get() != v) {
                    if (line.get() < 0) {
                        return;
                    }
                    Thread.onSpinWait();
                }
                line.lazySet(v + 1);
            }
        }, "cross-core-echo");
        echo.setDaemon(true);
        echo.start();
        long roundNanos = millis * 1_000_000L / ROUNDS;
        double[] rounds = new double[ROUNDS];
        long v = 0;
        for (int r = 0; r < ROUNDS; r++) {
            long start = System.nanoTime();
            long handOffs = 0;
            long now;
            do {
                for (int i = 0; i < BATCH; i++) {
                    line.lazySet(v + 1);
                    while (line.get() != v + 2) {
                        Thread.onSpinWait();
                    }
                    v += 2;
                }
                handOffs += 2L * BATCH;
                now = System.nanoTime();
            } while (now - start < roundNanos);
            rounds[r] = (now - start) / (double) handOffs;
        }
        line.set(-1); // the echo thread ends
        Arrays.sort(rounds);
        return rounds[ROUNDS / 2];
    }
}
