package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.gate.ReadWriteGate;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The "readers-writer exclusion and writer progress under 32 looping readers", on virtual
 * time: deterministic (every step runs on the test's thread, in an order fixed by the virtual clock),
 * and the times asserted are virtual, not measured.
 *
 * <p>32 readers loop for ever: each is admitted, holds its read admission for its own time (1 to 7
 * virtual ms), leaves, and at once enters again. Their holds overlap, so the readers inside never drop
 * to zero on their own: a gate that let readers in whenever another reader is inside would never admit
 * a writer. Writers arrive one at a time while the readers loop; FIFO must admit each one as soon as
 * the readers admitted before it have left (within the longest hold), alone, and then let the readers
 * go on.
 */
class ReadWriteGateProgressTest {
    private static final int READERS = 32;
    private static final int WRITERS = 5;
    private static final long MS = 1_000_000L;
    private static final long LONGEST_HOLD = 7 * MS;
    private static final long WRITE_HOLD = 2 * MS;

    private final VirtualTimeScheduler vt = new VirtualTimeScheduler();
    private final ReadWriteGate gate = new ReadWriteGate();
    private final List<String> broken = new ArrayList<>();
    private final int[] entries = new int[READERS];
    private final long[] arrived = new long[WRITERS];
    private final long[] admitted = new long[WRITERS];
    private final long[] left = new long[WRITERS];
    private final int[] readerEntriesAtArrival = new int[WRITERS];
    private final int[] readerEntriesAtAdmission = new int[WRITERS];
    private final int[] readersHalfAMillisecondAfter = new int[WRITERS];
    private int readersIn;
    private int writersIn;
    private int readerEntries;
    private int fewestReadersAtAnExit = Integer.MAX_VALUE;
    private boolean writerSeen;
    private volatile boolean stop;

    private static long holdOf(int reader) {
        return (1 + reader % 7) * MS;
    }

    private Task<Void> read(int reader) {
        return Task.defer(() -> {
            readersIn++;
            readerEntries++;
            entries[reader]++;
            if (writersIn != 0) {
                broken.add("reader " + reader + " admitted at " + vt.nanoTime() + " while a writer is inside");
            }
            return Task.delay(Duration.ofNanos(holdOf(reader))).andFinally(() -> {
                readersIn--;
                if (!writerSeen) { // readers alone: at most one of them is between its exit and its re-entry
                    fewestReadersAtAnExit = Math.min(fewestReadersAtAnExit, readersIn);
                }
            });
        });
    }

    private Task<Void> write(int writer) {
        return Task.defer(() -> {
            admitted[writer] = vt.nanoTime();
            readerEntriesAtAdmission[writer] = readerEntries;
            if (++writersIn != 1 || readersIn != 0) {
                broken.add("writer " + writer + " admitted with " + readersIn + " readers and "
                        + (writersIn - 1) + " writers inside");
            }
            return Task.delay(Duration.ofNanos(WRITE_HOLD)).andFinally(() -> {
                if (readersIn != 0) {
                    broken.add("readers came in while writer " + writer + " was inside");
                }
                writersIn--;
                left[writer] = vt.nanoTime();
                // half a millisecond later (before any reader's hold can end): who is inside?
                vt.schedule(() -> readersHalfAMillisecondAfter[writer] = readersIn, Duration.ofNanos(MS / 2));
            });
        });
    }

    @Test
    void writersAreAdmittedPromptlyAndAloneWhile32ReadersLoopAndTheReadersGoOn() {
        List<CompletableFuture<Integer>> readers = new ArrayList<>();
        for (int r = 0; r < READERS; r++) {
            int reader = r;
            readers.add(Task.loop(0, n -> !stop, n -> gate.withinRead(read(reader)).map(ignored -> n + 1))
                    .startOn(vt).toCompletableFuture());
        }
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            long arrival = (10 + 20L * w) * MS; // 10, 30, 50, 70, 90 ms: while the readers loop
            writers.add(Task.delay(Duration.ofNanos(arrival)).then(Task.defer(() -> {
                arrived[writer] = vt.nanoTime();
                readerEntriesAtArrival[writer] = readerEntries;
                writerSeen = true;
                return gate.withinWrite(write(writer));
            })).startOn(vt).toCompletableFuture());
        }
        vt.runUntilIdle();
        assertEquals(READERS, readersIn, "all 32 readers are inside together");
        assertEquals(READERS, gate.readers());

        for (int w = 0; w < WRITERS; w++) {
            vt.advanceTo(arrived(w) + WRITE_HOLD + LONGEST_HOLD);
            assertTrue(writers.get(w).isDone(), "writer " + w + " was admitted, ran and left");
            long waited = admitted[w] - arrived[w];
            assertTrue(waited > 0 && waited <= LONGEST_HOLD,
                    "writer " + w + " waited " + waited + " ns: only for the readers inside when it came");
            assertEquals(readerEntriesAtArrival[w], readerEntriesAtAdmission[w],
                    "writer " + w + ": no reader overtook it while it waited");
            assertEquals(WRITE_HOLD, left[w] - admitted[w]);
            assertEquals(READERS, readersHalfAMillisecondAfter[w],
                    "after writer " + w + ", the readers queued behind it entered together");
            if (w == 0) {
                assertEquals(READERS - 1, fewestReadersAtAnExit,
                        "before the first writer, the readers inside never dropped below 31 on their own");
            }
        }
        // after the last writer the readers go on, all of them
        int[] atLastWriter = entries.clone();
        vt.advanceBy(Duration.ofMillis(100));
        for (int r = 0; r < READERS; r++) {
            assertTrue(entries[r] >= atLastWriter[r] + 100 / (holdOf(r) / MS) - 1,
                    "reader " + r + " went on: " + atLastWriter[r] + " -> " + entries[r] + " entries");
        }
        assertEquals(List.of(), broken);

        stop = true;
        vt.advanceUntilIdle(); // each reader finishes its hold and ends its loop
        for (CompletableFuture<Integer> reader : readers) {
            assertTrue(reader.isDone());
            assertTrue(reader.join() > 0);
        }
        assertEquals(0, readersIn);
        assertEquals(0, gate.readers());
        assertFalse(gate.isWriting());
        assertEquals(0, vt.pendingTimers());
        gate.closeAndCheck();
        System.out.println("writersAreAdmittedPromptlyAndAloneWhile32ReadersLoopAndTheReadersGoOn: "
                + readerEntries + " reader entries, writers waited (ms) " + waitsInMillis());
    }

    private long arrived(int writer) {
        long due = (10 + 20L * writer) * MS;
        vt.advanceTo(Math.max(vt.nanoTime(), due));
        assertEquals(due, arrived[writer], "writer " + writer + " arrived on time");
        return due;
    }

    private List<Double> waitsInMillis() {
        List<Double> waits = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            waits.add((admitted[w] - arrived[w]) / (double) MS);
        }
        return waits;
    }
}
