package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@code Task.delay} and {@code Task.timeout} on a scheduler that shuts down under them: the
 * scheduler drops the timer and, the timer task being a {@code Cancellable}, tells it
 * ({@code Scheduler.schedule}), so the wait completes on the cancelled channel instead of never.
 * (The event loop's cases are in {@code EventLoopTest}.)
 */
class DroppedTimerTest {

    private static <T> Task<String> describe(Task<T> task) {
        return task.outcome().map(o -> o instanceof Outcome.Cancelled ? "cancelled" : o.toString());
    }

    @Test
    void aDelayPendingOnAPoolThatShutsDownCompletesCancelled() throws Exception {
        for (boolean now : new boolean[] {false, true}) {
            WorkStealingPool pool = WorkStealingPool.create(1);
            CompletableFuture<String> delay = describe(Task.delay(Duration.ofHours(1))).startOn(pool).toCompletableFuture();
            CompletableFuture<String> timeout = describe(Task.never().timeout(Duration.ofHours(1))).startOn(pool)
                    .toCompletableFuture();
            CountDownLatch started = new CountDownLatch(1);
            pool.execute(started::countDown); // one worker: runs after both tasks have suspended
            started.await();
            if (now) {
                pool.shutdownNow();
            } else {
                pool.shutdown();
            }
            assertEquals("cancelled", delay.get());
            assertEquals("cancelled", timeout.get());
            assertTrue(pool.awaitTermination(Duration.ofMinutes(1)));
        }
    }

    @Test
    void aDelayWhoseExecutorRefusesItWhenDueCompletesCancelled() throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        AtomicInteger submissions = new AtomicInteger();
        Executor closing = r -> { // accepts the task's first run, then refuses: shut down meanwhile
            if (submissions.incrementAndGet() > 1) {
                throw new RejectedExecutionException("closed");
            }
            thread.execute(r);
        };
        CompletableFuture<String> delay = describe(Task.delay(Duration.ofMillis(1))).startOn(Scheduler.from(closing))
                .toCompletableFuture();
        assertEquals("cancelled", delay.get()); // the due timer's hand-off was refused: dropped
        thread.shutdown();
        assertTrue(thread.awaitTermination(1, TimeUnit.MINUTES));
    }

    @Test
    void aDelayStartedAfterItsSchedulerShutDownFailsWithTheRefusal() throws Exception {
        WorkStealingPool pool = WorkStealingPool.create(1);
        String r = describe(Task.fromRunnable(pool::shutdown).then(Task.delay(Duration.ofHours(1)))).startOn(pool)
                .toCompletableFuture().get();
        assertTrue(r.startsWith("Failure[error=java.util.concurrent.RejectedExecutionException"), r);
        pool.close();
    }
}
