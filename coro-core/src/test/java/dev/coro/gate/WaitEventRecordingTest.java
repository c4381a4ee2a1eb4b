package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.sync.AsyncMutex;
import dev.coro.task.Task;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JFR event {@code dev.coro.Wait}, read back from a real recording: one event per wait that
 * queued (none for an admission on the fast path), naming the gate or mutex, the weight and the
 * outcome (admitted, cancelled, timed out); the threshold holds back shorter waits.
 */
class WaitEventRecordingTest {
    private static final long MS = 1_000_000L;

    @TempDir
    Path dir;

    @Test
    void eachQueuedWaitIsRecordedWithItsPrimitiveAndOutcome() throws Exception {
        List<RecordedEvent> events = record(Duration.ZERO, () -> {
            SerialGate gate = new SerialGate();
            Admission held = gate.acquire().join(); // fast path: no wait, no event
            CompletableFuture<Admission> admitted = gate.acquire().toCompletableFuture();
            CompletableFuture<Admission> cancelled = gate.acquire().toCompletableFuture();
            cancelled.cancel(false);
            held.exit();
            admitted.join().exit();

            AsyncMutex mutex = new AsyncMutex();
            assertTrue(mutex.tryLock());
            CompletableFuture<Void> locked = mutex.lock().toCompletableFuture();
            mutex.unlock();
            locked.join();
            mutex.unlock();

            ManualScheduler clock = new ManualScheduler();
            RateGate rate = new RateGate(100, 3, clock);
            assertTrue(rate.within(3, Task.value(null)).toCompletableFuture().isDone()); // the burst, at once
            CompletableFuture<Object> late = rate.within(3, Duration.ofMillis(5), Task.value((Object) null)).toCompletableFuture();
            assertTrue(late.isCompletedExceptionally(), "its turn is at 30 ms, after its deadline at 5 ms");
        });
        assertEquals(4, events.size(), "one event per queued wait: " + events);
        assertWait(events.get(0), "dev.coro.gate.SerialGate", 1, "cancelled");
        assertWait(events.get(1), "dev.coro.gate.SerialGate", 1, "admitted");
        assertWait(events.get(2), "dev.coro.sync.AsyncMutex", 1, "admitted");
        assertWait(events.get(3), "dev.coro.gate.RateGate", 3, "timed out");
    }

    @Test
    void waitsShorterThanTheThresholdAreNotRecorded() throws Exception {
        List<RecordedEvent> events = record(Duration.ofHours(1), () -> {
            SerialGate gate = new SerialGate();
            Admission held = gate.acquire().join();
            CompletableFuture<Admission> waiter = gate.acquire().toCompletableFuture();
            assertFalse(waiter.isDone());
            held.exit();
            waiter.join().exit();
        });
        assertEquals(List.of(), events);
    }

    private static void assertWait(RecordedEvent e, String primitive, long weight, String outcome) {
        assertEquals(primitive, e.<RecordedClass>getValue("primitive").getName());
        assertEquals(weight, e.getLong("weight"));
        assertEquals(outcome, e.getString("outcome"));
        assertFalse(e.getDuration().isNegative());
    }

    /** Runs {@code body} under a recording of dev.coro.Wait at {@code threshold}; its events, in commit order. */
    private List<RecordedEvent> record(Duration threshold, Runnable body) throws Exception {
        Path file = dir.resolve("waits.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.coro.Wait").withThreshold(threshold);
            recording.start();
            body.run();
            recording.stop();
            recording.dump(file);
        }
        assertTrue(Files.size(file) > 0);
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.coro.Wait"))
                .sorted((a, b) -> a.getEndTime().compareTo(b.getEndTime()))
                .toList();
    }
}
