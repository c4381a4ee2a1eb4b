package dev.coro.io;

import static dev.coro.Latches.opens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.cancel.Cancellable;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * Timers of the loop: order, never early, cancellation that leaves nothing behind, re-arming the
 * select timeout from another thread, long timers beside short ones, and volume. "Never early" is
 * checked against the loop's own clock at fire time; nothing here depends on how late a timer is.
 */
class EventLoopTimerTest {

    /** Runs {@code body} on the loop and returns its answer. */
    static <T> T onLoop(EventLoop loop, Callable<T> body) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                f.complete(body.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f.get();
    }

    @Test
    void timersFireInDeadlineOrderAndEqualDeadlinesInArrivalOrder() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            List<Integer> fired = new ArrayList<>(); // loop-confined
            CountDownLatch done = new CountDownLatch(1);
            onLoop(loop, () -> {
                for (int i = 9; i >= 0; i--) { // scheduled latest first
                    int v = i;
                    loop.schedule(() -> fired.add(v), Duration.ofMillis(2 * v + 1));
                }
                return null;
            });
            loop.schedule(done::countDown, Duration.ofMillis(40));
            done.await();
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), onLoop(loop, () -> List.copyOf(fired)));

            List<Integer> zero = new ArrayList<>();
            CountDownLatch done2 = new CountDownLatch(1);
            onLoop(loop, () -> {
                for (int i = 0; i < 100; i++) {
                    int v = i;
                    loop.schedule(() -> zero.add(v), Duration.ZERO); // deadlines equal or increasing
                }
                loop.schedule(done2::countDown, Duration.ZERO);
                return null;
            });
            done2.await();
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                expected.add(i);
            }
            assertEquals(expected, onLoop(loop, () -> List.copyOf(zero)));
        }
    }

    @Test
    void timersNeverFireEarly() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            int n = 500;
            SplittableRandom rnd = new SplittableRandom(42);
            AtomicInteger early = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                long delay = rnd.nextLong(0, 20_000_000);
                long before = loop.nanoTime();
                loop.schedule(() -> {
                    if (loop.nanoTime() - before < delay) {
                        early.incrementAndGet();
                    }
                    done.countDown();
                }, Duration.ofNanos(delay));
            }
            done.await();
            assertEquals(0, early.get());
        }
    }

    @Test
    void cancelledTimersNeverFireAndLeaveNothingBehind() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            AtomicInteger fired = new AtomicInteger();
            List<Cancellable> fromHere = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                fromHere.add(loop.schedule(fired::incrementAndGet, Duration.ofMillis(i % 3 == 0 ? 1 : 60_000)));
            }
            int cancelled = 0;
            for (int i = 0; i < fromHere.size(); i++) {
                if (i % 3 != 0 && fromHere.get(i).cancel()) {
                    cancelled++;
                }
            }
            assertEquals(666, cancelled);
            assertFalse(fromHere.get(1).cancel(), "a second cancel answers false");
            // cancelled on the loop thread: removed at once
            int onLoopLeft = onLoop(loop, () -> {
                List<Cancellable> mine = new ArrayList<>();
                for (int i = 0; i < 1000; i++) {
                    mine.add(loop.schedule(fired::incrementAndGet, Duration.ofHours(1)));
                }
                int before = loop.pendingTimers();
                for (Cancellable c : mine) {
                    c.cancel();
                }
                return before - loop.pendingTimers();
            });
            assertEquals(1000, onLoopLeft);
            CountDownLatch due = new CountDownLatch(1);
            loop.schedule(due::countDown, Duration.ofMillis(5));
            due.await();
            // the removal of every timer cancelled above happens before this runs
            assertEquals(0, (int) onLoop(loop, loop::pendingTimers));
            assertEquals(0, loop.pendingTimers());
            assertEquals(334, fired.get());
        }
    }

    @Test
    void aTimerFromAnotherThreadReArmsAParkedLoop() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            loop.schedule(() -> {}, Duration.ofHours(1)); // the loop parks with a one-hour timeout
            awaitParked(loop);
            long wakeups = loop.wakeups.get();
            loop.schedule(() -> {}, Duration.ofHours(2)); // later: no reason to wake it
            assertEquals(wakeups, loop.wakeups.get());
            CountDownLatch fired = new CountDownLatch(1);
            loop.schedule(fired::countDown, Duration.ofMillis(1)); // earlier: must wake it
            fired.await(); // without the re-arm this would wait an hour (the test times out)
            assertTrue(loop.wakeups.get() <= wakeups + 1);
            assertEquals(2, (int) onLoop(loop, loop::pendingTimers));
        }
    }

    @Test
    void aTimerFromAnotherThreadReArmsALoopParkedWithoutTimeout() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            awaitParked(loop);
            CountDownLatch fired = new CountDownLatch(1);
            loop.schedule(fired::countDown, Duration.ofMillis(2));
            assertTrue(opens(fired),
                    "a 2 ms timer scheduled from another thread woke the loop parked without a timeout");
        }
    }

    @Test
    void aVeryLongTimerNeverDelaysShortOnes() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            AtomicInteger longFired = new AtomicInteger();
            Cancellable forever = loop.schedule(longFired::incrementAndGet, Duration.ofSeconds(Long.MAX_VALUE));
            Cancellable year = loop.schedule(longFired::incrementAndGet, Duration.ofDays(365));
            CountDownLatch shortOnes = new CountDownLatch(3);
            for (int i = 1; i <= 3; i++) {
                loop.schedule(shortOnes::countDown, Duration.ofMillis(i));
            }
            shortOnes.await();
            assertEquals(2, (int) onLoop(loop, loop::pendingTimers));
            assertEquals(0, longFired.get());
            assertTrue(forever.cancel());
            assertTrue(year.cancel());
            assertEquals(0, (int) onLoop(loop, loop::pendingTimers));
        }
    }

    @Test
    void taskDelayOnTheLoopUsesItsTimersAndResumesOnIt() throws Exception {
        try (EventLoop loop = EventLoop.start("delay-loop")) {
            long start = loop.nanoTime();
            String where = Task.delay(Duration.ofMillis(5))
                    .map(x -> Thread.currentThread().getName())
                    .startOn(loop)
                    .join();
            assertEquals("delay-loop", where);
            assertTrue(loop.nanoTime() - start >= 5_000_000);
            // a cancelled delay removes its timer
            CompletableFuture<Void> f = Task.delay(Duration.ofHours(1)).startOn(loop).toCompletableFuture();
            awaitPending(loop, 1);
            f.cancel(true);
            awaitPending(loop, 0);
        }
    }

    /**
     * 100,000 timers (scaled) with random delays, scheduled from two threads; half cancelled (from a
     * third thread, and some from the loop): each fires exactly once if and only if its cancel did
     * not win, never early, and the loop ends holding no timer.
     */
    @Test
    void manyTimersHalfCancelledFireExactlyOnceAndNeverEarly() throws Exception {
        int n = Stress.scaled(100_000);
        try (EventLoop loop = EventLoop.start()) {
            AtomicIntegerArray fires = new AtomicIntegerArray(n);
            AtomicInteger early = new AtomicInteger();
            Cancellable[] handles = new Cancellable[n];
            CountDownLatch scheduled = new CountDownLatch(2);
            for (int p = 0; p < 2; p++) {
                int first = p;
                new Thread(() -> {
                    SplittableRandom rnd = new SplittableRandom(first);
                    for (int i = first; i < n; i += 2) {
                        int id = i;
                        // the half that will be cancelled waits longer, so that most cancels win
                        long delay = id % 2 == 0 ? rnd.nextLong(100_000_000, 150_000_000) : rnd.nextLong(0, 50_000_000);
                        long before = loop.nanoTime();
                        handles[i] = loop.schedule(() -> {
                            if (loop.nanoTime() - before < delay) {
                                early.incrementAndGet();
                            }
                            fires.incrementAndGet(id);
                        }, Duration.ofNanos(delay));
                    }
                    scheduled.countDown();
                }).start();
            }
            scheduled.await();
            boolean[] cancelled = new boolean[n];
            Thread canceller = new Thread(() -> {
                for (int i = 0; i < n; i += 4) {
                    cancelled[i] = handles[i].cancel();
                }
            });
            canceller.start();
            onLoop(loop, () -> {
                for (int i = 2; i < n; i += 4) {
                    cancelled[i] = handles[i].cancel();
                }
                return null;
            });
            canceller.join();
            int expected = 0;
            for (boolean c : cancelled) {
                if (!c) {
                    expected++;
                }
            }
            // wait until every timer not cancelled has fired: poll on the loop, no sleeping
            while (onLoop(loop, loop::pendingTimers) > 0) {
                CountDownLatch tick = new CountDownLatch(1);
                loop.schedule(tick::countDown, Duration.ofMillis(5));
                tick.await();
            }
            int total = 0;
            for (int i = 0; i < n; i++) {
                int f = fires.get(i);
                assertEquals(cancelled[i] ? 0 : 1, f, "timer " + i + " (cancelled: " + cancelled[i] + ")");
                total += f;
            }
            assertEquals(expected, total);
            assertEquals(0, early.get());
            assertTrue(expected >= n / 2, "only half were cancelled");
        }
    }

    @Test
    void aMillionPendingTimersAreCheapToAddAndCancel() throws Exception {
        int n = 1_000_000;
        try (EventLoop loop = EventLoop.start()) {
            AtomicInteger fired = new AtomicInteger();
            SplittableRandom rnd = new SplittableRandom(7);
            Cancellable[] handles = new Cancellable[n];
            for (int i = 0; i < n; i++) { // from another thread: through the inbox
                handles[i] = loop.schedule(fired::incrementAndGet, Duration.ofSeconds(100 + rnd.nextInt(1000)));
            }
            assertEquals(n, (int) onLoop(loop, loop::pendingTimers));
            for (int i = 0; i < n; i += 2) {
                handles[i].cancel();
            }
            assertEquals(n / 2, (int) onLoop(loop, loop::pendingTimers));
            onLoop(loop, () -> {
                for (int i = 1; i < n; i += 2) {
                    handles[i].cancel(); // on the loop: O(log n) each
                }
                return null;
            });
            assertEquals(0, (int) onLoop(loop, loop::pendingTimers));
            assertEquals(0, fired.get());
        }
    }

    /**
     * The same in the wheel (due within its span): a million timers pushed into their slots from
     * another thread, half cancelled from there and half on the loop; each timer either fired or was
     * cancelled (however slow the machine), and the loop ends holding none.
     */
    @Test
    void aMillionTimersInTheWheelAreCheapToAddAndCancel() throws Exception {
        int n = 1_000_000;
        try (EventLoop loop = EventLoop.start()) {
            AtomicInteger fired = new AtomicInteger();
            SplittableRandom rnd = new SplittableRandom(11);
            Cancellable[] handles = new Cancellable[n];
            for (int i = 0; i < n; i++) {
                handles[i] = loop.schedule(fired::incrementAndGet, Duration.ofMillis(1000 + rnd.nextInt(1000)));
            }
            int cancelled = 0;
            for (int i = 0; i < n; i += 2) {
                if (handles[i].cancel()) {
                    cancelled++;
                }
            }
            cancelled += onLoop(loop, () -> {
                int c = 0;
                for (int i = 1; i < n; i += 2) {
                    if (handles[i].cancel()) { // on the loop: O(1) in the wheel
                        c++;
                    }
                }
                return c;
            });
            assertEquals(0, (int) onLoop(loop, loop::pendingTimers));
            assertEquals(n, cancelled + fired.get(), "each timer fired or was cancelled");
        }
    }

    @Test
    void schedulingFromTheLoopWhileItRunsTimersKeepsOrder() throws Exception {
        try (EventLoop loop = EventLoop.start()) {
            List<Long> lateness = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(1);
            AtomicInteger remaining = new AtomicInteger(200);
            Runnable[] step = new Runnable[1];
            step[0] = () -> {
                if (remaining.decrementAndGet() == 0) {
                    done.countDown();
                } else {
                    long before = loop.nanoTime();
                    loop.schedule(() -> {
                        lateness.add(loop.nanoTime() - before - 100_000);
                        step[0].run();
                    }, Duration.ofNanos(100_000));
                }
            };
            loop.execute(step[0]);
            done.await();
            assertTrue(onLoop(loop, () -> lateness.stream().allMatch(l -> l >= 0)));
        }
    }

    static void awaitParked(EventLoop loop) {
        while (!loop.isParked()) {
            Thread.onSpinWait();
        }
    }

    static void awaitPending(EventLoop loop, int n) throws Exception {
        while (onLoop(loop, loop::pendingTimers) != n) {
            Thread.onSpinWait();
        }
    }
}
