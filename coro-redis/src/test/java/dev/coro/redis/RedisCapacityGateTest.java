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
import dev.coro.task.Promise;
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

/** {@link RedisCapacityGate} against a real redis-server: two gate objects play two JVMs. */
class RedisCapacityGateTest extends RedisGateTestBase {
    RedisCapacityGateTest() {
        super("test-");
    }

    private RedisCapacityGate gate(RedisServer redis, int capacity) {
        return gate(redis, capacity, Duration.ofSeconds(2));
    }

    private RedisCapacityGate gate(RedisServer redis, int capacity, Duration lease) {
        return opened(RedisCapacityGate.builder(redis.client(), name, capacity)
                .leaseTime(lease)
                .recheckInterval(Duration.ofMillis(200))
                .redisTimeout(Duration.ofSeconds(5))
                .open());
    }

    private long holders(RedisServer redis) {
        return redis.admin().zcard(key("holders"));
    }

    @Test
    void capacityIsNeverExceededAcrossTwoClients(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 3);
        RedisCapacityGate b = gate(redis, 3);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Task<Void>> ops = new ArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int i = 0; i < 200; i++) {
                Task<Void> work = Task.fromRunnable(() -> most.accumulateAndGet(inside.incrementAndGet(), Math::max))
                        .then(Task.delay(Duration.ofMillis(2)))
                        .andFinally(inside::decrementAndGet);
                ops.add((i % 2 == 0 ? a : b).within(work));
            }
            Task.whenAll(ops).startOn(pool).toCompletableFuture().get(30, SECONDS);
        }
        assertEquals(3, most.get(), "at most 3 inside at once, and the 3 slots used");
        assertEquals(0, inside.get());
        assertEquals(0, holders(redis));
        assertEquals(0, queued(redis));
    }

    @Test
    void waitersAreAdmittedInQueueOrderAcrossClients(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 1);
        RedisCapacityGate b = gate(redis, 1);
        Holder holder = hold(a::within);
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        List<TaskHandle<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            int index = i;
            RedisCapacityGate client = i % 3 == 0 ? a : b;
            waiters.add(start(client.within(Task.fromRunnable(() -> order.add(index)))));
            long expected = i + 1;
            awaitCondition("waiter " + i + " queued", BOUND, () -> queued(redis) == expected);
        }
        holder.release();
        for (TaskHandle<Void> w : waiters) {
            await(w);
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), order);
    }

    @Test
    void aCancelledWaiterLeavesNoPlaceAndNoSlot(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 1);
        RedisCapacityGate b = gate(redis, 1);
        Holder holder = hold(a::within);
        AtomicBoolean ran = new AtomicBoolean();
        TaskHandle<Void> waiter = start(b.within(Task.fromRunnable(() -> ran.set(true))));
        awaitCondition("the waiter queued", BOUND, () -> queued(redis) == 1);

        waiter.cancel();

        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        awaitCondition("the cancelled waiter's place removed", BOUND,
                () -> queued(redis) == 0 && redis.admin().exists("coro:gate:{" + name + "}:waiters") == 0);
        holder.release();
        assertEquals(0, holders(redis));
        assertEquals("admitted", await(start(b.tryWithin(Task.value("admitted")))), "the slot is free");
        assertFalse(ran.get(), "the cancelled waiter's work never ran");
        assertEquals(0, b.queueLength());
    }

    @Test
    void waitersCancelledAtRandomTakeNothing(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 2);
        RedisCapacityGate b = gate(redis, 2);
        AtomicInteger ran = new AtomicInteger();
        List<TaskHandle<Void>> all = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            all.add(start((i % 2 == 0 ? a : b).within(Task.fromRunnable(ran::incrementAndGet)
                    .then(Task.delay(Duration.ofMillis(1))))));
        }
        for (int i = 0; i < all.size(); i += 2) {
            all.get(i).cancel(); // some while queued, some in flight, some admitted
        }
        for (int i = 0; i < all.size(); i++) {
            Outcome<Void> o = outcome(all.get(i));
            if (i % 2 == 1) {
                assertInstanceOf(Outcome.Value.class, o, "run " + i + " was not cancelled");
            } else {
                assertFalse(o instanceof Outcome.Failure, "run " + i + ": " + o);
            }
        }
        assertTrue(ran.get() >= 100, "every run not cancelled ran: " + ran.get());
        awaitCondition("nothing held or queued", BOUND, () -> holders(redis) == 0 && queued(redis) == 0);
        CountDownLatch both = new CountDownLatch(2);
        Promise<Void> release = new Promise<>();
        TaskHandle<Void> first = start(a.tryWithin(holding(both, release)));
        TaskHandle<Void> second = start(b.tryWithin(holding(both, release)));
        assertTrue(both.await(BOUND.toSeconds(), SECONDS), "both slots are free");
        release.complete(null);
        await(first);
        await(second);
    }

    @Test
    void aDeadHoldersSlotsReturnAfterTheLeaseWithHigherFencingTokens(RedisServer redis) throws Exception {
        RedisCapacityGate dying = gate(redis, 2, SHORT_LEASE);
        RedisCapacityGate survivor = gate(redis, 2, SURVIVOR_LEASE);
        AtomicLong highest = new AtomicLong();
        CountDownLatch holding = new CountDownLatch(2);
        for (int i = 0; i < 2; i++) {
            start(dying.withinFenced(token -> {
                highest.accumulateAndGet(token, Math::max);
                holding.countDown();
                return Task.never();
            }));
        }
        assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
        assertEquals("refused", await(start(survivor.tryWithin(Task.value("admitted"))
                .transform(o -> Task.value(o instanceof Outcome.Cancelled ? "refused" : "admitted")))));

        dying.crash(); // no release, no renewal: its leases run out on Redis's clock

        List<TaskHandle<Long>> next = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            next.add(start(survivor.withinFenced(Task::value)));
        }
        for (TaskHandle<Long> h : next) {
            long token = await(h);
            assertTrue(token > highest.get(), "token " + token + " above the dead holder's " + highest.get());
        }
    }

    @Test
    void aDeadWaiterAtTheHeadIsSkippedAfterItsLease(RedisServer redis) throws Exception {
        RedisCapacityGate dying = gate(redis, 1, SHORT_LEASE);
        RedisCapacityGate survivor = gate(redis, 1, SURVIVOR_LEASE);
        Holder holder = hold(survivor::within);
        AtomicBoolean deadRan = new AtomicBoolean();
        start(dying.within(Task.fromRunnable(() -> deadRan.set(true))));
        awaitCondition("the doomed waiter queued", BOUND, () -> queued(redis) == 1);
        TaskHandle<String> next = start(survivor.within(Task.value("next")));
        awaitCondition("the survivor's waiter queued behind it", BOUND, () -> queued(redis) == 2);

        dying.crash(); // its place stays at the head of the queue until its lease runs out
        holder.release();

        assertEquals("next", await(next));
        assertFalse(deadRan.get());
        assertEquals(0, queued(redis));
    }

    @Test
    void anOutageFailsAQueuedWaitAtItsNextRenewal() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            RedisCapacityGate g = RedisCapacityGate.builder(own.client(), "outage-queued", 1)
                    .leaseTime(SHORT_LEASE)
                    .redisTimeout(Duration.ofMillis(300))
                    .open();
            opened(g);
            CountDownLatch holding = new CountDownLatch(1);
            TaskHandle<Void> holder = start(g.within(Task.fromRunnable(holding::countDown).then(Task.never())));
            assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
            TaskHandle<Integer> waiter = start(g.within(Task.value(2)));
            awaitCondition("the waiter queued", BOUND, () -> g.queueLength() == 1);

            own.kill();

            RedisGateException e = assertInstanceOf(RedisGateException.class,
                    assertInstanceOf(Outcome.Failure.class, outcome(waiter)).error());
            assertTrue(e.getMessage().startsWith("gate 'outage-queued': wait: Redis did not answer within"),
                    e.getMessage());
            assertInstanceOf(Outcome.Cancelled.class, outcome(holder), "no renewal for a lease: work cancelled");
        }
    }

    @Test
    void aLostLeaseCancelsTheAdmittedWork(RedisServer redis) throws Exception {
        RedisCapacityGate g = gate(redis, 1, SHORT_LEASE);
        CountDownLatch holding = new CountDownLatch(1);
        TaskHandle<Void> holder = start(g.within(Task.fromRunnable(holding::countDown).then(Task.never())));
        assertTrue(holding.await(BOUND.toSeconds(), SECONDS));

        redis.admin().del("coro:gate:{" + name + "}:holders"); // the lease is gone, as after an expiry

        assertInstanceOf(Outcome.Cancelled.class, outcome(holder), "the next renewal cancels the work");
        assertEquals("admitted", await(start(g.tryWithin(Task.value("admitted")))));
    }

    @Test
    void aLostNoticeCostsAtMostOneRecheck(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 1);
        RedisCapacityGate b = gate(redis, 1);
        CountDownLatch holding = new CountDownLatch(1);
        TaskHandle<Void> holder = start(a.within(Task.fromRunnable(holding::countDown).then(Task.never())));
        assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
        TaskHandle<String> waiter = start(b.within(Task.value("admitted")));
        awaitCondition("the waiter queued", BOUND, () -> queued(redis) == 1);

        redis.admin().del("coro:gate:{" + name + "}:holders"); // a slot freed with no message published

        assertEquals("admitted", await(waiter), "the re-check finds the free slot");
        assertInstanceOf(Outcome.Cancelled.class, outcome(holder), "and the holder learns its lease is gone");
    }

    @Test
    void tryWithinRefusesWhenFullWithoutQueueing(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 1);
        RedisCapacityGate b = gate(redis, 1);
        Holder holder = hold(a::within);
        AtomicBoolean ran = new AtomicBoolean();

        assertInstanceOf(Outcome.Cancelled.class, outcome(start(b.tryWithin(Task.fromRunnable(() -> ran.set(true))))));

        assertFalse(ran.get());
        assertEquals(0, queued(redis));
        holder.release();
        assertEquals(7, await(start(b.tryWithin(Task.value(7)))));
    }

    @Test
    void closeCancelsWaitersAndLaterCallsButLetsAdmittedWorkFinish(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 1);
        RedisCapacityGate b = gate(redis, 1);
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        a.addListener((outcome, waited) -> heard.add(outcome.toString()));
        Holder holder = hold(a::within);
        AtomicBoolean ran = new AtomicBoolean();
        TaskHandle<Void> waiter = start(a.within(Task.fromRunnable(() -> ran.set(true))));
        awaitCondition("the waiter queued", BOUND, () -> queued(redis) == 1);

        a.close();

        assertTrue(a.isClosed());
        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.within(Task.fromRunnable(() -> ran.set(true))))));
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(a.tryWithin(Task.fromRunnable(() -> ran.set(true))))));
        assertFalse(ran.get());
        assertEquals(List.of("ADMITTED", "CANCELLED"), heard, "the waiter close ended is reported cancelled");
        assertFalse(holder.handle.isDone(), "admitted work runs on");
        holder.release();
        assertEquals("b", await(start(b.within(Task.value("b")))), "the closed gate's slot came back");
        assertEquals(0, queued(redis));
        a.close(); // idempotent
    }

    @Test
    void anIdleGateLeavesNoKeysAndItsTokensStillRise(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 2, SHORT_LEASE);
        RedisCapacityGate b = gate(redis, 2, SHORT_LEASE);
        List<Task<Integer>> ops = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ops.add((i % 2 == 0 ? a : b).within(Task.delay(Duration.ofMillis(1)).then(Task.value(1))));
        }
        Task.whenAll(ops).toCompletableFuture().get(BOUND.toSeconds(), SECONDS);
        long before = await(start(a.withinFenced(Task::value)));

        awaitCondition("no key of the gate left", BOUND, () -> redis.keysOf(name).isEmpty());

        long after = await(start(b.withinFenced(Task::value)));
        assertTrue(after > before, "the fencing token rises past an expired counter: " + before + ", then " + after);
    }

    @Test
    void aThousandWaitersTakeNoThreads(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 4);
        RedisCapacityGate b = gate(redis, 4);
        CountDownLatch holding = new CountDownLatch(4);
        Promise<Void> release = new Promise<>();
        List<TaskHandle<Void>> holders = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            holders.add(start(a.within(holding(holding, release))));
        }
        assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
        int threadsBefore = Thread.getAllStackTraces().size();
        AtomicInteger done = new AtomicInteger();
        List<TaskHandle<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            waiters.add(start((i % 2 == 0 ? a : b).within(Task.fromRunnable(done::incrementAndGet))));
        }
        awaitCondition("1000 waiters queued", BOUND, () -> a.queueLength() + b.queueLength() == 1000);
        int threadsWaiting = Thread.getAllStackTraces().size();

        assertTrue(threadsWaiting - threadsBefore < 10,
                "threads before " + threadsBefore + ", with 1000 waiters " + threadsWaiting);
        assertEquals(1000, queued(redis));
        release.complete(null);
        for (TaskHandle<Void> h : holders) {
            await(h);
        }
        for (TaskHandle<Void> h : waiters) {
            await(h);
        }
        assertEquals(1000, done.get());
    }

    @Test
    void fencingTokensRiseWithEveryAdmissionAcrossClients(RedisServer redis) throws Exception {
        RedisCapacityGate a = gate(redis, 2);
        RedisCapacityGate b = gate(redis, 2);
        long last = 0;
        for (int i = 0; i < 10; i++) {
            long token = await(start((i % 2 == 0 ? a : b).withinFenced(Task::value)));
            assertTrue(token > last, "token " + token + " after " + last);
            last = token;
        }
    }

    @Test
    void anOutageFailsTheWaitWithAClearException() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            RedisCapacityGate g = RedisCapacityGate.builder(own.client(), "outage", 1)
                    .redisTimeout(Duration.ofMillis(300))
                    .open();
            opened(g);
            assertEquals(1, await(start(g.within(Task.value(1)))));

            own.kill();

            Outcome<Integer> o = outcome(start(g.within(Task.value(2))));
            RedisGateException e = assertInstanceOf(RedisGateException.class,
                    assertInstanceOf(Outcome.Failure.class, o).error());
            assertTrue(e.getMessage().contains("gate 'outage'") && e.getMessage().contains("did not answer within"),
                    e.getMessage());
        }
    }

    @Test
    void listenersHearAdmissionsAndCancelledWaitsAsAtTheLocalGates(RedisServer redis) throws Exception {
        RedisCapacityGate g = gate(redis, 1);
        List<String> heard = Collections.synchronizedList(new ArrayList<>());
        g.addListener((outcome, waited) -> heard.add(outcome + (waited > 0 ? " after a wait" : " at once")));
        Holder holder = hold(g::within);
        TaskHandle<Void> cancelled = start(g.within(Task.value(null)));
        TaskHandle<String> admitted = start(g.within(Task.value("late")));
        awaitCondition("two waiters queued", BOUND, () -> g.queueLength() == 2);
        assertInstanceOf(Outcome.Cancelled.class, outcome(start(g.tryWithin(Task.value(0)))));

        cancelled.cancel();
        assertInstanceOf(Outcome.Cancelled.class, outcome(cancelled));
        holder.release();
        assertEquals("late", await(admitted));

        assertEquals(List.of("ADMITTED at once", "CANCELLED after a wait", "ADMITTED after a wait"), heard);
        assertEquals("listener", assertThrows(NullPointerException.class, () -> g.addListener(null)).getMessage());
    }

    @Test
    void afterARestartThatLostTheStateHoldersAreCancelledWaitersFailAndNewCallsWork() throws Exception {
        try (RedisServer own = RedisServer.start()) {
            RedisCapacityGate g = RedisCapacityGate.builder(own.client(), "restart", 1)
                    .leaseTime(SHORT_LEASE)
                    .recheckInterval(Duration.ofMillis(100))
                    .redisTimeout(Duration.ofSeconds(2))
                    .open();
            opened(g);
            CountDownLatch holding = new CountDownLatch(1);
            TaskHandle<Long> holder = start(g.withinFenced(token ->
                    Task.fromRunnable(holding::countDown).then(Task.<Long>never())));
            assertTrue(holding.await(BOUND.toSeconds(), SECONDS));
            TaskHandle<Integer> waiter = start(g.within(Task.value(2)));
            awaitCondition("the waiter queued", BOUND, () -> g.queueLength() == 1);

            own.restart(); // an empty Redis: no holder, no queue

            assertInstanceOf(Outcome.Cancelled.class, outcome(holder), "its lease is gone: work cancelled");
            RedisGateException e = assertInstanceOf(RedisGateException.class,
                    assertInstanceOf(Outcome.Failure.class, outcome(waiter)).error(), "its place is gone: it fails");
            assertTrue(e.getMessage().startsWith("gate 'restart': wait: "), e.getMessage());
            assertEquals(3, await(start(g.within(Task.value(3)))), "the gate works on the new server");
            awaitCondition("nothing held after the run", BOUND,
                    () -> own.admin().zcard("coro:gate:{restart}:holders") == 0);
        }
    }

    @Test
    void badArgumentsAreRefusedByName(RedisServer redis) {
        var client = redis.client();
        assertEquals("capacity must be positive, got 0",
                assertThrows(IllegalArgumentException.class, () -> RedisCapacityGate.builder(client, "g", 0)).getMessage());
        assertEquals("name must be non-empty and without braces, got 'a{b}'",
                assertThrows(IllegalArgumentException.class, () -> RedisCapacityGate.builder(client, "a{b}", 1)).getMessage());
        assertEquals("name", assertThrows(NullPointerException.class, () -> RedisCapacityGate.builder(client, null, 1)).getMessage());
        assertEquals("client", assertThrows(NullPointerException.class, () -> RedisCapacityGate.builder(null, "g", 1)).getMessage());
        var builder = RedisCapacityGate.builder(client, "g", 1);
        assertThrows(IllegalArgumentException.class, () -> builder.leaseTime(Duration.ofMillis(5)));
        assertThrows(IllegalArgumentException.class, () -> builder.recheckInterval(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> builder.redisTimeout(Duration.ofMillis(-1)));
        RedisCapacityGate g = gate(redis, 1);
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.within(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.withinFenced(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> g.tryWithin(null)).getMessage());
    }
}
