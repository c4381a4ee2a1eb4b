package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.coro.scheduler.Scheduler;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The blocking join's scheduler ({@link ThreadLoop}): its queue is made by the first submission, so
 * submissions racing to make it must all land in the one queue the joining thread drains.
 */
class ThreadLoopTest {
    @Test
    void firstSubmissionsRacingFromTwoThreadsBothRunOnTheJoiningThread() throws Exception {
        for (int trial = 0; trial < 2_000; trial++) {
            Thread joiner = Thread.currentThread();
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger offered = new AtomicInteger();
            AtomicInteger elsewhere = new AtomicInteger();
            Promise<Void> bothOffered = new Promise<>();
            CyclicBarrier start = new CyclicBarrier(2);
            Thread[] submitters = new Thread[2];
            // nothing is submitted to the join's loop before the two racing submissions
            Task<Void> racing = Task.context().flatMap(c -> {
                Scheduler loop = c.scheduler();
                for (int i = 0; i < 2; i++) {
                    submitters[i] = new Thread(() -> {
                        try {
                            start.await();
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                        loop.execute(() -> {
                            if (Thread.currentThread() != joiner) {
                                elsewhere.incrementAndGet();
                            }
                            ran.incrementAndGet();
                        });
                        if (offered.incrementAndGet() == 2) {
                            bothOffered.complete(null);
                        }
                    });
                    submitters[i].start();
                }
                return bothOffered.task();
            });
            racing.join();
            for (Thread t : submitters) {
                t.join();
            }
            assertEquals(2, ran.get(), "trial " + trial + ": a submission was lost");
            assertEquals(0, elsewhere.get(), "trial " + trial + ": submitted before the end, run by the joining thread");
        }
    }
}
