package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores a {@link RateGate} of one token per tick with a burst of 2 on a
 * {@link ManualScheduler}: waiters for 1 or 2 permits (by thread), some with a deadline, race ticks of
 * the clock (which run the gate's one timer on the ticking thread), cancellations and close.
 *
 * <p>As for the permit gates ({@link PermitGateLincheck}), which thread admits a waiter has no
 * sequential specification, so the operations answer nothing and the checked property is the state
 * after each run, everything quiescent:
 * <ul>
 *   <li>the rate: by every time b, the permits admitted are at most burst + b (a full bucket at time
 *       0). Each admission is timed by its work's reading of the clock, which a tick on another
 *       thread may make later than the admission, never earlier, so only windows from 0 are sound
 *       (the exact spacing, and admission before the deadline, are RateGateTest's, on one thread);</li>
 *   <li>only a waiter with a deadline fails, and only with a TimeoutException;</li>
 *   <li>each waiter ended at most once, and a waiter whose cancel was requested has ended;</li>
 *   <li>no lost wake-up: while a waiter waits, the gate is open and its one timer is armed (only
 *       time admits a waiter of a rate gate); at most one timer, ever;</li>
 *   <li>no leaked registration: once nobody waits and the bucket is full again, a try is admitted
 *       (the fast path declines while any waiter is registered).</li>
 * </ul>
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class RateGateLincheckTest {
    private static final int THREADS = 3;
    private static final int BURST = 2;

    private final ManualScheduler clock = new ManualScheduler();
    private final RateGate gate = new RateGate(1, Duration.ofNanos(1), BURST, clock);
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    private final Waiter[] latest = new Waiter[THREADS + 2];
    private volatile String broken;

    /** Waits for 1 permit (thread 2: 2 permits), no deadline. */
    @Operation
    public void acquire(@Param(name = "tid") int tid) {
        start(tid, Long.MAX_VALUE);
    }

    /** Waits for 1 permit (thread 2: 2 permits) for at most {@code 1 + tid} ticks. */
    @Operation
    public void acquireWithin(@Param(name = "tid") int tid) {
        start(tid, 1 + tid);
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

    /**
     * Tries 1 permit (thread 2: 2 permits) on the fast path: admitted at once or not at all. An
     * admission is timed by the clock read after it, as the waiters' are.
     */
    @Operation
    public void tryAcquire(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid == 2 ? 2 : 1);
        waiters.add(w);
        w.future = gate.tryWithin(w.permits, Task.fromCallable(clock::nanoTime)).outcome()
                .map(o -> o instanceof Outcome.Value<Long> ? w.ended(o) : w.refused()).toCompletableFuture();
    }

    private void start(int tid, long timeout) {
        Waiter w = new Waiter(tid == 2 ? 2 : 1);
        waiters.add(w);
        latest[tid] = w;
        Task<Long> work = Task.fromCallable(clock::nanoTime);
        Task<Long> t;
        if (timeout == Long.MAX_VALUE) {
            t = gate.within(w.permits, work);
        } else {
            w.hasDeadline = true;
            t = gate.within(w.permits, Duration.ofNanos(timeout), work);
        }
        w.future = t.outcome().map(w::ended).toCompletableFuture();
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        List<long[]> admitted = new ArrayList<>(); // {time, permits}
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("a waiter ended " + endings + " times");
            }
            if (w.admittedAt >= 0) {
                admitted.add(new long[] {w.admittedAt, w.permits});
            }
            if (endings == 0) {
                if (w.cancelRequested) {
                    throw new AssertionError("a cancelled waiter is still waiting");
                }
                if (gate.isClosed()) {
                    throw new AssertionError("the gate is closed and a waiter waits");
                }
                if (clock.pending() != 1) {
                    throw new AssertionError("lost wake-up: a waiter waits and " + clock.pending() + " timers are armed");
                }
            }
        }
        for (long[] b : admitted) {
            long sum = 0;
            for (long[] c : admitted) {
                if (c[0] <= b[0]) {
                    sum += c[1];
                }
            }
            if (sum > BURST + b[0]) {
                throw new AssertionError(sum + " permits admitted by time " + b[0] + ", burst " + BURST);
            }
        }
        if (clock.pending() > 1) {
            throw new AssertionError(clock.pending() + " timers pending: one per gate");
        }
        boolean anyWaits = waiters.stream().anyMatch(w -> w.endings.get() == 0);
        if (!anyWaits && !gate.isClosed()) {
            clock.advance(BURST); // the bucket is full again
            Object tried = gate.tryAcquire().outcome().toCompletableFuture().getNow(null);
            if (!(tried instanceof Outcome.Value)) {
                throw new AssertionError("nobody waits and the bucket is full, but a try was refused: "
                        + "a waiter's registration leaked, and no arrival can enter at once any more");
            }
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
        return LincheckSupport.lincheck(getClass())
                .scenarios(tickRacingACancelledHead(), closeRacingTheTimer(), aTryRacingTheOwnersDecision());
    }

    /**
     * The bucket is empty and two waiters queue; the head is cancelled while a tick brings its token:
     * the token must go to the waiter behind it, at that tick or the next, and a timer must stay armed
     * while it waits.
     */
    static ExecutionScenario tickRacingACancelledHead() {
        return LincheckSupport.scenario(RateGateLincheckTest.class,
                "acquire 2; acquire 0",
                "tick | cancel 0 | acquire 1",
                "tick; tick");
    }

    /** A waiter's timer comes due while another thread closes the gate: the waiter ends cancelled, or admitted. */
    static ExecutionScenario closeRacingTheTimer() {
        return LincheckSupport.scenario(RateGateLincheckTest.class,
                "acquire 2; acquireWithin 1",
                "tick | close | acquire 0",
                null);
    }

    /**
     * The bucket is empty; a waiter that found no token registers while a tick brings one and a try
     * reads the same time: the owner's decision for the waiter and the try's fast path race for the
     * one token, and exactly one of them may take it (the owner changes the bucket by CAS too).
     */
    static ExecutionScenario aTryRacingTheOwnersDecision() {
        return LincheckSupport.scenario(RateGateLincheckTest.class,
                "acquire 2",
                "acquire 0 | tick | tryAcquire 1",
                "tick");
    }

    /** One waiter, watched through its outcome. */
    final class Waiter {
        final long permits;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;
        volatile boolean hasDeadline;
        volatile long admittedAt = -1;

        Waiter(long permits) {
            this.permits = permits;
        }

        Void ended(Outcome<Long> outcome) {
            if (outcome instanceof Outcome.Value<Long> v) {
                admittedAt = v.value();
            } else if (outcome instanceof Outcome.Failure<Long> f) {
                if (!(f.error() instanceof TimeoutException) || !hasDeadline) {
                    broken = "a waiter failed: " + f.error();
                }
            }
            endings.incrementAndGet();
            return null;
        }

        /** A try that was not admitted: it ended, and nothing more. */
        Void refused() {
            endings.incrementAndGet();
            return null;
        }
    }
}
