package dev.coro.bench;

import dev.coro.gate.RateGate;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * rate-lateness: {@code --waiters} (10,000) waiters all arrive at once at a limiter of {@code --rate}
 * (1,000) permits per second with no burst, and each records when it was admitted. The k-th
 * admission's slot is t0 plus k intervals, with t0 the latest start for which no admission comes
 * before its slot (the minimum over k of the k-th admission's time less k intervals); its lateness
 * is how far behind that slot it was admitted. (Anchored on the first admission instead, a limiter
 * whose first admission was late and that then admits the overdue ones at once would run ahead of
 * every later slot, and show no lateness at all.) Printed per implementation: p50, p99 and the
 * largest lateness, the most admissions within any one interval (1 is even spacing), and the whole
 * run's length against the ideal (waiters - 1) intervals. Coro's {@link RateGate} on a
 * two-worker pool (one timer for the gate), Guava's and Resilience4j's {@code RateLimiter} with one
 * virtual thread per waiter. A plain main, not JMH: it measures time on the wall clock. Run it with
 * {@code ./coro bench --rate-lateness [--waiters N] [--rate R] [--rounds K]}.
 */
public final class RateLateness {
    private RateLateness() {}

    /** The options ({@link Arguments} reads them). */
    @Command(name = "rate-lateness", sortOptions = false,
            description = "How late each admission is at a rate limiter: Coro's RateGate, Guava, Resilience4j.")
    static final class Settings {
        @Option(names = "--waiters", paramLabel = "N", description = "waiters arriving at once (default 10,000)")
        Integer waiters;

        @Option(names = "--rate", paramLabel = "R", description = "permits per second (default ${DEFAULT-VALUE})")
        int rate = 1_000;

        @Option(names = "--rounds", paramLabel = "K",
                description = "rounds, each running every implementation (default ${DEFAULT-VALUE})")
        int rounds = 1;

        @Option(names = "--quick", description = "1,000 waiters unless --waiters is given")
        boolean quick;

        @Mixin
        Arguments.Help help;
    }

    /**
     * Runs the measurement.
     *
     * @param args {@code --waiters N}, {@code --rate R}, {@code --rounds K} (each round runs every
     *     implementation, in the same order), {@code --quick} (1,000 waiters), {@code --help}
     * @throws Exception if a run fails
     */
    public static void main(String[] args) throws Exception {
        Settings settings = new Settings();
        if (!Arguments.parse(settings, args)) {
            return;
        }
        int waiters = settings.waiters != null ? settings.waiters : settings.quick ? 1_000 : 10_000;
        int rate = settings.rate;
        int rounds = settings.rounds;
        System.out.printf(Locale.ROOT, "rate-lateness: %,d waiters at once on %,d permits/s (no burst), %d round(s);"
                + " lateness = admitted - (t0 + k intervals), t0 the latest with none early%n", waiters, rate, rounds);
        System.out.printf(Locale.ROOT, "%-26s %12s %12s %12s %12s %14s%n", "implementation", "p50 us", "p99 us", "max us",
                "most in 1 iv", "run / ideal");
        for (int r = 0; r < rounds; r++) {
            report("coro RateGate", rate, waiters, coro(waiters, rate));
            report("guava RateLimiter (VT)", rate, waiters, guava(waiters, rate));
            report("resilience4j (VT)", rate, waiters, resilience4j(waiters, rate));
        }
    }

    private static void report(String name, int rate, int waiters, long[] admittedAt) {
        Arrays.sort(admittedAt);
        long interval = 1_000_000_000L / rate;
        long t0 = Long.MAX_VALUE;
        for (int k = 0; k < admittedAt.length; k++) {
            t0 = Math.min(t0, admittedAt[k] - k * interval);
        }
        Histogram lateness = new Histogram(3);
        int most = 0;
        for (int k = 0, from = 0; k < admittedAt.length; k++) {
            lateness.recordValue(admittedAt[k] - (t0 + k * interval));
            while (admittedAt[k] - admittedAt[from] >= interval) {
                from++;
            }
            most = Math.max(most, k - from + 1);
        }
        double run = admittedAt[admittedAt.length - 1] - admittedAt[0];
        System.out.printf(Locale.ROOT, "%-26s %12.1f %12.1f %12.1f %12d %14.4f%n", name,
                lateness.getValueAtPercentile(50) / 1e3, lateness.getValueAtPercentile(99) / 1e3,
                lateness.getMaxValue() / 1e3, most, run / ((waiters - 1) * (double) interval));
    }

    private static long[] coro(int waiters, int rate) {
        RateGate gate = new RateGate(rate, 1);
        long[] at = new long[waiters];
        AtomicInteger next = new AtomicInteger();
        Task<Void> record = Task.fromRunnable(() -> at[next.getAndIncrement()] = System.nanoTime());
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<CompletableFuture<Void>> all = new ArrayList<>(waiters);
            for (int i = 0; i < waiters; i++) {
                all.add(gate.within(record).startOn(pool).toCompletableFuture());
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
        }
        return at;
    }

    private static long[] guava(int waiters, int rate) throws InterruptedException {
        com.google.common.util.concurrent.RateLimiter limiter = com.google.common.util.concurrent.RateLimiter.create(rate);
        return onVirtualThreads(waiters, limiter::acquire);
    }

    private static long[] resilience4j(int waiters, int rate) throws InterruptedException {
        RateLimiter limiter = RateLimiter.of("lateness", RateLimiterConfig.custom()
                .limitForPeriod(1).limitRefreshPeriod(Duration.ofNanos(1_000_000_000L / rate))
                .timeoutDuration(Duration.ofHours(1)).build());
        return onVirtualThreads(waiters, () -> RateLimiter.waitForPermission(limiter));
    }

    private static long[] onVirtualThreads(int waiters, Runnable acquire) throws InterruptedException {
        long[] at = new long[waiters];
        AtomicInteger next = new AtomicInteger();
        Thread[] threads = new Thread[waiters];
        for (int i = 0; i < waiters; i++) {
            threads[i] = Thread.ofVirtual().start(() -> {
                acquire.run();
                at[next.getAndIncrement()] = System.nanoTime();
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        return at;
    }
}
