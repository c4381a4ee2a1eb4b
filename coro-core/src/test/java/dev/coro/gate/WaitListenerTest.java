package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.sync.AsyncMutex;
import dev.coro.sync.WaitListener;
import dev.coro.sync.WaitListener.Outcome;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** {@link WaitListener} on a gate and on the mutex: every admission and every queued wait's end, and the waiting count. */
class WaitListenerTest {
    /** What a listener heard: the outcomes in order, and the time each waited. */
    static final class Heard implements WaitListener {
        final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
        final List<Long> waited = new CopyOnWriteArrayList<>();

        @Override
        public void waitEnded(Outcome outcome, long waitedNanos) {
            outcomes.add(outcome);
            waited.add(waitedNanos);
        }
    }

    @Test
    void aGateReportsEachAdmissionCancellationAndTimeout() {
        SerialGate gate = new SerialGate();
        Heard heard = new Heard();
        gate.addListener(heard);
        Admission held = gate.acquire().join(); // at once
        assertFalse(gate.tryAcquire().outcome().toCompletableFuture().getNow(null) instanceof dev.coro.task.Outcome.Value,
                "the try must be refused"); // a refused try: not reported
        CompletableFuture<Admission> waiter = gate.acquire().toCompletableFuture();
        CompletableFuture<Admission> cancelled = gate.acquire().toCompletableFuture();
        assertEquals(2, gate.queueLength());
        cancelled.cancel(false);
        held.exit();
        waiter.join().exit();
        assertEquals(0, gate.queueLength());
        assertEquals(List.of(Outcome.ADMITTED, Outcome.CANCELLED, Outcome.ADMITTED), heard.outcomes);
        assertEquals(0, heard.waited.get(0), "the first was admitted at once");
        assertTrue(heard.waited.stream().allMatch(w -> w >= 0), heard.waited.toString());

        ManualScheduler clock = new ManualScheduler();
        RateGate rate = new RateGate(100, 1, clock);
        Heard rateHeard = new Heard();
        rate.addListener(rateHeard);
        assertTrue(rate.within(Task.value(null)).toCompletableFuture().isDone());
        CompletableFuture<Object> late = rate.within(Duration.ofMillis(5), Task.value((Object) null)).toCompletableFuture();
        assertTrue(late.isCompletedExceptionally());
        CompletableFuture<Object> closed = rate.within(Task.value((Object) null)).toCompletableFuture();
        rate.close();
        assertTrue(closed.isCancelled());
        assertEquals(List.of(Outcome.ADMITTED, Outcome.TIMED_OUT, Outcome.CANCELLED), rateHeard.outcomes);
    }

    @Test
    void anObservedWaitLeavesNoTimingBehindHoweverItEnds() throws Exception {
        ManualScheduler clock = new ManualScheduler();
        DeadlineGate gate = new DeadlineGate(1, clock);
        Heard heard = new Heard();
        gate.addListener(heard);
        Admission held = gate.acquire(Duration.ofSeconds(1)).join(); // at once: no timing
        CompletableFuture<Admission> admitted = gate.acquire(Duration.ofSeconds(1)).toCompletableFuture();
        CompletableFuture<Admission> cancelled = gate.acquire(Duration.ofSeconds(1)).toCompletableFuture();
        CompletableFuture<Admission> expired = gate.acquire(Duration.ofMillis(5)).toCompletableFuture();
        CompletableFuture<Admission> closedOut = gate.acquire(Duration.ofSeconds(1)).toCompletableFuture();
        assertEquals(4, timings(gate).size(), "one timing per queued, observed wait (the engine's side table)");

        cancelled.cancel(false);
        clock.advance(Duration.ofMillis(5).toNanos());
        assertTrue(expired.isCompletedExceptionally(), "its deadline passed");
        held.exit();
        Admission second = admitted.get(10, java.util.concurrent.TimeUnit.SECONDS); // admitted when the holder left
        gate.close(); // refuses the last one
        assertTrue(closedOut.isCancelled());
        second.exit();
        assertEquals(List.of(Outcome.ADMITTED, Outcome.CANCELLED, Outcome.TIMED_OUT, Outcome.ADMITTED, Outcome.CANCELLED),
                heard.outcomes);
        assertEquals(0, timings(gate).size(), "every path that ends a wait takes its timing");
        CompletableFuture<Admission> afterClose = gate.acquire(Duration.ofSeconds(1)).toCompletableFuture();
        assertTrue(afterClose.isCancelled(), "refused at once by the closed gate");
        assertEquals(0, timings(gate).size(), "a refused arrival leaves none");
    }

    /** The engine's side table of observed waits' timings (empty when none was ever observed). */
    private static java.util.Map<?, ?> timings(AdmissionGate gate) throws ReflectiveOperationException {
        java.lang.reflect.Field f = dev.coro.internal.AdmissionEngine.class.getDeclaredField("timings");
        f.setAccessible(true);
        java.util.Map<?, ?> m = (java.util.Map<?, ?>) f.get(gate.engine);
        return m == null ? java.util.Map.of() : m;
    }

    @Test
    void theMutexReportsTryLockLockAndItsWaiters() {
        AsyncMutex mutex = new AsyncMutex();
        Heard heard = new Heard();
        mutex.addListener(heard);
        assertTrue(mutex.tryLock());
        assertFalse(mutex.tryLock()); // refused: not reported
        CompletableFuture<Void> waiter = mutex.lock().toCompletableFuture();
        assertEquals(1, mutex.queueLength());
        mutex.unlock();
        waiter.join();
        mutex.unlock();
        assertEquals(List.of(Outcome.ADMITTED, Outcome.ADMITTED), heard.outcomes);
        assertEquals(0, heard.waited.get(0), "tryLock did not wait");
    }

    @Test
    void aListenerThatThrowsDoesNotBreakTheGate() {
        SerialGate gate = new SerialGate();
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Thread.UncaughtExceptionHandler before = Thread.currentThread().getUncaughtExceptionHandler();
        Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
        try {
            gate.addListener((outcome, waited) -> {
                throw new IllegalStateException("a listener's bug");
            });
            Admission a = gate.acquire().join();
            a.exit();
            gate.acquire().join().exit();
        } finally {
            Thread.currentThread().setUncaughtExceptionHandler(before);
        }
        assertEquals(2, reported.size());
        assertFalse(gate.isClosed(), "a listener's exception broke the gate");
    }

    @Test
    void badInput() {
        assertThrows(NullPointerException.class, () -> new SerialGate().addListener(null));
        assertThrows(NullPointerException.class, () -> new AsyncMutex().addListener(null));
    }
}
