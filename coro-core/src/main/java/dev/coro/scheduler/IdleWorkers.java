package dev.coro.scheduler;

import dev.coro.internal.CoroEvents;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The pool's park/wake protocol: how many workers are searching for work, how many are not parked,
 * and which are parked. It keeps two promises: a submission never waits on a parked pool (no lost
 * wakeup), and a burst of submissions wakes one worker at a time, not one per task (a parked worker
 * costs tens of microseconds to wake, a searching one finds work in well under one).
 *
 * <p>Thread-safety: all methods may be called from any thread; {@link #announcePark},
 * {@link #cancelPark} and {@link #awaitUnpark} only by the worker they name.
 */
final class IdleWorkers {
    /* Implementation overview.
     *
     * 1. Representation. ctl, one volatile int:
     *      bits  0..15   searching: workers spinning through the queues looking for work
     *      bits 16..31   unparked: workers not registered as parked (running, searching, or between)
     *    sleepers: a stack of the workers registered as parked, guarded by this object's monitor;
     *    Worker.parked (volatile): true while the worker is on that stack.
     *    States of one worker: ACTIVE (counted unparked), SEARCHING (counted unparked and
     *    searching), PARKED (on the stack, parked == true, counted in neither).
     *
     * 2. Transitions (the count changes are one atomic add to ctl; "lock" is the monitor).
     *      ACTIVE    -> SEARCHING  tryStartSearching: CAS ctl +1 searching, only while
     *                              2 * searching < workers (so most idle workers park)    the worker
     *      SEARCHING -> ACTIVE     stopSearching: add -1 searching; if it was the last
     *                              searcher, signal (someone must look for the rest)       the worker
     *      ACTIVE|SEARCHING -> PARKED  announcePark: lock, add -1 unparked (and -1
     *                              searching), push, parked = true                         the worker
     *      PARKED    -> SEARCHING  wakeOne: lock, pop, add +1 searching +1 unparked,
     *                              parked = false, unlock, unpark                          a submitter
     *      PARKED    -> SEARCHING  cancelPark: lock, remove self, same add                 the worker
     *      PARKED    -> SEARCHING  wakeEveryone: lock, each as in wakeOne                  shutdown,
     *                              (after termination the woken workers exit instead)      terminator
     *
     * 3. Linearization points. signal: its read of ctl (it wakes a worker only if that read shows no
     *    searcher and a parked worker). announcePark: the add to ctl. wakeOne/cancelPark: the add
     *    to ctl under the lock.
     *
     * 4. Invariants.
     *      I1: under the lock, sleeperCount == workers - unparked(ctl), and the sleepers are exactly
     *          the workers whose parked flag is true.
     *      I2: searching <= unparked <= workers.
     *      I3 (no lost wakeup): work published before a submitter's signal is found by some worker
     *          that is or becomes SEARCHING or ACTIVE. Proof sketch: the submitter publishes, fences,
     *          then reads ctl. (a) It reads searching > 0: each searcher counted there later either
     *          finds work (stopSearching; the last one signals again, so the argument repeats) or
     *          parks, and a parking worker re-checks every queue after its add to ctl, which comes
     *          after the submitter's read, so it sees the work and cancels its park. (b) It reads
     *          searching == 0 and a parked worker: wakeOne (re-checked under the lock) moves one
     *          to SEARCHING. (c) It reads everyone unparked: every worker is ACTIVE and will, once
     *          its task ends, look at the queues before it parks (again with the re-check).
     *
     * 5. Memory ordering. ctl: every change is a volatile read-modify-write, a full fence; the
     *    callers rely on it as the worker's half of the Dekker pair "announce, then re-check the
     *    queues" (the submitter's half is "publish, full fence, then read ctl" in the pool).
     *    parked: volatile; written under the lock, read by its worker without it.
     *
     * 6. Progress. signal's fast path is one volatile read and never blocks. Waking and parking take
     *    the monitor briefly (a few field writes), never while parking. The only spin is the
     *    worker's bounded search in Worker (flagged there), not here.
     *
     * 7. Races. wakeOne vs cancelPark for the same worker: the lock orders them; whoever finds
     *    parked == true does the counting, the other sees false and does nothing (the worker then
     *    just runs as a searcher; a stale unpark permit only makes one LockSupport.park return
     *    early, and awaitUnpark loops on the flag).
     *
     * 8. Resumption. A woken worker resumes as a searcher: it counts as looking at once, so further
     *    submissions do not wake more workers until it finds work and stops searching.
     *
     * 9. References. The searching-worker count of Go's scheduler (runtime/proc.go, "Worker thread
     *    parking/unparking") and tokio's multi-thread idle.rs, whose state layout this follows.
     */

    private static final int SEARCH_ONE = 1;
    private static final int UNPARKED_ONE = 1 << 16;
    private static final int COUNT_MASK = 0xffff;

    /** The largest worker count the 16-bit fields of ctl can hold. */
    static final int MAX_WORKERS = 0x7fff;

    private final int workers;
    private final Worker[] sleepers; // guarded by this
    private int sleeperCount; // guarded by this

    private volatile int ctl;

    IdleWorkers(int workers) {
        assert workers > 0 && workers <= MAX_WORKERS;
        this.workers = workers;
        this.sleepers = new Worker[workers];
        this.ctl = workers * UNPARKED_ONE; // everyone starts ACTIVE
    }

    static int searching(int c) {
        return c & COUNT_MASK;
    }

    static int unparked(int c) {
        return (c >>> 16) & COUNT_MASK;
    }

    /** Workers neither parked nor searching: running a task or about to (a snapshot of ctl). */
    int running() {
        int c = ctl;
        return Math.max(0, unparked(c) - searching(c));
    }

    /**
     * Becomes a searcher if fewer than half the workers search. Returns whether it did.
     */
    boolean tryStartSearching() {
        int c = ctlVolatile();
        for (;;) {
            if (2 * searching(c) >= workers) {
                return false;
            }
            int witness = (int) CTL.compareAndExchange(this, c, c + SEARCH_ONE);
            if (witness == c) {
                return true;
            }
            c = witness;
        }
    }

    /** Stops searching (the caller found work); the last searcher to stop signals for the rest. */
    void stopSearching() {
        int c = (int) CTL.getAndAdd(this, -SEARCH_ONE);
        assert searching(c) > 0 : "not searching"; // I2
        if (searching(c) == 1) {
            signal(); // getAndAdd was the full fence signal needs
        }
    }

    /**
     * Makes sure some worker will look for work the caller has just published. The caller must have
     * issued a full fence (or a volatile read-modify-write) after publishing it (I3).
     */
    void signal() {
        int c = ctlVolatile();
        if (searching(c) == 0 && unparked(c) < workers) {
            wakeOne();
        }
    }

    private void wakeOne() {
        Worker w;
        synchronized (this) {
            int c = ctlVolatile();
            if (searching(c) != 0 || unparked(c) == workers) {
                return; // someone is already looking, or nobody is parked
            }
            assert sleeperCount == workers - unparked(c) : "I1"; // I1
            w = sleepers[--sleeperCount];
            sleepers[sleeperCount] = null;
            CTL.getAndAdd(this, SEARCH_ONE + UNPARKED_ONE);
            w.parked = false;
        }
        LockSupport.unpark(w);
    }

    /**
     * Registers {@code w} as parked; after this the caller must re-check every queue and then either
     * {@link #cancelPark} or {@link #awaitUnpark}.
     *
     * @return the value of ctl after the registration
     */
    int announcePark(Worker w, boolean searching) {
        int delta = -UNPARKED_ONE - (searching ? SEARCH_ONE : 0);
        synchronized (this) {
            assert !w.parked;
            sleepers[sleeperCount++] = w;
            w.parked = true;
            int c = (int) CTL.getAndAdd(this, delta) + delta; // full fence: see I3 (c)
            assert searching(c) <= unparked(c) && sleeperCount == workers - unparked(c) : "I1, I2";
            return c;
        }
    }

    /** Takes {@code w} back out of the parked set, as a searcher (whether it or a waker does the move). */
    void cancelPark(Worker w) {
        synchronized (this) {
            if (!w.parked) {
                return; // a waker moved us to SEARCHING already (section 7)
            }
            for (int i = 0; i < sleeperCount; i++) {
                if (sleepers[i] == w) {
                    sleepers[i] = sleepers[--sleeperCount];
                    sleepers[sleeperCount] = null;
                    break;
                }
            }
            w.parked = false;
            CTL.getAndAdd(this, SEARCH_ONE + UNPARKED_ONE);
        }
    }

    /**
     * Parks the calling worker until a waker clears its flag or {@code stop} becomes true. Clears
     * stray interrupts (a parked worker is not interruptible: its tasks are).
     */
    void awaitUnpark(Worker w, WorkStealingPool pool) {
        CoroEvents.WorkerPark event = CoroEvents.OFF ? null : new CoroEvents.WorkerPark(); // JFR; folded away when disabled
        if (event != null) {
            event.begin();
        }
        while (w.parked && !pool.isStopping()) {
            LockSupport.park(this);
            Thread.interrupted(); // an interrupt would make park return at once, forever
        }
        if (event != null && event.shouldCommit()) {
            event.pool = pool.name();
            event.worker = w.index;
            event.commit();
        }
    }

    /**
     * Wakes every parked worker as a searcher: for shutdown (they look once more, and the last one
     * to park again finds the pool quiescent) and for termination (they see the pool stopping).
     */
    void wakeEveryone() {
        Worker[] woken;
        int n;
        synchronized (this) {
            n = sleeperCount;
            woken = new Worker[n];
            for (int i = 0; i < n; i++) {
                Worker w = sleepers[i];
                sleepers[i] = null;
                w.parked = false;
                woken[i] = w;
            }
            sleeperCount = 0;
            CTL.getAndAdd(this, n * (SEARCH_ONE + UNPARKED_ONE));
        }
        for (Worker w : woken) {
            LockSupport.unpark(w);
        }
    }

    /** Returns ctl's current value (for the pool's quiescence check and for tests). */
    int ctlVolatile() {
        return (int) CTL.getVolatile(this);
    }

    private static final VarHandle CTL;

    static {
        try {
            CTL = MethodHandles.lookup().findVarHandle(IdleWorkers.class, "ctl", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
