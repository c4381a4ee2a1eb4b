package dev.coro;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.io.EventLoop;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Coro's scheduler events, read back from a real JFR recording: a pool worker's park
 * ({@code dev.coro.WorkerPark}), an event-loop iteration ({@code dev.coro.LoopIteration}) and a timer
 * that fired late ({@code dev.coro.TimerLate}), a supervised failure nobody observed
 * ({@code dev.coro.UnobservedFailure}).
 */
class CoroEventsRecordingTest {
    @TempDir
    Path dir;

    @Test
    void aParkedWorkerIsRecordedWhenItWakes() throws Exception {
        List<RecordedEvent> events = record("dev.coro.WorkerPark", () -> {
            try (WorkStealingPool pool = WorkStealingPool.create(1, "parking")) {
                AtomicReference<Thread> worker = new AtomicReference<>();
                CountDownLatch first = new CountDownLatch(1);
                pool.execute(() -> {
                    worker.set(Thread.currentThread());
                    first.countDown();
                });
                await(first);
                while (worker.get().getState() != Thread.State.WAITING) {
                    Thread.onSpinWait(); // until the idle worker has parked
                }
                CountDownLatch woken = new CountDownLatch(1);
                pool.execute(woken::countDown); // wakes it: the park is committed before this runs
                await(woken);
            }
        });
        assertFalse(events.isEmpty(), "no park recorded");
        RecordedEvent park = events.get(0);
        assertEquals("parking", park.getString("pool"));
        assertEquals(0, park.getInt("worker"));
    }

    @Test
    void loopIterationsAndALateTimerAreRecorded() throws Exception {
        List<RecordedEvent> events = record("dev.coro.LoopIteration,dev.coro.TimerLate", () -> {
            try (EventLoop loop = EventLoop.start("recorded-loop")) {
                CountDownLatch fired = new CountDownLatch(1);
                loop.schedule(fired::countDown, Duration.ofMillis(1));
                loop.execute(() -> { // the loop is busy for 5 ms: the 1 ms timer fires at least 4 ms late
                    long until = System.nanoTime() + 5_000_000;
                    while (System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                });
                await(fired);
                CountDownLatch next = new CountDownLatch(1);
                loop.execute(next::countDown); // a later iteration: the earlier ones have committed
                await(next);
            }
        });
        List<RecordedEvent> iterations = events.stream().filter(e -> e.getEventType().getName().equals("dev.coro.LoopIteration")).toList();
        List<RecordedEvent> late = events.stream().filter(e -> e.getEventType().getName().equals("dev.coro.TimerLate")).toList();
        assertFalse(iterations.isEmpty(), "no iteration recorded");
        assertTrue(iterations.stream().allMatch(e -> e.getString("loop").equals("recorded-loop")));
        assertTrue(iterations.stream().anyMatch(e -> e.getDuration().toNanos() >= 4_000_000), "the busy iteration: " + iterations);
        assertEquals(1, late.size(), "one late timer: " + late);
        assertEquals("recorded-loop", late.get(0).getString("scheduler"));
        assertTrue(late.get(0).getDuration("lateness").toNanos() >= 3_000_000, late.get(0).toString());
    }

    @Test
    void aSupervisedFailureNobodyObservedIsRecordedWhenItsScopeCloses() throws Exception {
        IllegalStateException boom = new IllegalStateException("boom");
        List<Throwable> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
        Thread me = Thread.currentThread();
        Thread.UncaughtExceptionHandler previous = me.getUncaughtExceptionHandler();
        me.setUncaughtExceptionHandler((t, e) -> reported.add(e)); // close reports it here, too
        List<RecordedEvent> events;
        try {
            events = record("dev.coro.UnobservedFailure", () -> {
                try (WorkStealingPool pool = WorkStealingPool.create(1, "supervised")) {
                    Scope scope = Scope.supervisorOn(pool);
                    scope.spawn(Task.failure(boom));                       // nobody waits on its handle
                    Task<Integer> watched = scope.spawn(Task.failure(new IllegalArgumentException("seen")));
                    watched.outcome().join();                              // observed: not reported
                    scope.joinBlocking();
                    scope.close();
                }
            });
        } finally {
            me.setUncaughtExceptionHandler(previous);
        }
        assertEquals(List.of(boom), reported);
        assertEquals(1, events.size(), "one unobserved failure: " + events);
        RecordedEvent e = events.get(0);
        assertEquals(IllegalStateException.class.getName(), e.getClass("errorClass").getName());
        assertEquals("boom", e.getString("message"));
        assertTrue(e.getString("scope").startsWith("Scope["), e.getString("scope"));
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** Runs {@code body} under a recording of {@code names} (comma-separated) at threshold 0; their events. */
    private List<RecordedEvent> record(String names, Runnable body) throws Exception {
        Path file = dir.resolve("events.jfr");
        try (Recording recording = new Recording()) {
            for (String name : names.split(",")) {
                recording.enable(name).withThreshold(Duration.ZERO);
            }
            recording.start();
            body.run();
            recording.stop();
            recording.dump(file);
        }
        List<String> wanted = List.of(names.split(","));
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> wanted.contains(e.getEventType().getName()))
                .sorted((a, b) -> a.getEndTime().compareTo(b.getEndTime()))
                .toList();
    }
}
