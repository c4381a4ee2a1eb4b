package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Ten million values through a synchronous producer, pushed and pulled, on a joining thread and on a
 * work-stealing pool: no stack overflow, no value lost or repeated, and (pulled) no thread hop per
 * value: the hand-off goes through the trampoline, and only its fairness budget ever submits.
 */
class GeneratorScaleTest {
    private static final int N = 10_000_000;

    /** A synchronous producer body: a Task.loop that only emits. */
    private static Generator<Integer> counting(int n) {
        return Generator.create(e -> Task.loop(0, i -> i < n, i -> e.emit(i).map(ignored -> i + 1)));
    }

    /** Pulls every value through a cursor in a Task.loop; returns the sum of the values. */
    private static Task<Long> pullSum(Generator<Integer> g) {
        return Task.defer(() -> {
            Cursor<Integer> cursor = g.open();
            long[] sum = {0};
            return Task.loop(Boolean.TRUE, more -> more, ignored -> cursor.next().map(v -> {
                if (v == null) {
                    return false;
                }
                sum[0] += v;
                return true;
            })).andFinally(cursor::close).map(ignored -> sum[0]);
        });
    }

    private static long expectedSum(long n) {
        return n * (n - 1) / 2;
    }

    @Test
    void tenMillionPushedThroughMapAndFilterOnAJoiningThread() {
        AtomicLong sum = new AtomicLong();
        AtomicLong count = new AtomicLong();
        counting(N).map(x -> x * 2L).filter(x -> x % 4 == 0).forEach(x -> {
            count.incrementAndGet();
            sum.addAndGet(x);
        }).join();
        assertEquals(N / 2, count.get());
        long half = N / 2; // the even i: 0, 2, ..., so x = 2i = 4k for k < N/2
        assertEquals(4 * expectedSum(half), sum.get());
        assertEquals(N, Generator.range(0, N).filter(x -> true).map(x -> x).forEach(x -> count.incrementAndGet())
                .map(ignored -> (int) (count.get() - N / 2)).join());
    }

    @Test
    void tenMillionFromACountedLoopOfEmitsPushedAndPulledOnAPool() {
        Generator<Integer> counted = Generator.create(e -> Task.forRange(0, N, e::emit)); // no boxed index state
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            assertEquals(expectedSum(N), pullSum(counted).startOn(pool).join(), "pulled: every emit waits for a next");
            AtomicLong sum = new AtomicLong();
            counted.forEach(sum::addAndGet).startOn(pool).join();
            assertEquals(expectedSum(N), sum.get(), "pushed");
        }
    }

    @Test
    void tenMillionPulledThroughACursorOnAJoiningThread() {
        assertEquals(expectedSum(N), pullSum(counting(N)).join());
    }

    @Test
    void tenMillionPulledOnTheInlineScheduler() {
        // toCompletableFuture runs on Scheduler.inline(): both fibers on one trampoline, no fallback
        assertEquals(expectedSum(N), pullSum(counting(N)).toCompletableFuture().join());
    }

    @Test
    void tenMillionOnAWorkStealingPool() {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            assertEquals(expectedSum(N), pullSum(counting(N)).startOn(pool).join());
            AtomicLong sum = new AtomicLong();
            counting(N).forEach(sum::addAndGet).startOn(pool).join();
            assertEquals(expectedSum(N), sum.get());
        }
    }

    @Test
    void aPulledSynchronousProducerPaysNoThreadHopPerValue() throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Counting scheduler = new Counting(thread);
            int n = 200_000;
            AtomicInteger foreign = new AtomicInteger();
            Thread[] consumer = new Thread[1];
            Generator<Integer> g = Generator.create(e -> Task.loop(0, i -> i < n, i -> {
                if (consumer[0] != null && Thread.currentThread() != consumer[0]) {
                    foreign.incrementAndGet();
                }
                return e.emit(i).map(ignored -> i + 1);
            }));
            Task<Long> run = Task.fromRunnable(() -> consumer[0] = Thread.currentThread()).then(pullSum(g));
            assertEquals(expectedSum(n), run.startOn(scheduler).join());
            assertEquals(0, foreign.get(), "the producer ran on the consumer's thread");
            // the trampoline hands a value over inline; every 1024 trampolined steps its fairness
            // budget submits once: a few hundred submissions for 200,000 values, not 200,000
            long submitted = scheduler.executes.get();
            assertTrue(submitted < n / 100, "submissions: " + submitted);
        } finally {
            thread.shutdown();
        }
    }

    @Test
    void aProducerOnAnotherSchedulerHandsOverToAConsumerThatStaysOnItsOwn() {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            int n = 20_000;
            Generator<Integer> elsewhere = Generator.create(e -> Task.loop(0, i -> i < n,
                    i -> e.emit(i).map(ignored -> i + 1)).startOn(pool));
            Thread joining = Thread.currentThread();
            AtomicInteger away = new AtomicInteger();
            Generator<Integer> watched = Generator.create(e -> Task.defer(() -> {
                Cursor<Integer> c = elsewhere.open();
                return Task.loop(Boolean.TRUE, more -> more, ignored -> c.next().flatMap(v -> {
                    if (Thread.currentThread() != joining) {
                        away.incrementAndGet();
                    }
                    return v == null ? Task.value(Boolean.FALSE) : e.emit(v).map(x -> Boolean.TRUE);
                })).andFinally(c::close);
            }));
            assertEquals(expectedSum(n), pullSum(watched).join());
            assertEquals(0, away.get(), "each pulled value resumed the consumer on its own (joining) thread");
            AtomicLong sum = new AtomicLong();
            elsewhere.forEach(sum::addAndGet).join();
            assertEquals(expectedSum(n), sum.get());
        }
    }

    /** A scheduler over one thread that counts submissions. */
    private static final class Counting implements Scheduler {
        final AtomicLong executes = new AtomicLong();
        private final ExecutorService thread;
        private final ThreadLocal<Boolean> mine = ThreadLocal.withInitial(() -> false);

        Counting(ExecutorService thread) {
            this.thread = thread;
        }

        @Override
        public void execute(Runnable task) {
            executes.incrementAndGet();
            thread.execute(() -> {
                mine.set(true);
                task.run();
            });
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            throw new UnsupportedOperationException("no timers here");
        }

        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public boolean isCurrent() {
            return mine.get();
        }
    }
}
