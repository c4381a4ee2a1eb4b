package dev.coro.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * External submissions in volume: several producers submit at random gaps (bursts, yields, short
 * parks, so that the loop keeps parking and being woken mid-burst); every task runs exactly once, in
 * each producer's order, and wakeups never outnumber the loop's parks (one wakeup per park at most).
 */
@Tag("stress")
class EventLoopStressTest {

    @Test
    void aMillionExternalSubmissionsAllRunInPerProducerOrder() throws Exception {
        int producers = 4;
        int perProducer = Stress.scaled(1_000_000) / producers;
        try (EventLoop loop = EventLoop.start()) {
            int[] next = new int[producers]; // loop-confined: the next sequence number expected
            int[] outOfOrder = new int[1];
            CountDownLatch done = new CountDownLatch(producers);
            CyclicBarrier go = new CyclicBarrier(producers);
            Thread[] threads = new Thread[producers];
            for (int p = 0; p < producers; p++) {
                int id = p;
                threads[p] = new Thread(() -> {
                    SplittableRandom rnd = new SplittableRandom(id * 31L + 7);
                    try {
                        go.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    for (int i = 0; i < perProducer; i++) {
                        int seq = i;
                        loop.execute(() -> {
                            if (next[id] != seq) {
                                outOfOrder[0]++;
                            }
                            next[id] = seq + 1;
                            if (seq == perProducer - 1) {
                                done.countDown();
                            }
                        });
                        int gap = rnd.nextInt(1000);
                        if (gap == 0) {
                            LockSupport.parkNanos(50_000); // a random gap, not synchronization
                        } else if (gap < 10) {
                            Thread.yield();
                        }
                    }
                }, "producer-" + p);
                threads[p].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            done.await();
            int[] result = EventLoopTimerTest.onLoop(loop, () -> new int[] {outOfOrder[0], next[0], next[1], next[2],
                    next[3]});
            assertEquals(0, result[0], "tasks out of per-producer order");
            for (int p = 0; p < producers; p++) {
                assertEquals(perProducer, result[p + 1], "producer " + p);
            }
            long wakeups = loop.wakeups.get();
            long parks = EventLoopTimerTest.onLoop(loop, () -> loop.parks);
            assertTrue(wakeups <= parks, "wakeups " + wakeups + " > parks " + parks);
            System.out.println("EventLoopStressTest: " + producers * perProducer + " submissions, " + wakeups
                    + " wakeups, " + parks + " parks");
        }
    }
}
