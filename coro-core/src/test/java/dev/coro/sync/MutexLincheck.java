package dev.coro.sync;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
 * Lincheck explores an {@link AsyncMutex} in model-checking and stress modes
 * ({@link AsyncMutexLincheckTest}: the FIFO mutex; {@link BargingMutexLincheckTest}: the barging
 * one), with mutual exclusion, no lost wake-up and the lock's accounting as the checked properties,
 * and whatever order the mutex promises ({@link #checkOrder(Waiter)}).
 *
 * <p><b>Why the operations answer nothing.</b> An unlock that finds a waiter hands it the lock through
 * the engine's owner, which may be another thread that is deciding at that moment; so which unlock
 * (or which thread) resumed a waiter is not a function of the sequential history (an earlier version
 * of this test, written for a mutex whose unlock always handed over on its own thread, answered it;
 * the engine's mutex broke that assumption, not the lock's contract). The properties are checked on
 * the state instead, at every acquisition in every interleaving the model checker explores, and in
 * {@link #validate()} after each run:
 * <ul>
 *   <li>exclusion: an acquisition while another thread holds the lock is a failure;</li>
 *   <li>order: {@link #checkOrder(Waiter)} at every acquisition by a waiter;</li>
 *   <li>each waiter acquired or was cancelled at most once; a waiter whose cancel was requested has
 *       ended;</li>
 *   <li>acquisitions minus releases is 1 if locked and 0 if not, and matches the holder;</li>
 *   <li>no lost wake-up: when the run is over, an unlocked mutex has no waiter left waiting; and
 *       whatever {@link #validateMore(boolean)} adds.</li>
 * </ul>
 *
 * <p><b>Who may unlock.</b> The mutex does not track its owner, so a thread unlocks only while it
 * holds the lock ({@link #unlock(int)} does nothing otherwise); misuse (unlocking an unlocked mutex)
 * is AsyncMutexTest's and BargingMutexTest's. {@link #cancel(int)} cancels the thread's latest
 * waiter; one CAS on the waiter decides between the cancel and a racing hand-over or wake-up. When
 * waiters run {@code withLock} ({@link #withLock()}), a waiter acquires and lets go in its body,
 * and the unlock operation releases only a hold taken by a try.
 *
 * <p>A bug found once: the first withLock version of this test released a body's hold from the
 * unlock operation (the holder is briefly the body's thread id) and judged FIFO order by whether the
 * older waiter's withLock had ended, though an exit hands the lock on inline before its own run ends;
 * the stress mode found both (false failures of the test, not of the mutex).
 *
 * <p><b>Out of reach here.</b> A cancellation during {@code lock()}'s uncontended fast path: each
 * future's token is private to the thread that starts it until {@code toCompletableFuture} returns.
 * {@link AsyncMutexRegressionTest} checks that race through {@code whenAny}.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public abstract class MutexLincheck {
    static final int THREADS = 3;
    private static final int NOBODY = -1;
    private static final int SLOTS = THREADS + 2;

    /** The mutex under test. */
    final AsyncMutex mutex;
    /** The thread id of the holder, or NOBODY; an acquisition that finds it taken breaks exclusion. */
    private final AtomicInteger holder = new AtomicInteger(NOBODY);
    /** The first broken property seen during the run, or null. */
    volatile String broken;
    private final AtomicInteger acquisitions = new AtomicInteger();
    private final AtomicInteger releases = new AtomicInteger();
    /** Orders the starts and returns of lock() calls (the order checks). */
    private final AtomicLong clock = new AtomicLong();
    /** Every waiter of the run, in the order their lock() calls began. */
    final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    // Slot tid is touched only by the thread that runs tid's operations.
    private final Waiter[] latest = new Waiter[SLOTS];
    /** Whether thread tid holds the lock by its tryLock (slot tid: that thread's operations only). */
    private final boolean[] heldByTry = new boolean[SLOTS];

    /** Runs the test on {@code mutex}. */
    MutexLincheck(AsyncMutex mutex) {
        this.mutex = mutex;
    }

    /**
     * Whether waiters run {@code mutex.withLock(body)}, whose body acquires and lets go at once
     * ({@link #heldBriefly}), rather than {@code lock()}, whose value means the waiter holds the lock
     * until its thread's {@link #unlock(int)}. A constant of the test class.
     */
    boolean withLock() {
        return false;
    }

    /** Takes the lock if free; never waits. */
    @Operation
    public void tryLock(@Param(name = "tid") int tid) {
        if (mutex.tryLock()) {
            acquired(tid);
            heldByTry[tid] = true;
        }
    }

    /** Starts a lock() and keeps it as this thread's latest waiter. */
    @Operation
    public void lock(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid, clock.incrementAndGet());
        waiters.add(w); // before it starts: an unlock may hand it the lock at any time from then on
        latest[tid] = w;
        Task<Void> waiting = withLock() ? mutex.withLock(heldBriefly(w)) : mutex.lock();
        w.future = waiting.outcome().map(w::ended).toCompletableFuture();
        w.queuedAt = clock.incrementAndGet();
    }

    /**
     * A {@code withLock} body for waiter {@code w}: it acquires (checked as a {@code lock()}'s value
     * is) and lets go at once; the exit of {@code withLock} unlocks after it.
     */
    private Task<Void> heldBriefly(Waiter w) {
        return Task.fromRunnable(() -> {
            checkOrder(w);
            w.served = true; // before the exit: the exit may hand the lock to the next waiter inline, before w ends
            acquired(w.tid);
            holder.set(NOBODY); // released first: the exit may hand the lock over inline
            releases.incrementAndGet();
        });
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

    /**
     * Unlocks if this thread holds the lock; does nothing otherwise. When waiters run {@code withLock},
     * only a hold taken by {@link #tryLock(int)} is this operation's to release (a body's hold is its
     * exit's: an unlock here would take the lock from the body that holds it).
     */
    @Operation
    public void unlock(@Param(name = "tid") int tid) {
        if (holder.get() != tid || (withLock() && !heldByTry[tid])) {
            return;
        }
        heldByTry[tid] = false;
        holder.set(NOBODY); // released first: the unlock may hand the lock over inline
        releases.incrementAndGet();
        mutex.unlock();
    }

    private void acquired(int tid) {
        acquisitions.incrementAndGet();
        int previous = holder.compareAndExchange(NOBODY, tid);
        if (previous != NOBODY) {
            broken = "thread " + tid + " acquired while thread " + previous + " held the lock";
        }
    }

    /**
     * The order the mutex promises, checked when waiter {@code w} acquires (before it is counted as
     * the holder): sets {@link #broken} if {@code w} went before a waiter it must follow.
     */
    abstract void checkOrder(Waiter w);

    /** After each run, once the common invariants hold: the checks of this mutex alone. */
    void validateMore(boolean locked) {}

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        boolean locked = mutex.isLocked();
        int held = acquisitions.get() - releases.get();
        if (held != (locked ? 1 : 0) || (holder.get() != NOBODY) != locked) {
            throw new AssertionError("locked=" + locked + " but " + held + " holders (holder " + holder + ")");
        }
        for (Waiter w : waiters) {
            int endings = w.endings.get();
            if (endings > 1) {
                throw new AssertionError("thread " + w.tid + "'s waiter ended " + endings + " times");
            }
            if (endings == 0 && (w.cancelRequested || !locked)) {
                throw new AssertionError("thread " + w.tid + "'s waiter is still waiting (cancel requested "
                        + w.cancelRequested + ", locked " + locked + "): a lost wake-up");
            }
        }
        validateMore(locked);
    }

    @Test
    void modelChecking() {
        check().scaledIterations(15).invocations(200)
                .threads(THREADS).actorsPerThread(2).actorsBefore(2).actorsAfter(2)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(30).invocations(2000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    /** Every run of this test: the common custom scenarios, then {@link #moreScenarios()}. */
    private LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass())
                .scenarios(
                        handOverRacingCancel(),
                        detachRacingNewestWaiterPoppingItself(),
                        pushRacingRelease())
                .scenarios(moreScenarios());
    }

    /** The custom scenarios of this mutex alone, run after the common ones. */
    ExecutionScenario[] moreScenarios() {
        return new ExecutionScenario[0];
    }

    /**
     * Thread 1 holds the lock, thread 2 waits behind it and a waiter of thread 3 behind that; thread
     * 1 unlocks (handing the lock to, or waking, thread 2's waiter) while thread 2 cancels. The lock
     * goes to thread 2 (whose cancel then does nothing) or, if the cancel won, to thread 3 (a barging
     * mutex's wake-up is undone and thread 3's waiter is woken instead): never to both, never to
     * nobody.
     */
    static ExecutionScenario handOverRacingCancel() {
        return LincheckSupport.scenario(MutexLincheck.class,
                "tryLock 1; lock 2; lock 3",
                "unlock 1 | cancel 2; unlock 2 | unlock 3",
                "unlock 2; unlock 3");
    }

    /**
     * Thread 1 holds the lock with one waiter (thread 2's, the newest); thread 1 unlocks (the owner
     * takes the waiters) while thread 2 cancels (popping itself if it is still the newest) and thread
     * 3 pushes a new waiter.
     */
    static ExecutionScenario detachRacingNewestWaiterPoppingItself() {
        return LincheckSupport.scenario(MutexLincheck.class,
                "tryLock 1; lock 2",
                "unlock 1 | cancel 2 | lock 3; unlock 3",
                "unlock 2; unlock 3");
    }

    /** Two threads lock and unlock: a push racing the release. */
    static ExecutionScenario pushRacingRelease() {
        return LincheckSupport.scenario(MutexLincheck.class,
                null,
                "tryLock 1; unlock 1 | lock 2; unlock 2",
                "unlock 2");
    }

    /** One lock() run, watched through its outcome. */
    final class Waiter {
        final int tid;
        /** When its lock() call began (the test's clock). */
        final long startedAt;
        /** When its lock() call returned, or 0 while it runs. */
        volatile long queuedAt;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;
        /** Whether it acquired (set at its acquisition; for withLock, in its body, before it ends). */
        volatile boolean served;

        Waiter(int tid, long startedAt) {
            this.tid = tid;
            this.startedAt = startedAt;
        }

        Void ended(Outcome<Void> outcome) {
            if (outcome instanceof Outcome.Value<Void>) {
                if (!withLock()) {
                    checkOrder(this);
                    served = true;
                    acquired(tid);
                }
            } else if (!(outcome instanceof Outcome.Cancelled<Void>)) {
                broken = "lock() failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
