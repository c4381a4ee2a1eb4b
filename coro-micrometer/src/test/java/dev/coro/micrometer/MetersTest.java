package dev.coro.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.gate.Admission;
import dev.coro.gate.RateGate;
import dev.coro.gate.SerialGate;
import dev.coro.io.EventLoop;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

/** The binders against a real {@link SimpleMeterRegistry} and known activity. */
class MetersTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void poolMetersShowABusyPoolAndRejections() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(2);
        new PoolMetrics(pool, "api").bindTo(registry);
        CountDownLatch started = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < 2; i++) {
            pool.execute(() -> {
                started.countDown();
                await(release);
            });
        }
        started.await();
        CountDownLatch ran = new CountDownLatch(10);
        for (int i = 0; i < 10; i++) {
            pool.execute(ran::countDown);
        }
        assertEquals(2, registry.get("coro.pool.workers").tag("pool", "api").gauge().value());
        assertEquals(2, registry.get("coro.pool.running").tag("pool", "api").gauge().value());
        assertEquals(10, registry.get("coro.pool.queued").tag("pool", "api").gauge().value());
        release.countDown();
        ran.await();
        pool.close();
        assertThrows(RejectedExecutionException.class, () -> pool.execute(() -> {}));
        assertEquals(1, registry.get("coro.pool.rejected").functionCounter().count());
        assertTrue(registry.get("coro.pool.parks").functionCounter().count() >= 0);
    }

    @Test
    void waitMetersCountAdmissionsCancellationsAndTimeouts() {
        SerialGate gate = new SerialGate();
        new WaitMetrics(gate, "ledger").bindTo(registry);
        Admission held = gate.acquire().join();
        CompletableFuture<Admission> waiter = gate.acquire().toCompletableFuture();
        CompletableFuture<Admission> cancelled = gate.acquire().toCompletableFuture();
        assertEquals(2, registry.get("coro.wait.waiting").tags("primitive", "ledger", "type", "SerialGate").gauge().value());
        cancelled.cancel(false);
        held.exit();
        waiter.join().exit();
        Timer waited = registry.get("coro.wait.duration").tag("primitive", "ledger").timer();
        assertEquals(2, waited.count(), "two admissions");
        assertEquals(1, registry.get("coro.wait.cancelled").tag("primitive", "ledger").counter().count());
        assertEquals(0, registry.get("coro.wait.waiting").tag("primitive", "ledger").gauge().value());

        RateGate rate = new RateGate(1, 1); // one a second, on the system clock
        new WaitMetrics(rate, "api", Tags.of("region", "eu")).bindTo(registry);
        rate.within(Task.value(null)).join();
        CompletableFuture<Object> late = rate.within(Duration.ofMillis(1), Task.value((Object) null)).toCompletableFuture();
        assertTrue(late.isCompletedExceptionally(), "its turn comes in a second, after its deadline");
        assertEquals(1, registry.get("coro.wait.timed.out").tags("primitive", "api", "region", "eu").counter().count());
    }

    @Test
    void loopMetersShowPendingTimersAndProbeTheLag() {
        try (EventLoop loop = EventLoop.start("metered")) {
            try (EventLoopMetrics quiet = new EventLoopMetrics(loop, "metered", Duration.ofHours(1), Tags.empty())) {
                quiet.bindTo(registry);
                for (int i = 0; i < 3; i++) {
                    loop.schedule(() -> {}, Duration.ofHours(1));
                }
                io.micrometer.core.instrument.Gauge pending = registry.get("coro.loop.timers.pending").gauge();
                // read on the loop, where the count is exact (from another thread it is the last one published)
                assertEquals(4.0, CompletableFuture.supplyAsync(pending::value, loop).join(), "three timers and the probe");
                assertEquals(0.0, registry.get("coro.loop.io.pending").gauge().value(), "no I/O waits");
            }
            SimpleMeterRegistry second = new SimpleMeterRegistry();
            try (EventLoopMetrics probing = new EventLoopMetrics(loop, "metered", Duration.ofMillis(5), Tags.empty())) {
                probing.bindTo(second);
                Timer lag = second.get("coro.loop.lag").timer();
                while (lag.count() < 2) {
                    Thread.onSpinWait(); // the probe runs every 5 ms
                }
                assertTrue(lag.totalTime(java.util.concurrent.TimeUnit.NANOSECONDS) >= 0);
            }
        }
    }

    @Test
    void badInput() {
        WorkStealingPool pool = WorkStealingPool.create(1);
        try (EventLoop loop = EventLoop.start()) {
            assertThrows(NullPointerException.class, () -> new PoolMetrics(null, "p"));
            assertThrows(NullPointerException.class, () -> new PoolMetrics(pool, null));
            assertThrows(NullPointerException.class, () -> new WaitMetrics(null, "g"));
            assertThrows(NullPointerException.class, () -> new WaitMetrics(new SerialGate(), null));
            assertThrows(NullPointerException.class, () -> new EventLoopMetrics(null, "l"));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> new EventLoopMetrics(loop, "l", Duration.ZERO, Tags.empty()));
            assertTrue(e.getMessage().contains("probeInterval"), e.getMessage());
        } finally {
            pool.close();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
