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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** {@link RedisKeyedSerialGate} against a real redis-server: two gate objects play two JVMs. */
class RedisKeyedSerialGateTest extends RedisGateTestBase {
    RedisKeyedSerialGateTest() {
        super("keyed-");
    }

    private RedisKeyedSerialGate<String> gate(RedisServer redis, Duration lease) {
        return opened(RedisKeyedSerialGate.<String>builder(redis.client(), name)
                .leaseTime(lease)
                .recheckInterval(Duration.ofMillis(100))
                .open());
    }

    private long queued(RedisServer redis, String key) {
        return redis.admin().zcard(key("queue:" + key));
    }

    /** The Redis keys of the gate's keys (not its counter): present only while a key is in use. */
    private List<String> perKeyState(RedisServer redis) {
        return redis.admin().keys(key("*:*"));
    }

    @Test
    void equalKeysRunOneAtATimeAcrossTwoClientsWithRisingTokens(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<String> a = gate(redis, Duration.ofSeconds(2));
        RedisKeyedSerialGate<String> b = gate(redis, Duration.ofSeconds(2));
        Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
        AtomicInteger most = new AtomicInteger();
        Map<String, List<Long>> tokens = new ConcurrentHashMap<>();
        List<Task<Void>> ops = new ArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int i = 0; i < 120; i++) {
                String key = "k" + (i % 4);
                ops.add((i % 2 == 0 ? a : b).withinFenced(key, token -> Task.fromRunnable(() -> {
                            most.accumulateAndGet(inside.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet(),
                                    Math::max);
                            tokens.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>())).add(token);
                        })
                        .then(Task.delay(Duration.ofMillis(1)))
                        .andFinally(() -> inside.get(key).decrementAndGet())));
            }
            Task.whenAll(ops).startOn(pool).toCompletableFuture().get(30, SECONDS);
        }
        assertEquals(1, most.get(), "never two operations of one key inside at once");
        assertEquals(4, tokens.size());
        tokens.forEach((key, list) -> {
            assertEquals(30, list.size());
            for (int i = 1; i < list.size(); i++) {
                assertTrue(list.get(i) > list.get(i - 1), "the tokens of " + key + " rise: " + list);
            }
        });
        awaitCondition("no per-key state left", BOUND, () -> perKeyState(redis).isEmpty());
    }

    @Test
    void differentKeysDoNotWaitForEachOther(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<String> a = gate(redis, Duration.ofSeconds(2));
        RedisKeyedSerialGate<String> b = gate(redis, Duration.ofSeconds(2));
        Holder holder = hold(work -> a.within("busy", work));

        assertEquals("other", await(start(b.within("other", Task.value("other")))), "another key runs at once");
        assertEquals("other", await(start(b.tryWithin("other", Task.value("other")))));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(b.tryWithin("busy", Task.value("busy")))),
                "the held key refuses a try");
        assertEquals(0, queued(redis, "busy"), "a refused try does not queue");

        holder.release();
        assertEquals("busy", await(start(b.tryWithin("busy", Task.value("busy")))));
    }

    @Test
    void waitersOfAKeyAreAdmittedInArrivalOrderAcrossClients(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<String> a = gate(redis, Duration.ofSeconds(2));
        RedisKeyedSerialGate<String> b = gate(redis, Duration.ofSeconds(2));
        Holder holder = hold(work -> a.within("k", work));
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<TaskHandle<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int index = i;
            waiters.add(start((i % 2 == 0 ? b : a).within("k", Task.fromRunnable(() -> order.add(index)))));
            long expected = i + 1;
            awaitCondition("waiter " + i + " queued", BOUND, () -> queued(redis, "k") == expected);
        }
        assertEquals(2, a.activeKeys() + b.activeKeys(), "one key in use in each gate object");

        holder.release();
        for (TaskHandle<Void> w : waiters) {
            await(w);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5), order);
    }

    @Test
    void aCancelledWaiterLeavesNothingInRedis(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<String> a = gate(redis, Duration.ofSeconds(2));
        RedisKeyedSerialGate<String> b = gate(redis, Duration.ofSeconds(2));
        Holder holder = hold(work -> a.within("k", work));
        AtomicBoolean ran = new AtomicBoolean();
        TaskHandle<Void> waiter = start(b.within("k", Task.fromRunnable(() -> ran.set(true))));
        awaitCondition("the waiter queued", BOUND, () -> queued(redis, "k") == 1);

        waiter.cancel();

        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        awaitCondition("its place removed: only the holder's lease is left", BOUND,
                () -> perKeyState(redis).equals(List.of("coro:gate:{" + name + "}:holders:k")));
        assertEquals(0, b.activeKeys());
        holder.release();
        awaitCondition("nothing of the key left", BOUND, () -> perKeyState(redis).isEmpty());
        assertFalse(ran.get());
    }

    @Test
    void manyKeysLeaveNoKeysWhenIdle(RedisServer redis) throws Exception {
        // a lease and a Redis timeout that a loaded machine keeps, and the default re-check (each re-check costs
        // a round trip per key with waiters): the test is about what is left, not about leases
        List<RedisKeyedSerialGate<String>> two = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            two.add(RedisKeyedSerialGate.<String>builder(redis.client(), name)
                    .leaseTime(Duration.ofSeconds(5)).redisTimeout(Duration.ofSeconds(30)).open());
        }
        two.forEach(this::opened);
        RedisKeyedSerialGate<String> a = two.get(0);
        RedisKeyedSerialGate<String> b = two.get(1);
        List<Task<Integer>> ops = new ArrayList<>();
        for (int i = 0; i < 1000; i++) { // 500 keys, each used by both gate objects
            String key = "key-" + (i / 2);
            ops.add((i % 2 == 0 ? a : b).within(key, Task.value(1)));
        }
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Task.whenAll(ops).startOn(pool).toCompletableFuture().get(30, SECONDS);
        }

        assertEquals(List.of(), perKeyState(redis), "no key's state outlives its last operation");
        assertEquals(0, a.activeKeys() + b.activeKeys(), "nor any local state");
        String fence = "coro:gate:{" + name + "}:fence";
        assertEquals(List.of(fence), redis.keysOf(name), "the gate's counter is all that is left");
        long ttl = redis.admin().pttl(fence);
        assertTrue(ttl > 0 && ttl <= 10_000, "and it expires within twice the lease: " + ttl + " ms");
    }

    @Test
    void aDeadHoldersKeyPassesAfterItsLeaseWithAHigherToken(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<String> dying = gate(redis, SHORT_LEASE);
        RedisKeyedSerialGate<String> survivor = gate(redis, SURVIVOR_LEASE);
        AtomicLong held = new AtomicLong();
        CountDownLatch holding = new CountDownLatch(1);
        start(dying.withinFenced("k", token -> {
            held.set(token);
            holding.countDown();
            return Task.never();
        }));
        assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
        TaskHandle<Long> next = start(survivor.withinFenced("k", Task::value));
        awaitCondition("the survivor queued", BOUND, () -> queued(redis, "k") == 1);

        dying.crash();

        long token = await(next);
        assertTrue(token > held.get(), "token " + token + " above the dead holder's " + held.get());
        awaitCondition("nothing of the key left", BOUND, () -> perKeyState(redis).isEmpty());
    }

    @Test
    void keysAreTheSameWhenTheirNamesAre(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<Integer> parity = RedisKeyedSerialGate.<Integer>builder(redis.client(), name)
                .keyName(i -> i % 2 == 0 ? "even" : "odd")
                .open();
        opened(parity);
        Holder holder = hold(work -> parity.within(2, work));

        assertEquals(List.of("coro:gate:{" + name + "}:holders:even"), perKeyState(redis));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(parity.tryWithin(4, Task.value(4)))), "4 is 'even' too");
        assertEquals(3, await(start(parity.tryWithin(3, Task.value(3)))));
        holder.release();
    }

    @Test
    void closeCancelsTheWaitersOfEveryKey(RedisServer redis) throws Exception {
        RedisKeyedSerialGate<String> a = gate(redis, Duration.ofSeconds(2));
        RedisKeyedSerialGate<String> b = gate(redis, Duration.ofSeconds(2));
        List<Holder> holders = new ArrayList<>();
        List<TaskHandle<Integer>> waiters = new ArrayList<>();
        for (String key : List.of("x", "y")) {
            holders.add(hold(work -> b.within(key, work)));
            waiters.add(start(a.within(key, Task.value(1))));
            awaitCondition("a waiter on " + key, BOUND, () -> queued(redis, key) == 1);
        }

        a.close();

        for (TaskHandle<Integer> w : waiters) {
            assertInstanceOf(Outcome.Cancelled.class, outcome(w));
        }
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.within("z", Task.value(1)))));
        assertTrue(a.isClosed());
        for (Holder h : holders) {
            h.release();
        }
        awaitCondition("nothing of the keys left", BOUND, () -> perKeyState(redis).isEmpty());
    }

    /** Round trips, counted by the server: one to enter a free key, one to leave; two after a wait. */
    @Test
    void roundTripsPerAdmissionAndRelease() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            RedisKeyedSerialGate<String> a = RedisKeyedSerialGate.<String>builder(own.client(), "trips")
                    .leaseTime(Duration.ofSeconds(60)).recheckInterval(Duration.ofSeconds(60)).open();
            RedisKeyedSerialGate<String> b = RedisKeyedSerialGate.<String>builder(own.client(), "trips")
                    .leaseTime(Duration.ofSeconds(60)).recheckInterval(Duration.ofSeconds(60)).open();
            opened(a);
            opened(b);
            await(start(a.within("warm", Task.value(0)))); // loads the scripts

            long before = CommandStats.calls(own);
            for (int i = 0; i < 50; i++) {
                await(start(a.within("key-" + i, Task.value(i))));
            }
            assertEquals(100, CommandStats.calls(own) - before, "a free key: 1 to enter, 1 to leave");

            before = CommandStats.calls(own);
            Holder holder = hold(work -> a.within("k", work));
            TaskHandle<Integer> waiter = start(b.within("k", Task.value(1)));
            awaitCondition("the waiter queued", BOUND, () -> b.queueLength() == 1);
            holder.release();
            await(waiter);
            assertEquals(5, CommandStats.calls(own) - before,
                    "holder 1 + 1, waiter 2 (queued, then admitted on the notice) + 1");
        }
    }

    @Test
    void badArgumentsAreRefusedByName(RedisServer redis) {
        var client = redis.client();
        assertEquals("name must be non-empty and without braces, got ''",
                assertThrows(IllegalArgumentException.class, () -> RedisKeyedSerialGate.builder(client, "")).getMessage());
        assertEquals("name must be non-empty and without braces, got 'a}'",
                assertThrows(IllegalArgumentException.class, () -> RedisKeyedSerialGate.open(client, "a}")).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class, () -> RedisKeyedSerialGate.builder(client, null)).getMessage());
        assertEquals("client", assertThrows(NullPointerException.class, () -> RedisKeyedSerialGate.builder(null, "g")).getMessage());
        var builder = RedisKeyedSerialGate.<Integer>builder(client, "g");
        assertEquals("keyName", assertThrows(NullPointerException.class, () -> builder.keyName(null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> builder.leaseTime(Duration.ofMillis(29)));
        assertThrows(IllegalArgumentException.class, () -> builder.redisTimeout(Duration.ZERO));

        RedisKeyedSerialGate<String> g = gate(redis, Duration.ofSeconds(2));
        assertEquals("key", assertThrows(NullPointerException.class, () -> g.within(null, Task.value(1))).getMessage());
        assertEquals("key", assertThrows(NullPointerException.class, () -> g.tryWithin(null, Task.value(1))).getMessage());
        assertEquals("key", assertThrows(NullPointerException.class, () -> g.withinFenced(null, Task::value)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.within("k", null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.tryWithinFenced("k", null)).getMessage());

        RedisKeyedSerialGate<Integer> unnamed = RedisKeyedSerialGate.<Integer>builder(client, name)
                .keyName(i -> null)
                .open();
        opened(unnamed);
        assertEquals("keyName returned null for key 5",
                assertThrows(NullPointerException.class, () -> unnamed.within(5, Task.value(1))).getMessage());
    }
}
