package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The readers-writer invariant under load, and a waiting writer's cancellation racing its admission. */
class ReadWriteGateStressTest {
    private static final int VALUE = 1;
    private static final int CANCELLED = 2;
    private static final int OTHER = 3;

    /**
     * Readers and writers (one in five) from three submitting threads, admitted on a 2-worker pool,
     * each submitter cancelling random recent entries of its own (one in eight) while they wait or
     * run; one in eleven entries uses a try door. The admitted work enters, yields to the pool (so the
     * other worker runs other admitted work meanwhile, and a cancellation can land inside) and
     * leaves. With atomic counters, at its entry and at its exit: a writer is alone (writers &lt;= 1,
     * and a writer implies no reader) at every moment. After all have ended: no entry was admitted
     * twice; one that ended with its value was admitted once; one nobody cancelled that used the
     * waiting door ended with its value (admitted exactly once), and a declined try never ran; the
     * gate is empty: a try-write is admitted and closeAndCheck passes.
     */
    @Test
    @Tag("stress")
    void readersAndWritersFromSeveralThreadsWithRandomCancellations() throws Exception {
        int submitters = 3;
        int perSubmitter = Stress.scaled(4_000);
        int entries = submitters * perSubmitter;
        ReadWriteGate gate = new ReadWriteGate();
        Counters c = new Counters(entries);
        AtomicIntegerArray ended = new AtomicIntegerArray(entries);
        AtomicIntegerArray cancelRequested = new AtomicIntegerArray(entries);
        boolean[] writer = new boolean[entries];
        boolean[] trying = new boolean[entries];
        SplittableRandom kinds = new SplittableRandom(42);
        for (int i = 0; i < entries; i++) {
            writer[i] = kinds.nextInt(5) == 0;
            trying[i] = kinds.nextInt(11) == 0;
        }
        CountDownLatch allEnded = new CountDownLatch(entries);
        CyclicBarrier start = new CyclicBarrier(submitters);
        try (WorkStealingPool pool = WorkStealingPool.create(2, "rw-stress")) {
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < submitters; s++) {
                int first = s * perSubmitter;
                SplittableRandom random = new SplittableRandom(1000 + s);
                threads.add(Thread.ofPlatform().name("rw-submitter-" + s).start(() -> {
                    List<CompletableFuture<Void>> mine = new ArrayList<>(perSubmitter);
                    await(start);
                    for (int k = 0; k < perSubmitter; k++) {
                        int n = first + k;
                        boolean w = writer[n];
                        Task<Void> work = Task.fromRunnable(() -> c.enter(n, w))
                                .then(Task.yieldNow())
                                .andFinally(() -> c.leave(n, w));
                        Task<Void> entry = w
                                ? (trying[n] ? gate.tryWithinWrite(work) : gate.withinWrite(work))
                                : (trying[n] ? gate.tryWithinRead(work) : gate.withinRead(work));
                        mine.add(entry.startOn(pool).outcome().map(o -> {
                            ended.set(n, o instanceof Outcome.Value<Void> ? VALUE
                                    : o instanceof Outcome.Cancelled<Void> ? CANCELLED : OTHER);
                            allEnded.countDown();
                            return (Void) null;
                        }).toCompletableFuture());
                        if (k > 0 && random.nextInt(8) == 0) { // cancel a recent entry, waiting or running
                            int back = 1 + random.nextInt(Math.min(k, 32));
                            cancelRequested.set(n - back, 1);
                            mine.get(k - back).cancel(false);
                        }
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            // Wait for every entry to end; fail at once, rather than at the test's timeout, if the
            // admitted work saw the rule broken (a broken gate may never let the rest end).
            while (!allEnded.await(100, TimeUnit.MILLISECONDS)) {
                assertNull(c.broken.get());
            }
        }
        assertNull(c.broken.get());
        int readersAdmitted = 0;
        int writersAdmitted = 0;
        int cancelledInside = 0;
        int cancelledWaiting = 0;
        int declined = 0;
        for (int i = 0; i < entries; i++) {
            int e = ended.get(i);
            int ran = c.ran.get(i);
            assertTrue(e == VALUE || e == CANCELLED, "entry " + i + " ended " + e);
            assertTrue(ran <= 1, "entry " + i + " admitted " + ran + " times");
            if (e == VALUE) {
                assertEquals(1, ran, "entry " + i + " ended with its value");
            }
            if (cancelRequested.get(i) == 0) {
                if (!trying[i]) {
                    assertEquals(VALUE, e, "entry " + i + ": nobody cancelled it, so it was admitted");
                } else if (e == CANCELLED) {
                    assertEquals(0, ran, "entry " + i + ": a declined try never runs");
                    declined++;
                }
            } else if (e == CANCELLED) {
                if (ran == 1) {
                    cancelledInside++;
                } else {
                    cancelledWaiting++;
                }
            }
            if (ran == 1) {
                if (writer[i]) {
                    writersAdmitted++;
                } else {
                    readersAdmitted++;
                }
            }
        }
        assertEquals(0, c.readersIn.get());
        assertEquals(0, c.writersIn.get());
        assertEquals(0, gate.readers());
        assertFalse(gate.isWriting());
        assertEquals(1, gate.tryWithinWrite(Task.value(1)).join(), "the gate is empty: a writer gets in at once");
        gate.closeAndCheck();
        System.out.println("readersAndWritersFromSeveralThreadsWithRandomCancellations: " + entries
                + " entries, admitted " + readersAdmitted + " readers and " + writersAdmitted + " writers; "
                + "cancelled " + cancelledWaiting + " waiting and " + cancelledInside + " inside; "
                + declined + " tries declined; most readers together " + c.mostReaders.get());
    }

    /** The counters the admitted work keeps, and the first broken rule it saw. */
    private static final class Counters {
        final AtomicInteger readersIn = new AtomicInteger();
        final AtomicInteger writersIn = new AtomicInteger();
        final AtomicInteger mostReaders = new AtomicInteger();
        final AtomicReference<String> broken = new AtomicReference<>();
        final AtomicIntegerArray ran;

        Counters(int entries) {
            ran = new AtomicIntegerArray(entries);
        }

        // Each side increments its own counter, then reads the other's (all sequentially consistent):
        // of a reader and a writer that overlap, at least one sees the other.
        void enter(int n, boolean writer) {
            ran.incrementAndGet(n);
            if (writer) {
                int writers = writersIn.incrementAndGet();
                int readers = readersIn.get();
                if (writers != 1 || readers != 0) {
                    broken.compareAndSet(null, "writer " + n + " admitted with " + (writers - 1)
                            + " writers and " + readers + " readers inside");
                }
            } else {
                mostReaders.accumulateAndGet(readersIn.incrementAndGet(), Math::max);
                if (writersIn.get() != 0) {
                    broken.compareAndSet(null, "reader " + n + " admitted while a writer is inside");
                }
            }
        }

        void leave(int n, boolean writer) {
            if (writer) {
                int readers = readersIn.get();
                if (readers != 0) {
                    broken.compareAndSet(null, readers + " readers came in while writer " + n + " was inside");
                }
                writersIn.decrementAndGet();
            } else {
                if (writersIn.get() != 0) {
                    broken.compareAndSet(null, "a writer came in while reader " + n + " was inside");
                }
                readersIn.decrementAndGet();
            }
        }
    }

    /**
     * Readers inside, a writer waiting, readers queued behind it: the last reader leaves while another
     * thread cancels the writer. Whichever wins, the writer ran at most once and alone, the readers
     * behind it are admitted (after it, or at once), and the gate ends empty.
     */
    @Test
    @Tag("stress")
    void aWaitingWritersCancellationRacingTheLastReadersExit() throws Exception {
        int rounds = Stress.scaled(3_000);
        CyclicBarrier barrier = new CyclicBarrier(2);
        int cancelWon = 0;
        for (int round = 0; round < rounds; round++) {
            ReadWriteGate gate = new ReadWriteGate();
            Admission r1 = gate.acquireRead().join();
            Admission r2 = gate.acquireRead().join();
            AtomicInteger writerRan = new AtomicInteger();
            AtomicInteger readersWithWriter = new AtomicInteger();
            CompletableFuture<Integer> writerDone = gate.withinWrite(Task.fromCallable(() -> {
                readersWithWriter.set(gate.readers());
                return writerRan.incrementAndGet();
            })).toCompletableFuture();
            CompletableFuture<Admission> r3 = gate.acquireRead().toCompletableFuture();
            CompletableFuture<Admission> r4 = gate.acquireRead().toCompletableFuture();
            r1.exit();
            Thread canceller = Thread.ofPlatform().start(() -> {
                await(barrier);
                writerDone.cancel(false);
            });
            await(barrier);
            r2.exit(); // the last reader out: admits the writer unless its cancellation came first
            canceller.join();
            Admission a3 = r3.join(); // admitted either way: after the writer ran, or at its cancellation
            Admission a4 = r4.join();
            assertTrue(writerRan.get() <= 1, "round " + round);
            assertEquals(0, readersWithWriter.get(), "round " + round + ": the writer ran alone");
            if (writerRan.get() == 0) {
                cancelWon++;
            }
            assertEquals(2, gate.readers(), "round " + round);
            assertFalse(gate.isWriting(), "round " + round);
            a3.exit();
            a4.exit();
            assertEquals(0, gate.readers(), "round " + round);
            gate.closeAndCheck();
        }
        System.out.println("aWaitingWritersCancellationRacingTheLastReadersExit: cancel won " + cancelWon
                + " of " + rounds);
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
