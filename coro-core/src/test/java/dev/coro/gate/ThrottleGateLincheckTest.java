package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import java.time.Duration;
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
 * Lincheck explores a bounded {@link ThrottleGate} (one start per tick, at most 2 running) on a
 * {@link ManualScheduler}: acquisitions race ticks (which run the gate's one timer on the ticking
 * thread), exits (which free a place), cancellations and close. Operations answer nothing (see
 * {@link RateGateLincheckTest}); checked after each run, everything quiescent:
 * <ul>
 *   <li>never more than 2 admitted at once (checked at each admission), and the rule's running
 *       count equals the admissions held;</li>
 *   <li>the spacing: by every time b, at most 1 + b starts (starts are timed by a reading that a
 *       tick on another thread may make late, never early, so only windows from 0 are sound);</li>
 *   <li>each waiter ended at most once; a waiter whose cancel was requested has ended;</li>
 *   <li>no lost wake-up: while a waiter waits, the gate is open and either its one timer is armed or
 *       the gate is full (an exit will offer it again); at most one timer.</li>
 * </ul>
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class ThrottleGateLincheckTest {
    private static final int THREADS = 3;
    private static final int MAX_RUNNING = 2;

    private final ManualScheduler clock = new ManualScheduler();
    private final ThrottleGate gate = new ThrottleGate(Duration.ofNanos(1), MAX_RUNNING, clock);
    private final AtomicLong running = new AtomicLong();
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    private final List<Long> starts = new CopyOnWriteArrayList<>();
    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    private final ConcurrentLinkedQueue<Admission>[] held = new ConcurrentLinkedQueue[THREADS + 2];
    private final Waiter[] latest = new Waiter[THREADS + 2];
    private volatile String broken;

    /** Creates the gate under test. */
    public ThrottleGateLincheckTest() {
        for (int i = 0; i < held.length; i++) {
            held[i] = new ConcurrentLinkedQueue<>();
        }
    }

    /** Starts an acquisition and keeps it as this thread's latest waiter. */
    @Operation
    public void acquire(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid);
        waiters.add(w);
        latest[tid] = w;
        w.future = gate.acquire().outcome().map(w::ended).toCompletableFuture();
    }

    /** Exits one admission this thread holds, if any. */
    @Operation
    public void release(@Param(name = "tid") int tid) {
        Admission a = held[tid].poll();
        if (a != null) {
            running.decrementAndGet(); // before the exit: it may admit a waiter inline
            a.exit();
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

    /** Moves the clock one tick; the gate's timer runs on this thread if it came due. */
    @Operation
    public void tick() {
        clock.advance(1);
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        gate.close();
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        long holding = 0;
        for (ConcurrentLinkedQueue<Admission> q : held) {
            holding += q.size();
        }
        long ruleRunning = ((TokenBucket) gate.engine).ruleAdmitted();
        if (holding != ruleRunning) {
            throw new AssertionError(holding + " admissions held but the rule counts " + ruleRunning + " running");
        }
        for (long b : starts) {
            long by = starts.stream().filter(t -> t <= b).count();
            if (by > 1 + b) {
                throw new AssertionError(by + " starts by time " + b + ": one per tick");
            }
        }
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("a waiter ended " + endings + " times");
            }
            if (endings == 0) {
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled waiter is still waiting");
                }
                if (gate.isClosed()) {
                    throw new AssertionError("the gate is closed and a waiter waits");
                }
                if (clock.pending() != 1 && holding < MAX_RUNNING) {
                    throw new AssertionError("lost wake-up: a waiter waits, " + holding + " running, "
                            + clock.pending() + " timers armed");
                }
            }
        }
        if (clock.pending() > 1) {
            throw new AssertionError(clock.pending() + " timers pending: one per gate");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(3).invocations(200)
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

    private LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass()).scenarios(exitRacingTheTimer());
    }

    /**
     * The gate is full (threads 0 and 1 hold) and thread 2 waits; an exit frees a place while a tick
     * brings the next start: thread 2 must start once, at the later of the two, and never a third
     * runs.
     */
    static ExecutionScenario exitRacingTheTimer() {
        return LincheckSupport.scenario(ThrottleGateLincheckTest.class,
                "acquire 0; tick; acquire 1; acquire 2",
                "release 0 | tick | acquire 1",
                "tick; tick");
    }

    /** One acquire() run, watched through its outcome. */
    final class Waiter {
        final int tid;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Waiter(int tid) {
            this.tid = tid;
        }

        Void ended(Outcome<Admission> outcome) {
            if (outcome instanceof Outcome.Value<Admission> v) {
                starts.add(clock.nanoTime());
                if (running.incrementAndGet() > MAX_RUNNING) {
                    broken = running.get() + " admitted at once, at most " + MAX_RUNNING;
                }
                held[tid].add(v.value());
            } else if (!(outcome instanceof Outcome.Cancelled<Admission>)) {
                broken = "acquire() failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
