package dev.coro.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.sync.Event;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The loop as a scheduler: order, threads, failures, the wake protocol, shutdown. */
class EventLoopTest {

    @Test
    void runsTasksInSubmissionOrderOnItsThread() throws Exception {
        try (EventLoop loop = EventLoop.start("order-loop")) {
            List<Integer> seen = new ArrayList<>(); // loop-confined
            List<String> threads = new CopyOnWriteArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            for (int i = 0; i < 10_000; i++) {
                int v = i;
                loop.execute(() -> {
                    seen.add(v);
                    if (v % 1000 == 0) {
                        threads.add(Thread.currentThread().getName());
                    }
                });
            }
            loop.execute(done::countDown);
            done.await();
            for (int i = 0; i < 10_000; i++) {
                assertEquals(i, seen.get(i));
            }
            assertEquals(List.of("order-loop"), threads.stream().distinct().toList());
        }
    }

    @Test
    void tasksSubmittedFromTheLoopRunAfterItsCurrentTaskInOrder() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            List<String> seen = new CopyOnWriteArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            loop.execute(() -> {
                loop.execute(() -> seen.add("b"));
                loop.execute(() -> seen.add("c"));
                seen.add("a");
                loop.execute(done::countDown);
            });
            done.await();
            assertEquals(List.of("a", "b", "c"), seen);
        }
    }

    @Test
    void inEventLoopOnlyOnItsThread() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            assertFalse(loop.inEventLoop());
            assertFalse(loop.isCurrent());
            CompletableFuture<Boolean> on = new CompletableFuture<>();
            loop.execute(() -> on.complete(loop.inEventLoop() && loop.isCurrent()));
            assertTrue(on.get());
        }
    }

    @Test
    void aThrowingTaskGoesToTheHandlerAndTheLoopGoesOn() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            List<Throwable> reported = new CopyOnWriteArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            loop.execute(() -> Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e)));
            RuntimeException boom = new RuntimeException("boom");
            loop.execute(() -> {
                throw boom;
            });
            loop.schedule(() -> {
                throw new IllegalStateException("timer boom");
            }, Duration.ZERO);
            loop.schedule(done::countDown, Duration.ofMillis(1));
            done.await();
            assertEquals(2, reported.size());
            assertSame(boom, reported.get(0));
            assertEquals("timer boom", reported.get(1).getMessage());
        }
    }

    @Test
    void aBurstToABusyLoopMakesNoWakeup() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            CountDownLatch busy = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            loop.execute(() -> {
                busy.countDown();
                awaitQuietly(release);
            });
            busy.await();
            long before = loop.wakeups.get();
            AtomicInteger ran = new AtomicInteger();
            for (int i = 0; i < 10_000; i++) {
                loop.execute(ran::incrementAndGet);
            }
            assertEquals(before, loop.wakeups.get(), "a loop that is awake is never woken");
            release.countDown();
            CountDownLatch done = new CountDownLatch(1);
            loop.execute(done::countDown);
            done.await();
            assertEquals(10_000, ran.get());
        }
    }

    /**
     * Submissions from another thread that race the loop's way into select: right after the previous
     * task (the loop is on its way to park), or once it is parked. A lost wakeup would leave a latch
     * unreleased and the test would hang until its timeout.
     */
    @Test
    void noWakeupIsLostWhileTheLoopParks() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            submitRacingTheSleep(loop);
            assertTrue(loop.wakeups.get() <= loop.parks);
        }
    }

    /**
     * A loop with no channel and a far timer sleeps on its thread (parkNanos), not in the selector;
     * submissions from another thread, racing its way into that sleep or arriving once it sleeps,
     * still wake it every time (a lost wakeup hangs the test until its timeout).
     */
    @Test
    void noWakeupIsLostWhileATimerLoopSleepsOnItsThread() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            Cancellable far = loop.schedule(() -> {}, Duration.ofHours(1));
            submitRacingTheSleep(loop);
            long threadParks = EventLoopTimerTest.onLoop(loop, () -> loop.threadParks);
            assertTrue(threadParks > 0, "a loop with a timer and no channel sleeps on its thread");
            assertTrue(far.cancel());
        }
    }

    /**
     * With a channel registered, the loop sleeps in the selector even with a timer pending, so that
     * the channel's readiness wakes it: a read pending on a pipe completes when another thread
     * writes, while a far timer is pending, and no sleep since the channel's registration was on the
     * thread.
     */
    @Test
    void aLoopWithAChannelSleepsInTheSelectorAndItsReadinessWakesIt() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            Cancellable far = loop.schedule(() -> {}, Duration.ofHours(1));
            java.nio.channels.Pipe pipe = java.nio.channels.Pipe.open();
            try (AsyncChannel in = AsyncChannel.open(loop, pipe.source());
                    java.nio.channels.Pipe.SinkChannel sink = pipe.sink()) {
                CompletableFuture<Integer> read = in.read(java.nio.ByteBuffer.allocate(8)).toCompletableFuture();
                AsyncSocketTest.awaitPending(loop, in.handle, true); // registered: a reader waits
                long before = EventLoopTimerTest.onLoop(loop, () -> loop.threadParks);
                EventLoopTimerTest.awaitParked(loop);
                sink.write(java.nio.ByteBuffer.wrap(new byte[] {7, 8, 9}));
                assertEquals(3, read.get());
                assertEquals(before, (long) EventLoopTimerTest.onLoop(loop, () -> loop.threadParks),
                        "a loop with a channel sleeps in the selector");
            }
            assertTrue(far.cancel());
        }
    }

    /**
     * From this thread, 5,000 (scaled) submissions, each waited for: every other one right after the
     * previous ran (racing the loop's way into its sleep), the rest once the loop sleeps; a third
     * through the timer path. A lost wakeup leaves a latch unreleased.
     */
    private static void submitRacingTheSleep(EventLoop loop) throws InterruptedException {
        int rounds = dev.coro.Stress.scaled(5_000);
        for (int i = 0; i < rounds; i++) {
            if (i % 2 == 0) {
                EventLoopTimerTest.awaitParked(loop);
            }
            CountDownLatch ran = new CountDownLatch(1);
            if (i % 3 == 0) {
                loop.schedule(ran::countDown, Duration.ZERO); // through the timer path
            } else {
                loop.execute(ran::countDown);
            }
            ran.await();
        }
    }

    @Test
    void wakeupsNeverOutnumberParks() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            AtomicInteger ran = new AtomicInteger();
            int n = 20_000;
            Thread[] producers = new Thread[2];
            for (int p = 0; p < producers.length; p++) {
                producers[p] = new Thread(() -> {
                    for (int i = 0; i < n; i++) {
                        loop.execute(ran::incrementAndGet);
                        if (i % 64 == 0) {
                            Thread.yield();
                        }
                    }
                });
                producers[p].start();
            }
            for (Thread t : producers) {
                t.join();
            }
            CompletableFuture<long[]> counts = new CompletableFuture<>();
            loop.execute(() -> counts.complete(new long[] {loop.wakeups.get(), loop.parks}));
            long[] c = counts.get();
            assertEquals(2 * n, ran.get());
            assertTrue(c[0] <= c[1], "wakeups " + c[0] + " > parks " + c[1]);
        }
    }

    @Test
    void aTaskWaitingOnAnEventResumesOnTheLoop() throws Exception {
        try (EventLoop loop = EventLoop.start("event-loop")) {
            Event<String> event = new Event<>();
            CountDownLatch waiting = new CountDownLatch(1);
            CompletableFuture<String> where = Task.fromRunnable(waiting::countDown)
                    .then(event.await())
                    .map(v -> v + " on " + Thread.currentThread().getName())
                    .startOn(loop)
                    .toCompletableFuture();
            waiting.await();
            event.set("set from " + Thread.currentThread().getName());
            assertEquals("set from " + Thread.currentThread().getName() + " on event-loop", where.get());
        }
    }

    @Test
    void sameLoopPingPongThroughEventsStaysOnTheLoop() throws Exception {
        try (EventLoop loop = EventLoop.start("pingpong-loop")) {
            int rounds = 10_000;
            List<Event<Integer>> ping = new ArrayList<>();
            List<Event<Integer>> pong = new ArrayList<>();
            for (int i = 0; i < rounds; i++) {
                ping.add(new Event<>());
                pong.add(new Event<>());
            }
            AtomicInteger offLoop = new AtomicInteger();
            Task<Integer> ponger = Task.loop(0, i -> i < rounds, i -> ping.get(i).await().map(v -> {
                if (!loop.inEventLoop()) {
                    offLoop.incrementAndGet();
                }
                pong.get(i).set(v);
                return i + 1;
            }));
            Task<Integer> pinger = Task.loop(0, i -> i < rounds, i -> {
                ping.get(i).set(i);
                return pong.get(i).await().map(v -> {
                    if (!loop.inEventLoop()) {
                        offLoop.incrementAndGet();
                    }
                    return i + 1;
                });
            });
            int total = Task.whenAll(ponger, pinger, Integer::sum).startOn(loop).join();
            assertEquals(2 * rounds, total);
            assertEquals(0, offLoop.get());
        }
    }

    // ------------------------------------------------------------------ shutdown

    @Test
    void shutdownRejectsNewWorkAndRunsQueuedWork() throws Exception {
        EventLoop loop = EventLoop.start();
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            busy.countDown();
            awaitQuietly(release);
        });
        busy.await();
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 100; i++) {
            loop.execute(ran::incrementAndGet);
        }
        loop.shutdown();
        assertTrue(loop.isShutdown());
        assertThrows(RejectedExecutionException.class, () -> loop.execute(ran::incrementAndGet));
        assertThrows(RejectedExecutionException.class, () -> loop.schedule(ran::incrementAndGet, Duration.ZERO));
        release.countDown();
        loop.close();
        assertTrue(loop.isTerminated());
        assertFalse(loop.thread().isAlive());
        assertEquals(100, ran.get());
    }

    @Test
    void shutdownNowDropsQueuedWork() throws Exception {
        EventLoop loop = EventLoop.start();
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            busy.countDown();
            awaitQuietly(release);
        });
        busy.await();
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < 100; i++) {
            loop.execute(ran::incrementAndGet);
        }
        loop.shutdownNow();
        release.countDown();
        assertTrue(loop.awaitTermination(Duration.ofMinutes(1)));
        assertEquals(0, ran.get());
        loop.close(); // idempotent
    }

    @Test
    void shutdownDropsPendingTimers() throws Exception {
        EventLoop loop = EventLoop.start();
        AtomicInteger fired = new AtomicInteger();
        Cancellable a = loop.schedule(fired::incrementAndGet, Duration.ofHours(1));
        CompletableFuture<Cancellable> b = new CompletableFuture<>();
        loop.execute(() -> b.complete(loop.schedule(fired::incrementAndGet, Duration.ofHours(1))));
        b.get();
        loop.close();
        assertEquals(0, loop.pendingTimers());
        assertFalse(a.cancel(), "a dropped timer is no longer pending");
        assertFalse(b.get().cancel());
        assertEquals(0, fired.get());
    }

    /** What a task ended with, and on which thread its continuation ran. */
    static <T> Task<String> describe(Task<T> task) {
        return task.outcome().map(o -> (o instanceof Outcome.Cancelled ? "cancelled" : o.toString()) + " on "
                + Thread.currentThread().getName());
    }

    @Test
    void delaysAndTimeoutsPendingOnAGracefulShutdownCompleteCancelledOnTheLoop() throws Exception {
        delaysAndTimeoutsPendingAtShutdownCompleteCancelled(false);
    }

    @Test
    void delaysAndTimeoutsPendingOnAnImmediateShutdownCompleteCancelledOnTheLoop() throws Exception {
        delaysAndTimeoutsPendingAtShutdownCompleteCancelled(true);
    }

    private static void delaysAndTimeoutsPendingAtShutdownCompleteCancelled(boolean now) throws Exception {
        EventLoop loop = EventLoop.start("closing-loop");
        List<CompletableFuture<String>> waits = List.of(
                describe(Task.delay(Duration.ofMillis(500))).startOn(loop).toCompletableFuture(), // the wheel
                describe(Task.delay(Duration.ofHours(1))).startOn(loop).toCompletableFuture(), // the heap
                describe(Task.<String>never().timeout(Duration.ofHours(1))).startOn(loop).toCompletableFuture());
        CountDownLatch started = new CountDownLatch(1);
        loop.execute(started::countDown); // runs after the three tasks have suspended (submission order)
        started.await();
        assertEquals(3, (int) EventLoopTimerTest.onLoop(loop, loop::pendingTimers));
        if (now) {
            loop.shutdownNow();
        } else {
            loop.shutdown();
        }
        assertTrue(loop.awaitTermination(Duration.ofMinutes(1)));
        for (CompletableFuture<String> w : waits) {
            assertEquals("cancelled on closing-loop", w.get());
        }
        assertEquals(0, loop.pendingTimers());
    }

    /** A timer task that counts its runs and its cancels, and where the cancel came from. */
    static final class CountingTask implements Runnable, Cancellable {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger cancels = new AtomicInteger();
        volatile String cancelledOn;

        @Override
        public void run() {
            runs.incrementAndGet();
        }

        @Override
        public boolean cancel() {
            cancelledOn = Thread.currentThread().getName();
            return cancels.incrementAndGet() == 1;
        }
    }

    @Test
    void timersDroppedAtShutdownCancelTheirCancellableTasksOnceWhereverTheyWait() throws Exception {
        EventLoop loop = EventLoop.start("dropping-loop");
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loop.execute(() -> {
            busy.countDown();
            awaitQuietly(release);
        });
        busy.await();
        CountingTask inWheel = new CountingTask();
        CountingTask inInbox = new CountingTask();
        CountingTask farInInbox = new CountingTask();
        CountingTask cancelledFirst = new CountingTask();
        loop.schedule(inWheel, Duration.ofMillis(500)); // pushed into its wheel slot
        loop.schedule(inInbox, Duration.ZERO); // due at once: through the inbox, not yet taken
        loop.schedule(farInInbox, Duration.ofHours(1)); // beyond the wheel: through the inbox
        assertTrue(loop.schedule(cancelledFirst, Duration.ofMillis(500)).cancel());
        loop.shutdown();
        release.countDown();
        assertTrue(loop.awaitTermination(Duration.ofMinutes(1)));
        for (CountingTask t : List.of(inWheel, inInbox, farInInbox)) {
            assertEquals(0, t.runs.get());
            assertEquals(1, t.cancels.get());
            assertEquals("dropping-loop", t.cancelledOn);
        }
        assertEquals(0, cancelledFirst.runs.get());
        assertEquals(0, cancelledFirst.cancels.get(), "a timer cancelled through its handle is not dropped");
    }

    @Test
    void aTaskOnTheLoopThatStartsWorkAfterShutdownIsRefusedButCarriesOn() throws Exception {
        EventLoop loop = EventLoop.start();
        CompletableFuture<String> outcome = new CompletableFuture<>();
        loop.execute(() -> {
            loop.shutdown();
            try {
                loop.execute(() -> {});
                outcome.complete("accepted");
            } catch (RejectedExecutionException e) {
                outcome.complete("rejected");
            }
        });
        assertEquals("rejected", outcome.get());
        loop.close();
        assertTrue(loop.isTerminated());
    }

    @Test
    void closeOnTheLoopThreadOnlyStartsTheShutdown() throws Exception {
        EventLoop loop = EventLoop.start();
        AtomicReference<Throwable> awaitError = new AtomicReference<>();
        CountDownLatch closed = new CountDownLatch(1);
        loop.execute(() -> {
            loop.close();
            try {
                loop.awaitTermination(Duration.ofSeconds(1));
            } catch (Throwable e) {
                awaitError.set(e);
            }
            closed.countDown();
        });
        closed.await();
        assertTrue(loop.awaitTermination(Duration.ofMinutes(1)));
        assertTrue(awaitError.get() instanceof IllegalStateException);
    }

    @Test
    void timersInATimeUnitRunOnTheLoopNeverEarlyAndSaturate() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            CountDownLatch done = new CountDownLatch(2);
            AtomicReference<String> wrong = new AtomicReference<>();
            long start = loop.nanoTime();
            Runnable check = () -> {
                if (!loop.isCurrent()) {
                    wrong.set("ran on " + Thread.currentThread().getName());
                }
                done.countDown();
            };
            loop.schedule(check, -5, TimeUnit.SECONDS); // negative: as soon as possible
            loop.schedule(() -> {
                if (loop.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(2)) {
                    wrong.set("fired early");
                }
                check.run();
            }, 2, TimeUnit.MILLISECONDS);
            AtomicInteger far = new AtomicInteger();
            Cancellable never = loop.schedule(far::incrementAndGet, Long.MAX_VALUE, TimeUnit.DAYS); // saturates
            done.await();
            assertEquals(null, wrong.get());
            assertTrue(never.cancel());
            assertEquals(0, far.get());
        }
    }

    @Test
    void badInput() {
        try (EventLoop loop = EventLoop.start()) {
            assertThrows(NullPointerException.class, () -> loop.execute(null));
            assertThrows(NullPointerException.class, () -> loop.schedule(null, Duration.ZERO));
            assertThrows(NullPointerException.class, () -> loop.schedule(() -> {}, null));
            assertThrows(NullPointerException.class, () -> loop.schedule(null, 1, TimeUnit.SECONDS));
            assertThrows(NullPointerException.class, () -> loop.schedule(() -> {}, 1, null));
            assertThrows(NullPointerException.class, () -> loop.awaitTermination(null));
            assertThrows(NullPointerException.class, () -> EventLoop.start(null));
        }
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
