package dev.coro.sync;

import dev.coro.internal.Blocking;
import dev.coro.internal.PermitLane;
import dev.coro.task.Task;
import java.util.Objects;

/**
 * A FIFO mutual-exclusion lock for tasks (seed 002's {@code mutex}): a task that waits for it is
 * suspended, never its thread, and resumes on the scheduler it came from.
 *
 * <p><b>Doors.</b> {@link #tryLock()} never waits; {@link #lock()} is a task that completes once the
 * lock is held; {@link #unlock()} releases it; {@link #withLock(Task)} holds the lock for the run of a
 * task and releases it on every completion path (value, error, cancellation). {@link #lockGuard()}
 * and {@link #lockBlocking()} return an {@link AutoCloseable} {@link Guard} for try-with-resources,
 * as a task and from a plain or virtual thread.
 *
 * <p><b>Fairness.</b> Strictly FIFO among waiters: {@code unlock} hands the lock directly to the
 * oldest waiter (no barging: {@code tryLock} fails while waiters are queued or a hand-over is under
 * way). Waiters are served in the order their {@code lock()} reached the lock.
 *
 * <p><b>Cancellation.</b> A cancelled {@code lock()} either completes on the cancelled channel, leaves
 * the queue (its node is unlinked at once if it is the newest waiter, otherwise by a sweep within an
 * amortized constant number of later operations, or skipped by the next hand-over) and holds
 * nothing, or, if the hand-over won the race, completes with the lock held: exactly one of the two,
 * decided by one CAS. A waiter cancelled while the lock is held forever keeps nothing queued beyond
 * a constant factor of the live waiters.
 * The mutex never ends locked with nobody holding it. Use {@code withLock} or a guard so that the
 * second case releases too.
 *
 * <p><b>Misuse.</b> {@code unlock()} of an unlocked mutex throws {@link IllegalStateException}. The
 * mutex is not reentrant and does not track its owner (as with the seed's mutex): only the holder may
 * unlock. An unlock by anyone else breaks exclusion (it hands the lock on while its holder still
 * runs).
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions before an {@code unlock} happen-before
 * the actions of the task that next acquires the lock.
 *
 * {@snippet :
 * AsyncMutex mutex = new AsyncMutex();
 * Task<Integer> increment = mutex.withLock(Task.fromCallable(() -> ++counter));
 * try (AsyncMutex.Guard guard = mutex.lockBlocking()) {
 *     counter++;                       // from a plain thread
 * }
 * }
 */
public final class AsyncMutex implements WaitingPrimitive {
    /* Implementation overview.
     *
     * The mutex is a rule on the one admission engine (dev.coro.internal.AdmissionEngine): a permit
     * lane of one unit (PermitLane), plus the seed's free-standing unlock(). Its state machine,
     * invariants, memory ordering and cancellation races are the lane's and the engine's overviews;
     * what is the mutex's own:
     *
     * 1. Representation. lane.available: 1 unlocked; 0 locked, nobody waiting; -n locked, n waiters
     *    lack the lock (not yet handed it). The waiters are the engine's (its intake: seed 002's
     *    lock-free LIFO stack, reversed into FIFO order by whoever owns the decision).
     * 2. Transitions. tryLock and lock's run-loop fast path: CAS 1 -> 0 (lane T1). lock's slow path:
     *    getAndAdd -1 (lane T2), then push; unlock: CAS a -> a + 1 unless a == 1 (misuse), and if a < 0
     *    the unit goes to the oldest waiter through the engine (lane T3: a credit, then the owner's
     *    admit CAS on the waiter's step).
     * 3. Linearization points. tryLock / lock fast: the CAS. lock slow: the getAndAdd (its place in
     *    the count) and the push (its place in line); its acquisition is the owner's admit CAS.
     *    unlock: its CAS.
     * 4. Invariants. M1: at most one holder (lane P1 with k = 1). M2: no barging (lane P2): a
     *    newcomer takes the lock only when no waiter lacks it.
     * 5. Memory ordering: the lane's (every access to available is a volatile RMW or read) and the
     *    engine's (ownership, the admit CAS): actions before an unlock happen-before the next holder.
     * 6. Progress and fairness: lock-free; FIFO, no barging.
     * 7. Cancellation: a waiter cancelled while queued departs (the engine gives its unit of count
     *    back, lane T6); a hand-over that loses to the cancellation goes to the next waiter (T5); an
     *    arrival admitted at once whose task was cancelled meanwhile gives the lock back (the
     *    engine's enter; AsyncMutexRegressionTest.lockCancelledDuringItsFastPathDoesNotLeaveTheMutex-
     *    Locked guards it).
     * 8. Resumption: the engine's (part 8): the new holder resumes on its own scheduler; inline,
     *    through the trampoline, when unlock runs on that scheduler; a thread in lockBlocking is
     *    unparked.
     * 9. References. Seed 002, lock-free mutex (kUNLOCKED / kLOCKED_NO_WAITER / list head, the
     *    unlocker's private list reversed into FIFO order); kotlinx.coroutines #2380 and tokio #4618
     *    (a lock leaked by a cancelled waiter) are the bugs the hand-over CAS rules out.
     */

    private final PermitLane lane = new PermitLane(1);
    private final Task<Void> lock = Task.create(lane.waitingDoor(null));

    private static final WaitListener.Outcome[] OUTCOMES = WaitListener.Outcome.values();

    /**
     * Adds a listener told how each acquisition ended (admitted, with the time it waited; cancelled;
     * timed out): for metrics. Acquisitions that started before it was added are not reported to
     * it.
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    @Override
    public void addListener(WaitListener listener) {
        Objects.requireNonNull(listener, "listener");
        lane.addObserver((outcome, waited) -> listener.waitEnded(OUTCOMES[outcome], waited));
    }

    /**
     * Returns how many tasks wait for the lock: a snapshot, which may still count a waiter that was
     * cancelled a moment ago.
     *
     * @return the waiters
     */
    @Override
    public int queueLength() {
        return lane.linkedWaiters();
    }

    /** Creates an unlocked mutex. */
    public AsyncMutex() {
        lane.observedAs(AsyncMutex.class); // its waits are recorded as the mutex's
        lane.describedAs("MUTEX", this); // and its waiters are dumped as waiting on this mutex
    }

    /**
     * Takes the lock if it is free and nobody is waiting; never waits.
     *
     * @return whether the lock is now held by the caller
     */
    public boolean tryLock() {
        return lane.tryEnter(null);
    }

    /**
     * Returns a task that completes once the caller holds the lock: at once if it is free, otherwise
     * after the waiters ahead of it. The task may be started any number of times; each run acquires
     * once. A cancelled run gives up its place and holds nothing (see the class javadoc).
     *
     * @return the acquiring task
     */
    public Task<Void> lock() {
        return lock;
    }

    /**
     * Releases the lock: hands it to the oldest waiter, or leaves it free when nobody waits.
     *
     * @throws IllegalStateException if the mutex is not locked
     */
    public void unlock() {
        if (!lane.releaseIfHeld(1)) {
            throw new IllegalStateException("unlock: the mutex is not locked");
        }
    }

    /**
     * Returns a task that runs {@code body} while holding the lock and releases the lock when the
     * body ends, on every channel (value, error, cancellation). If the wait for the lock is cancelled,
     * the body does not run.
     *
     * @param body the critical section
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public <T> Task<T> withLock(Task<T> body) {
        Objects.requireNonNull(body, "body");
        return lock.then(body.andFinally(this::unlock));
    }

    /**
     * Returns a task that acquires the lock and completes with a guard whose {@link Guard#close()}
     * releases it.
     *
     * @return the acquiring task
     */
    public Task<Guard> lockGuard() {
        return lock.map(ignored -> new Guard(this));
    }

    /**
     * Blocks the calling thread until it holds the lock (parking only the virtual thread on a virtual
     * thread) and returns a guard that releases it. Interrupting the thread cancels the wait.
     *
     * @return the guard
     * @throws java.util.concurrent.CancellationException if the thread is interrupted while waiting
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool worker,
     *     an event loop's thread): see {@link Task#join()}; the lock is then neither taken nor waited for
     */
    public Guard lockBlocking() {
        Blocking.checkAllowed(AsyncMutex.class, "lockBlocking");
        return lockGuard().join();
    }

    /**
     * Returns whether the lock is held (a snapshot, for monitoring).
     *
     * @return whether locked
     */
    public boolean isLocked() {
        return lane.freePermits() == 0;
    }

    @Override
    public String toString() {
        return isLocked() ? "AsyncMutex[locked]" : "AsyncMutex[unlocked]";
    }

    /**
     * Holds the lock until closed. {@link #close()} releases it once; closing again does nothing.
     * Not thread-safe: close it from the code that acquired it.
     */
    public static final class Guard implements AutoCloseable {
        private final AsyncMutex mutex;
        private boolean closed;

        private Guard(AsyncMutex mutex) {
            this.mutex = mutex;
        }

        /** Releases the lock, the first time it is called. */
        @Override
        public void close() {
            if (!closed) {
                closed = true;
                mutex.unlock();
            }
        }
    }
}
