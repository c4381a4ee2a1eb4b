package dev.coro.redis;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.cancel.CancellationSource;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The gap of {@link LeaseQueue}'s invariant I7, hit on purpose: a waiter's enqueued reply has written
 * QUEUED but not yet put the waiter into its lane's queued map, and the test's hook
 * ({@link LeaseQueue#queuedGapForTest}) lands a cancel, a close or a failure right there; their own
 * unqueue finds nothing, so only the reply's second read of the state can take the waiter out again
 * (without it, {@code queueLength()} stayed one too many for good). An admission cannot land there:
 * only a pump sends the ACQUIRE that admits a queued waiter, and a pump finds waiters through that map.
 *
 * <p>Each waiter starts while Redis holds back write commands ({@link #startHeldBack}), so that its
 * enqueued reply is always handled on the client's I/O thread, after the starting thread has left the
 * waiter's monitor: a reply that came back before its callback was registered would be handled on the
 * starting thread inside that monitor, where no failure can reach the gap.
 *
 * <p>Each test ends by closing the waiter's queue and waiting until it has shut down (its timers
 * cancelled, {@link ShutdownWatch}): that happens only once nothing is live and no round trip of it
 * is in flight, and the CANCEL sent from inside the gap is answered on the same connection, so after
 * the reply that ran the hook has been handled to its end. Only then is {@code queueLength()} read, so
 * that it cannot be read in the gap itself, before the put.
 */
class LeaseQueueGapTest extends RedisGateTestBase {
    LeaseQueueGapTest() {
        super("leasegap-");
    }

    /** A queue of one slot for the whole gate (lane ""), as the serial gate's, closed after the test. */
    private LeaseQueue queue(RedisServer redis, Duration lease, Duration redisTimeout, Scheduler timers) {
        GateSettings s = new GateSettings(redis.client(), name);
        s.leaseTime(lease);
        s.recheckInterval(Duration.ofMillis(100));
        s.redisTimeout(redisTimeout);
        s.timers(timers);
        LeaseQueue q = new LeaseQueue(s, 1, false);
        opened(q::close);
        return q;
    }

    /** Holds the slot of this test's gate through {@code holderQueue} until released. */
    private Holder holdSlot(LeaseQueue holderQueue) throws Exception {
        return hold(work -> holderQueue.run(holderQueue.door("", false), token -> work));
    }

    /**
     * Starts a waiter while Redis pauses every write command (CLIENT PAUSE WRITE, which holds back
     * the scripts), and lets Redis go on once it has started: its ACQUIRE cannot be answered before
     * the starting thread has registered the reply's callback, so the callback runs on the I/O thread.
     */
    private static <T> TaskHandle<T> startHeldBack(RedisServer redis, Supplier<TaskHandle<T>> starting) {
        client(redis, "PAUSE", Long.toString(BOUND.toMillis()), "WRITE");
        try {
            return starting.get();
        } finally {
            client(redis, "UNPAUSE");
        }
    }

    /** Runs {@code CLIENT args...} on the administrative connection. */
    private static void client(RedisServer redis, String... args) {
        CommandArgs<String, String> command = new CommandArgs<>(StringCodec.UTF8);
        for (String arg : args) {
            command.add(arg);
        }
        assertEquals("OK", redis.admin().dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8), command));
    }

    /** The waiting work: marks that it ran (it never should). */
    private static Task<Void> waiting(LeaseQueue q, AtomicBoolean ran) {
        return q.run(q.door("", false), token -> Task.fromRunnable(() -> ran.set(true)));
    }

    @Test
    void aWaiterCancelledBetweenItsQueuedStateAndItsLanePutIsNotCountedForGood(RedisServer redis) throws Exception {
        LeaseQueue a = queue(redis, SURVIVOR_LEASE, Duration.ofSeconds(5), Scheduler.inline());
        ShutdownWatch timers = new ShutdownWatch();
        LeaseQueue b = queue(redis, SURVIVOR_LEASE, Duration.ofSeconds(5), timers);
        Holder holder = holdSlot(a);
        CancellationSource cancel = new CancellationSource();
        Gap gap = new Gap(b, cancel::cancel); // the waiter's cancel action runs in the gap, on its thread
        AtomicBoolean ran = new AtomicBoolean();

        TaskHandle<Void> waiter = startHeldBack(redis, () -> waiting(b, ran).start(Scheduler.inline(), cancel.token()));

        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        b.close();
        timers.awaitShutDown();
        gap.assertEndedThereAndForgotten("cancel", "cancelled", ran);
        assertPlaceGoneAndSlotFree(redis, a, holder);
    }

    @Test
    void aWaiterClosedBetweenItsQueuedStateAndItsLanePutIsNotCountedForGood(RedisServer redis) throws Exception {
        LeaseQueue a = queue(redis, SURVIVOR_LEASE, Duration.ofSeconds(5), Scheduler.inline());
        ShutdownWatch timers = new ShutdownWatch();
        LeaseQueue b = queue(redis, SURVIVOR_LEASE, Duration.ofSeconds(5), timers);
        Holder holder = holdSlot(a);
        Gap gap = new Gap(b, b::close); // ends the waiter, cancelled, in the gap, on its thread
        AtomicInteger cancelledReports = new AtomicInteger();
        b.addListener((outcome, waited) -> {
            if (outcome == WaitListener.Outcome.CANCELLED) {
                cancelledReports.incrementAndGet();
            }
        });
        AtomicBoolean ran = new AtomicBoolean();

        TaskHandle<Void> waiter = startHeldBack(redis, () -> start(waiting(b, ran)));

        assertInstanceOf(Outcome.Cancelled.class, outcome(waiter));
        timers.awaitShutDown();
        assertTrue(b.isClosed());
        assertEquals(1, cancelledReports.get(), "close reported its waiter cancelled");
        gap.assertEndedThereAndForgotten("close", "closed-out", ran);
        assertPlaceGoneAndSlotFree(redis, a, holder);
    }

    /**
     * The failure lands in the gap this way: the hook holds the thread that handles the gate's
     * replies, so the renewal sent for the waiter gets no answer in time and fails it (the renewal's
     * timeout fires on another thread); the hook lets go once the gate has reported the wait timed out.
     */
    @Test
    void aWaiterFailedBetweenItsQueuedStateAndItsLanePutIsNotCountedForGood(RedisServer redis) throws Exception {
        LeaseQueue a = queue(redis, SURVIVOR_LEASE, Duration.ofSeconds(5), Scheduler.inline());
        ShutdownWatch timers = new ShutdownWatch();
        Duration redisTimeout = Duration.ofSeconds(1);
        LeaseQueue b = queue(redis, Duration.ofMillis(1500), redisTimeout, timers); // renews every 500 ms
        Holder holder = holdSlot(a);
        CountDownLatch timedOut = new CountDownLatch(1);
        b.addListener((outcome, waited) -> {
            if (outcome == WaitListener.Outcome.TIMED_OUT) {
                timedOut.countDown();
            }
        });
        AtomicReference<Throwable> hookFailed = new AtomicReference<>();
        Gap gap = new Gap(b, () -> {
            try {
                assertTrue(timedOut.await(BOUND.toSeconds(), SECONDS), "a renewal with no answer fails the waiter");
            } catch (Throwable e) {
                hookFailed.set(e);
            }
        });
        AtomicBoolean ran = new AtomicBoolean();

        TaskHandle<Void> waiter = startHeldBack(redis, () -> start(waiting(b, ran)));

        Outcome<Void> failed = outcome(waiter);
        assertNull(hookFailed.get(), "the hook saw the failure");
        RedisGateException error = assertInstanceOf(RedisGateException.class,
                assertInstanceOf(Outcome.Failure.class, failed).error());
        assertEquals("gate '" + name + "': wait: Redis did not answer within " + redisTimeout, error.getMessage());
        b.close();
        timers.awaitShutDown();
        gap.assertEndedThereAndForgotten("failure", "failed", ran);
        assertPlaceGoneAndSlotFree(redis, a, holder);
    }

    /**
     * The hook a test lands in the gap of I7: it runs {@code action} there and records how often it
     * ran, on which thread, and the queue's lanes right after the action.
     */
    private static final class Gap {
        private final LeaseQueue queue;
        private final AtomicInteger runs = new AtomicInteger();
        private final AtomicReference<Thread> thread = new AtomicReference<>();
        private final AtomicInteger lanesAfter = new AtomicInteger(-1);

        Gap(LeaseQueue queue, Runnable action) {
            this.queue = queue;
            queue.queuedGapForTest = () -> {
                runs.incrementAndGet();
                thread.set(Thread.currentThread());
                action.run();
                lanesAfter.set(queue.activeLanes());
            };
        }

        /**
         * After the queue shut down: the hook ran once, on the I/O thread; {@code cause} ended the
         * waiter inside the gap; the queue counts no waiter and keeps no lane; the work never ran.
         */
        void assertEndedThereAndForgotten(String cause, String ended, AtomicBoolean ran) {
            assertEquals(1, runs.get(), "the hook ran once, for the one enqueued reply");
            assertNotSame(Thread.currentThread(), thread.get(), "the reply was handled on the I/O thread");
            assertEquals(0, lanesAfter.get(), "the " + cause + " ended and forgot the waiter inside the gap");
            assertEquals(0, queue.queueLength(), "the " + ended + " waiter is not counted as queued");
            assertEquals(0, queue.activeLanes(), "its lane is given up");
            assertFalse(ran.get(), "the " + ended + " waiter's work never runs");
        }
    }

    /**
     * The waiter's place has left Redis (its CANCEL ran), and once the holder lets go the slot is
     * free: a try, admitted only when no place is queued ahead of it, gets in.
     */
    private void assertPlaceGoneAndSlotFree(RedisServer redis, LeaseQueue a, Holder holder) throws Exception {
        assertEquals(0, redis.admin().exists(key("queue"), key("waiters")), "no place left in Redis");
        holder.release();
        assertEquals("free", await(start(a.run(a.door("", true), token -> Task.value("free")))));
    }

    /**
     * The inline scheduler, whose timers tell when the queue has shut down: only its shutdown cancels
     * them (the renewal and re-check timers), and it comes once the queue is closed, nothing of it is
     * live and no round trip of it is in flight.
     */
    private static final class ShutdownWatch implements Scheduler {
        private final Scheduler inline = Scheduler.inline();
        private final CountDownLatch stopped = new CountDownLatch(1);

        @Override
        public void execute(Runnable task) {
            inline.execute(task);
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            Cancellable timer = inline.schedule(task, delay);
            return () -> {
                stopped.countDown();
                return timer.cancel();
            };
        }

        @Override
        public long nanoTime() {
            return inline.nanoTime();
        }

        @Override
        public boolean isCurrent() {
            return inline.isCurrent();
        }

        void awaitShutDown() throws InterruptedException {
            assertTrue(stopped.await(BOUND.toSeconds(), SECONDS),
                    "the queue shut down: nothing live, nothing in flight");
        }
    }
}
