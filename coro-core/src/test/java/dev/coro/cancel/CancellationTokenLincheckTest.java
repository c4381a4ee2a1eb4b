package dev.coro.cancel;

import dev.coro.LincheckSupport;

import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link CancellationToken} and {@link CancellationSource#cancel()} for
 * linearizability against {@link Spec}, in model-checking and stress modes.
 *
 * <p>Each thread registers callbacks and unregisters its own latest registration, as real code does
 * (a {@link Registration} stays with whoever registered), so those operations take the thread id
 * ({@link ThreadIdGen}: 0 for the initial part, 1..n for the parallel threads, n+1 for the post
 * part); the k-th callback of thread {@code tid} is named {@code 10 * tid + k}. The answers Lincheck
 * compares: {@link #register(int)} says whether the callback ran during the call (the token was
 * cancelled already); {@link #unregister(int)} says whether it took the callback back; {@link
 * #cancel()} answers the set of callbacks it ran, as a bit mask; {@link #throwIfCancelled()}
 * throws {@link CancellationException}, a result like any other. {@link #validate()} checks
 * afterwards that each callback ran exactly once if the token was cancelled and it was not taken
 * back, and never otherwise.
 *
 * <p>Parent-child linking is left out of this model on purpose: a child learns of its parent's
 * cancel from a callback, so a thread can see the parent cancelled and the child not yet. {@link
 * CancellationStressTest} and {@link CancellationTokenTest} check what linking does promise.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class CancellationTokenLincheckTest {
    // Thread ids 0..4 (three threads at most) times at most 10 registrations each: names < 64.
    private static final int SLOTS = 6;
    private static final int PER_SLOT = 10;

    private final CancellationSource source = new CancellationSource();
    private final CancellationToken token = source.token();
    /** Bit {@code name} is set by callback {@code name} when a cancel() ran it. */
    private final AtomicLong ranByCancel = new AtomicLong();
    // Slot tid is touched only by the thread that runs tid's operations (and by validate()).
    private final Callback[][] callbacks = new Callback[SLOTS][PER_SLOT];
    private final int[] registered = new int[SLOTS];
    private final Registration[] current = new Registration[SLOTS];

    /** Registers a new callback; answers whether it ran during this call. */
    @Operation
    public boolean register(@Param(name = "tid") int tid) {
        int k = registered[tid];
        Callback callback = new Callback(PER_SLOT * tid + k, ranByCancel);
        callbacks[tid][k] = callback;
        registered[tid] = k + 1;
        callback.registering = true;
        current[tid] = token.register(callback);
        callback.registering = false;
        return callback.ranInRegister;
    }

    /** Unregisters this thread's latest registration: 1 taken back, 0 not, -1 none yet. */
    @Operation
    public int unregister(@Param(name = "tid") int tid) {
        Registration r = current[tid];
        if (r == null) {
            return -1;
        }
        if (r.unregister()) {
            callbacks[tid][registered[tid] - 1].takenBack = true;
            return 1;
        }
        return 0;
    }

    /** Cancels; answers -1 when not the first, else the set of callbacks it ran (bit {@code name}). */
    @Operation
    public long cancel() {
        // Only the first cancel runs callbacks, all before it returns: the set is exact.
        return source.cancel() ? ranByCancel.get() : -1;
    }

    /** Whether cancelled. */
    @Operation
    public boolean isCancelled() {
        return token.isCancelled();
    }

    /** Throws {@link CancellationException} once cancelled. */
    @Operation
    public void throwIfCancelled() {
        token.throwIfCancelled();
    }

    /** Each callback ran once if the token was cancelled and it was not taken back, else never. */
    @Validate
    public void validate() {
        boolean cancelled = token.isCancelled();
        for (int tid = 0; tid < SLOTS; tid++) {
            for (int k = 0; k < registered[tid]; k++) {
                Callback c = callbacks[tid][k];
                int expected = cancelled && !c.takenBack ? 1 : 0;
                if (c.runs.get() != expected) {
                    throw new AssertionError("callback " + c.name + " ran " + c.runs.get() + " times, expected "
                            + expected + " (cancelled " + cancelled + ", taken back " + c.takenBack + ")");
                }
            }
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(30).invocations(800)
                .threads(3).actorsPerThread(2).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(30).invocations(500)
                .threads(2).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /** Every run of this test: the sequential specification and the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(CancellationTokenLincheckTest.class)
                .spec(Spec.class)
                .scenarios(unregisterAfterObservedCancelLosesToCanceller());
    }

    /**
     * Regression (the SignalList remove race, seen through the token): thread 1 registers, sees the
     * token cancelled, and unregisters; thread 2 cancels. Unregister used to overtake the
     * canceller's walk and return {@code true}, so a callback registered before a cancel that was
     * already visible never ran. Every run checks this scenario first.
     */
    static ExecutionScenario unregisterAfterObservedCancelLosesToCanceller() {
        return LincheckSupport.scenario(CancellationTokenLincheckTest.class,
                null,
                "register 1; isCancelled; unregister 1 | cancel",
                null);
    }

    /**
     * A callback that counts its runs and tells a run inside its own register() call (on the
     * registering thread) from a run by cancel().
     */
    static final class Callback implements Runnable {
        final int name;
        final Thread owner = Thread.currentThread();
        final AtomicLong ranByCancel;
        final AtomicInteger runs = new AtomicInteger();
        volatile boolean registering;
        volatile boolean ranInRegister;
        volatile boolean takenBack;

        Callback(int name, AtomicLong ranByCancel) {
            this.name = name;
            this.ranByCancel = ranByCancel;
        }

        @Override
        public void run() {
            runs.incrementAndGet();
            if (registering && Thread.currentThread() == owner) {
                ranInRegister = true;
            } else {
                ranByCancel.getAndAccumulate(1L << name, (a, b) -> a | b);
            }
        }
    }

    /**
     * The sequential specification: each callback is LIVE, TAKEN_BACK or RAN; cancel runs the LIVE
     * ones; a registration after cancel runs at once; unregister takes back only a LIVE callback.
     */
    public static final class Spec {
        private static final int LIVE = 1;
        private static final int TAKEN_BACK = 2;
        private static final int RAN = 3;

        private final int[] state = new int[PER_SLOT * SLOTS];
        private final int[] current = new int[SLOTS];
        private final int[] registered = new int[SLOTS];
        private boolean cancelled;

        /** Creates an uncancelled specification with nothing registered. */
        public Spec() {
            Arrays.fill(current, -1);
        }

        /** See {@link CancellationTokenLincheckTest#register(int)}. */
        public boolean register(int tid) {
            int name = PER_SLOT * tid + registered[tid]++;
            current[tid] = name;
            state[name] = cancelled ? RAN : LIVE;
            return cancelled;
        }

        /** See {@link CancellationTokenLincheckTest#unregister(int)}. */
        public int unregister(int tid) {
            int name = current[tid];
            if (name < 0) {
                return -1;
            }
            if (state[name] != LIVE) {
                return 0;
            }
            state[name] = TAKEN_BACK;
            return 1;
        }

        /** See {@link CancellationTokenLincheckTest#cancel()}. */
        public long cancel() {
            if (cancelled) {
                return -1;
            }
            cancelled = true;
            long ran = 0;
            for (int name = 0; name < state.length; name++) {
                if (state[name] == LIVE) {
                    state[name] = RAN;
                    ran |= 1L << name;
                }
            }
            return ran;
        }

        /** See {@link CancellationTokenLincheckTest#isCancelled()}. */
        public boolean isCancelled() {
            return cancelled;
        }

        /** See {@link CancellationTokenLincheckTest#throwIfCancelled()}. */
        public void throwIfCancelled() {
            if (cancelled) {
                throw new CancellationException("cancelled");
            }
        }
    }
}
