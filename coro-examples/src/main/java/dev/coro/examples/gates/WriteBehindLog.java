package dev.coro.examples.gates;

import dev.coro.gate.BatchGate;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import dev.coro.test.VirtualTimeScheduler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A write-behind log on a {@link BatchGate} (P4215's coalescing gate, batching form): appends arrive
 * in bursts, each caller waits for the offset its entry got, and the log writes coalesced batches,
 * one flush at a time: while a flush runs (5 ms of virtual time), the appends that arrive meanwhile
 * accumulate and go in the next flush, at most {@code maxPerFlush} entries each. A short linger
 * lets a burst that starts on an idle log gather before the first flush. It runs on virtual time, so
 * every count it prints is exact; {@code WriteBehindLogTest} checks each printed fact.
 */
public final class WriteBehindLog {
    private final PrintStream out;

    /**
     * Creates the example.
     *
     * @param out where it prints
     */
    public WriteBehindLog(PrintStream out) {
        this.out = out;
    }

    /**
     * What {@link #run} saw.
     *
     * @param appends the appends issued
     * @param bursts the bursts they came in
     * @param flushes the flushes (calls of the batch function)
     * @param fewestPerFlush the fewest entries in one flush
     * @param mostPerFlush the most entries in one flush
     * @param maxPerFlush the gate's maximum batch size
     * @param mostFlushesAtOnce the most flushes running at once
     * @param logInOrder whether the log holds every entry once, in append order
     * @param offsetsInOrder whether append {@code i} got offset {@code i}, and the results arrived in
     *     that order
     * @param lastFlushEndMs when the last flush ended, in virtual milliseconds
     */
    public record Flushes(int appends, int bursts, int flushes, int fewestPerFlush, int mostPerFlush,
            int maxPerFlush, int mostFlushesAtOnce, boolean logInOrder, boolean offsetsInOrder, long lastFlushEndMs) {}

    /** Runs the example as the tour does: 1,000 appends, at most 64 per flush. */
    public void runAll() {
        run(1_000, 64);
    }

    /**
     * Issues {@code appends} appends in bursts of random size (1 to 120, a fixed seed), one burst every
     * 10 ms, into a log whose flushes take 5 ms and hold at most {@code maxPerFlush} entries, with a
     * linger of 1 ms; waits until every append has its offset.
     *
     * @param appends the appends
     * @param maxPerFlush the most entries in one flush
     * @return what it saw
     */
    public Flushes run(int appends, int maxPerFlush) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        List<String> disk = new ArrayList<>(); // written by one flush at a time (the gate runs one at once)
        List<Integer> perFlush = new CopyOnWriteArrayList<>();
        Occupancy flushing = new Occupancy();
        long[] lastFlushEnd = new long[1];
        BatchGate<String, Long> log = new BatchGate<>(entries -> {
            flushing.enter();
            perFlush.add(entries.size());
            return Task.delay(Duration.ofMillis(5)).map(ignored -> {
                long first = disk.size();
                disk.addAll(entries);
                flushing.exit();
                lastFlushEnd[0] = clock.nanoTime();
                List<Long> offsets = new ArrayList<>(entries.size());
                for (int i = 0; i < entries.size(); i++) {
                    offsets.add(first + i);
                }
                return offsets;
            });
        }, maxPerFlush, Duration.ofMillis(1), clock);

        ConcurrentLinkedQueue<Long> arrived = new ConcurrentLinkedQueue<>(); // offsets, in the order callers resumed
        List<String> expected = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(11);
        Scope scope = Scope.on(clock);
        int bursts = 0;
        for (int issued = 0; issued < appends; bursts++) {
            int size = Math.min(appends - issued, random.nextInt(1, 121));
            Duration at = Duration.ofMillis(10L * bursts);
            for (int k = 0; k < size; k++, issued++) {
                String entry = "entry-" + issued;
                expected.add(entry);
                scope.spawn(Task.delay(at).then(log.submit(entry)).map(offset -> {
                    arrived.add(offset);
                    return offset;
                }));
            }
        }
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        log.close();

        List<Long> offsets = new ArrayList<>(arrived);
        boolean offsetsInOrder = offsets.size() == appends;
        for (int i = 0; offsetsInOrder && i < appends; i++) {
            offsetsInOrder = offsets.get(i) == i;
        }
        boolean logInOrder = disk.equals(expected);
        int fewest = perFlush.stream().mapToInt(Integer::intValue).min().orElse(0);
        int most = perFlush.stream().mapToInt(Integer::intValue).max().orElse(0);
        long endMs = lastFlushEnd[0] / 1_000_000;
        out.println("write-behind log (virtual time): " + appends + " appends in " + bursts
                + " bursts (one every 10 ms), each flush 5 ms, at most " + maxPerFlush + " entries per flush: "
                + perFlush.size() + " flushes of " + fewest + " to " + most + " entries (never above " + maxPerFlush
                + "), at most " + flushing.most() + " flush at once; the log holds every entry once, "
                + (logInOrder ? "in append order" : "OUT OF ORDER") + "; every append got "
                + (offsetsInOrder ? "its own offset, in order" : "a WRONG offset or order")
                + "; the last flush ended at " + endMs + " ms");
        return new Flushes(appends, bursts, perFlush.size(), fewest, most, maxPerFlush, flushing.most(), logInOrder,
                offsetsInOrder, endMs);
    }
}
