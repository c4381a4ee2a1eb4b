package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Unit tests of {@link ReadWriteGate}: the rule, its FIFO consequences, the try doors, close,
 * cancellation of a waiting writer, the destruction check and bad input. Unless a test says
 * otherwise, tasks run on the inline scheduler, so an exit admits the next waiters and runs their
 * work before it returns: every step is checked in order, without threads.
 */
class ReadWriteGateTest {

    private static Task<Void> log(List<String> order, String name) {
        return Task.fromRunnable(() -> order.add(name));
    }

    @Test
    void twoReadersAreAdmittedAtOnce() throws Exception {
        ReadWriteGate gate = new ReadWriteGate();
        // Each reader's body waits, inside the gate, until both readers are inside: neither call
        // returns unless the two bodies overlap.
        CountDownLatch bothInside = new CountDownLatch(2);
        AtomicInteger seenInside = new AtomicInteger();
        try (ExecutorService threads = Executors.newFixedThreadPool(2)) {
            List<Future<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                calls.add(threads.submit(() -> gate.callRead(() -> {
                    bothInside.countDown();
                    bothInside.await();
                    seenInside.accumulateAndGet(gate.readers(), Math::max);
                    return 1;
                })));
            }
            try {
                for (Future<Integer> call : calls) {
                    assertEquals(1, call.get());
                }
            } catch (Throwable t) {
                threads.shutdownNow(); // a broken gate fails the test (on its timeout) instead of hanging close()
                throw t;
            }
        }
        assertEquals(2, seenInside.get(), "both readers were admitted at the same time");
        assertEquals(0, gate.readers());
        gate.closeAndCheck();
    }

    @Test
    void aReaderInsideDoesNotKeepAnotherReaderOutButKeepsTheWriterOut() {
        ReadWriteGate gate = new ReadWriteGate();
        List<String> order = new ArrayList<>();
        Admission outer = gate.acquireRead().join();
        assertEquals(1, gate.readers());
        // while the first reader is inside: a second reader is admitted at once, a writer is not
        assertEquals("inner", gate.tryWithinRead(Task.fromCallable(() -> {
            order.add("inner reader, readers=" + gate.readers());
            return "inner";
        })).join());
        assertThrows(CancellationException.class, () -> gate.tryWithinWrite(log(order, "writer")).join());
        assertEquals(List.of("inner reader, readers=2"), order);
        assertEquals(1, gate.readers());
        outer.exit();
        assertEquals(0, gate.readers());
        assertFalse(gate.isWriting());
        gate.closeAndCheck();
    }

    @Test
    void aWriterExcludesReadersAndWriters() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission w = gate.acquireWrite().join();
        assertTrue(gate.isWriting());
        assertEquals(0, gate.readers());
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> reader = gate.withinRead(log(order, "reader")).toCompletableFuture();
        CompletableFuture<Void> writer = gate.withinWrite(log(order, "writer")).toCompletableFuture();
        assertTrue(order.isEmpty(), "nothing runs while the writer is inside");
        assertThrows(CancellationException.class, () -> gate.tryWithinRead(log(order, "try reader")).join());
        assertThrows(CancellationException.class, () -> gate.tryWithinWrite(log(order, "try writer")).join());
        assertTrue(w.exit());
        // the reader was first in line, ran and left; then the writer
        assertEquals(List.of("reader", "writer"), order);
        assertTrue(reader.isDone() && writer.isDone());
        assertFalse(gate.isWriting());
        gate.closeAndCheck();
    }

    @Test
    void readersKeepTheWriterOutUntilTheLastOneLeaves() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission r1 = gate.acquireRead().join();
        Admission r2 = gate.acquireRead().join();
        assertEquals(2, gate.readers());
        CompletableFuture<Admission> writer = gate.acquireWrite().toCompletableFuture();
        assertFalse(writer.isDone());
        r1.exit();
        assertFalse(writer.isDone(), "one reader is still inside");
        assertEquals(1, gate.readers());
        r2.exit();
        assertTrue(writer.isDone(), "the last reader's exit admits the writer");
        assertTrue(gate.isWriting());
        assertEquals(0, gate.readers());
        writer.join().exit();
        assertFalse(gate.isWriting());
    }

    @Test
    void aQueuedWriterBlocksALaterReaderUntilItHasRun() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission r1 = gate.acquireRead().join();
        List<String> order = new ArrayList<>();
        CompletableFuture<Admission> writer = gate.acquireWrite().toCompletableFuture();
        CompletableFuture<Void> r2 = gate.withinRead(log(order, "r2")).toCompletableFuture();
        assertFalse(writer.isDone());
        assertTrue(order.isEmpty(), "r2 waits behind the writer although a reader is inside");
        assertEquals(1, gate.readers());
        r1.exit();
        assertTrue(writer.isDone(), "the writer goes first");
        assertTrue(order.isEmpty(), "r2 still waits: the writer is inside");
        assertTrue(gate.isWriting());
        order.add("writer leaves");
        writer.join().exit();
        assertEquals(List.of("writer leaves", "r2"), order);
        assertTrue(r2.isDone());
        gate.closeAndCheck();
    }

    @Test
    void consecutiveQueuedReadersAreAdmittedTogether() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission w1 = gate.acquireWrite().join();
        List<CompletableFuture<Admission>> group = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            group.add(gate.acquireRead().toCompletableFuture());
        }
        CompletableFuture<Admission> w2 = gate.acquireWrite().toCompletableFuture();
        CompletableFuture<Admission> last = gate.acquireRead().toCompletableFuture();
        w1.exit();
        for (CompletableFuture<Admission> r : group) {
            assertTrue(r.isDone(), "the three readers between the writers enter together");
        }
        assertEquals(3, gate.readers());
        assertFalse(w2.isDone());
        assertFalse(last.isDone(), "the reader behind w2 waits for w2");
        group.get(0).join().exit();
        group.get(1).join().exit();
        assertFalse(w2.isDone());
        group.get(2).join().exit();
        assertTrue(w2.isDone());
        assertFalse(last.isDone());
        w2.join().exit();
        assertTrue(last.isDone());
        assertEquals(1, gate.readers());
        last.join().exit();
        gate.closeAndCheck();
    }

    @Test
    void tryDoorsDeclineWhenIncompatibleOrWhenAnyoneIsQueued() {
        ReadWriteGate gate = new ReadWriteGate();
        AtomicInteger ran = new AtomicInteger();
        Task<Integer> work = Task.fromCallable(ran::incrementAndGet);
        // empty gate: both admit
        assertEquals(1, gate.tryWithinRead(work).join());
        assertEquals(2, gate.tryWithinWrite(work).join());
        // a reader inside: another reader yes, a writer no
        Admission r = gate.tryAcquireRead().join();
        assertEquals(3, gate.tryWithinRead(work).join());
        assertThrows(CancellationException.class, () -> gate.tryWithinWrite(work).join());
        assertThrows(CancellationException.class, () -> gate.tryAcquireWrite().join());
        // a writer queued behind the reader: a reader no longer gets in by trying (no barging)
        CompletableFuture<Admission> queuedWriter = gate.acquireWrite().toCompletableFuture();
        assertThrows(CancellationException.class, () -> gate.tryWithinRead(work).join());
        assertThrows(CancellationException.class, () -> gate.tryAcquireRead().join());
        assertEquals(3, ran.get(), "declined work does not run");
        assertEquals(1, gate.readers());
        r.exit();
        // the writer inside: both decline
        Admission w = queuedWriter.join();
        assertThrows(CancellationException.class, () -> gate.tryWithinRead(work).join());
        assertThrows(CancellationException.class, () -> gate.tryWithinWrite(work).join());
        assertEquals(3, ran.get());
        w.exit();
        Admission again = gate.tryAcquireWrite().join();
        assertTrue(gate.isWriting());
        again.exit();
        gate.closeAndCheck();
    }

    @Test
    void withinLeavesOnTheValueErrorAndCancelledChannelsForBothKinds() {
        ReadWriteGate gate = new ReadWriteGate();
        assertEquals(5, gate.withinRead(Task.value(5)).join());
        assertEquals(6, gate.withinWrite(Task.value(6)).join());
        IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> gate.withinRead(Task.failure(boom)).join()));
        assertSame(boom, assertThrows(IllegalStateException.class, () -> gate.withinWrite(Task.failure(boom)).join()));
        assertThrows(CancellationException.class, () -> gate.withinRead(Task.cancelled()).join());
        assertThrows(CancellationException.class, () -> gate.withinWrite(Task.cancelled()).join());
        assertEquals(0, gate.readers());
        assertFalse(gate.isWriting());
        assertEquals(7, gate.callWrite(() -> 7));
        IllegalArgumentException bad = new IllegalArgumentException("bad");
        assertSame(bad, assertThrows(IllegalArgumentException.class, () -> gate.callRead(() -> {
            throw bad;
        })));
        gate.closeAndCheck(); // nothing admitted remains
    }

    @Test
    void admissionsOfBothKindsExitExactlyOnce() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission r = gate.acquireRead().join();
        assertTrue(r.exit());
        assertFalse(r.exit(), "a second exit does nothing");
        r.close();
        assertEquals(0, gate.readers());
        try (Admission w = gate.acquireWrite().join()) {
            assertTrue(gate.isWriting());
        }
        assertFalse(gate.isWriting());
        gate.closeAndCheck();
    }

    @Test
    void closeCancelsWaitersOfBothKindsAndLaterEntries() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission w = gate.acquireWrite().join();
        AtomicInteger ran = new AtomicInteger();
        Task<Integer> work = Task.fromCallable(ran::incrementAndGet);
        CompletableFuture<Integer> reader = gate.withinRead(work).toCompletableFuture();
        CompletableFuture<Integer> writer = gate.withinWrite(work).toCompletableFuture();
        CompletableFuture<Admission> readerAcquire = gate.acquireRead().toCompletableFuture();
        gate.close();
        assertTrue(gate.isClosed());
        assertThrows(CancellationException.class, reader::join);
        assertThrows(CancellationException.class, writer::join);
        assertThrows(CancellationException.class, readerAcquire::join);
        assertThrows(CancellationException.class, () -> gate.withinRead(work).join());
        assertThrows(CancellationException.class, () -> gate.withinWrite(work).join());
        assertThrows(CancellationException.class, () -> gate.tryWithinRead(work).join());
        assertThrows(CancellationException.class, () -> gate.tryWithinWrite(work).join());
        assertThrows(CancellationException.class, () -> gate.acquireRead().join());
        assertThrows(CancellationException.class, () -> gate.acquireWrite().join());
        assertThrows(CancellationException.class, () -> gate.tryAcquireRead().join());
        assertThrows(CancellationException.class, () -> gate.tryAcquireWrite().join());
        assertThrows(CancellationException.class, () -> gate.callRead(ran::incrementAndGet));
        assertThrows(CancellationException.class, () -> gate.callWrite(ran::incrementAndGet));
        assertEquals(0, ran.get(), "no work ran after close");
        assertTrue(gate.isWriting(), "admitted work is not interrupted");
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("1 admitted"), live.getMessage());
        w.exit(); // the writer leaves a closed gate as usual
        assertFalse(gate.isWriting());
        gate.closeAndCheck();
        gate.close(); // idempotent
    }

    @Test
    void cancellingAQueuedWriterLetsTheReadersBehindItInAtOnceWhileOthersAreInside() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission r1 = gate.acquireRead().join();
        AtomicInteger writerRan = new AtomicInteger();
        List<String> order = new ArrayList<>();
        CompletableFuture<Integer> writer = gate.withinWrite(Task.fromCallable(writerRan::incrementAndGet))
                .toCompletableFuture();
        CompletableFuture<Admission> r2 = gate.acquireRead().toCompletableFuture();
        CompletableFuture<Void> r3 = gate.withinRead(log(order, "r3")).toCompletableFuture();
        assertFalse(r2.isDone());
        assertTrue(order.isEmpty());
        assertTrue(writer.cancel(false));
        // the cancel itself (inline scheduler) lets r2 and r3 in, while r1 is still inside
        assertTrue(r2.isDone(), "r2 admitted as soon as the writer ahead of it is cancelled");
        assertEquals(List.of("r3"), order);
        assertTrue(r3.isDone());
        assertEquals(2, gate.readers(), "r1 and r2 inside together");
        assertEquals(0, writerRan.get(), "the cancelled writer's work never runs");
        assertFalse(r1.isExited());
        r1.exit();
        r2.join().exit();
        assertEquals(0, gate.readers());
        gate.closeAndCheck();
    }

    @Test
    void aCancelledWriterBehindTheWriterInsideIsSkippedWhenThatWriterLeaves() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission w1 = gate.acquireWrite().join();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> w2 = gate.withinWrite(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        CompletableFuture<Admission> r = gate.acquireRead().toCompletableFuture();
        assertTrue(w2.cancel(false));
        assertFalse(r.isDone(), "w1 is still inside");
        w1.exit();
        assertTrue(r.isDone());
        assertEquals(1, gate.readers());
        assertEquals(0, ran.get());
        r.join().exit();
        gate.closeAndCheck();
    }

    @Test
    void closeAndCheckWithAReaderInsideThrows() {
        ReadWriteGate gate = new ReadWriteGate();
        Admission r = gate.acquireRead().join();
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(e.getMessage().contains("1 admitted"), e.getMessage());
        assertTrue(gate.isClosed());
        r.exit();
        gate.closeAndCheck();
        assertEquals("ReadWriteGate[readers=0, writing=false, closed]", gate.toString());
    }

    @Test
    void nullWorkIsRejectedNamingTheArgument() {
        ReadWriteGate gate = new ReadWriteGate();
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.withinRead(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.withinWrite(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.tryWithinRead(null)).getMessage());
        assertEquals("work", assertThrows(NullPointerException.class, () -> gate.tryWithinWrite(null)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> gate.callRead(null)).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> gate.callWrite(null)).getMessage());
        gate.closeAndCheck();
    }

    @Test
    void theBlockingDoorsKeepWritersAloneOnVirtualThreads() throws Exception {
        ReadWriteGate gate = new ReadWriteGate();
        AtomicInteger readersIn = new AtomicInteger();
        AtomicInteger writersIn = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        int threads = 12;
        int calls = 200;
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                boolean writerThread = t % 4 == 0;
                done.add(vts.submit(() -> {
                    start.await();
                    int sum = 0;
                    for (int i = 0; i < calls; i++) {
                        if (writerThread) {
                            sum += gate.callWrite(() -> {
                                if (writersIn.incrementAndGet() != 1 || readersIn.get() != 0) {
                                    violations.incrementAndGet();
                                }
                                Thread.yield();
                                writersIn.decrementAndGet();
                                return 1;
                            });
                        } else {
                            sum += gate.callRead(() -> {
                                readersIn.incrementAndGet();
                                if (writersIn.get() != 0) {
                                    violations.incrementAndGet();
                                }
                                Thread.yield();
                                readersIn.decrementAndGet();
                                return 1;
                            });
                        }
                    }
                    return sum;
                }));
            }
            start.countDown();
            try {
                for (Future<Integer> f : done) {
                    for (;;) { // fail as soon as a violation is seen: a broken gate may never let the rest end
                        try {
                            assertEquals(calls, f.get(100, TimeUnit.MILLISECONDS));
                            break;
                        } catch (TimeoutException notYet) {
                            assertEquals(0, violations.get(), "a writer was inside with someone else");
                        }
                    }
                }
            } catch (Throwable t) {
                vts.shutdownNow(); // interrupts the joins, which cancel their waits: close() can return
                throw t;
            }
        }
        assertEquals(0, violations.get(), "a writer was never inside with anyone else");
        assertEquals(0, gate.readers());
        assertFalse(gate.isWriting());
        gate.closeAndCheck();
    }
}
