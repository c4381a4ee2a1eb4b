package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores {@link ReadWriteGate} in model-checking and stress modes with the readers-writer
 * admission invariant as the checked state.
 *
 * <p><b>Why the operations answer nothing.</b> As in {@link PermitGateLincheck}: which thread
 * admits a waiter, and whether a try declines because another thread is deciding an admission at that
 * instant, are not functions of the sequential history, so every operation returns nothing and the
 * checked property is the state. At every admission (in every interleaving explored), counted with
 * atomic counters by the admitted side: at most one writer, and a writer only with no reader. In
 * {@link #validate()} after each run, with everything quiescent:
 * <ul>
 *   <li>each waiter ended at most once, and a waiter whose cancel was requested has ended;</li>
 *   <li>the gate's counts equal the admissions held and not yet exited ({@link ReadWriteGate#readers()},
 *       {@link ReadWriteGate#isWriting()}): none lost or duplicated, also when an admit lost to a
 *       cancel;</li>
 *   <li>no missed signal: a waiter still waits only if something is admitted; a reader still waits
 *       with no writer admitted only behind a writer that still waits (FIFO); once closed, nobody
 *       waits.</li>
 * </ul>
 *
 * <p><b>Operations.</b> {@code tryRead} / {@code tryWrite} are the try doors' decision
 * (the engine's {@link dev.coro.internal.AdmissionEngine#tryEnterNow(Object)}); {@code acquireRead} / {@code acquireWrite} start
 * {@code gate.acquireRead()} / {@code acquireWrite()} (inline scheduler) and keep the waiter;
 * {@code cancel} cancels the thread's latest waiter; {@code release} exits one admission the thread
 * holds (the admissions of a thread's waiters are its own, wherever they resumed); {@code close}
 * closes the gate.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class ReadWriteGateLincheckTest {
    static final int THREADS = 3;
    private static final int SLOTS = THREADS + 2;
    private static final int READ = 0;
    private static final int WRITE = 1;

    private final ReadWriteGate gate = new ReadWriteGate();
    private final AtomicInteger readersIn = new AtomicInteger();
    private final AtomicInteger writersIn = new AtomicInteger();
    private volatile String broken;
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    private final ConcurrentLinkedQueue<Held>[] held = new ConcurrentLinkedQueue[SLOTS];
    // Slot tid is touched only by the thread that runs tid's operations.
    private final Waiter[] latest = new Waiter[SLOTS];

    /** Creates the gate and the per-thread lists of admissions. */
    public ReadWriteGateLincheckTest() {
        for (int i = 0; i < SLOTS; i++) {
            held[i] = new ConcurrentLinkedQueue<>();
        }
    }

    /** The try-read door's decision: admitted now, or declined. */
    @Operation
    public void tryRead(@Param(name = "tid") int tid) {
        tryEnter(tid, READ);
    }

    /** The try-write door's decision: admitted now, or declined. */
    @Operation
    public void tryWrite(@Param(name = "tid") int tid) {
        tryEnter(tid, WRITE);
    }

    private void tryEnter(int tid, int kind) {
        if (gate.engine.tryEnterNow(kind == READ ? ReadWriteGate.READ : ReadWriteGate.WRITE)) {
            entered(kind);
            held[tid].add(new Held(new Admission(gate.engine, kind == READ ? 1 : ReadWriteGate.WRITER), kind));
        }
    }

    /** Starts a read acquisition and keeps it as this thread's latest waiter. */
    @Operation
    public void acquireRead(@Param(name = "tid") int tid) {
        acquire(tid, READ, gate.acquireRead());
    }

    /** Starts a write acquisition and keeps it as this thread's latest waiter. */
    @Operation
    public void acquireWrite(@Param(name = "tid") int tid) {
        acquire(tid, WRITE, gate.acquireWrite());
    }

    private void acquire(int tid, int kind, Task<Admission> acquisition) {
        Waiter w = new Waiter(tid, kind);
        waiters.add(w);
        latest[tid] = w;
        w.future = acquisition.outcome().map(w::ended).toCompletableFuture();
    }

    /** Cancels this thread's latest waiter (a no-op if it has ended). */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        Waiter w = latest[tid];
        if (w != null) {
            w.cancelRequested = true;
            w.future.cancel(false);
        }
    }

    /** Exits one admission this thread holds, if any. */
    @Operation
    public void release(@Param(name = "tid") int tid) {
        Held h = held[tid].poll();
        if (h != null) {
            (h.kind == READ ? readersIn : writersIn).decrementAndGet(); // before the exit: it may admit inline
            h.admission.exit();
        }
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        gate.close();
    }

    private void entered(int kind) {
        if (kind == READ) {
            readersIn.incrementAndGet();
            int writers = writersIn.get();
            if (writers != 0) {
                broken = "a reader admitted while " + writers + " writer(s) are inside";
            }
        } else {
            int writers = writersIn.incrementAndGet();
            int readers = readersIn.get();
            if (writers != 1 || readers != 0) {
                broken = "a writer admitted with " + (writers - 1) + " writer(s) and " + readers + " reader(s) inside";
            }
        }
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        int readers = 0;
        int writers = 0;
        for (ConcurrentLinkedQueue<Held> q : held) {
            for (Held h : q) {
                if (h.kind == READ) {
                    readers++;
                } else {
                    writers++;
                }
            }
        }
        if (readers != readersIn.get() || writers != writersIn.get()) {
            throw new AssertionError(readers + " read and " + writers + " write admissions held but "
                    + readersIn + " and " + writersIn + " counted");
        }
        if (gate.readers() != readers || gate.isWriting() != (writers == 1)) {
            throw new AssertionError("the gate says readers=" + gate.readers() + " writing=" + gate.isWriting()
                    + " with " + readers + " read and " + writers + " write admissions held");
        }
        boolean writerWaits = false;
        for (Waiter w : waiters) {
            if (w.kind == WRITE && w.endings.get() == 0) {
                writerWaits = true;
            }
        }
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("waiter of thread " + w.tid + " ended " + endings + " times");
            }
            if (endings == 0) {
                String who = (w.kind == READ ? "reader" : "writer") + " of thread " + w.tid;
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled " + who + " is still waiting");
                }
                if (readers == 0 && writers == 0) {
                    throw new AssertionError("missed signal: nothing is admitted and the " + who + " waits");
                }
                if (w.kind == READ && writers == 0 && !writerWaits) {
                    throw new AssertionError("missed signal: no writer inside or ahead, and the " + who + " waits");
                }
                if (gate.isClosed()) {
                    throw new AssertionError("the gate is closed and the " + who + " waits");
                }
            }
        }
    }

    @Test
    void modelChecking() { // sized for the default run; ./coro stress scales the iterations by 20
        check().scaledIterations(12).invocations(200)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /** Every run of this test: the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(ReadWriteGateLincheckTest.class)
                .scenarios(writerCancelledRacingTheLastReadersExit(), closeRacingTheHandOffToReaders());
    }

    /**
     * Thread 1 reads; thread 2's writer waits behind it and thread 3's reader behind the writer. Thread
     * 1 leaves (admitting the writer) while thread 2 cancels its writer and exits what it holds, and
     * thread 3 tries to read and queues a writer: the hand-off to a writer racing its cancellation,
     * the readers behind it let in at the cancellation, and a try racing the owner.
     */
    static ExecutionScenario writerCancelledRacingTheLastReadersExit() {
        return LincheckSupport.scenario(ReadWriteGateLincheckTest.class,
                "tryRead 1; acquireWrite 2; acquireRead 3",
                "release 1 | cancel 2; release 2 | tryRead 3; acquireWrite 3",
                null);
    }

    /**
     * Thread 1 writes; readers of threads 1 and 2 wait behind it. The writer leaves (handing over to
     * both readers) while thread 2 closes the gate and thread 3 queues a writer and tries to read.
     */
    static ExecutionScenario closeRacingTheHandOffToReaders() {
        return LincheckSupport.scenario(ReadWriteGateLincheckTest.class,
                "tryWrite 1; acquireRead 1; acquireRead 2",
                "release 1; release 1 | close | acquireWrite 3; tryRead 3",
                null);
    }


    /** An admission held by a thread, with its kind (a class, not a record: Lincheck reads its fields). */
    static final class Held {
        final Admission admission;
        final int kind;

        Held(Admission admission, int kind) {
            this.admission = admission;
            this.kind = kind;
        }
    }

    /** One acquireRead() or acquireWrite() run, watched through its outcome. */
    final class Waiter {
        final int tid;
        final int kind;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Waiter(int tid, int kind) {
            this.tid = tid;
            this.kind = kind;
        }

        Void ended(Outcome<Admission> outcome) {
            if (outcome instanceof Outcome.Value<Admission> v) {
                entered(kind);
                held[tid].add(new Held(v.value(), kind));
            } else if (!(outcome instanceof Outcome.Cancelled<Admission>)) {
                broken = "acquire failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
