package dev.coro.gate;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The operations and checks shared by the Lincheck tests of the condition gates (readiness,
 * predicate, completion): each test owns one probe, which {@link GateProbeLincheck}'s
 * {@code @Operation}s delegate to, and adds its own condition operation (setReady, update, arrive).
 *
 * <p>Every admission (a waiter's, or a tryWithin's work) asks {@link #illegal} whether it may happen
 * now; a non-null answer is recorded as the failure. An entry started after a {@code close()} had
 * returned (on any thread) must never be admitted. {@link #validate} checks, once the run is
 * quiescent: each waiter ended at most once; a within whose work ran ended with a value and a
 * cancelled one never ran its work; a waiter whose cancel was requested has ended; no waiter waits
 * on a closed gate or on a gate whose condition holds (no missed signal); the admissions held
 * match the gate's own count (which closeAndCheck relies on).
 */
final class GateProbe {
    private static final int SLOTS = 6;

    private final SingleDoorGate gate;
    private final Supplier<String> illegal;
    private final AtomicInteger held = new AtomicInteger();
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    private final ConcurrentLinkedQueue<Admission>[] admissions = new ConcurrentLinkedQueue[SLOTS];
    // Slot tid is touched only by the thread that runs tid's operations.
    private final Waiter[] latest = new Waiter[SLOTS];
    private volatile boolean closeReturned;
    private volatile String broken;

    /**
     * @param gate the gate under test
     * @param illegal why an admission now would break the gate's rule, or null if it may happen
     */
    GateProbe(SingleDoorGate gate, Supplier<String> illegal) {
        this.gate = gate;
        this.illegal = illegal;
        for (int i = 0; i < SLOTS; i++) {
            admissions[i] = new ConcurrentLinkedQueue<>();
        }
    }

    /** tryWithin with a work that records its admission. */
    void tryWithin() {
        boolean afterClose = closeReturned;
        gate.tryWithin(Task.fromRunnable(() -> admitted("tryWithin", afterClose))).toCompletableFuture();
    }

    /** Starts acquire() (inline scheduler) and keeps it as this thread's latest waiter. */
    void acquire(int tid) {
        Waiter w = new Waiter(tid, false, closeReturned);
        waiters.add(w);
        latest[tid] = w;
        w.future = gate.acquire().outcome().map(w::endedAcquire).toCompletableFuture();
    }

    /** Starts within(work) (inline scheduler); the work records its admission and leaves at once. */
    void within(int tid) {
        Waiter w = new Waiter(tid, true, closeReturned);
        waiters.add(w);
        latest[tid] = w;
        w.future = gate.within(Task.fromRunnable(w::ran)).outcome().map(w::endedWithin).toCompletableFuture();
    }

    /** Cancels this thread's latest waiter (a no-op if it has ended). */
    void cancel(int tid) {
        Waiter w = latest[tid];
        if (w != null) {
            w.cancelRequested = true;
            w.future.cancel(false);
        }
    }

    /** Exits one admission this thread holds, if any. */
    void release(int tid) {
        Admission a = admissions[tid].poll();
        if (a != null) {
            held.decrementAndGet();
            a.exit();
        }
    }

    /** Closes the gate, then records that a close has returned. */
    void close() {
        gate.close();
        closeReturned = true;
    }

    private void admitted(String door, boolean afterClose) {
        String why = illegal.get();
        if (why != null) {
            broken = door + " admitted " + why;
        } else if (afterClose) {
            broken = door + " started after close() returned and was admitted";
        }
    }

    /**
     * The quiescent checks of the class javadoc; {@code conditionHolds}: the gate's condition holds
     * now (waiters must not wait); {@code gateCount}: the gate's own count of admissions held.
     */
    void validate(boolean conditionHolds, LongSupplier gateCount) {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        int holding = 0;
        for (ConcurrentLinkedQueue<Admission> q : admissions) {
            holding += q.size();
        }
        if (holding != held.get() || gateCount.getAsLong() != holding) {
            throw new AssertionError(holding + " admissions held, " + held + " counted, gate counts "
                    + gateCount.getAsLong());
        }
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("waiter of thread " + w.tid + " ended " + endings + " times");
            }
            if (w.within && w.runs.get() > (w.endedWithValue ? 1 : 0)) {
                throw new AssertionError("within of thread " + w.tid + " ran " + w.runs + " times, ended with value "
                        + w.endedWithValue);
            }
            if (endings == 0) {
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled waiter of thread " + w.tid + " is still waiting");
                }
                if (gate.isClosed()) {
                    throw new AssertionError("the gate is closed and thread " + w.tid + "'s waiter waits");
                }
                if (conditionHolds) {
                    throw new AssertionError("missed signal: the condition holds and thread " + w.tid + "'s waiter waits");
                }
            }
        }
    }

    /** One acquire() or within() run, watched through its outcome. */
    final class Waiter {
        final int tid;
        final boolean within;
        final boolean afterClose;
        final AtomicInteger endings = new AtomicInteger();
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean endedWithValue;
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Waiter(int tid, boolean within, boolean afterClose) {
            this.tid = tid;
            this.within = within;
            this.afterClose = afterClose;
        }

        void ran() {
            runs.incrementAndGet();
            admitted("within", afterClose);
        }

        Void endedAcquire(Outcome<Admission> outcome) {
            if (outcome instanceof Outcome.Value<Admission> v) {
                admitted("acquire", afterClose);
                held.incrementAndGet();
                admissions[tid].add(v.value());
            } else if (!(outcome instanceof Outcome.Cancelled<Admission>)) {
                broken = "acquire() failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }

        Void endedWithin(Outcome<Void> outcome) {
            if (outcome instanceof Outcome.Value<Void>) {
                endedWithValue = true;
            } else if (!(outcome instanceof Outcome.Cancelled<Void>)) {
                broken = "within() failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
