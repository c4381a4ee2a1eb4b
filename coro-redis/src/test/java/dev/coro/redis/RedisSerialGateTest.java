package dev.coro.redis;

import static dev.coro.redis.RedisServer.awaitCondition;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link RedisSerialGate} against a real redis-server: two gate objects play two JVMs. */
class RedisSerialGateTest extends RedisGateTestBase {
    RedisSerialGateTest() {
        super("serial-");
    }

    private RedisSerialGate gate(RedisServer redis, Duration lease) {
        return opened(RedisSerialGate.builder(redis.client(), name)
                .leaseTime(lease)
                .recheckInterval(Duration.ofMillis(100))
                .open());
    }

    @Test
    void oneAtATimeAcrossTwoClientsWithRisingTokens(RedisServer redis) throws Exception {
        RedisSerialGate a = gate(redis, Duration.ofSeconds(2));
        RedisSerialGate b = gate(redis, Duration.ofSeconds(2));
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
        List<Task<Void>> ops = new ArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int i = 0; i < 60; i++) {
                ops.add((i % 2 == 0 ? a : b).withinFenced(token -> Task.fromRunnable(() -> {
                            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                            tokens.add(token); // in admission order: the gate admits one at a time
                        })
                        .then(Task.delay(Duration.ofMillis(1)))
                        .andFinally(inside::decrementAndGet)));
            }
            Task.whenAll(ops).startOn(pool).toCompletableFuture().get(30, SECONDS);
        }
        assertEquals(1, most.get(), "never two inside at once");
        assertEquals(60, tokens.size());
        for (int i = 1; i < tokens.size(); i++) {
            assertTrue(tokens.get(i) > tokens.get(i - 1), "token " + i + " rises: " + tokens);
        }
        awaitCondition("nothing held or queued", BOUND, () -> redis.keysOf(name).stream().allMatch(k -> k.endsWith(":fence")));
    }

    @Test
    void waitersAreAdmittedInArrivalOrderAcrossClients(RedisServer redis) throws Exception {
        RedisSerialGate a = gate(redis, Duration.ofSeconds(2));
        RedisSerialGate b = gate(redis, Duration.ofSeconds(2));
        Holder holder = hold(a::within);
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<TaskHandle<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int index = i;
            waiters.add(start((i % 2 == 0 ? b : a).within(Task.fromRunnable(() -> order.add(index)))));
            long expected = i + 1;
            awaitCondition("waiter " + i + " queued", BOUND, () -> queued(redis) == expected);
        }
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(b.tryWithin(Task.value(0)))), "busy: try refused");

        holder.release();
        for (TaskHandle<Void> w : waiters) {
            await(w);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5), order);
    }

    @Test
    void aDeadHoldersTurnPassesAfterItsLeaseWithAHigherToken(RedisServer redis) throws Exception {
        RedisSerialGate dying = gate(redis, SHORT_LEASE);
        RedisSerialGate survivor = gate(redis, SURVIVOR_LEASE);
        AtomicLong held = new AtomicLong();
        CountDownLatch holding = new CountDownLatch(1);
        start(dying.withinFenced(token -> {
            held.set(token);
            holding.countDown();
            return Task.never();
        }));
        assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
        TaskHandle<Long> next = start(survivor.withinFenced(Task::value));
        awaitCondition("the survivor queued", BOUND, () -> queued(redis) == 1);

        dying.crash(); // no release, no renewal: the lease runs out on Redis's clock

        long token = await(next);
        assertTrue(token > held.get(), "token " + token + " above the dead holder's " + held.get());
    }

    @Test
    void aCancelledWaiterLeavesNothingAndItsWorkNeverRuns(RedisServer redis) throws Exception {
        RedisSerialGate a = gate(redis, Duration.ofSeconds(2));
        RedisSerialGate b = gate(redis, Duration.ofSeconds(2));
        Holder holder = hold(a::within);
        AtomicBoolean ran = new AtomicBoolean();
        TaskHandle<Void> waiter = start(b.within(Task.fromRunnable(() -> ran.set(true))));
        awaitCondition("the waiter queued", BOUND, () -> queued(redis) == 1);

        waiter.cancel();

        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        awaitCondition("its place removed", BOUND, () -> redis.admin().exists(
                "coro:gate:{" + name + "}:queue", "coro:gate:{" + name + "}:waiters") == 0);
        holder.release();
        assertEquals("free", await(start(b.tryWithin(Task.value("free")))));
        assertFalse(ran.get());
        assertEquals(0, b.queueLength());
    }

    @Test
    void aFailingWorkReleasesTheGate(RedisServer redis) throws Exception {
        RedisSerialGate g = gate(redis, Duration.ofSeconds(2));
        IllegalStateException boom = new IllegalStateException("boom");
        Outcome<Object> failed = outcome(start(g.within(Task.failure(boom))));
        assertEquals(boom, assertInstanceOf(Outcome.Failure.class, failed).error());
        assertEquals(1, await(start(g.tryWithin(Task.value(1)))), "released on the error path");
    }

    @Test
    void closeCancelsWaitersAndLaterCallsButLetsTheHolderFinish(RedisServer redis) throws Exception {
        RedisSerialGate a = gate(redis, Duration.ofSeconds(2));
        RedisSerialGate b = gate(redis, Duration.ofSeconds(2));
        Holder holder = hold(a::within);
        TaskHandle<Integer> waiter = start(a.within(Task.value(1)));
        awaitCondition("the waiter queued", BOUND, () -> queued(redis) == 1);

        a.close();

        assertTrue(a.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.within(Task.value(2)))));
        assertFalse(holder.handle.isDone(), "admitted work runs on");
        holder.release();
        assertEquals(3, await(start(b.within(Task.value(3)))), "the closed gate's turn came back");
        assertEquals(0, queued(redis));
    }

    /** Round trips, counted by the server: one to enter, one to leave; two to enter after a wait. */
    @Test
    void roundTripsPerAdmissionAndRelease() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            RedisSerialGate a = RedisSerialGate.builder(own.client(), "trips")
                    .leaseTime(Duration.ofSeconds(60)).recheckInterval(Duration.ofSeconds(60)).open();
            RedisSerialGate b = RedisSerialGate.builder(own.client(), "trips")
                    .leaseTime(Duration.ofSeconds(60)).recheckInterval(Duration.ofSeconds(60)).open();
            opened(a);
            opened(b);
            assertEquals(0, await(start(a.within(Task.value(0))))); // loads the scripts

            long before = CommandStats.calls(own);
            for (int i = 0; i < 50; i++) {
                await(start(a.within(Task.value(i))));
            }
            assertEquals(100, CommandStats.calls(own) - before, "uncontended: 1 to enter, 1 to leave");

            before = CommandStats.calls(own);
            Holder holder = hold(a::within);
            TaskHandle<Integer> waiter = start(b.within(Task.value(1)));
            awaitCondition("the waiter queued", BOUND, () -> b.queueLength() == 1);
            holder.release();
            await(waiter);
            assertEquals(5, CommandStats.calls(own) - before,
                    "holder 1 + 1, waiter 2 (queued, then admitted on the notice) + 1; counted: "
                            + CommandStats.calls(own) + " " + before);
        }
    }

    @Test
    void badArgumentsAreRefusedByName(RedisServer redis) {
        var client = redis.client();
        assertEquals("name must be non-empty and without braces, got ''",
                assertThrows(IllegalArgumentException.class, () -> RedisSerialGate.builder(client, "")).getMessage());
        assertEquals("name must be non-empty and without braces, got 'a{b'",
                assertThrows(IllegalArgumentException.class, () -> RedisSerialGate.open(client, "a{b")).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class, () -> RedisSerialGate.builder(client, null)).getMessage());
        assertEquals("client", assertThrows(NullPointerException.class, () -> RedisSerialGate.builder(null, "g")).getMessage());
        var builder = RedisSerialGate.builder(client, "g");
        assertEquals("leaseTime must be at least 30 ms, got PT0.005S",
                assertThrows(IllegalArgumentException.class, () -> builder.leaseTime(Duration.ofMillis(5))).getMessage());
        assertEquals("recheckInterval must be positive, got PT0S",
                assertThrows(IllegalArgumentException.class, () -> builder.recheckInterval(Duration.ZERO)).getMessage());
        assertEquals("redisTimeout", assertThrows(NullPointerException.class, () -> builder.redisTimeout(null)).getMessage());
        assertEquals("timers", assertThrows(NullPointerException.class, () -> builder.timers(null)).getMessage());
        RedisSerialGate g = gate(redis, Duration.ofSeconds(2));
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.withinFenced(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.tryWithin(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.tryWithinFenced(null)).getMessage());
    }
}
