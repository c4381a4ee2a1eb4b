package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link InjectionQueue} under many threads, with small segments (many segment ends): every offered
 * task is taken exactly once or removed by its submitter and never taken; batches keep each
 * submitter's order; and the signal rule (I4) holds: an offer that answers "no signal needed" is
 * behind a task that its taker's batch either takes this one with, or reads it and stops before.
 */
class InjectionQueueStressTest {

    /** A task that counts its runs. */
    record Counted(int id, AtomicIntegerArray runs) implements Runnable {
        @Override
        public void run() {
            runs.incrementAndGet(id);
        }
    }

    @Test
    @Tag("stress")
    void everyTaskIsTakenOnceOrRemovedAndNeverTakenByBatchesPollsAndRemoves() throws Exception {
        long seed = System.nanoTime();
        int producers = 3;
        int consumers = 2;
        int perProducer = Stress.scaled(60_000);
        int total = producers * perProducer;
        InjectionQueue queue = new InjectionQueue(2, 8); // two shards, eight slots a segment
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        AtomicIntegerArray removed = new AtomicIntegerArray(total);
        AtomicIntegerArray lastSeen = new AtomicIntegerArray(producers); // per producer: FIFO check
        AtomicInteger outOfOrder = new AtomicInteger();
        CountDownLatch producersDone = new CountDownLatch(producers);
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int base = p * perProducer;
            int shard = p & 1; // two producers share shard 0: the submitters' lock
            SplittableRandom random = new SplittableRandom(seed + p);
            threads.add(Thread.ofPlatform().start(() -> {
                await(start);
                for (int i = 0; i < perProducer; i++) {
                    Counted task = new Counted(base + i, runs);
                    queue.offer(task, shard);
                    if (random.nextInt(16) == 0 && queue.remove(task, shard)) {
                        removed.set(base + i, 1);
                    }
                }
                producersDone.countDown();
            }));
        }
        for (int c = 0; c < consumers; c++) {
            SplittableRandom random = new SplittableRandom(seed + 100 + c);
            int home = c;
            threads.add(Thread.ofPlatform().start(() -> {
                await(start);
                WorkQueue mine = new WorkQueue(64);
                int[] lastPerProducer = new int[producers];
                java.util.Arrays.fill(lastPerProducer, -1);
                for (;;) {
                    boolean finished = producersDone.getCount() == 0; // read before the poll
                    Runnable r = random.nextBoolean()
                            ? queue.pollInto(home, mine, 1 + random.nextInt(32))
                            : queue.poll(home);
                    if (r == null) {
                        if (finished) {
                            return;
                        }
                        Thread.onSpinWait();
                        continue;
                    }
                    List<Runnable> batch = new ArrayList<>();
                    batch.add(r);
                    Runnable more;
                    while ((more = mine.pop()) != null) {
                        batch.add(more);
                    }
                    for (Runnable t : batch) {
                        Counted task = (Counted) t;
                        task.run();
                        int producer = task.id() / perProducer;
                        if (task.id() <= lastPerProducer[producer]) {
                            outOfOrder.incrementAndGet(); // one consumer sees a producer's tasks in order
                        }
                        lastPerProducer[producer] = task.id();
                    }
                }
            }));
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertTrue(queue.isEmpty(), "seed " + seed);
        int removedCount = 0;
        for (int i = 0; i < total; i++) {
            removedCount += removed.get(i);
            assertEquals(1 - removed.get(i), runs.get(i), "seed " + seed + ", task " + i
                    + (removed.get(i) == 1 ? " was removed" : " was not removed"));
        }
        assertEquals(0, outOfOrder.get(), "seed " + seed + ": a consumer took a producer's tasks out of order");
        assertTrue(removedCount > 0, "seed " + seed + ": no remove won (the race was not exercised)");
    }

    /**
     * I4: one consumer taking batches (as a worker does) while one submitter offers. For every offer
     * that answered "no signal needed", the consumer's batch that took the task before it must have
     * taken it too or stopped (by its size limit, by a segment end, or by reading the slot empty is
     * impossible: its submitter would have seen the task before taken and answered "signal").
     */
    @Test
    @Tag("stress")
    void anOfferThatSkipsTheSignalIsTakenInTheSameBatchAsTheTaskBeforeIt() throws Exception {
        int segment = 16;
        int max = 8;
        int total = Stress.scaled(200_000);
        InjectionQueue queue = new InjectionQueue(1, segment);
        AtomicIntegerArray runs = new AtomicIntegerArray(total);
        boolean[] skipped = new boolean[total]; // written by the submitter, read after join
        int[] batchOf = new int[total]; // written by the consumer, read after join
        CountDownLatch start = new CountDownLatch(1);
        Thread submitter = Thread.ofPlatform().start(() -> {
            await(start);
            for (int i = 0; i < total; i++) {
                skipped[i] = !queue.offer(new Counted(i, runs), 0);
            }
        });
        Thread consumer = Thread.ofPlatform().start(() -> {
            await(start);
            WorkQueue mine = new WorkQueue(16);
            int taken = 0;
            int batches = 0;
            while (taken < total) {
                Runnable r = queue.pollInto(0, mine, max);
                if (r == null) {
                    Thread.onSpinWait();
                    continue;
                }
                batches++;
                do {
                    Counted c = (Counted) r;
                    c.run();
                    batchOf[c.id()] = batches;
                    taken++;
                } while ((r = mine.pop()) != null);
            }
        });
        start.countDown();
        submitter.join();
        consumer.join();
        int skips = 0;
        for (int i = 1; i < total; i++) {
            assertEquals(1, runs.get(i), "task " + i);
            if (skipped[i]) {
                skips++;
                boolean sameBatch = batchOf[i] == batchOf[i - 1];
                boolean limited = i % segment == 0 || (i - firstOfBatch(batchOf, i - 1)) >= max;
                assertTrue(sameBatch || limited, "task " + i + " skipped its signal, yet the batch that took task "
                        + (i - 1) + " neither took it nor stopped at its size limit or a segment end");
            }
        }
        assertFalse(skipped[0], "the first offer of an empty queue must signal");
        assertTrue(skips > 0, "no offer skipped its signal (the batching path was not exercised)");
    }

    private static int firstOfBatch(int[] batchOf, int i) {
        int b = batchOf[i];
        while (i > 0 && batchOf[i - 1] == b) {
            i--;
        }
        return i;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
