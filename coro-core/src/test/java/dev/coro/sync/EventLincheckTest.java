package dev.coro.sync;

import dev.coro.LincheckSupport;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link Event} for linearizability against {@link Spec}, in model-checking and
 * stress modes: {@code set}, {@code reset} and {@code isSet} race waits that start, stay pending, and
 * are cancelled.
 *
 * <p><b>Waits.</b> A wait is {@code event.await()} run through {@link Task#toCompletableFuture()}, so
 * it runs on the inline scheduler and a pending wait resumes inline on the thread whose {@code set}
 * fired it. The test watches each wait through {@link Task#outcome()}: it counts the values and the
 * cancellations it received and notes the thread it resumed on. {@link #await(int)} answers the
 * value if the wait ended during the call (on the calling thread), else {@link #PENDING} and keeps
 * the wait; the k-th wait of thread {@code tid} is named {@code 12 * tid + k}.
 *
 * <p><b>What a pending wait ended with is part of the history.</b> Every wait that a {@code set}
 * resumes ends on the setting thread before {@code set} returns, so {@link #set(int)} answers the
 * bit mask of the kept waits it resumed (and checks that each got exactly its value). The
 * specification knows each pending wait's epoch, so a wait that the set ending its epoch missed, a
 * wait resumed by a set of another epoch, or a wait resumed by no set at all, is a wrong answer.
 *
 * <p><b>Cancelled waits.</b> {@link #awaitAndCancel()} starts a wait and, if it did not end at once,
 * cancels it (through the future, which cancels the task's token). One CAS on the wait decides
 * between the cancel and a racing {@code set}, and a set that won ends the wait on the setting thread
 * a moment later; so the operation waits until the wait has ended and answers what it ended with:
 * {@link #CANCELLED} only if it really was cancelled, else the value, which the specification
 * checks against the set that ended the wait's epoch during the call. (The future's own answer
 * cannot be used: it reports cancelled as soon as {@code cancel} is called, even when the set won
 * the wait.) {@link #validate()} adds: each cancelled wait ended exactly once, on one channel.
 *
 * <p>Thread ids come from {@link ThreadIdGen}: 0 for the initial part, 1..n for the parallel
 * threads, n + 1 for the post part.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "v", gen = IntGen.class, conf = "1:3")
public class EventLincheckTest {
    /** What {@link #await(int)} answers for a wait that did not end at once. */
    static final int PENDING = -1;
    /** What {@link #awaitAndCancel()} answers when it cancelled a pending wait. */
    static final int CANCELLED = -2;
    /** What {@link #set(int)} answers when the event was set already. */
    static final long NOT_SET = -1;
    /** What {@link #set(int)} answers when a wait it resumed got another value: never specified. */
    static final long WRONG_VALUE = -2;
    /** Waits per thread: names {@code PER_SLOT * tid + k} stay below 64 for thread ids 0..4. */
    private static final int PER_SLOT = 12;

    private final Event<Integer> event = new Event<>();
    /** Waits kept pending by {@link #await(int)}. */
    private final List<Wait> kept = new CopyOnWriteArrayList<>();
    /** Waits started by {@link #awaitAndCancel()}. */
    private final List<Wait> abandoned = new CopyOnWriteArrayList<>();
    /** The values of the successful sets. */
    private final List<Integer> setValues = new CopyOnWriteArrayList<>();
    /** Slot tid is touched only by the thread that runs tid's operations. */
    private final int[] awaited = new int[8];

    /** Sets; answers {@link #NOT_SET}, or the mask of the kept waits this call resumed. */
    @Operation
    public long set(@Param(name = "v") int v) {
        if (!event.set(v)) {
            return NOT_SET;
        }
        setValues.add(v);
        // The waits this set fired resumed inline, on this thread, before set returned.
        Thread me = Thread.currentThread();
        long mask = 0;
        for (Wait w : kept) {
            if (w.resumedOn == me && !w.reported) {
                w.reported = true;
                if (w.values.get() != 1 || !Integer.valueOf(v).equals(w.value)) {
                    return WRONG_VALUE;
                }
                mask |= 1L << w.name;
            }
        }
        return mask;
    }

    /** Starts a wait: its value if it ended during this call, else {@link #PENDING} (kept). */
    @Operation
    public int await(@Param(name = "tid") int tid) {
        Wait w = new Wait(PER_SLOT * tid + awaited[tid]++);
        kept.add(w); // before it starts: a set may resume it at any time from then on
        w.start(event);
        if (w.resumedOn == Thread.currentThread()) { // ended at once, on this thread
            w.reported = true;
            return w.value;
        }
        return PENDING; // pending, or resumed meanwhile by a set that reports it
    }

    /**
     * Starts a wait and cancels it unless it ended at once, then waits until it has ended: its
     * value, or {@link #CANCELLED}.
     */
    @Operation
    public int awaitAndCancel() {
        Wait w = new Wait(-1);
        abandoned.add(w);
        CompletableFuture<Void> f = w.start(event);
        if (w.resumedOn != Thread.currentThread()) {
            f.cancel(false);
            // The cancel settled the wait (or found it settled): if the cancel won, it ended on this
            // thread already; if a set won, it ends on the setting thread, which is running.
            while (w.resumedOn == null) {
                Thread.onSpinWait();
            }
        }
        return w.cancels.get() > 0 ? CANCELLED : w.value;
    }

    /** Resets. */
    @Operation
    public boolean reset() {
        return event.reset();
    }

    /** Whether set. */
    @Operation
    public boolean isSet() {
        return event.isSet();
    }

    /**
     * After each run: no wait resumed twice or on two channels; a kept wait resumed only with a
     * value, and only by a set that reported it (or at once); a cancelled wait ended, either
     * cancelled or with the value of a successful set.
     */
    @Validate
    public void validate() {
        for (Wait w : kept) {
            if (w.cancels.get() != 0 || w.values.get() > 1) {
                throw new AssertionError("kept wait " + w.name + ": " + w.values + " values, " + w.cancels
                        + " cancels");
            }
            if (w.values.get() == 1 && !w.reported) {
                throw new AssertionError("kept wait " + w.name + " resumed by no set (value " + w.value
                        + ")");
            }
            if (w.values.get() == 1 && !setValues.contains(w.value)) {
                throw new AssertionError("kept wait " + w.name + " resumed with " + w.value + ", never set");
            }
        }
        for (Wait w : abandoned) {
            if (w.values.get() + w.cancels.get() != 1 || w.resumedOn == null) {
                throw new AssertionError("cancelled wait: " + w.values + " values, " + w.cancels
                        + " cancels");
            }
            if (w.values.get() == 1 && !setValues.contains(w.value)) {
                throw new AssertionError("cancelled wait resumed with " + w.value + ", never set");
            }
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(12).invocations(200)
                .threads(3).actorsPerThread(2).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /** Every run of this test: the sequential specification and the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(EventLincheckTest.class)
                .spec(Spec.class)
                .scenarios(aWaitAcrossResetAndSetGetsTheSecondValue(), cancelRacingSetEndsOnce());
    }

    /**
     * Set 1, then race: thread 1 resets and starts a wait; thread 2 sets 2, resets and sets 3. The
     * wait answers 1 or 2 at once, or is pending and must be in the mask of the set that ends its
     * epoch (a wait on a stale epoch resumed by the later set would show up there).
     */
    static ExecutionScenario aWaitAcrossResetAndSetGetsTheSecondValue() {
        return LincheckSupport.scenario(EventLincheckTest.class,
                "set 1",
                "reset; await 1 | set 2; reset; set 3",
                "isSet");
    }

    /** A kept wait, then a cancelled wait racing a set: each ends exactly once. */
    static ExecutionScenario cancelRacingSetEndsOnce() {
        return LincheckSupport.scenario(EventLincheckTest.class,
                "await 0",
                "awaitAndCancel; await 1 | set 1; reset",
                null);
    }

    /** One wait, watched through its outcome: what it ended with, how often, and on which thread. */
    static final class Wait {
        final int name;
        final AtomicInteger values = new AtomicInteger();
        final AtomicInteger cancels = new AtomicInteger();
        volatile Integer value;
        /** Written last, after the counts and the value. */
        volatile Thread resumedOn;
        /** Answered by the await that started it, or by the set that resumed it. */
        volatile boolean reported;

        Wait(int name) {
            this.name = name;
        }

        CompletableFuture<Void> start(Event<Integer> event) {
            return event.await().outcome().map(this::ended).toCompletableFuture();
        }

        private Void ended(Outcome<Integer> outcome) {
            if (outcome instanceof Outcome.Value<Integer> v) {
                value = v.value();
                values.incrementAndGet();
            } else if (outcome instanceof Outcome.Cancelled<Integer>) {
                cancels.incrementAndGet();
            } else {
                throw new AssertionError("a wait failed: " + outcome);
            }
            resumedOn = Thread.currentThread();
            return null;
        }
    }

    /**
     * The sequential specification: unset or set with a value; the waits pending in the present
     * epoch; a set ends the epoch and resumes them all, a reset of a set event starts the next.
     */
    public static final class Spec {
        private boolean set;
        private int value;
        private long pending;
        private final int[] awaited = new int[8];

        /** Creates an unset event with no waits. */
        public Spec() {}

        /** See {@link EventLincheckTest#set(int)}. */
        public long set(int v) {
            if (set) {
                return NOT_SET;
            }
            set = true;
            value = v;
            long resumed = pending;
            pending = 0;
            return resumed;
        }

        /** See {@link EventLincheckTest#await(int)}. */
        public int await(int tid) {
            int name = PER_SLOT * tid + awaited[tid]++;
            if (set) {
                return value;
            }
            pending |= 1L << name;
            return PENDING;
        }

        /** See {@link EventLincheckTest#awaitAndCancel()}. */
        public int awaitAndCancel() {
            return set ? value : CANCELLED;
        }

        /** See {@link EventLincheckTest#reset()}. */
        public boolean reset() {
            if (!set) {
                return false;
            }
            set = false;
            return true;
        }

        /** See {@link EventLincheckTest#isSet()}. */
        public boolean isSet() {
            return set;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && set == s.set && (!set || value == s.value) && pending == s.pending
                    && java.util.Arrays.equals(awaited, s.awaited);
        }

        @Override
        public int hashCode() {
            return Objects.hash(set, set ? value : 0, pending, java.util.Arrays.hashCode(awaited));
        }
    }
}
