package dev.coro.sync;

import dev.coro.task.Completer;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * the queue (its node is skipped by the next hand-over and then dropped) and holds nothing, or, if the
 * hand-over won the race, completes with the lock held: exactly one of the two, decided by one CAS.
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
     * 1. Representation. state (volatile Object):
     *      UNLOCKED     nobody holds the lock
     *      LOCKED       held; no waiter has arrived since the holder last looked
     *      Waiter w     held; w is the newest waiter, older ones follow through w.next (LIFO)
     *    fifo (plain Waiter): waiters already detached from state, oldest first. Owned by the
     *      holder: only the thread that holds the lock (and is unlocking) reads or writes it.
     *
     * 2. Transitions.
     *    tryLock / lock (fast):  UNLOCKED -> LOCKED                         CAS    acquirer
     *                            (lock: then complete; if the task was cancelled meanwhile,
     *                            complete fails and the acquirer unlocks at once, see 7)
     *    lock (slow):            LOCKED | w -> w' (w'.next = w or null)     CAS    waiter
     *    unlock, fifo empty:     LOCKED -> UNLOCKED                         CAS    holder
     *                            w -> LOCKED; fifo = reverse(w)             getAndSet, holder
     *                            (the exchange may return LOCKED: a cancelled newest waiter popped
     *                            itself between the read and the exchange; found by the stress test
     *                            unlockRacingCancelNeverLeavesTheMutexLockedWithNobody)
     *    unlock, fifo = w...:    fifo = w.next; hand the lock to w          CAS on w's completion
     *                            (if w was cancelled: skip it and go on)
     *    cancel of newest w:     w -> w.next (or LOCKED)                    CAS    canceller
     *
     * 3. Linearization points. tryLock/lock fast path: the CAS UNLOCKED -> LOCKED. lock slow path:
     *    the push CAS (its place in line); the acquisition itself is the hand-over CAS.
     *    unlock: the CAS LOCKED -> UNLOCKED, or the hand-over CAS that the new holder wins.
     *    A lock whose task was cancelled during the fast path behaves as a lock at the CAS
     *    followed by its own unlock (7); the task ends cancelled.
     *
     * 4. Invariants.
     *    I1: state != UNLOCKED while anybody holds the lock or a hand-over is under way.
     *    I2: fifo is non-empty only while the lock is held; only the holder touches it.
     *    I3: a waiter is resumed with the lock at most once (its completion CAS).
     *    I4: every waiter pushed before an unlock's getAndSet is in fifo or was handed the lock.
     *
     * 5. Memory ordering. state is volatile (CAS / getAndSet). The holder writes fifo before the
     *    hand-over CAS (a release on the waiter's completion word); the new holder reads it only
     *    after its task has been resumed (acquire on that word), so fifo needs no ordering of its
     *    own. The seed's acq_rel orderings map to these volatile accesses.
     *
     * 6. Progress and fairness. lock and tryLock are lock-free; unlock is wait-free apart from the
     *    skipped cancelled waiters and the retry after a racing push. FIFO, no barging.
     *
     * 7. Cancellation. A cancelled waiter that is still the newest pops itself (CAS state w ->
     *    w.next); any other is skipped by the hand-over loop and dropped, so its node lives at most
     *    until the holder's next unlock detaches the waiters (amortized O(1) per waiter).
     *    Cancellation race. Hand-over (complete) and cancellation (the waiter's token, through its
     *    AsyncStep) race on one CAS: if cancel wins, complete returns false and unlock passes the
     *    lock to the next waiter; if complete wins, the waiter holds the lock and its cancel is a
     *    no-op. A waiter whose token is already cancelled is cancelled by unlock rather than handed
     *    the lock. So no permit is lost and the mutex never ends locked with no holder.
     *    Fast path. The task's token can fire after the task started and before acquire's complete
     *    (whenAny, timeout and scopes cancel from other threads), so the CAS UNLOCKED -> LOCKED may
     *    take the lock for a task that is already cancelled: complete then returns false, and the
     *    acquirer, which holds the lock, unlocks it (handing it to any waiter queued meanwhile).
     *    Found by AsyncMutexRegressionTest.lockCancelledDuringItsFastPathDoesNotLeaveTheMutexLocked:
     *    ignoring complete's answer left the mutex LOCKED with nobody holding it.
     *
     * 8. Resumption. The new holder resumes on its own scheduler through its AsyncStep: inline
     *    through the trampoline when unlock runs on that scheduler (so 100,000 waiters that unlock
     *    inline use a bounded stack), otherwise by submission.
     *
     * 9. References. Seed 002, lock-free mutex (kUNLOCKED / kLOCKED_NO_WAITER / list head, the
     *    unlocker's private list reversed into FIFO order); kotlinx.coroutines #2380 and tokio #4618
     *    (a lock leaked by a cancelled waiter) are the bugs the hand-over CAS rules out.
     */

    /** Nobody holds the lock. */
    private static final Object UNLOCKED = new Object() {
        @Override
        public String toString() {
            return "UNLOCKED";
        }
    };
    /** Held, and no waiter arrived since the holder last detached the waiters. */
    private static final Object LOCKED = new Object() {
        @Override
        public String toString() {
            return "LOCKED";
        }
    };

    private volatile Object state = UNLOCKED;
    /** Detached waiters, oldest first; owned by the holder (I2). */
    private Waiter fifo;
    private final Task<Void> lock = Task.create(this::acquire);

    /** Creates an unlocked mutex. */
    public AsyncMutex() {}

    /**
     * Takes the lock if it is free and nobody is waiting; never waits.
     *
     * @return whether the lock is now held by the caller
     */
    public boolean tryLock() {
        return state == UNLOCKED && STATE.compareAndSet(this, UNLOCKED, LOCKED);
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

    private void acquire(Completer<Void> completer) {
        Waiter w = null;
        for (;;) {
            Object s = state;
            if (s == UNLOCKED) {
                if (STATE.compareAndSet(this, UNLOCKED, LOCKED)) {
                    if (!completer.complete(null)) {
                        unlock(); // cancelled meanwhile: release the lock it cannot use (overview 7)
                    }
                    return;
                }
                continue;
            }
            if (w == null) {
                w = new Waiter(completer);
            }
            w.next = s == LOCKED ? null : (Waiter) s;
            if (STATE.compareAndSet(this, s, w)) {
                Waiter queued = w;
                completer.onCancel(() -> popIfNewest(queued));
                return; // unlock hands the lock over through the completer, or the token cancels it
            }
        }
    }

    /** A cancelled waiter that is still the newest unlinks itself at once; others are skipped later. */
    private void popIfNewest(Waiter w) {
        if (state == w) {
            Waiter next = w.next; // stable while w is in state: only a detach (getAndSet) rewrites it
            STATE.compareAndSet(this, w, next == null ? LOCKED : next);
        }
    }

    /**
     * Releases the lock: hands it to the oldest waiter, or leaves it free when nobody waits.
     *
     * @throws IllegalStateException if the mutex is not locked
     */
    public void unlock() {
        for (;;) {
            Waiter w = fifo;
            if (w == null) {
                Object s = state;
                if (s == UNLOCKED) {
                    throw new IllegalStateException("unlock: the mutex is not locked");
                }
                if (s == LOCKED) {
                    if (STATE.compareAndSet(this, LOCKED, UNLOCKED)) {
                        return;
                    }
                    continue; // a waiter arrived
                }
                Object detached = STATE.getAndSet(this, LOCKED); // I4
                if (detached instanceof Waiter stack) { // LOCKED if the only waiter popped itself meanwhile
                    fifo = reverse(stack);
                }
                continue;
            }
            fifo = w.next;
            w.next = null;
            if (w.completer.context().token().isCancelled()) {
                w.completer.cancel(); // do not hand the lock to a task that is being cancelled
            } else if (w.completer.complete(null)) {
                return; // handed over: the waiter holds the lock (I3)
            }
            // the waiter was cancelled first: skip it and hand the lock on
        }
    }

    private static Waiter reverse(Waiter stack) {
        Waiter oldestFirst = null;
        while (stack != null) {
            Waiter next = stack.next;
            stack.next = oldestFirst;
            oldestFirst = stack;
            stack = next;
        }
        return oldestFirst;
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
        return state != UNLOCKED;
    }

    @Override
    public String toString() {
        Object s = state;
        return s == UNLOCKED ? "AsyncMutex[unlocked]"
                : s == LOCKED ? "AsyncMutex[locked]" : "AsyncMutex[locked, waiters]";
    }

    /** One queued {@code lock()}. */
    private static final class Waiter {
        final Completer<Void> completer;
        Waiter next;

        Waiter(Completer<Void> completer) {
            this.completer = completer;
        }
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

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(AsyncMutex.class, "state", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
