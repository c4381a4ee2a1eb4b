package dev.coro.sync;

import dev.coro.internal.FastPath;
import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitQueue;
import dev.coro.task.Completer;
import dev.coro.task.Task;
import java.util.Objects;
import java.util.function.Consumer;

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
 * decided by one CAS.
 * The mutex never ends locked with nobody holding it. Use {@code withLock} or a guard so that the
 * second case releases too.
 *
 * <p><b>Misuse.</b> {@code unlock()} of an unlocked mutex throws {@link IllegalStateException}. The
 * mutex is not reentrant and does not track its owner (as with the seed's mutex): only the holder may
 * unlock. An unlock by anyone else breaks exclusion, and one that runs at the same time as the
 * holder's own can lose queued waiters.
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
public final class AsyncMutex {
    /* Implementation overview.
     *
     * 1. Representation. The state word is a WaitQueue (the shared waiter-queue engine):
     *      UNLOCKED     sentinel, refuses waiters: nobody holds the lock (take it instead)
     *      LOCKED       sentinel, accepts waiters: held; no waiter has arrived since the holder last
     *                   looked
     *      WaitNode w   held; w is the newest waiter, older ones below it down to LOCKED (LIFO)
     *    fifo (plain WaitNode): waiters already taken from the queue, oldest first (WaitQueue.drain).
     *      Owned by the holder: only the thread that holds the lock (and is unlocking) touches it.
     *    A waiter node is the waiting task's own suspension step (WaitNode): no other allocation.
     *
     * 2. Transitions.
     *    tryLock / lock (fast):  UNLOCKED -> LOCKED                    CAS       acquirer
     *                            (lock tries this in the run loop before it suspends (FastPath); a
     *                            lock that loses and then finds UNLOCKED while queueing takes the
     *                            lock the same way and completes its own step, see 7)
     *    lock (slow):            LOCKED | w -> w'                      push CAS  waiter
     *    unlock, fifo empty:     LOCKED -> UNLOCKED                    CAS       holder
     *                            w -> LOCKED; fifo = drain(w)          exchange  holder
     *                            (the exchange may return LOCKED: the only waiter popped itself
     *                            between the read and the exchange; found by the stress test
     *                            unlockRacingCancelNeverLeavesTheMutexLockedWithNobody)
     *    unlock, fifo = w...:    fifo = next; hand the lock to w       CAS on w's result (admit)
     *                            (if w was cancelled: skip it and go on)
     *    cancel of a waiter:     the engine unlinks it (newest: pop CAS; else a counted sweep)
     *
     * 3. Linearization points. tryLock/lock fast path: the CAS UNLOCKED -> LOCKED. lock slow path:
     *    the push CAS (its place in line); the acquisition itself is the hand-over CAS.
     *    unlock: the CAS LOCKED -> UNLOCKED, or the hand-over CAS that the new holder wins.
     *    A lock whose task was cancelled during the slow path's own UNLOCKED -> LOCKED behaves as a
     *    lock at the CAS followed by its own unlock (7); the task ends cancelled.
     *
     * 4. Invariants.
     *    I1: state != UNLOCKED while anybody holds the lock or a hand-over is under way.
     *    I2: fifo is non-empty only while the lock is held; only the holder touches it.
     *    I3: a waiter is resumed with the lock at most once (its result CAS).
     *    I4: every waiter pushed before an unlock's exchange is in fifo or was handed the lock.
     *
     * 5. Memory ordering. The queue's state is volatile (CAS / exchange). The holder writes fifo
     *    before the hand-over CAS (a release on the waiter's result word); the new holder reads it
     *    only after its task has been resumed (acquire on that word), so fifo needs no ordering of
     *    its own. The seed's acq_rel orderings map to these volatile accesses.
     *
     * 6. Progress and fairness. lock and tryLock are lock-free; unlock is wait-free apart from the
     *    skipped cancelled waiters and the retry after a racing push. FIFO, no barging: the fast
     *    path needs UNLOCKED, which implies that no waiter is queued and no hand-over is under way.
     *
     * 7. Cancellation. A cancelled waiter is unlinked by the engine: at once if it is the newest,
     *    otherwise by a sweep once cancelled nodes outnumber live ones (plus a constant), so a lock
     *    held for ever by one task while other waiters time out does not accumulate their nodes.
     *    A cancelled waiter already drained into fifo is skipped by the next hand-over.
     *    Cancellation race. Hand-over (admit) and cancellation (the waiter's token, through its
     *    step) race on one CAS: if cancel wins, admit returns false and unlock passes the lock to
     *    the next waiter; if admit wins, the waiter holds the lock and its cancel is a no-op. A
     *    waiter whose token is already cancelled is abandoned by unlock rather than handed the lock.
     *    So no permit is lost and the mutex never ends locked with no holder.
     *    Slow-path self-acquire. The task's token can fire after the task started and before its
     *    own admit (whenAny, timeout and scopes cancel from other threads), so the CAS
     *    UNLOCKED -> LOCKED may take the lock for a task that is already cancelled: admit then
     *    returns false, and the acquirer, which holds the lock, unlocks it (handing it to any
     *    waiter queued meanwhile). Found by AsyncMutexRegressionTest.lockCancelledDuringItsFastPath-
     *    DoesNotLeaveTheMutexLocked: ignoring the answer left the mutex LOCKED with nobody holding
     *    it. The run loop's fast path cannot hit this: it runs before the step exists, on the
     *    task's own thread, and completes the task with the lock in the same breath.
     *
     * 8. Resumption. The new holder resumes on its own scheduler through its step: inline through
     *    the trampoline when unlock runs on that scheduler (so 100,000 waiters that unlock inline
     *    use a bounded stack), otherwise by submission; a thread in lockBlocking is unparked.
     *
     * 9. References. Seed 002, lock-free mutex (kUNLOCKED / kLOCKED_NO_WAITER / list head, the
     *    unlocker's private list reversed into FIFO order); kotlinx.coroutines #2380 and tokio #4618
     *    (a lock leaked by a cancelled waiter) are the bugs the hand-over CAS rules out.
     */

    /** Nobody holds the lock; refuses waiters (they take the lock instead). */
    private static final WaitQueue.Sentinel UNLOCKED = new WaitQueue.Sentinel("UNLOCKED", false);
    /** Held, and no waiter arrived since the holder last took the waiters; accepts waiters. */
    private static final WaitQueue.Sentinel LOCKED = new WaitQueue.Sentinel("LOCKED", true);

    private final WaitQueue queue = new WaitQueue(UNLOCKED);
    /** Taken waiters, oldest first; owned by the holder (I2). */
    private WaitNode fifo;
    private final Task<Void> lock = Task.create(new Acquire());

    /** Creates an unlocked mutex. */
    public AsyncMutex() {}

    /**
     * Takes the lock if it is free and nobody is waiting; never waits.
     *
     * @return whether the lock is now held by the caller
     */
    public boolean tryLock() {
        return queue.state() == UNLOCKED && queue.casState(UNLOCKED, LOCKED);
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

    /** The body of {@link #lock()}: the run loop tries {@link #tryNow} first, then queues the step. */
    private final class Acquire implements Consumer<Completer<Void>>, FastPath {
        @Override
        public Object tryNow() {
            return tryLock() ? null : NOT_NOW;
        }

        @Override
        public void accept(Completer<Void> completer) {
            WaitNode node = (WaitNode) completer; // every Task.create completer is its step (WaitNode)
            while (queue.push(node) != null) { // refused: UNLOCKED, take the lock ourselves
                if (queue.casState(UNLOCKED, LOCKED)) {
                    if (!node.admit(null)) {
                        unlock(); // cancelled meanwhile: release the lock it cannot use (overview 7)
                    }
                    return;
                }
            }
            // queued: unlock hands the lock over through the node, or the token cancels it
        }
    }

    /**
     * Releases the lock: hands it to the oldest waiter, or leaves it free when nobody waits.
     *
     * @throws IllegalStateException if the mutex is not locked
     */
    public void unlock() {
        for (;;) {
            WaitNode w = fifo;
            if (w == null) {
                Object s = queue.state();
                if (s == UNLOCKED) {
                    throw new IllegalStateException("unlock: the mutex is not locked");
                }
                if (s == LOCKED) {
                    if (queue.casState(LOCKED, UNLOCKED)) {
                        return;
                    }
                    continue; // a waiter arrived
                }
                fifo = queue.drain(queue.exchange(LOCKED)); // I4
                continue;
            }
            fifo = WaitQueue.next(w);
            if (w.isCancelRequested()) {
                w.abandon(); // do not hand the lock to a task that is being cancelled
            } else if (w.admit(null)) {
                return; // handed over: the waiter holds the lock (I3)
            }
            // the waiter was cancelled first: skip it and hand the lock on
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
     */
    public Guard lockBlocking() {
        return lockGuard().join();
    }

    /**
     * Returns whether the lock is held (a snapshot, for monitoring).
     *
     * @return whether locked
     */
    public boolean isLocked() {
        return queue.state() != UNLOCKED;
    }

    @Override
    public String toString() {
        Object s = queue.state();
        return s == UNLOCKED ? "AsyncMutex[unlocked]"
                : s == LOCKED ? "AsyncMutex[locked]" : "AsyncMutex[locked, waiters]";
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
