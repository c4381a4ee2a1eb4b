package dev.coro.examples.observe;

import dev.coro.gate.CapacityGate;
import dev.coro.micrometer.PoolMetrics;
import dev.coro.micrometer.WaitMetrics;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * {@code ./coro demo observe}: a small service watched the way a team watches production, with JFR
 * and Micrometer. Requests run on a pool of four workers; each takes a connection from a
 * {@code CapacityGate(4)} (the database's pool) for a 2 ms query, and every tenth query fails. A JFR
 * recording (the {@code dev.coro.Wait} event at a 1 ms threshold) and a Micrometer registry
 * ({@link PoolMetrics}, {@link WaitMetrics}) watch it. At the end it prints the longest waits the
 * recording holds, the waits by outcome, and the meters: admissions, wait-time percentiles, the
 * pool's parks and steals. {@code ObservedServiceTest} checks every fact that does not depend on
 * timing.
 */
public final class ObservedService {
    private final PrintStream out;

    /**
     * Creates the demo.
     *
     * @param out where it prints
     */
    public ObservedService(PrintStream out) {
        this.out = out;
    }

    /**
     * What {@link #run(int)} saw.
     *
     * @param requests the requests made
     * @param succeeded those that succeeded
     * @param failed those whose query failed
     * @param mostInQuery the most queries running at once (never above the gate's 4)
     * @param admissions the admissions the gate's meters counted (one per request)
     * @param recordedWaits the waits the JFR recording holds (those of 1 ms or more)
     * @param recordedPrimitives the primitives those waits were on
     * @param recordedOutcomes their outcomes
     */
    public record Run(int requests, int succeeded, int failed, int mostInQuery, long admissions, int recordedWaits,
            List<String> recordedPrimitives, List<String> recordedOutcomes) {}

    /**
     * Serves {@code requests} requests under the recording and the meters, prints what they saw.
     *
     * @param requests how many requests
     * @return what it saw
     */
    public Run run(int requests) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        CapacityGate connections = new CapacityGate(4);
        AtomicInteger inQuery = new AtomicInteger();
        AtomicInteger mostInQuery = new AtomicInteger();
        AtomicInteger queries = new AtomicInteger();
        Path file;
        List<Outcome<Void>> outcomes = new ArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(4, "svc");
                Recording recording = new Recording()) {
            new PoolMetrics(pool, "svc").bindTo(registry);
            new WaitMetrics(connections, "db").bindTo(registry);
            recording.enable("dev.coro.Wait").withThreshold(Duration.ofMillis(1));
            recording.start();

            Task<Void> query = Task.defer(() -> {
                mostInQuery.accumulateAndGet(inQuery.incrementAndGet(), Math::max);
                boolean fails = queries.incrementAndGet() % 10 == 0;
                return Task.delay(Duration.ofMillis(2)).then(Task.<Void>defer(() -> {
                    inQuery.decrementAndGet();
                    return fails ? Task.failure(new IOException("connection reset")) : Task.value(null);
                }));
            });
            Task<Void> request = connections.within(query);
            Task<List<Outcome<Void>>> all = Scope.scoped(scope -> {
                List<Task<Outcome<Void>>> handles = new ArrayList<>();
                for (int i = 0; i < requests; i++) {
                    handles.add(scope.spawn(request.outcome()));
                }
                return Task.whenAll(handles);
            });
            outcomes.addAll(all.startOn(pool).join());
            recording.stop();
            file = Files.createTempFile("coro-observe", ".jfr");
            recording.dump(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int failed = (int) outcomes.stream().filter(o -> o instanceof Outcome.Failure).count();
        int succeeded = (int) outcomes.stream().filter(o -> o instanceof Outcome.Value).count();

        List<RecordedEvent> waits = readWaits(file);
        out.printf(Locale.ROOT, "observe: %d requests on 4 workers through a CapacityGate(4) around a 2 ms query, every 10th fails%n",
                requests);
        out.printf(Locale.ROOT, "results: %d succeeded, %d failed; at most %d queries at once%n", succeeded, failed,
                mostInQuery.get());
        out.printf(Locale.ROOT, "JFR dev.coro.Wait (threshold 1 ms): %d waits recorded; the longest:%n", waits.size());
        waits.stream().sorted(Comparator.comparing((RecordedEvent e) -> e.getDuration()).reversed()).limit(5)
                .forEach(e -> out.printf(Locale.ROOT, "  %7.2f ms on %s, %s%n", e.getDuration().toNanos() / 1e6,
                        e.getClass("primitive").getName().replaceFirst(".*\\.", ""), e.getString("outcome")));
        Map<String, Integer> byOutcome = new TreeMap<>();
        waits.forEach(e -> byOutcome.merge(e.getString("outcome"), 1, Integer::sum));
        out.println("  by outcome: " + byOutcome);

        Timer waited = registry.get("coro.wait.duration").tag("primitive", "db").timer();
        out.printf(Locale.ROOT, "Micrometer coro.wait.duration{primitive=db}: %d admissions, mean %.2f ms, max %.2f ms",
                waited.count(), waited.mean(TimeUnit.MILLISECONDS), waited.max(TimeUnit.MILLISECONDS));
        for (ValueAtPercentile p : waited.takeSnapshot().percentileValues()) {
            out.printf(Locale.ROOT, ", p%.0f %.2f ms", p.percentile() * 100, p.value(TimeUnit.MILLISECONDS));
        }
        out.println();
        out.printf(Locale.ROOT, "Micrometer coro.pool.*{pool=svc}: %.0f parks, %.0f steals, %.0f rejected%n",
                registry.get("coro.pool.parks").functionCounter().count(),
                registry.get("coro.pool.steals").functionCounter().count(),
                registry.get("coro.pool.rejected").functionCounter().count());
        return new Run(requests, succeeded, failed, mostInQuery.get(), waited.count(), waits.size(),
                waits.stream().map(e -> e.getClass("primitive").getName()).distinct().toList(),
                waits.stream().map(e -> e.getString("outcome")).distinct().toList());
    }

    private static List<RecordedEvent> readWaits(Path file) {
        try {
            return RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("dev.coro.Wait"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temporary file: the OS cleans it up
            }
        }
    }
}
