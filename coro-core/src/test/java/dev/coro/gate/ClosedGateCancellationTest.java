package dev.coro.gate;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A closed gate's refusal says so: a task refused by a closed gate (arriving after the close, or
 * queued when it closes) ends on the cancelled channel, and joining it throws a
 * {@link CancellationException} whose message names the gate and says it is closed.
 */
class ClosedGateCancellationTest {

    /** One gate kind: a fresh gate, its waiting door, and a task that fills it so the next waiter queues. */
    record Kind(String name, Supplier<AdmissionGate> make, Function<AdmissionGate, Function<Task<String>, Task<String>>> door,
            Function<AdmissionGate, Task<Admission>> fill) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Kind> kinds() {
        return List.of(
                new Kind("CapacityGate", () -> new CapacityGate(1), g -> ((CapacityGate) g)::within,
                        g -> ((CapacityGate) g).acquire()),
                new Kind("SerialGate", SerialGate::new, g -> ((SerialGate) g)::within, g -> ((SerialGate) g).acquire()),
                new Kind("ReadWriteGate read", ReadWriteGate::new, g -> ((ReadWriteGate) g)::withinRead,
                        g -> ((ReadWriteGate) g).acquireWrite()),
                new Kind("ReadWriteGate write", ReadWriteGate::new, g -> ((ReadWriteGate) g)::withinWrite,
                        g -> ((ReadWriteGate) g).acquireRead()),
                new Kind("RateGate", () -> new RateGate(1.0 / 3600, 1), g -> ((RateGate) g)::within,
                        g -> ((RateGate) g).acquire()),
                new Kind("PriorityGate", () -> new PriorityGate(1), g -> w -> ((PriorityGate) g).within(3, w),
                        g -> ((PriorityGate) g).acquire(0)),
                new Kind("BudgetGate", () -> new BudgetGate(5), g -> w -> ((BudgetGate) g).within(5, w),
                        g -> ((BudgetGate) g).acquire(1)),
                new Kind("DeadlineGate", () -> new DeadlineGate(1),
                        g -> w -> ((DeadlineGate) g).within(Duration.ofHours(1), w),
                        g -> ((DeadlineGate) g).acquire(Duration.ofHours(1))));
    }

    private static void assertNamesTheClosedGate(AdmissionGate gate, Throwable e) {
        CancellationException c = assertInstanceOf(CancellationException.class, e);
        assertEquals(gate + " is closed", c.getMessage());
        assertTrue(c.getMessage().contains("closed]"), "the gate's description shows it closed: " + c.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aTaskArrivingAfterCloseIsCancelledNamingTheClosedGate(Kind kind) {
        AdmissionGate gate = kind.make().get();
        gate.close();
        Task<String> refused = kind.door().apply(gate).apply(Task.value("ran"));
        assertNamesTheClosedGate(gate, assertThrows(CancellationException.class, refused::join));
        assertInstanceOf(Outcome.Cancelled.class, refused.outcome().join(), "still the cancelled channel");
        assertNamesTheClosedGate(gate, assertThrows(CancellationException.class,
                () -> refused.map(s -> s + "!").join())); // the reason travels up through the steps above
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void aWaiterQueuedWhenTheGateClosesIsCancelledNamingTheClosedGate(Kind kind) throws Exception {
        AdmissionGate gate = kind.make().get();
        Admission held = kind.fill().apply(gate).join();
        TaskHandle<String> waiter = kind.door().apply(gate).apply(Task.value("ran")).start();
        assertFalse(waiter.isDone(), "the waiter queues behind the held admission");
        assertEquals(1, gate.queueLength());
        gate.close();
        assertNamesTheClosedGate(gate, assertThrows(CancellationException.class, waiter::join));
        assertInstanceOf(Outcome.Cancelled.class, waiter.outcome().join());
        CompletableFuture<String> future = waiter.toCompletableFuture();
        assertTrue(future.isCancelled(), "the future is cancelled too");
        CancellationException got = assertThrows(CancellationException.class, () -> future.get(10, SECONDS));
        assertNamesTheClosedGate(gate, got.getCause() != null ? got.getCause() : got); // get() wraps it (JDK 23+)
        assertEquals(0, gate.queueLength());
        held.exit();
    }

    @Test
    void aTryRefusedByAClosedGateSaysSoAndAFullOneStaysPlain() {
        CapacityGate gate = new CapacityGate(1);
        Admission held = gate.acquire().join();
        CancellationException full = assertThrows(CancellationException.class,
                () -> gate.tryWithin(Task.value(1)).join());
        assertEquals("task was cancelled", full.getMessage(), "a full gate is not a closed one");
        gate.close();
        assertNamesTheClosedGate(gate, assertThrows(CancellationException.class,
                () -> gate.tryWithin(Task.value(1)).join()));
        held.exit();
    }

    @Test
    void plainCancellationStillSaysWhatItSaid() throws Exception {
        assertEquals("task was cancelled",
                assertThrows(CancellationException.class, () -> Task.cancelled().join()).getMessage());
        CapacityGate gate = new CapacityGate(1);
        Admission held = gate.acquire().join();
        TaskHandle<Integer> waiter = gate.within(Task.value(1)).start();
        waiter.cancel(); // its own cancellation, on an open gate
        assertEquals("task was cancelled",
                assertThrows(CancellationException.class, waiter::join).getMessage());
        CompletableFuture<Integer> f = waiter.toCompletableFuture();
        assertTrue(f.isCancelled());
        assertThrows(CancellationException.class, () -> f.get(10, SECONDS));
        held.exit();
        assertEquals(1, gate.available(), "nothing leaked");
    }

    @Test
    void whenAllOfARefusedTaskKeepsTheReasonAndWhenAnyIsDecidedByAValue() {
        CapacityGate gate = new CapacityGate(1);
        gate.close();
        Task<Integer> refused = gate.within(Task.value(1));
        assertNamesTheClosedGate(gate, assertThrows(CancellationException.class,
                () -> Task.whenAll(List.of(refused, Task.value(2))).join()));
        assertEquals(2, Task.whenAny(List.of(refused, Task.value(2))).join(),
                "a cancellation with a reason is still a cancellation: it does not decide whenAny");
    }

    @Test
    void theGatesOffTheEngineSayTheyAreClosedToLaterCallers() {
        KeyedSerialGate<String> keyed = new KeyedSerialGate<>();
        keyed.close();
        CancellationException e = assertThrows(CancellationException.class,
                () -> keyed.within("k", Task.value("ran")).join());
        assertEquals(keyed + " is closed", e.getMessage());

        KeyedSerialGate<String> bounded = new KeyedSerialGate<>(1);
        bounded.close();
        e = assertThrows(CancellationException.class, () -> bounded.acquire("k").join());
        assertEquals(bounded + " is closed", e.getMessage());

        CoalescingGate<String, String> coalescing = new CoalescingGate<>();
        coalescing.close();
        Task<String> refused = coalescing.within("k", Task.value("ran"));
        e = assertThrows(CancellationException.class, refused::join);
        assertEquals(coalescing + " is closed", e.getMessage());
        assertInstanceOf(Outcome.Cancelled.class, refused.outcome().join(), "still the cancelled channel");

        CircuitBreakerGate breaker = CircuitBreakerGate.builder("inventory").build();
        breaker.close();
        e = assertThrows(CancellationException.class, () -> breaker.within(Task.value("ran")).join());
        assertEquals(breaker + " is closed", e.getMessage());
    }

    @Test
    void aKeyedWaiterQueuedWhenTheGateClosesSaysItIsClosed() throws Exception {
        KeyedSerialGate<String> keyed = new KeyedSerialGate<>();
        Admission held = keyed.acquire("k").join();
        TaskHandle<String> queued = keyed.within("k", Task.value("ran")).start();
        assertFalse(queued.isDone());
        keyed.close();
        held.close();
        CancellationException e = assertThrows(CancellationException.class, queued::join);
        assertTrue(e.getMessage().startsWith("KeyedSerialGate[") && e.getMessage().endsWith(", closed] is closed"),
                e.getMessage());
        assertInstanceOf(Outcome.Cancelled.class, queued.outcome().join());
    }

    @Test
    void aCancelledTaskWithAReasonSaysItAndIsCancelledInEveryOtherRespect() throws Exception {
        Task<String> t = Task.cancelled("the cache is closed");
        assertEquals("the cache is closed", assertThrows(CancellationException.class, t::join).getMessage());
        assertInstanceOf(Outcome.Cancelled.class, t.outcome().join());
        assertEquals("the cache is closed",
                assertThrows(CancellationException.class, () -> t.map(s -> s + "!").join()).getMessage());
        CompletableFuture<String> f = t.toCompletableFuture();
        assertTrue(f.isCancelled());
        assertEquals("recovered", t.transform(o -> Task.value("recovered")).join());
        assertEquals("reason", assertThrows(NullPointerException.class, () -> Task.cancelled(null)).getMessage());
    }

    @Test
    void aBatchGateSaysItIsClosedToWaitingAndLaterCallers() {
        BatchGate<Integer, Integer> gate = new BatchGate<>(items -> Task.value(items), 2, Duration.ofHours(1), 1,
                dev.coro.scheduler.Scheduler.inline());
        TaskHandle<Integer> waiting = gate.submit(1).start(); // lingers for a second item
        assertFalse(waiting.isDone());
        gate.close();
        CancellationException queued = assertThrows(CancellationException.class, waiting::join);
        assertEquals(gate + " is closed", queued.getMessage());
        CancellationException later = assertThrows(CancellationException.class, () -> gate.submit(2).join());
        assertEquals(gate + " is closed", later.getMessage());
        assertTrue(later.getMessage().startsWith("BatchGate[") && later.getMessage().contains("closed"), later.getMessage());
    }

    private static void assertNamesTheClosedGate(CapacityGate gate, Throwable e) {
        assertNamesTheClosedGate((AdmissionGate) gate, e);
    }
}
