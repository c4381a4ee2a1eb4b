package dev.coro.scheduler;

import static dev.coro.Latches.opens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link Scheduler#inline()}: runs on the caller, nested submissions queue, timers fire on the timer thread. */
class InlineSchedulerTest {
    private final Scheduler inline = Scheduler.inline();

    @Test
    void isASingletonThatIsAlwaysCurrent() {
        assertSame(inline, Scheduler.inline());
        assertTrue(inline.isCurrent());
        assertSame(inline, Scheduler.from(inline), "from() of a Scheduler is itself");
    }

    @Test
    void runsOnTheCallingThreadBeforeExecuteReturns() {
        AtomicReference<Thread> ran = new AtomicReference<>();
        inline.execute(() -> ran.set(Thread.currentThread()));
        assertSame(Thread.currentThread(), ran.get());
    }

    @Test
    void nestedSubmissionsQueueBehindTheRunningOne() {
        List<String> order = new ArrayList<>();
        inline.execute(() -> {
            order.add("outer start");
            inline.execute(() -> {
                order.add("first nested");
                inline.execute(() -> order.add("nested in nested"));
            });
            inline.execute(() -> order.add("second nested"));
            order.add("outer end");
        });
        assertEquals(List.of("outer start", "outer end", "first nested", "second nested", "nested in nested"), order);
    }

    @Test
    void aLongChainOfResubmissionsUsesABoundedStack() {
        int n = 1_000_000;
        AtomicInteger left = new AtomicInteger(n);
        inline.execute(new Runnable() {
            @Override
            public void run() {
                if (left.decrementAndGet() > 0) {
                    inline.execute(this);
                }
            }
        });
        assertEquals(0, left.get());
    }

    @Test
    void anExceptionReachesTheCallerAndQueuedWorkStillRuns() {
        List<String> order = new ArrayList<>();
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> inline.execute(() -> {
            inline.execute(() -> order.add("queued before the throw"));
            throw boom;
        }));
        assertSame(boom, thrown);
        assertEquals(List.of("queued before the throw"), order);
        inline.execute(() -> order.add("later"));
        assertEquals("later", order.get(1), "the trampoline is usable again");
    }

    @Test
    void rejectsNulls() {
        assertEquals("task", assertThrows(NullPointerException.class, () -> inline.execute(null)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class, () -> inline.schedule(null, Duration.ZERO)).getMessage());
        assertEquals("delay", assertThrows(NullPointerException.class, () -> inline.schedule(() -> {}, null)).getMessage());
    }

    @Test
    void aTimerRunsOnTheTimerThreadNeverEarly() throws Exception {
        long delay = Duration.ofMillis(10).toNanos();
        AtomicReference<String> thread = new AtomicReference<>();
        long[] firedAt = new long[1];
        CountDownLatch fired = new CountDownLatch(1);
        long start = inline.nanoTime();
        inline.schedule(() -> {
            firedAt[0] = inline.nanoTime();
            thread.set(Thread.currentThread().getName());
            fired.countDown();
        }, Duration.ofNanos(delay));
        fired.await();
        assertTrue(firedAt[0] - start >= delay, "fired early");
        assertEquals("coro-timer", thread.get());
    }

    @Test
    void aNegativeDelayMeansNow() throws Exception {
        CountDownLatch fired = new CountDownLatch(1);
        inline.schedule(fired::countDown, Duration.ofSeconds(-5));
        assertTrue(opens(fired), "a timer with a negative delay fired");
    }

    @Test
    void aCancelledTimerNeverRuns() throws Exception {
        AtomicInteger ran = new AtomicInteger();
        Cancellable timer = inline.schedule(ran::incrementAndGet, Duration.ofDays(1));
        assertTrue(timer.cancel());
        assertFalse(timer.cancel());
        CountDownLatch after = new CountDownLatch(1);
        inline.schedule(after::countDown, Duration.ZERO);
        after.await();
        assertEquals(0, ran.get());
    }
}
