package dev.coro.redis;

import static dev.coro.redis.RedisServer.awaitCondition;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.gate.CapacityGate;
import dev.coro.gate.Gate;
import dev.coro.gate.KeyedGate;
import dev.coro.gate.KeyedSerialGate;
import dev.coro.gate.SerialGate;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The local gates and their Redis twins are interchangeable behind {@link Gate} and
 * {@link KeyedGate}: one test body, the contract those interfaces state, run against each.
 */
@ExtendWith(RedisServerExtension.class)
class GateInterchangeabilityTest {
    /** Only makes a hang fail: generous, for a loaded machine. */
    private static final Duration BOUND = Duration.ofSeconds(30);

    private static <T> T await(TaskHandle<T> h) throws Exception {
        return h.toCompletableFuture().get(BOUND.toSeconds(), SECONDS);
    }

    private static <T> Outcome<T> outcome(TaskHandle<T> h) throws Exception {
        return h.outcome().toCompletableFuture().get(BOUND.toSeconds(), SECONDS);
    }

    private static String name(String kind) {
        return "interchange-" + kind + "-" + System.nanoTime();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"local", "redis"})
    void aSerialGate(String where, RedisServer redis) throws Exception {
        try (Gate gate = where.equals("local") ? new SerialGate() : RedisSerialGate.open(redis.client(), name("serial"))) {
            keepsTheContract(gate, 1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"local", "redis"})
    void aCapacityGate(String where, RedisServer redis) throws Exception {
        try (Gate gate = where.equals("local") ? new CapacityGate(3)
                : RedisCapacityGate.open(redis.client(), name("capacity"), 3)) {
            keepsTheContract(gate, 3);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"local", "redis"})
    void aKeyedSerialGate(String where, RedisServer redis) throws Exception {
        try (KeyedGate<String> gate = where.equals("local") ? new KeyedSerialGate<>()
                : RedisKeyedSerialGate.open(redis.client(), name("keyed"))) {
            keepsTheKeyedContract(gate);
        }
    }

    /** Gate's contract, for a gate that admits {@code capacity} at once. */
    private static void keepsTheContract(Gate gate, int capacity) throws Exception {
        List<Promise<String>> releases = new ArrayList<>();
        List<TaskHandle<String>> holders = new ArrayList<>();
        CountDownLatch inside = new CountDownLatch(capacity);
        for (int i = 0; i < capacity; i++) {
            Promise<String> release = new Promise<>();
            releases.add(release);
            holders.add(gate.within(Task.fromRunnable(inside::countDown).then(release.task())).start());
        }
        assertTrue(inside.await(BOUND.toSeconds(), SECONDS), "the gate admits its capacity");
        AtomicBoolean ran = new AtomicBoolean();
        Task<String> flagged = Task.fromRunnable(() -> ran.set(true)).then(Task.value("ran"));

        // try never waits: refused on the cancelled channel, work not run, nothing queued
        assertInstanceOf(Outcome.Cancelled.class, outcome(gate.tryWithin(flagged).start()));
        assertEquals(0, gate.queueLength());

        // a waiter waits; a cancelled waiter leaves nothing
        TaskHandle<String> first = gate.within(Task.value("first")).start();
        awaitCondition("the first waiter queued", BOUND, () -> gate.queueLength() == 1);
        TaskHandle<String> cancelled = gate.within(flagged).start();
        awaitCondition("the second waiter queued", BOUND, () -> gate.queueLength() == 2);
        cancelled.cancel();
        assertInstanceOf(Outcome.Cancelled.class, outcome(cancelled)); // (queueLength may lag: a snapshot)

        // leaving is structural: a holder that fails leaves, and the waiter goes in
        IllegalStateException boom = new IllegalStateException("boom");
        releases.get(0).fail(boom);
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, outcome(holders.get(0))).error());
        assertEquals("first", await(first));

        // close resolves every waiter cancelled, and later calls; admitted work runs on
        Promise<String> lastRelease = new Promise<>();
        releases.set(0, lastRelease);
        CountDownLatch refilled = new CountDownLatch(1);
        holders.set(0, gate.within(Task.fromRunnable(refilled::countDown).then(lastRelease.task())).start());
        assertTrue(refilled.await(BOUND.toSeconds(), SECONDS));
        TaskHandle<String> waiting = gate.within(flagged).start();
        awaitCondition("a waiter queued before the close", BOUND, () -> gate.queueLength() == 1);

        gate.close();

        assertTrue(gate.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, outcome(waiting));
        assertInstanceOf(Outcome.Cancelled.class, outcome(gate.within(flagged).start()));
        assertInstanceOf(Outcome.Cancelled.class, outcome(gate.tryWithin(flagged).start()));
        for (int i = 0; i < capacity; i++) {
            assertFalse(holders.get(i).isDone(), "admitted work is not interrupted");
            releases.get(i).complete("held " + i);
        }
        for (int i = 0; i < capacity; i++) {
            assertEquals("held " + i, await(holders.get(i)));
        }
        assertFalse(ran.get(), "no refused, cancelled or closed-out work ran");
        gate.close(); // idempotent
    }

    /** KeyedGate's contract, for a gate that admits one operation per key. */
    private static void keepsTheKeyedContract(KeyedGate<String> gate) throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        Promise<String> release = new Promise<>();
        TaskHandle<String> holder = gate.within("k", Task.fromRunnable(inside::countDown).then(release.task())).start();
        assertTrue(inside.await(BOUND.toSeconds(), SECONDS));
        AtomicBoolean ran = new AtomicBoolean();
        Task<String> flagged = Task.fromRunnable(() -> ran.set(true)).then(Task.value("ran"));

        assertEquals("other", await(gate.within("other", Task.value("other")).start()), "another key does not wait");
        assertInstanceOf(Outcome.Cancelled.class, outcome(gate.tryWithin("k", flagged).start()), "try never waits");

        TaskHandle<String> cancelled = gate.within("k", flagged).start();
        TaskHandle<String> next = gate.within("k", Task.value("next")).start();
        cancelled.cancel();
        assertInstanceOf(Outcome.Cancelled.class, outcome(cancelled));

        IllegalStateException boom = new IllegalStateException("boom");
        release.fail(boom);
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, outcome(holder)).error());
        assertEquals("next", await(next), "the failed holder left; the cancelled waiter took nothing");

        CountDownLatch again = new CountDownLatch(1);
        Promise<String> lastRelease = new Promise<>();
        TaskHandle<String> last = gate.within("k", Task.fromRunnable(again::countDown).then(lastRelease.task())).start();
        assertTrue(again.await(BOUND.toSeconds(), SECONDS));
        TaskHandle<String> waiting = gate.within("k", flagged).start();

        gate.close();

        assertTrue(gate.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, outcome(waiting));
        assertInstanceOf(Outcome.Cancelled.class, outcome(gate.within("z", flagged).start()));
        assertInstanceOf(Outcome.Cancelled.class, outcome(gate.tryWithin("z", flagged).start()));
        assertFalse(last.isDone(), "admitted work is not interrupted");
        lastRelease.complete("last");
        assertEquals("last", await(last));
        assertFalse(ran.get());
        gate.close();
    }
}
