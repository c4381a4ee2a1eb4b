package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * BatchGate on virtual time: batching and FIFO order, one element per caller, errors, wrong sizes,
 * cancellation before and after the take (nothing left linked), linger with one timer, concurrent
 * batches, close, bad input.
 */
class BatchGateTest {
    private static final long MS = 1_000_000;
    private final ManualScheduler clock = new ManualScheduler();
    /** Every batch the batch functions were called with, in call order. */
    private final List<List<Integer>> batches = new CopyOnWriteArrayList<>();

    /** A batch that takes {@code millis} of virtual time and answers "v" + item for each item. */
    private Function<List<Integer>, Task<List<String>>> slowBatch(long millis) {
        return items -> {
            batches.add(List.copyOf(items));
            return Task.delay(Duration.ofMillis(millis)).map(ignored -> items.stream().map(i -> "v" + i).toList());
        };
    }

    /** A batch that answers at once. */
    private Function<List<Integer>, Task<List<String>>> instantBatch() {
        return items -> {
            batches.add(List.copyOf(items));
            return Task.value(items.stream().map(i -> "v" + i).toList());
        };
    }

    private BatchGate<Integer, String> gate(Function<List<Integer>, Task<List<String>>> fn, int max) {
        return new BatchGate<>(fn, max, Duration.ZERO, clock);
    }

    private static List<CompletableFuture<String>> submitAll(BatchGate<Integer, String> gate, int from, int to) {
        List<CompletableFuture<String>> fs = new ArrayList<>();
        for (int i = from; i < to; i++) {
            fs.add(gate.submit(i).toCompletableFuture());
        }
        return fs;
    }

    /**
     * The first item goes at once (the flusher is free); the others accumulate while it runs and go
     * in batches of at most 4, in submission order; each caller gets the element at its position.
     */
    @Test
    void itemsAccumulateWhileABatchRunsAndEachCallerGetsItsOwnElement() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 4);
        List<CompletableFuture<String>> fs = submitAll(gate, 0, 10);
        assertEquals(List.of(List.of(0)), batches, "the first item flushes at once");
        assertEquals(9, gate.pending());
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0), List.of(1, 2, 3, 4)), batches);
        assertEquals("v0", done(fs.get(0)));
        assertFalse(fs.get(1).isDone(), "answered before its batch ended");
        clock.advance(5 * MS);
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0), List.of(1, 2, 3, 4), List.of(5, 6, 7, 8), List.of(9)), batches);
        clock.advance(5 * MS);
        for (int i = 0; i < 10; i++) {
            assertEquals("v" + i, done(fs.get(i)), "caller " + i);
        }
        assertEquals(0, gate.pending());
        assertEquals(0, gate.linkedWaiters());
    }

    /** 1,000 submissions against a 5 ms batch: no batch above the maximum, every item once, in order. */
    @Test
    void batchesNeverExceedTheMaximumAndKeepSubmissionOrder() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 32);
        List<CompletableFuture<String>> fs = new ArrayList<>();
        for (int burst = 0; burst < 10; burst++) {
            fs.addAll(submitAll(gate, burst * 100, burst * 100 + 100));
            clock.advance(3 * MS);
        }
        for (int i = 0; i < 100; i++) {
            clock.advance(5 * MS);
        }
        List<Integer> sent = new ArrayList<>();
        for (List<Integer> b : batches) {
            assertTrue(b.size() <= 32 && !b.isEmpty(), "batch of " + b.size());
            sent.addAll(b);
        }
        assertEquals(java.util.stream.IntStream.range(0, 1000).boxed().toList(), sent, "FIFO inside and across batches");
        for (int i = 0; i < 1000; i++) {
            assertEquals("v" + i, done(fs.get(i)));
        }
        assertTrue(batches.stream().anyMatch(b -> b.size() == 32), "no batch was full");
    }

    /** Each caller's value is the element at its item's position, even if the batch reorders nothing else. */
    @Test
    void outputIGoesToInputI() {
        BatchGate<Integer, Integer> gate = new BatchGate<>(items -> Task.value(items.stream().map(i -> i * 10).toList()), 8);
        Promise<Void> hold = new Promise<>();
        BatchGate<Integer, Integer> held = new BatchGate<>(items -> hold.task().map(ignored -> items.stream().map(i -> -i).toList()), 8);
        CompletableFuture<Integer> first = held.submit(1).toCompletableFuture();
        List<CompletableFuture<Integer>> rest = new ArrayList<>();
        for (int i = 2; i <= 6; i++) {
            rest.add(held.submit(i).toCompletableFuture());
        }
        hold.complete(null);
        assertEquals(-1, done(first));
        for (int i = 0; i < rest.size(); i++) {
            assertEquals(-(i + 2), done(rest.get(i)));
        }
        assertEquals(70, gate.call(7), "the blocking door");
    }

    /** A list of the wrong size fails each caller of that batch with both sizes; the next batch is fine. */
    @Test
    void aWrongSizedResultFailsEveryCallerOfItsBatchNamingBothSizes() {
        AtomicInteger calls = new AtomicInteger();
        BatchGate<Integer, String> gate = gate(items -> {
            batches.add(List.copyOf(items));
            List<String> out = items.stream().map(i -> "v" + i).toList();
            return Task.delay(Duration.ofMillis(1)).map(ignored -> calls.incrementAndGet() == 2 ? out.subList(1, out.size()) : out);
        }, 4);
        List<CompletableFuture<String>> fs = submitAll(gate, 0, 9);
        for (int i = 0; i < 4; i++) {
            clock.advance(MS);
        }
        assertEquals(List.of(List.of(0), List.of(1, 2, 3, 4), List.of(5, 6, 7, 8)), batches);
        assertEquals("v0", done(fs.get(0)));
        for (int i = 1; i <= 4; i++) {
            IllegalStateException e = assertInstanceOf(IllegalStateException.class, error(fs.get(i)));
            assertTrue(e.getMessage().contains("3 results") && e.getMessage().contains("4 items"), e.getMessage());
        }
        for (int i = 5; i <= 8; i++) {
            assertEquals("v" + i, done(fs.get(i)));
        }
        BatchGate<Integer, String> nulls = gate(items -> Task.value(null), 4);
        IllegalStateException e = assertInstanceOf(IllegalStateException.class, error(nulls.submit(1).toCompletableFuture()));
        assertTrue(e.getMessage().contains("null list") && e.getMessage().contains("1 items"), e.getMessage());
    }

    /** A failing batch gives its error to each of its callers; a throwing function and a null task too. */
    @Test
    void aBatchErrorGoesToEachOfItsCallers() {
        IllegalArgumentException boom = new IllegalArgumentException("disk full");
        Promise<List<String>> result = new Promise<>();
        BatchGate<Integer, String> gate = gate(items -> {
            batches.add(List.copyOf(items));
            return batches.size() == 2 ? result.task() : Task.delay(Duration.ofMillis(1)).map(ignored -> items.stream().map(i -> "v" + i).toList());
        }, 4);
        List<CompletableFuture<String>> fs = submitAll(gate, 0, 4);
        clock.advance(MS);
        result.fail(boom);
        for (int i = 1; i < 4; i++) {
            assertSame(boom, error(fs.get(i)), "caller " + i);
        }
        CompletableFuture<String> after = gate.submit(9).toCompletableFuture();
        clock.advance(MS);
        assertEquals("v9", done(after), "the batch after a failed one");

        BatchGate<Integer, String> throwing = gate(items -> {
            throw boom;
        }, 4);
        assertSame(boom, error(throwing.submit(1).toCompletableFuture()));
        assertSame(boom, error(throwing.submit(2).toCompletableFuture()), "the place of the failed batch was given back");
        BatchGate<Integer, String> nullTask = gate(items -> null, 4);
        assertInstanceOf(NullPointerException.class, error(nullTask.submit(1).toCompletableFuture()));
    }

    /** A batch that completes cancelled cancels each of its callers; the gate goes on. */
    @Test
    void aCancelledBatchCancelsItsCallers() {
        Promise<List<String>> result = new Promise<>();
        BatchGate<Integer, String> gate = gate(items -> {
            batches.add(List.copyOf(items));
            return batches.size() == 1 ? result.task() : Task.value(items.stream().map(i -> "v" + i).toList());
        }, 4);
        CompletableFuture<Outcome<String>> a = gate.submit(1).outcome().toCompletableFuture();
        CompletableFuture<String> b = gate.submit(2).toCompletableFuture();
        result.cancel();
        assertInstanceOf(Outcome.Cancelled.class, done(a));
        assertEquals("v2", done(b));
    }

    /**
     * A caller cancelled while its item waits leaves the queue: the item is never sent, nothing stays
     * linked, and the items around it go in order.
     */
    @Test
    void aCallerCancelledWhileWaitingIsNeverSent() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 4);
        List<CompletableFuture<String>> fs = submitAll(gate, 0, 6);
        fs.get(2).cancel(false);
        fs.get(4).cancel(false);
        assertTrue(fs.get(2).isCancelled());
        assertEquals(3, gate.pending());
        clock.advance(5 * MS);
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0), List.of(1, 3, 5)), batches);
        for (int i : new int[] {0, 1, 3, 5}) {
            assertEquals("v" + i, done(fs.get(i)));
        }
        assertEquals(0, gate.linkedWaiters());
        assertEquals(0, gate.pending());
    }

    /** 1,000 waiting callers all cancelled: no node, slot or count remains; the gate still works. */
    @Test
    void cancellingEveryWaiterLeavesNothingLinked() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 8);
        CompletableFuture<String> running = gate.submit(-1).toCompletableFuture();
        List<CompletableFuture<String>> fs = submitAll(gate, 0, 1000);
        assertEquals(1000, gate.pending());
        for (int i = 999; i >= 0; i -= 2) {
            fs.get(i).cancel(false); // newest first: the intake pops them
        }
        for (int i = 0; i < 1000; i += 2) {
            fs.get(i).cancel(false); // the rest from the oldest
        }
        assertEquals(0, gate.pending());
        assertEquals(0, gate.linkedWaiters(), "departed waiters still linked");
        clock.advance(5 * MS);
        assertEquals("v-1", done(running));
        assertEquals(List.of(List.of(-1)), batches, "a cancelled item was sent");
        CompletableFuture<String> later = gate.submit(7).toCompletableFuture();
        clock.advance(5 * MS);
        assertEquals("v7", done(later));
    }

    /**
     * Cancelled waiters in the middle of a long queue are purged: what stays linked is bounded by the
     * live waiters plus a constant, not by the cancellations.
     */
    @Test
    void cancelledWaitersInTheMiddleDoNotPileUp() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 8);
        gate.submit(-1).toCompletableFuture(); // keeps the flusher busy
        CompletableFuture<String> oldest = gate.submit(0).toCompletableFuture();
        for (int i = 1; i <= 10_000; i++) {
            gate.submit(i).toCompletableFuture().cancel(false);
        }
        CompletableFuture<String> newest = gate.submit(10_001).toCompletableFuture();
        assertTrue(gate.linkedWaiters() < 200, "linked: " + gate.linkedWaiters());
        assertEquals(2, gate.pending());
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(-1), List.of(0, 10_001)), batches);
        clock.advance(5 * MS);
        assertEquals("v0", done(oldest));
        assertEquals("v10001", done(newest));
    }

    /**
     * A caller cancelled after its item was taken completes cancelled at once; its item is still
     * sent, and the other callers of the batch get their elements.
     */
    @Test
    void aCallerCancelledAfterTheTakeStillSendsItsItem() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 4);
        CompletableFuture<String> first = gate.submit(0).toCompletableFuture();
        CompletableFuture<String> a = gate.submit(1).toCompletableFuture();
        CompletableFuture<String> b = gate.submit(2).toCompletableFuture();
        clock.advance(5 * MS); // [1, 2] taken and running
        assertEquals(List.of(List.of(0), List.of(1, 2)), batches);
        a.cancel(false);
        assertTrue(a.isCancelled(), "a taken caller cancels at once");
        clock.advance(5 * MS);
        assertEquals("v0", done(first));
        assertEquals("v2", done(b));
        assertEquals(0, gate.linkedWaiters());
    }

    /**
     * A member of a formed batch cancelled between the flush and its take (here: while the first
     * member's admission resumes it on another scheduler) is not sent; the batch, whose last member
     * it was, goes without it as soon as its departure is seen, and the gate goes on.
     */
    @Test
    void aMemberCancelledBetweenTheFlushAndItsTakeIsNotSent() {
        BatchGate<Integer, String> gate = gate(slowBatch(5), 4);
        HookScheduler elsewhere = new HookScheduler(clock);
        CompletableFuture<String> running = gate.submit(0).toCompletableFuture();
        CompletableFuture<String> a = gate.submit(1).startOn(elsewhere).toCompletableFuture();
        CompletableFuture<String> b = gate.submit(2).toCompletableFuture();
        elsewhere.hook = () -> b.cancel(false); // runs when the flush [1, 2] admits 1, before 2 is taken
        clock.advance(5 * MS);
        assertTrue(elsewhere.hookRan);
        assertTrue(b.isCancelled());
        assertEquals(List.of(List.of(0), List.of(1)), batches, "a member cancelled before its take was sent");
        clock.advance(5 * MS);
        assertEquals("v0", done(running));
        assertEquals("v1", done(a));
        assertEquals(0, gate.pending());
        assertEquals(0, gate.linkedWaiters());
        CompletableFuture<String> later = gate.submit(4).toCompletableFuture();
        clock.advance(5 * MS);
        assertEquals("v4", done(later), "the gate stopped after a member departed");
    }

    /**
     * A caller cancelled just as its item is taken (here: while its batch starts on the gate's
     * scheduler, between the take and the caller's admission, which then loses): its item is sent,
     * it completes cancelled, the counts stay right and the next batch still waits for this one.
     */
    @Test
    void aCallerCancelledAsItsItemIsTakenStillSendsItAndCountsStayRight() {
        HookScheduler batches = new HookScheduler(clock);
        BatchGate<Integer, String> gate = new BatchGate<>(slowBatch(5), 4, Duration.ZERO, 1, batches);
        List<CompletableFuture<String>> fs = new ArrayList<>(submitAll(gate, 0, 3));
        // The first work on the batches' scheduler is batch [0] resuming after its delay; the second is
        // the start of batch [1, 2], inside the take of its last member, before that member's admission.
        batches.hook = () -> batches.hook = () -> fs.get(2).cancel(false);
        clock.advance(5 * MS);
        assertTrue(batches.hookRan && batches.hook == null, "the cancellation did not run");
        assertEquals(List.of(List.of(0), List.of(1, 2)), this.batches, "a taken item was not sent");
        assertTrue(fs.get(2).isCancelled());
        assertEquals(0, gate.pending());
        assertEquals(0, gate.linkedWaiters());
        fs.addAll(submitAll(gate, 3, 5));
        clock.advance(MS);
        assertEquals(List.of(List.of(0), List.of(1, 2)), this.batches, "a second batch ran at once");
        clock.advance(4 * MS);
        assertEquals("v1", done(fs.get(1)));
        assertEquals(List.of(List.of(0), List.of(1, 2), List.of(3, 4)), this.batches);
        clock.advance(5 * MS);
        assertEquals("v4", done(fs.get(4)));
    }

    /**
     * With a linger, the oldest item waits for more until its linger ends, then everything waiting
     * (up to the maximum) goes in one batch; the gate holds one timer, not one per item.
     */
    @Test
    void theOldestItemLingersThenOneBatchGoes() {
        BatchGate<Integer, String> gate = new BatchGate<>(instantBatch(), 8, Duration.ofMillis(10), clock);
        List<CompletableFuture<String>> fs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            if (i > 0) {
                clock.advance(2 * MS);
            }
            fs.add(gate.submit(i).toCompletableFuture());
            assertTrue(clock.pending() <= 1, "a timer per item");
        }
        assertEquals(List.of(), batches, "flushed before the linger ended");
        clock.advance(MS); // 9 ms
        assertEquals(List.of(), batches);
        clock.advance(MS); // 10 ms after the first item
        assertEquals(List.of(List.of(0, 1, 2, 3, 4)), batches);
        for (int i = 0; i < 5; i++) {
            assertEquals("v" + i, done(fs.get(i)));
        }
        assertEquals(0, clock.pending(), "a timer left armed");
        CompletableFuture<String> late = gate.submit(9).toCompletableFuture();
        clock.advance(9 * MS);
        assertFalse(late.isDone(), "a new item lingers from its own arrival");
        clock.advance(MS);
        assertEquals("v9", done(late));
    }

    /** A full batch goes at once, before the linger ends; the rest lingers from the oldest's arrival. */
    @Test
    void aFullBatchGoesBeforeTheLingerEnds() {
        BatchGate<Integer, String> gate = new BatchGate<>(instantBatch(), 3, Duration.ofMillis(10), clock);
        List<CompletableFuture<String>> fs = new ArrayList<>(submitAll(gate, 0, 2));
        clock.advance(4 * MS);
        fs.addAll(submitAll(gate, 2, 4));
        assertEquals(List.of(List.of(0, 1, 2)), batches, "a full batch waited for the linger");
        assertEquals("v2", done(fs.get(2)));
        clock.advance(9 * MS);
        assertFalse(fs.get(3).isDone(), "lingered less than 10 ms");
        clock.advance(MS);
        assertEquals(List.of(List.of(0, 1, 2), List.of(3)), batches);
        assertEquals("v3", done(fs.get(3)));
        assertTrue(clock.pending() <= 1);
    }

    /** A cancelled oldest item does not hold the linger: the next one lingers from its own arrival. */
    @Test
    void lingerFollowsTheOldestLiveItem() {
        BatchGate<Integer, String> gate = new BatchGate<>(instantBatch(), 8, Duration.ofMillis(10), clock);
        CompletableFuture<String> first = gate.submit(0).toCompletableFuture();
        clock.advance(6 * MS);
        CompletableFuture<String> second = gate.submit(1).toCompletableFuture();
        first.cancel(false);
        clock.advance(4 * MS);
        assertEquals(List.of(), batches, "the cancelled item's linger flushed the next one");
        clock.advance(6 * MS);
        assertEquals(List.of(List.of(1)), batches);
        assertEquals("v1", done(second));
        assertEquals(0, gate.linkedWaiters());
    }

    /** With a busy flusher, items that have lingered go as soon as it is free. */
    @Test
    void lingeredItemsGoWhenTheFlusherIsFree() {
        BatchGate<Integer, String> gate = new BatchGate<>(slowBatch(20), 8, Duration.ofMillis(5), clock);
        CompletableFuture<String> a = gate.submit(0).toCompletableFuture();
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0)), batches);
        List<CompletableFuture<String>> fs = submitAll(gate, 1, 4);
        clock.advance(15 * MS); // the first batch ends at 25 ms; 1..3 have lingered 15 ms
        assertEquals(List.of(List.of(0)), batches);
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0), List.of(1, 2, 3)), batches);
        assertEquals("v0", done(a));
        clock.advance(20 * MS);
        assertEquals("v3", done(fs.get(2)));
    }

    /** Two batches may run at once; a third waits for one of them; order of formation is FIFO. */
    @Test
    void concurrentBatchesAreBounded() {
        BatchGate<Integer, String> gate = new BatchGate<>(slowBatch(5), 2, Duration.ZERO, 2, clock);
        List<CompletableFuture<String>> fs = submitAll(gate, 0, 7);
        assertEquals(List.of(List.of(0), List.of(1)), batches, "two batches at once");
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0), List.of(1), List.of(2, 3), List.of(4, 5)), batches);
        clock.advance(5 * MS);
        clock.advance(5 * MS);
        assertEquals(List.of(List.of(0), List.of(1), List.of(2, 3), List.of(4, 5), List.of(6)), batches);
        for (int i = 0; i < 7; i++) {
            assertEquals("v" + i, done(fs.get(i)));
        }
        assertEquals(2, gate.maxConcurrentBatches());
    }

    /**
     * close cancels the waiting callers (their items are never sent) and later submissions; the
     * running batch finishes and delivers.
     */
    @Test
    void closeCancelsWaitingItemsAndLetsRunningBatchesFinish() {
        BatchGate<Integer, String> gate = new BatchGate<>(slowBatch(5), 4, Duration.ofMillis(1), clock);
        CompletableFuture<String> running = gate.submit(0).toCompletableFuture();
        clock.advance(MS);
        List<CompletableFuture<String>> waiting = submitAll(gate, 1, 4);
        gate.close();
        gate.close();
        assertTrue(gate.isClosed());
        for (CompletableFuture<String> f : waiting) {
            assertTrue(f.isCancelled());
        }
        assertTrue(assertThrows(CancellationException.class, () -> gate.call(9)) != null);
        assertInstanceOf(Outcome.Cancelled.class, gate.submit(8).outcome().toCompletableFuture().getNow(null));
        assertEquals(0, gate.pending());
        assertEquals(0, gate.linkedWaiters());
        clock.advance(5 * MS);
        assertEquals("v0", done(running), "the running batch delivered after close");
        assertEquals(List.of(List.of(0)), batches);
        assertTrue(gate.toString().contains("closed"), gate.toString());
    }

    /** Building the task runs nothing; each start submits again. */
    @Test
    void submitIsLazyAndEachStartSubmits() {
        BatchGate<Integer, String> gate = gate(instantBatch(), 4);
        Task<String> t = gate.submit(5);
        assertEquals(0, gate.pending());
        assertEquals(List.of(), batches);
        assertEquals("v5", done(t.toCompletableFuture()));
        assertEquals("v5", done(t.toCompletableFuture()));
        assertEquals(List.of(List.of(5), List.of(5)), batches);
    }

    /** Platform threads submitting at once through a pool: every result right, no batch too big, per-thread order kept. */
    @Test
    void concurrentSubmittersOnAPool() throws Exception {
        int threads = 4;
        int each = 2_000;
        List<List<Integer>> seen = new CopyOnWriteArrayList<>();
        try (WorkStealingPool pool = WorkStealingPool.create(2, "batch-test")) {
            BatchGate<Integer, Integer> gate = new BatchGate<>(items -> {
                seen.add(List.copyOf(items));
                return Task.yieldNow().map(ignored -> items.stream().map(i -> i + 1).toList());
            }, 16, Duration.ZERO, pool);
            List<Thread> ts = new ArrayList<>();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * 1_000_000;
                ts.add(Thread.ofPlatform().start(() -> {
                    try {
                        List<CompletableFuture<Integer>> fs = new ArrayList<>();
                        for (int i = 0; i < each; i++) {
                            fs.add(gate.submit(base + i).toCompletableFuture());
                            if (i % 100 == 99) {
                                assertEquals(base + i + 1, gate.call(base + i + 500_000) - 500_000, "blocking door");
                            }
                        }
                        for (int i = 0; i < each; i++) {
                            assertEquals(base + i + 1, fs.get(i).join());
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }));
            }
            for (Thread t : ts) {
                t.join();
            }
            assertEquals(List.of(), errors);
            assertEquals(0, gate.pending());
            assertEquals(0, gate.linkedWaiters());
        }
        int total = 0;
        List<Integer> last = new ArrayList<>(List.of(-1, -1, -1, -1, -1, -1, -1, -1));
        for (List<Integer> b : seen) {
            assertTrue(b.size() <= 16, "batch of " + b.size());
            total += b.size();
            for (int item : b) {
                int thread = item / 1_000_000 * 2 + (item % 1_000_000 >= 500_000 ? 1 : 0);
                assertTrue(item > last.get(thread), "a thread's items out of order");
                last.set(thread, item);
            }
        }
        assertEquals(threads * (each + each / 100), total);
    }

    @Test
    void badInputIsRefusedWithTheArgumentsName() {
        Function<List<Integer>, Task<List<String>>> fn = instantBatch();
        assertMessage(IllegalArgumentException.class, "maxBatchSize", () -> new BatchGate<>(fn, 0));
        assertMessage(IllegalArgumentException.class, "maxBatchSize", () -> new BatchGate<>(fn, -3, Duration.ZERO, clock));
        assertMessage(IllegalArgumentException.class, "maxConcurrentBatches", () -> new BatchGate<>(fn, 1, Duration.ZERO, 0, clock));
        assertMessage(IllegalArgumentException.class, "linger", () -> new BatchGate<>(fn, 1, Duration.ofNanos(-1), clock));
        assertMessage(NullPointerException.class, "batch", () -> new BatchGate<Integer, String>(null, 1));
        assertMessage(NullPointerException.class, "linger", () -> new BatchGate<>(fn, 1, null, clock));
        assertMessage(NullPointerException.class, "scheduler", () -> new BatchGate<>(fn, 1, Duration.ZERO, null));
        BatchGate<Integer, String> gate = new BatchGate<>(fn, 5, Duration.ofMillis(2), 3, clock);
        assertMessage(NullPointerException.class, "item", () -> gate.submit(null));
        assertMessage(NullPointerException.class, "item", () -> gate.call(null));
        assertEquals(5, gate.maxBatchSize());
        assertEquals(2 * MS, gate.lingerNanos());
        assertEquals(3, gate.maxConcurrentBatches());
        assertEquals("BatchGate[maxBatchSize=5, linger=2000000ns, maxConcurrentBatches=3, pending=0]", gate.toString());
        assertEquals(Long.MAX_VALUE, new BatchGate<>(fn, 1, Duration.ofSeconds(Long.MAX_VALUE), Scheduler.inline()).lingerNanos(),
                "a linger too long for a long saturates");
    }

    private static void assertMessage(Class<? extends Throwable> type, String name, org.junit.jupiter.api.function.Executable body) {
        Throwable e = assertThrows(type, body);
        assertTrue(e.getMessage() != null && e.getMessage().contains(name), type.getSimpleName() + ": " + e.getMessage());
    }

    /**
     * A scheduler that is never current: work submitted to it runs at once on the submitting thread,
     * after a one-shot hook; time is the manual clock's. Lets a test act inside a resumption.
     */
    private static final class HookScheduler implements Scheduler {
        private final ManualScheduler clock;
        volatile Runnable hook;
        volatile boolean hookRan;

        HookScheduler(ManualScheduler clock) {
            this.clock = clock;
        }

        @Override
        public void execute(Runnable task) {
            Runnable h = hook;
            hook = null;
            if (h != null) {
                h.run();
                hookRan = true;
            }
            task.run();
        }

        @Override
        public dev.coro.cancel.Cancellable schedule(Runnable task, Duration delay) {
            return clock.schedule(task, delay);
        }

        @Override
        public long nanoTime() {
            return clock.nanoTime();
        }

        @Override
        public boolean isCurrent() {
            return false;
        }
    }

    /** The future's value; it must be complete (work runs inline on virtual time), never waited for. */
    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "not complete: the test would wait for ever");
        return f.join();
    }

    /** The error the completed future failed with. */
    private static Throwable error(CompletableFuture<?> f) {
        assertTrue(f.isDone(), "not complete");
        try {
            f.join();
        } catch (java.util.concurrent.CompletionException e) {
            return e.getCause();
        }
        throw new AssertionError("completed normally");
    }
}
