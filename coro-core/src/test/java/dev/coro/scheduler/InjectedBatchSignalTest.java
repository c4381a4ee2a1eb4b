package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link Worker#takeInjected}'s signal rule, on a pool whose worker threads are never started (the
 * test thread plays the worker that polls, and registers the other one as parked): a poll that
 * leaves tasks of its batch (or of a chunk) in the taker's own queue wakes a parked worker to share
 * them, when no worker is searching; a poll that takes a single task wakes nobody.
 *
 * <p>On a started pool this signal is not the only way the parked worker learns of the batch (the
 * first submission of a burst signals, and the last searcher to stop signals again), so no liveness
 * test there fails without it: the batch is shared later, when a searcher comes by. This test pins
 * the rule itself, which is what makes the batch shared at once.
 */
class InjectedBatchSignalTest {
    // JUnit makes a fresh instance per test: each test has its own unstarted pool, with worker 1 parked
    private final WorkStealingPool pool = new WorkStealingPool(2, "unstarted");
    private final Worker taker = pool.workers[0];
    private final Worker parked = pool.workers[1];

    InjectedBatchSignalTest() {
        pool.idle.announcePark(parked, false);
    }

    /** A task that is only a name. */
    record Named(String name) implements Runnable {
        @Override
        public void run() {}
    }

    /** Submits {@code task} to the taker's injection shard. */
    private void offerToTaker(Runnable task) {
        pool.injection.offer(task, pool.injection.shardOfWorker(taker.index));
    }

    @Test
    void aBatchThatLeavesTasksInTheTakersQueueWakesAParkedWorker() {
        Runnable first = new Named("first");
        offerToTaker(first);
        offerToTaker(new Named("second"));
        offerToTaker(new Named("third"));

        assertSame(first, taker.takeInjected(), "the oldest submission runs first");
        assertEquals(2, taker.queue.size(), "the rest of the batch went into the taker's own queue");
        assertFalse(parked.parked, "the parked worker was woken to share the batch");
        assertEquals(1, IdleWorkers.searching(pool.idle.ctlVolatile()), "it was woken as a searcher");
    }

    @Test
    void aChunkThatLeavesTasksInTheTakersQueueWakesAParkedWorker() {
        Runnable first = new Named("first");
        offerToTaker(new WorkStealingPool.Chunk(new Runnable[] {first, new Named("second")}));

        assertSame(first, taker.takeInjected(), "a chunk's first task runs first");
        assertEquals(1, taker.queue.size(), "the rest of the chunk went into the taker's own queue");
        assertFalse(parked.parked, "the parked worker was woken to share the chunk");
    }

    @Test
    void aSingleTakenTaskWakesNobody() {
        Runnable only = new Named("only");
        offerToTaker(only);

        assertSame(only, taker.takeInjected());
        assertEquals(0, taker.queue.size());
        assertTrue(parked.parked, "nothing is left to share: the parked worker sleeps on");
    }
}
