package dev.coro.redis;

import static dev.coro.redis.RedisServer.awaitCondition;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link RedisRateGate} against a real redis-server: two gate objects play two JVMs. Facts are
 * checked on the slots Redis gave (server time) and on the bucket's state, never on how fast the
 * machine ran; the slow tests use an interval of 10 s that no test waits out.
 */
class RedisRateGateTest extends RedisGateTestBase {
    /** A bucket that refills one token per 10 s: nothing a test waits for. */
    private static final Duration SLOW = Duration.ofSeconds(10);
    private static final long SLOW_MICROS = SLOW.toNanos() / 1000;

    RedisRateGateTest() {
        super("rate-");
    }

    private RedisRateGate gate(RedisRateGate.Builder builder) {
        return opened(builder.open());
    }

    /** A gate of one token per 10 s with {@code burst}. */
    private RedisRateGate slow(RedisServer redis, int burst) {
        return gate(RedisRateGate.builder(redis.client(), name, 1, SLOW).burst(burst));
    }

    private String key() {
        return key("rate");
    }

    /** The bucket's theoretical arrival time, microseconds of server time; 0 if the key is absent. */
    private long tat(RedisServer redis) {
        String t = redis.admin().hget(key(), "tat");
        return t == null ? 0 : Long.parseLong(t);
    }

    /** The scripts the server has run (EVALSHA and EVAL calls, from INFO commandstats): the gates' round trips. */
    private static long scriptCalls(RedisServer redis) {
        long calls = 0;
        for (String line : redis.admin().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                int at = line.indexOf("calls=") + "calls=".length();
                calls += Long.parseLong(line.substring(at, line.indexOf(',', at)));
            }
        }
        return calls;
    }

    /** Server time in microseconds, from a TIME reply. */
    static long micros(List<String> time) {
        return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }

    /**
     * Checks every window of the slots against the bucket: any {@code k} admissions beyond the
     * burst span at least {@code k - burst} intervals, i.e. at most {@code burst + T / interval} in
     * any span {@code T}.
     */
    static void assertWithinBucket(List<Long> slots, long intervalMicros, int burst) {
        List<Long> sorted = new ArrayList<>(slots);
        Collections.sort(sorted);
        for (int i = 0; i < sorted.size(); i++) {
            for (int j = i + burst; j < sorted.size(); j++) {
                long span = sorted.get(j) - sorted.get(i);
                long least = (long) (j - i + 1 - burst) * intervalMicros;
                assertTrue(span >= least, (j - i + 1) + " admissions in " + span + " us, the bucket allows them no"
                        + " sooner than " + least + " us (slots " + i + ".." + j + ")");
            }
        }
    }

    @Test
    void theRateIsNeverAboveTheBucketAcrossTwoClientsAndNoWorkStartsBeforeItsSlot(RedisServer redis) throws Exception {
        int burst = 4;
        RedisRateGate a = gate(RedisRateGate.builder(redis.client(), name, 200).burst(burst));
        RedisRateGate b = gate(RedisRateGate.builder(redis.client(), name, 200).burst(burst));
        RedisAsyncCommands<String, String> clock = redis.client().connect().async();
        List<Long> slots = Collections.synchronizedList(new ArrayList<>());
        List<String> early = Collections.synchronizedList(new ArrayList<>());
        List<Task<Void>> ops = new ArrayList<>();
        long scriptsBefore = scriptCalls(redis);
        for (int i = 0; i < 80; i++) {
            ops.add((i % 2 == 0 ? a : b).withinSlot(slot -> Task.fromCompletionStage(clock::time).map(time -> {
                slots.add(slot);
                if (micros(time) < slot) {
                    early.add("started at " + micros(time) + " before its slot " + slot);
                }
                return null;
            })));
        }
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Task.whenAll(ops).startOn(pool).toCompletableFuture().get(30, SECONDS);
        } finally {
            clock.getStatefulConnection().close();
        }
        assertEquals(80, slots.size());
        assertEquals(80, scriptCalls(redis) - scriptsBefore, "one round trip per admission, waited or not");
        assertWithinBucket(slots, 5_000, burst);
        assertEquals(List.of(), early, "no work starts before its slot on the server's clock");
        assertEquals(0, a.queueLength() + b.queueLength());
    }

    @Test
    void aBurstIsAdmittedAtOnceAndNoMore(RedisServer redis) throws Exception {
        RedisRateGate a = slow(redis, 5);
        RedisRateGate b = slow(redis, 5);
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        a.addListener((outcome, waited) -> heard.add(outcome + (waited > 0 ? " after a wait" : " at once")));
        for (int i = 0; i < 5; i++) {
            RedisRateGate g = i % 2 == 0 ? a : b;
            assertEquals(i, await(start(g.within(Task.value(i)))), "request " + i + " of the burst");
        }
        AtomicBoolean ran = new AtomicBoolean();

        assertInstanceOf(Outcome.Cancelled.class, outcome(start(b.tryWithin(Task.fromRunnable(() -> ran.set(true))))),
                "the sixth finds no token");

        assertFalse(ran.get());
        assertEquals(List.of("ADMITTED at once", "ADMITTED at once", "ADMITTED at once"), heard);
    }

    @Test
    void aCancelledWaiterWhoseReservationIsTheLatestGivesItBack(RedisServer redis) throws Exception {
        RedisRateGate a = slow(redis, 1);
        RedisRateGate b = slow(redis, 1);
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        b.addListener((outcome, waited) -> heard.add(outcome.toString()));
        assertEquals(1, await(start(a.tryWithin(Task.value(1)))), "the one token");
        long spent = tat(redis);
        AtomicBoolean ran = new AtomicBoolean();
        TaskHandle<Void> waiter = start(b.within(Task.fromRunnable(() -> ran.set(true))));
        awaitCondition("the waiter reserved", BOUND, () -> b.queueLength() == 1);
        long reserved = tat(redis);
        assertEquals(spent + SLOW_MICROS, reserved, "its reservation took the next token");

        waiter.cancel();

        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        awaitCondition("the reservation given back", BOUND, () -> tat(redis) == spent);
        assertFalse(ran.get());
        assertEquals(0, b.queueLength());
        assertEquals(List.of("CANCELLED"), heard);
        start(a.within(Task.value(2)));
        awaitCondition("the next waiter reserved", BOUND, () -> a.queueLength() == 1);
        assertEquals(reserved, tat(redis), "the next waiter has the slot the cancelled one gave back");
    }

    @Test
    void aCancelledWaiterWithReservationsBehindItLeavesItsTokenSpent(RedisServer redis) throws Exception {
        RedisRateGate a = slow(redis, 1);
        RedisRateGate b = slow(redis, 1);
        assertEquals(1, await(start(a.tryWithin(Task.value(1)))));
        long spent = tat(redis);
        TaskHandle<Integer> first = start(a.within(Task.value(2)));
        awaitCondition("the first waiter reserved", BOUND, () -> a.queueLength() == 1);
        TaskHandle<Integer> second = start(b.within(Task.value(3)));
        awaitCondition("the second waiter reserved", BOUND, () -> b.queueLength() == 1);
        assertEquals(spent + 2 * SLOW_MICROS, tat(redis));

        first.cancel();

        assertInstanceOf(Outcome.Cancelled.class, outcome(first));
        // a try on the same connection runs after the first waiter's give-back (and is refused)
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.tryWithin(Task.value(4)))));
        assertEquals(spent + 2 * SLOW_MICROS, tat(redis), "the second keeps its slot: the first's token stays spent");

        second.cancel();

        assertInstanceOf(Outcome.Cancelled.class, outcome(second));
        awaitCondition("the latest reservation given back", BOUND, () -> tat(redis) == spent + SLOW_MICROS);
    }

    @Test
    void tryWithinAdmitsOnlyWithATokenNowAndReservesNothing(RedisServer redis) throws Exception {
        RedisRateGate a = slow(redis, 1);
        RedisRateGate b = slow(redis, 1);
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        b.addListener((outcome, waited) -> heard.add(outcome.toString()));
        assertEquals("first", await(start(a.tryWithin(Task.value("first")))));
        long spent = tat(redis);
        AtomicBoolean ran = new AtomicBoolean();

        assertInstanceOf(Outcome.Cancelled.class, outcome(start(b.tryWithin(Task.fromRunnable(() -> ran.set(true))))));

        assertFalse(ran.get());
        assertEquals(spent, tat(redis), "a refused try changes nothing");
        assertEquals(0, b.queueLength());
        assertEquals(List.of(), heard, "a refused try is not a wait");
    }

    @Test
    void closeCancelsWaitersAndLaterCallsAndGivesTheReservationBack(RedisServer redis) throws Exception {
        RedisRateGate a = slow(redis, 1);
        RedisRateGate b = slow(redis, 1);
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        a.addListener((outcome, waited) -> heard.add(outcome.toString()));
        assertEquals(1, await(start(a.tryWithin(Task.value(1)))));
        long spent = tat(redis);
        AtomicBoolean ran = new AtomicBoolean();
        TaskHandle<Void> waiter = start(a.within(Task.fromRunnable(() -> ran.set(true))));
        awaitCondition("the waiter reserved", BOUND, () -> a.queueLength() == 1);

        a.close();

        assertTrue(a.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.within(Task.fromRunnable(() -> ran.set(true))))));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.tryWithin(Task.fromRunnable(() -> ran.set(true))))));
        assertFalse(ran.get());
        assertEquals(List.of("ADMITTED", "CANCELLED"), heard, "the waiter close ended is reported cancelled");
        assertEquals(0, a.queueLength());
        awaitCondition("the closed gate's reservation given back", BOUND, () -> tat(redis) == spent);
        start(b.within(Task.value(2)));
        awaitCondition("the other gate object reserves as before", BOUND, () -> b.queueLength() == 1);
        assertEquals(spent + SLOW_MICROS, tat(redis));
        a.close(); // idempotent
    }

    @Test
    void anOutageFailsARequestAfterTheTimeoutButNotAWaiterThatHoldsItsReservation() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            // 2 s: long enough that the round trips before the outage make it on a loaded machine
            RedisRateGate g = gate(RedisRateGate.builder(own.client(), "outage", 2).redisTimeout(Duration.ofSeconds(2)));
            List<String> heard = Collections.synchronizedList(new ArrayList<>());
            g.addListener((outcome, waited) -> heard.add(outcome.toString()));
            assertEquals(1, await(start(g.tryWithin(Task.value(1)))));
            TaskHandle<Integer> reserved = start(g.within(Task.value(2)));
            awaitCondition("the waiter reserved", BOUND, () -> g.queueLength() == 1);

            own.kill();

            RedisGateException e = assertInstanceOf(RedisGateException.class,
                    assertInstanceOf(Outcome.Failure.class, outcome(start(g.within(Task.value(3))))).error());
            assertEquals("gate 'outage': acquire: Redis did not answer within PT2S", e.getMessage());
            assertEquals(2, await(reserved), "a reservation needs Redis no more");
            assertEquals(List.of("ADMITTED", "ADMITTED", "TIMED_OUT"), heard.stream().sorted().toList(),
                    "the try and the reservation admitted, the request in the outage timed out");
        }
    }

    @Test
    void anIdleGateLeavesNoKeys(RedisServer redis) throws Exception {
        RedisRateGate a = gate(RedisRateGate.builder(redis.client(), name, 100).burst(3));
        RedisRateGate b = gate(RedisRateGate.builder(redis.client(), name, 100).burst(3));
        List<Task<Integer>> ops = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ops.add((i % 2 == 0 ? a : b).within(Task.value(i)));
        }
        Task.whenAll(ops).toCompletableFuture().get(BOUND.toSeconds(), SECONDS);
        long ttl = redis.admin().pttl(key());
        // right after an admission the bucket refills within burst intervals (30 ms): so does the key's expiry
        assertTrue(ttl == -2 || (ttl > 0 && ttl <= 31), "the bucket's key expires when it is full again: " + ttl);

        awaitCondition("no key of the gate left", BOUND, () -> redis.keysOf(name).isEmpty());

        assertEquals(0, await(start(a.within(Task.value(0)))), "a full bucket again");
    }

    @Test
    void twoHundredWaitersTakeNoThreadsAndCancelledOnlyTheLatestGivesItsReservationBack(RedisServer redis)
            throws Exception {
        RedisRateGate g = slow(redis, 1);
        assertEquals(0, await(start(g.tryWithin(Task.value(0)))));
        long spent = tat(redis);
        int threadsBefore = Thread.getAllStackTraces().size();
        AtomicBoolean ran = new AtomicBoolean();
        List<TaskHandle<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            waiters.add(start(g.within(Task.fromRunnable(() -> ran.set(true))))); // sent in this order
        }
        awaitCondition("200 waiters reserved", BOUND, () -> g.queueLength() == 200);
        int threadsWaiting = Thread.getAllStackTraces().size();
        assertTrue(threadsWaiting - threadsBefore < 10, "threads before " + threadsBefore + ", with 200 waiters "
                + threadsWaiting);
        assertEquals(spent + 200 * SLOW_MICROS, tat(redis));

        for (TaskHandle<Void> w : waiters.reversed()) {
            w.cancel(); // the latest first: only its give-back finds it the latest
        }

        for (TaskHandle<Void> w : waiters) {
            assertInstanceOf(Outcome.Cancelled.class, outcome(w));
        }
        awaitCondition("the latest reservation given back", BOUND, () -> tat(redis) == spent + 199 * SLOW_MICROS);
        assertEquals("answered", await(start(g.tryWithin(Task.value(0)).transform(o -> Task.value("answered")))),
                "every give-back ran: this try follows them on the connection");
        assertEquals(spent + 199 * SLOW_MICROS, tat(redis), "the other 199 tokens stay spent: the rate errs low");
        assertEquals(0, g.queueLength());
        assertFalse(ran.get());
    }

    @Test
    void badArgumentsAreRefusedByName(RedisServer redis) {
        var client = redis.client();
        assertEquals("permitsPerSecond must be positive and at most 1e6 (one per microsecond, the resolution of Redis"
                + " TIME), got 0.0", assertThrows(IllegalArgumentException.class,
                        () -> RedisRateGate.builder(client, "g", 0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> RedisRateGate.builder(client, "g", 2e6));
        assertThrows(IllegalArgumentException.class, () -> RedisRateGate.builder(client, "g", Double.NaN));
        assertEquals("permits must be positive, got 0", assertThrows(IllegalArgumentException.class,
                () -> RedisRateGate.builder(client, "g", 0, Duration.ofSeconds(1))).getMessage());
        assertEquals("period must be positive, got PT0S", assertThrows(IllegalArgumentException.class,
                () -> RedisRateGate.builder(client, "g", 1, Duration.ZERO)).getMessage());
        assertEquals("permits per period must be at most one per microsecond, got 10 per PT0.000001S",
                assertThrows(IllegalArgumentException.class,
                        () -> RedisRateGate.builder(client, "g", 10, Duration.ofNanos(1000))).getMessage());
        assertEquals("name must be non-empty and without braces, got 'a{b}'", assertThrows(IllegalArgumentException.class,
                () -> RedisRateGate.builder(client, "a{b}", 10)).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class, () -> RedisRateGate.builder(client, null, 10)).getMessage());
        assertEquals("client", assertThrows(NullPointerException.class, () -> RedisRateGate.builder(null, "g", 10)).getMessage());
        assertEquals("period", assertThrows(NullPointerException.class, () -> RedisRateGate.builder(client, "g", 1, null)).getMessage());
        assertEquals("period / permits must be at most 2^40 microseconds, got 1 per PT2562047788015215H30M7.999999999S",
                assertThrows(IllegalArgumentException.class, () -> RedisRateGate.builder(client, "g", 1,
                        Duration.ofSeconds(Long.MAX_VALUE, 999_999_999))).getMessage());
        assertEquals(Duration.ofNanos(333_334_000), gate(RedisRateGate.builder(client, "g", 3, Duration.ofSeconds(1)))
                .interval(), "the interval is rounded up to the microsecond: the rate is never above the one asked for");
        var builder = RedisRateGate.builder(client, "g", 10);
        assertEquals("burst must be at least 1, got 0", assertThrows(IllegalArgumentException.class,
                () -> builder.burst(0)).getMessage());
        assertEquals("burst times the interval must be at most 2^40 microseconds, got 2000000000 x 100000 us",
                assertThrows(IllegalArgumentException.class, () -> builder.burst(2_000_000_000)).getMessage());
        assertEquals("redisTimeout must be positive, got PT-0.001S", assertThrows(IllegalArgumentException.class,
                () -> builder.redisTimeout(Duration.ofMillis(-1))).getMessage());
        assertEquals("timers", assertThrows(NullPointerException.class, () -> builder.timers(null)).getMessage());
        RedisRateGate g = gate(builder);
        assertEquals(Duration.ofMillis(100), g.interval());
        assertEquals(1, g.burst());
        assertNotNull(g.toString());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.withinSlot(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.tryWithin(null)).getMessage());
        assertEquals("listener", assertThrows(NullPointerException.class, () -> g.addListener(null)).getMessage());
    }
}
