package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@link Gate} and {@link KeyedGate}: every local gate that implements them keeps the contract they
 * state, through the interface alone (the Redis twins run the same kind of body in coro-redis's
 * GateInterchangeabilityTest).
 */
class GateInterfaceTest {
    private final ManualScheduler clock = new ManualScheduler();

    /**
     * With {@code gate} made busy by {@code fill} (nothing more admitted at once): try is refused
     * without running or queueing; a waiter queues; a cancelled waiter leaves and its work never
     * runs; close cancels the queued waiter and every later call; close is idempotent.
     */
    private static void keepsTheContract(Gate gate, Consumer<Gate> fill) {
        fill.accept(gate);
        AtomicBoolean ran = new AtomicBoolean();
        Task<String> flagged = Task.fromRunnable(() -> ran.set(true)).then(Task.value("ran"));

        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(flagged).outcome().join(), gate + ": try refused");
        assertEquals(0, gate.queueLength(), gate + ": a refused try does not queue");
        TaskHandle<String> cancelled = gate.within(flagged).start();
        TaskHandle<String> waiting = gate.within(flagged).start();
        assertEquals(2, gate.queueLength(), gate + ": two waiters");
        cancelled.cancel();
        assertInstanceOf(Outcome.Cancelled.class, cancelled.outcome().join()); // (queueLength may lag: a snapshot)

        gate.close();

        assertTrue(gate.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, waiting.outcome().join(), gate + ": close cancels a waiter");
        assertInstanceOf(Outcome.Cancelled.class, gate.within(flagged).outcome().join());
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin(flagged).outcome().join());
        assertFalse(ran.get(), gate + ": no refused, cancelled or closed-out work ran");
        gate.close();
        assertThrows(NullPointerException.class, () -> gate.within(null));
    }

    /** Holds the gate's one place with work that never ends. */
    private static void hold(Gate gate) {
        Promise<Void> never = new Promise<>();
        gate.within(never.task()).start();
    }

    @Test
    void theGatesOfOneEntryKeepTheContract() {
        keepsTheContract(new SerialGate(), GateInterfaceTest::hold);
        keepsTheContract(new CapacityGate(1), GateInterfaceTest::hold);
        keepsTheContract(new RateGate(1, Duration.ofSeconds(1), 1, clock), gate ->
                assertEquals(1, gate.within(Task.value(1)).join(), "the burst's one token"));
        keepsTheContract(new ThrottleGate(Duration.ofSeconds(1), clock), gate ->
                assertEquals(1, gate.within(Task.value(1)).join(), "the first start"));
        BackpressureGate demand = new BackpressureGate();
        keepsTheContract(demand, gate -> {
            demand.grant(1);
            assertEquals(1, gate.within(Task.value(1)).join(), "the one grant");
        });
    }

    @Test
    void theKeyedSerialGateKeepsTheKeyedContract() {
        KeyedGate<String> gate = new KeyedSerialGate<>();
        Promise<String> release = new Promise<>();
        TaskHandle<String> holder = gate.within("k", release.task()).start();
        AtomicBoolean ran = new AtomicBoolean();
        Task<String> flagged = Task.fromRunnable(() -> ran.set(true)).then(Task.value("ran"));

        assertEquals("other", gate.within("other", Task.value("other")).join(), "another key does not wait");
        assertInstanceOf(Outcome.Cancelled.class, gate.tryWithin("k", flagged).outcome().join());
        TaskHandle<String> cancelled = gate.within("k", flagged).start();
        TaskHandle<String> waiting = gate.within("k", flagged).start();
        cancelled.cancel();
        assertInstanceOf(Outcome.Cancelled.class, cancelled.outcome().join());

        gate.close();

        assertTrue(gate.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, waiting.outcome().join());
        assertInstanceOf(Outcome.Cancelled.class, gate.within("z", flagged).outcome().join());
        assertFalse(holder.isDone(), "admitted work runs on");
        release.complete("done");
        assertEquals("done", holder.join());
        assertFalse(ran.get());
        assertThrows(NullPointerException.class, () -> gate.within(null, Task.value(1)));
    }
}
