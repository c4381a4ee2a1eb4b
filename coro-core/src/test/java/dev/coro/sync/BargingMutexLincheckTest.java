package dev.coro.sync;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
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
 * Lincheck explores {@link AsyncMutex#barging()} (the barging lane on the admission engine) in
 * model-checking and stress modes, with mutual exclusion, no lost wake-up and the lock's accounting
 * as the checked properties. The shape is {@link AsyncMutexLincheckTest}'s (why the operations answer
 * nothing is said there), less its FIFO check, which a barging mutex does not promise:
 * <ul>
 *   <li>exclusion: an acquisition while another thread holds the lock is a failure, at every
 *       acquisition in every interleaving;</li>
 *   <li>each waiter acquired or was cancelled at most once; a waiter whose cancel was requested has
 *       ended (a woken waiter competes once, then its next wait ends cancelled, or it holds);</li>
 *   <li>acquisitions minus releases is 1 if locked and 0 if not, and matches the holder;</li>
 *   <li>no lost wake-up: when the run is over, an unlocked mutex has no waiter left waiting (every
 *       wake-up, and every competition of a woken waiter, has run by then: resumptions run inline
 *       on the waking thread here), and nothing is left registered: a try takes the free lock.</li>
 * </ul>
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class BargingMutexLincheckTest {
    static final int THREADS = 3;
    private static final int NOBODY = -1;
    private static final int SLOTS = THREADS + 2;

    private final AsyncMutex mutex = AsyncMutex.barging();
    /** The thread id of the holder, or NOBODY; an acquisition that finds it taken breaks exclusion. */
    private final AtomicInteger holder = new AtomicInteger(NOBODY);
    private volatile String broken;
    private final AtomicInteger acquisitions = new AtomicInteger();
    private final AtomicInteger releases = new AtomicInteger();
    /** Orders the starts and returns of lock() calls (the FIFO check). */
    private final AtomicLong clock = new AtomicLong();
    private final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    // Slot tid is touched only by the thread that runs tid's operations.
    private final Waiter[] latest = new Waiter[SLOTS];

    /** Takes the lock if free; never waits. */
    @Operation
    public void tryLock(@Param(name = "tid") int tid) {
        if (mutex.tryLock()) {
            acquired(tid);
        }
    }

    /** Starts a lock() and keeps it as this thread's latest waiter. */
    @Operation
    public void lock(@Param(name = "tid") int tid) {
        Waiter w = new Waiter(tid, clock.incrementAndGet());
        waiters.add(w); // before it starts: an unlock may hand it the lock at any time from then on
        latest[tid] = w;
        w.future = mutex.lock().outcome().map(w::ended).toCompletableFuture();
        w.queuedAt = clock.incrementAndGet();
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

    /** Unlocks if this thread holds the lock; does nothing otherwise. */
    @Operation
    public void unlock(@Param(name = "tid") int tid) {
        if (holder.get() != tid) {
            return;
        }
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

    /** Barging: nothing to check (kept so that the waiter's shape matches AsyncMutexLincheckTest's). */
    private void checkFifo(Waiter w) {
        // barging: no order is promised
    }

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
        if (!locked) { // nothing left registered: a try takes the free lock at once
            if (!mutex.tryLock()) {
                throw new AssertionError("an unlocked mutex refused a try");
            }
            mutex.unlock();
        }
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

    /** Every run of this test: the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(BargingMutexLincheckTest.class)
                .scenarios(
                        handOverRacingCancel(),
                        detachRacingNewestWaiterPoppingItself(),
                        pushRacingRelease(),
                        wokenWaiterRacingBargers());
    }

    /**
     * Thread 1 holds the lock, thread 2 waits behind it and a waiter of thread 3 behind that; thread
     * 1 unlocks (waking thread 2's waiter) while thread 2 cancels: the wake-up is undone if the
     * cancel won, and thread 3's waiter is woken instead; never both holding, never nobody woken.
     */
    static ExecutionScenario handOverRacingCancel() {
        return LincheckSupport.scenario(BargingMutexLincheckTest.class,
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
        return LincheckSupport.scenario(BargingMutexLincheckTest.class,
                "tryLock 1; lock 2",
                "unlock 1 | cancel 2 | lock 3; unlock 3",
                "unlock 2; unlock 3");
    }

    /**
     * Thread 1 holds the lock with a waiter of thread 2; thread 1 unlocks (waking it) and locks
     * again (barging), while thread 3 tries: the woken waiter competes with both and, if it loses,
     * waits again; whoever holds at the end, nobody is left waiting on a free lock.
     */
    static ExecutionScenario wokenWaiterRacingBargers() {
        return LincheckSupport.scenario(BargingMutexLincheckTest.class,
                "tryLock 1; lock 2",
                "unlock 1; tryLock 1; unlock 1 | unlock 2 | tryLock 3; unlock 3",
                "unlock 2; unlock 3");
    }

    /** Two threads lock and unlock: a push racing the release. */
    static ExecutionScenario pushRacingRelease() {
        return LincheckSupport.scenario(BargingMutexLincheckTest.class,
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

        Waiter(int tid, long startedAt) {
            this.tid = tid;
            this.startedAt = startedAt;
        }

        Void ended(Outcome<Void> outcome) {
            if (outcome instanceof Outcome.Value<Void>) {
                checkFifo(this);
                acquired(tid);
            } else if (!(outcome instanceof Outcome.Cancelled<Void>)) {
                broken = "lock() failed: " + outcome;
            }
            endings.incrementAndGet();
            return null;
        }
    }
}
