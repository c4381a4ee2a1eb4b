package dev.coro.sync;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.BargingLane;
import dev.coro.internal.Blocking;
import dev.coro.internal.PermitLane;
import dev.coro.internal.TaskDoors;
import dev.coro.internal.UnitCount;
import dev.coro.task.Task;
import java.util.Objects;

/**
 * A mutual-exclusion lock for tasks (seed 002's {@code mutex}), FIFO by default: a task that waits for
 * it is suspended, never its thread, and resumes on the scheduler it came from. {@link #barging()}
 * makes one that trades order for throughput.
 *
 * <p><b>Doors.</b> {@link #tryLock()} never waits; {@link #lock()} is a task that completes once the
 * lock is held; {@link #unlock()} releases it; {@link #withLock(Task)} holds the lock for the run of a
 * task and releases it on every completion path (value, error, cancellation). {@link #lockGuard()}
 * and {@link #lockBlocking()} return an {@link AutoCloseable} {@link Guard} for try-with-resources,
 * as a task and from a plain or virtual thread.
 *
 * <p><b>Fairness.</b> {@code new AsyncMutex()} is strictly FIFO among waiters: {@code unlock} hands the
 * lock directly to the oldest waiter (no barging: {@code tryLock} fails while waiters are queued or a
 * hand-over is under way). Waiters are served in the order their {@code lock()} reached the lock.
 * Under contention every acquisition is then a hand-off: the releasing task goes to the back of the
 * line, and the next one resumes (inline, on the same thread, when that thread runs the waiter's
 * scheduler).
 *
 * <p>{@link #barging()} is not fair: {@code unlock} frees the lock and, if tasks wait, wakes the
 * oldest one (one woken task at a time); until that task runs and takes the lock, any task that asks
 * (the one that just unlocked, a newcomer, {@code tryLock}) may take it first. A woken task that
 * finds the lock taken waits again, at the back of the line. So a task that locks and unlocks in a
 * loop keeps the lock without a hand-off, which is much faster under contention, but a waiting task
 * can be overtaken any number of times while others keep taking the lock, and may in principle wait
 * for ever (as with {@code new ReentrantLock(false)}). What it does promise: a free lock with a task
 * waiting for it is always offered to the oldest such task, so no wake-up is lost.
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
     *
     * The barging mutex (barging()) is a rule on the barging lane (BargingLane) instead: its state
     * word, transitions B1..B7, invariants L1..L4 (exclusion, one woken waiter, counting, no lost
     * wake-up), ordering and cancellation races are that overview's. The mutex's own part is the
     * lock task (competing): the lane's waiting door, which completes with HELD when its fast path
     * took the lock (B1) and with null when the waiter was woken (B4); a woken waiter competes once
     * (tryWoken, B6) in the lane's Competition, a flatMap function, which the run loop calls on
     * every path with no cancellation check first, so the woken flag is always cleared (L2); if it
     * lost, the task runs again from the door (B1, then B2: at the back of the line). unlock is
     * releaseIfHeld (B3).
     * Fairness: none promised beyond L4 (see the class javadoc); M2 does not hold.
     *
     * withLock, both kinds: lock.then(body.andFinally(unlock)) built as one node (the task layer's
     * guarded door, TaskDoors.guarded), whose unlock frame is made once per mutex; a withLock built
     * per use costs that node alone. A barging one enters by the lane's waiting door itself: the
     * unlock frame's test (BargingLane.entered) is the woken waiter's one competition, which the run
     * loop calls on the door's value before anything else, and a lost competition runs the node
     * again from the door, as the lock task's flatMap does.
     */

    private final AdmissionEngine engine;
    private final UnitCount lane;
    private final Task<Void> lock;
    /** What {@link #withLock} enters by: {@link #lock}, or for a barging mutex the lane's waiting door. */
    private final Task<?> entry;
    /**
     * {@link #unlock()} as the frame every {@link #withLock} runs last, and for a barging mutex the
     * woken waiter's competition (one object per mutex).
     */
    private final Object unlockFrame;

    /** The task layer's doors (the guarded node). */
    private static final TaskDoors DOORS = TaskDoors.get();

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
        engine.addObserver((outcome, waited) -> listener.waitEnded(OUTCOMES[outcome], waited));
    }

    /**
     * Returns how many tasks wait for the lock: a snapshot, which may still count a waiter that was
     * cancelled a moment ago.
     *
     * @return the waiters
     */
    @Override
    public int queueLength() {
        return engine.linkedWaiters();
    }

    /** Creates an unlocked mutex that hands the lock to its waiters in FIFO order. */
    public AsyncMutex() {
        PermitLane fifo = new PermitLane(1);
        this.engine = fifo;
        this.lane = fifo;
        this.lock = Task.create(fifo.waitingDoor(null));
        this.entry = lock;
        this.unlockFrame = DOORS.exitFrame(this::unlock, null);
        engine.observedAs(AsyncMutex.class); // its waits are recorded as the mutex's
        engine.describedAs("MUTEX", this); // and its waiters are dumped as waiting on this mutex
    }

    private AsyncMutex(BargingLane barging) {
        this.engine = barging;
        this.lane = barging;
        Task<Object> door = Task.create(barging.waitingDoor());
        this.lock = competing(door, barging);
        this.entry = door;
        this.unlockFrame = DOORS.exitFrame(this::unlock, barging::entered); // a woken waiter competes (B6)
        engine.observedAs(AsyncMutex.class);
        engine.describedAs("MUTEX", this);
    }

    /**
     * Creates an unlocked mutex that admits by competition instead of FIFO hand-off: {@code unlock}
     * frees the lock and wakes the oldest waiter, which then competes with any task that asks
     * meanwhile. Not fair, and a waiter may be overtaken without bound: see the class javadoc's
     * fairness paragraph. Everything else (the doors, cancellation, misuse, memory effects) is as
     * for {@code new AsyncMutex()}.
     *
     * {@snippet :
     * AsyncMutex counterLock = AsyncMutex.barging(); // throughput over order
     * Task<Void> increment = counterLock.withLock(Task.fromRunnable(() -> counter++));
     * }
     *
     * @return a new unlocked barging mutex
     */
    public static AsyncMutex barging() {
        return new AsyncMutex(new BargingLane());
    }

    /**
     * Returns whether this mutex admits by competition ({@link #barging()}) rather than in FIFO
     * order.
     *
     * @return whether barging
     */
    public boolean isBarging() {
        return engine instanceof BargingLane;
    }

    /**
     * The barging lock task: the lane's waiting door; if the waiter was woken rather than admitted at
     * once, its one competition (BargingLane B6, on every path: a flatMap function runs with no
     * cancellation check before it); if that lost, the whole task again; once the lock is held, null.
     */
    private static Task<Void> competing(Task<Object> door, BargingLane lane) {
        BargingLane.Competition<Task<Void>> competition = lane.competition(Task.value(null));
        return competition.entry(door.flatMap(competition));
    }

    /**
     * Takes the lock if it is free and nobody is waiting (FIFO), or if it is free (barging); never
     * waits.
     *
     * @return whether the lock is now held by the caller
     */
    public boolean tryLock() {
        return engine.tryEnter(null);
    }

    /**
     * Returns a task that completes once the caller holds the lock: at once if it is free, otherwise
     * after the waiters ahead of it (FIFO), or once it wins the lock after a wake-up (barging). The
     * task may be started any number of times; each run acquires once. A cancelled run gives up its
     * place and holds nothing (see the class javadoc).
     *
     * @return the acquiring task
     */
    public Task<Void> lock() {
        return lock;
    }

    /**
     * Releases the lock: hands it to the oldest waiter, or leaves it free when nobody waits (FIFO);
     * frees it and wakes the oldest waiter if none is awake yet (barging).
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
        @SuppressWarnings("unchecked")
        Task<T> guarded = (Task<T>) DOORS.guarded(entry, body, unlockFrame); // lock.then(body.andFinally(unlock))
        return guarded;
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
        String kind = isBarging() ? "barging, " : "";
        return isLocked() ? "AsyncMutex[" + kind + "locked]" : "AsyncMutex[" + kind + "unlocked]";
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
