package dev.coro.internal;

import dev.coro.LincheckSupport;
import dev.coro.internal.TestLane.Ask;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * What the engine-ability Lincheck tests share: one or two {@link TestLane}s, waiters started as
 * tasks on the inline scheduler (so an admission resumes the waiter on the admitting thread) and
 * watched through their outcome, the admissions each thread holds, and the checks.
 *
 * <p><b>Why the operations answer nothing.</b> As in the gate tests (PermitGateLincheck): which
 * thread admits a waiter, and whether a try succeeds while a unit is on its way to a queued waiter,
 * are not functions of a sequential history, so the checked property is the state. At every
 * admission: no lane has more units in use than it has. In {@link #validate()}, quiescent: each
 * waiter ended at most once, and one whose cancel was requested has ended; every lane's free units
 * are its capacity minus the units held when nobody waits on it, and no more than that when someone
 * does (units may be reserved for a waiter, never lost); no missed signal (a subclass says when a waiting waiter
 * should have been admitted); once a lane is closed nobody waits on it.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public abstract class LaneLincheck {
    static final int THREADS = 3;
    static final int SLOTS = THREADS + 2;

    final TestLane[] lanes;
    private final AtomicLong[] inUse;
    private volatile String broken;
    final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    private final ConcurrentLinkedQueue<long[]>[] held = new ConcurrentLinkedQueue[SLOTS];
    /** Each thread's latest waiter; slot tid is touched only by the thread that runs tid's operations. */
    final Waiter[] latest = new Waiter[SLOTS];

    LaneLincheck(TestLane... lanes) {
        this.lanes = lanes;
        this.inUse = new AtomicLong[lanes.length];
        for (int i = 0; i < lanes.length; i++) {
            inUse[i] = new AtomicLong();
        }
        for (int i = 0; i < SLOTS; i++) {
            held[i] = new ConcurrentLinkedQueue<>();
        }
    }

    /** One waiting run, watched through its outcome. */
    final class Waiter {
        final int tid;
        final Ask ask;
        /** The lanes it waits on (a select waits on several). */
        final int[] on;
        final AtomicInteger endings = new AtomicInteger();
        volatile Outcome<?> outcome;
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Waiter(int tid, Ask ask, int... on) {
            this.tid = tid;
            this.ask = ask;
            this.on = on;
        }

        /** The waiter resumed: with an admission to {@code lane}, or not. */
        Void ended(Outcome<?> o, int lane) {
            if (o instanceof Outcome.Value<?>) {
                entered(tid, lane, ask == null ? 1 : ask.weight());
            } else if (o instanceof Outcome.Failure<?> f) {
                failed(this, f.error());
            }
            outcome = o;
            endings.incrementAndGet();
            return null;
        }
    }

    /** Starts {@code task} (a wait on lane {@code lane}) for thread {@code tid}, as its latest waiter. */
    final Waiter start(int tid, Ask ask, int lane, Task<Void> task) {
        Waiter w = new Waiter(tid, ask, lane);
        waiters.add(w); // before it starts: a release may admit it from then on
        latest[tid] = w;
        w.future = task.outcome().map(o -> w.ended(o, lane)).toCompletableFuture();
        return w;
    }

    /** Tries lane {@code lane} for thread {@code tid} with {@code ask}; holds the units if admitted. */
    final void tryEnter(int tid, int lane, Ask ask) {
        if (lanes[lane].tryEnterNow(ask)) {
            entered(tid, lane, ask == null ? 1 : ask.weight());
        }
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

    /** Gives back one admission this thread holds, if any. */
    @Operation
    public void release(@Param(name = "tid") int tid) {
        long[] h = held[tid].poll();
        if (h != null) {
            inUse[(int) h[0]].addAndGet(-h[1]); // before the release: it may admit a waiter inline
            releasing(() -> lanes[(int) h[0]].release(h[1]));
        }
    }

    /** Runs a release; a subclass may look at the waiters around it. */
    void releasing(Runnable release) {
        release.run();
    }

    final void entered(int tid, int lane, long weight) {
        long now = inUse[lane].addAndGet(weight);
        if (now > lanes[lane].permits()) {
            broken = now + " units in use on lane " + lane + " of " + lanes[lane].permits();
        }
        held[tid].add(new long[] {lane, weight});
    }

    /** A waiter ended with an error; by default that is a bug (expiry tests override it). */
    void failed(Waiter w, Throwable error) {
        broken = "a waiter of thread " + w.tid + " failed: " + error;
    }

    final void breakWith(String why) {
        broken = why;
    }

    /** Whether waiter {@code w}, still waiting, should have been admitted (a missed signal). */
    abstract boolean missed(Waiter w);

    /** This test's custom scenarios, run before the generated ones. */
    abstract ExecutionScenario[] scenarios();

    /** Generated scenarios in model checking, before scaling (sized for about 15 s each here). */
    int modelCheckIterations() {
        return 12;
    }

    @Test
    void modelChecking() {
        LincheckSupport.lincheck(getClass()).scenarios(scenarios())
                .scaledIterations(modelCheckIterations()).invocations(200)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        LincheckSupport.lincheck(getClass()).scenarios(scenarios())
                .scaledIterations(20).invocations(1000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /** The checks in the class javadoc, after each run; a subclass may add its own and call it. */
    @Validate
    public void validate() {
        check();
    }

    /** The checks in the class javadoc. */
    final void check() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        long[] holding = new long[lanes.length];
        for (ConcurrentLinkedQueue<long[]> q : held) {
            for (long[] h : q) {
                holding[(int) h[0]] += h[1];
            }
        }
        for (int i = 0; i < lanes.length; i++) {
            long free = lanes[i].freePermits();
            long unheld = lanes[i].permits() - holding[i];
            // units may be reserved for a waiting waiter (a weighted lane's partial cover), never lost
            if (waitsOn(i) ? free > unheld : free != unheld) {
                throw new AssertionError("lane " + i + ": " + free + " free with " + holding[i] + " held of "
                        + lanes[i].permits() + (waitsOn(i) ? " and waiters" : ", nobody waiting"));
            }
        }
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("a waiter of thread " + w.tid + " ended " + endings + " times");
            }
            if (endings == 0) {
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled waiter of thread " + w.tid + " is still waiting");
                }
                for (int lane : w.on) {
                    if (lanes[lane].isClosed()) {
                        throw new AssertionError("lane " + lane + " is closed and thread " + w.tid + "'s waiter waits");
                    }
                }
                if (missed(w)) {
                    throw new AssertionError("missed signal: thread " + w.tid + "'s waiter " + w.ask
                            + " waits; free: " + freeUnits());
                }
            }
        }
    }

    /** Whether some waiter still waits on lane {@code lane}. */
    private boolean waitsOn(int lane) {
        for (Waiter w : waiters) {
            if (w.endings.get() == 0) {
                for (int l : w.on) {
                    if (l == lane) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    private String freeUnits() {
        StringBuilder sb = new StringBuilder();
        for (TestLane l : lanes) {
            sb.append(l.freePermits()).append(' ');
        }
        return sb.toString().trim();
    }
}
