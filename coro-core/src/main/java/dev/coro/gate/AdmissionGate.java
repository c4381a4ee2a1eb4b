package dev.coro.gate;

import dev.coro.internal.FastPath;
import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitQueue;
import dev.coro.task.Completer;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Consumer;

/**
 * The admission engine under every gate that admits work into a region (DESIGN principle 6): the
 * queueing, the hand-off, the cancellation of waiters, the task doors ({@link #acquire()},
 * {@link #within(Task)}, {@link #tryWithin(Task)}), the blocking door ({@link #call(Callable)}) and
 * {@link #close()} are written here once; a gate states only its admission rule, through the
 * package-private hooks {@link #ruleTryEnter()}, {@link #ruleCanEnter()}, {@link #ruleLeave(int)}
 * and {@link #ruleAdmitted()}, which run only under the engine's ownership.
 *
 * <p>Every public method of a gate is thread-safe and lock-free (see the overview below for the one
 * bounded retry loop).
 */
abstract class AdmissionGate {
    /* Implementation overview.
     *
     * 1. Representation.
     *    queue (WaitQueue): the intake, a lock-free stack of waiters on one of two sentinels:
     *      OPEN       accepts waiters; the gate is open
     *      CLOSED     refuses waiters; close() has been applied (terminal)
     *      WaitNode   newest waiter, older ones below it down to OPEN
     *    owner (volatile int): 0 or 1; whoever CASes it 0 -> 1 owns the decision. Only the owner
     *      touches the plain state below and the rule's plain state (the rule hooks).
     *    head (plain WaitNode): the taken list, waiters moved from the intake in arrival order
     *      (WaitQueue.drain), oldest first, linked through WaitQueue.next; kept across owners. It
     *      is refilled only when empty (I5), so it needs no tail: a take is the whole new list.
     *    pendingReleases (volatile int): weight released by admitted work that could not take
     *      ownership (getAndAdd); the next owner applies it to the rule.
     *    closeRequested (volatile boolean): close() was called; the next owner applies it.
     *    A waiter node is the waiting task's own suspension step (a Task.create completer): the
     *    engine allocates nothing per wait. Uniform gates (serial, capacity) need no per-waiter data.
     *
     * 2. Transitions.
     *    fast path (tryNow / tryEnterNow): intake empty, taken list empty, CAS owner 0 -> 1, re-check
     *       both and closeRequested under ownership, apply pending releases, ask the rule; then
     *       release ownership (part 5's protocol). No allocation.
     *    acquire (slow):  push the step onto the intake (refused by CLOSED: the step is abandoned),
     *       then try to own and drain.
     *    release(w):      CAS owner 0 -> 1 and apply w to the rule directly; else getAndAdd
     *       pendingReleases w, then try to own. Either way an owner then drains.
     *    close():         closeRequested = true, then try to own and drain.
     *    drain (owner):   loop: apply pendingReleases (getAndSet 0); if close was requested and not
     *       applied, exchange the intake for CLOSED and abandon every taken and intake waiter;
     *       otherwise admit from the taken list while the rule allows (skip settled waiters, abandon
     *       those whose token fired); when the taken list is empty and the rule still has room, take
     *       the intake (exchange OPEN) into the taken list and go on; then release ownership.
     *    admit(w):        ruleTryEnter, then w.admit(null); if w.admit fails (cancelled meanwhile),
     *       ruleLeave(1): the permit goes back at once, to the next waiter in the same loop.
     *
     * 3. Linearization points. acquire fast path: its CAS of owner (it decides under ownership).
     *    acquire slow path: the push CAS is its place in line; its admission is the owner's admit
     *    CAS on its step. release: its ownership CAS, or its getAndAdd (its weight is then owed by
     *    the owner, which applies it before it next admits anyone). close: the owner's exchange of
     *    the intake for CLOSED (a push after it is refused; every waiter before it is abandoned).
     *
     * 4. Invariants.
     *    I1: the rule's state and head are touched only with owner == 1, by the thread that set it.
     *    I2: strict FIFO: a waiter is admitted only when every older live waiter has been admitted;
     *        an older waiter that the rule refuses blocks the younger ones (a read-write gate's
     *        writer is not bypassed by later readers). The fast path admits only when the intake
     *        and the taken list are both empty.
     *    I3: every admission is matched by exactly one ruleLeave: the admitted work's release, or
     *        the owner's undo when the waiter's admit CAS lost to its cancellation.
     *    I4: once close is applied the intake is CLOSED for ever and the taken list is empty.
     *    I5: the intake is taken only when the taken list is empty and the rule has room, so
     *        waiters that the rule cannot admit stay in the intake, where the WaitQueue engine
     *        unlinks cancelled ones (pop or counted sweep).
     *
     * 5. Memory ordering and the missed-signal check. owner is volatile: the CAS 0 -> 1 (acquire)
     *    and the write owner = 0 (release) order successive owners, so the plain state needs no
     *    ordering of its own. Releasing ownership: the owner computes room = taken list empty and
     *    the rule has room, writes owner = 0, then reads pendingReleases, closeRequested (and the
     *    intake's CLOSED) and, if room, queue.hasWaiters(); if any is set it CASes owner 0 -> 1
     *    and drains again. The other side writes first and reads second: a releaser getAndAdds
     *    pendingReleases then CASes owner; a pusher's push CAS then its owner CAS; close writes
     *    closeRequested then CASes owner. Dekker: all these are volatile accesses, totally ordered
     *    in the synchronization order; if the other side's owner CAS failed, it read owner == 1
     *    before our owner = 0, so its write came before our owner = 0, which comes before our
     *    re-check read, and the re-check sees it. So either the other side owns and drains, or
     *    the old owner re-owns and drains: no release, waiter or close is left unapplied. When
     *    room is false the re-check ignores new waiters on purpose: the state of the rule can
     *    change only by a release or a close, which the re-check does see. room is a snapshot of
     *    owner state taken under ownership, so it is exact at the owner = 0 write.
     *
     * 6. Progress and fairness. acquire, release and close are lock-free: the drain loop runs as
     *    long as there is work applied by it (admissions, pending releases, pushes while there is
     *    room); an owner that re-checks and loses the CAS leaves at once. Nobody spins waiting for
     *    ownership: a thread that cannot own leaves its request (a pushed node, a pending release,
     *    closeRequested) to the owner. tryWithin gives up (declines) when another thread owns the
     *    decision at that instant: "not admitted immediately" includes "a hand-over is under way".
     *    FIFO without barging (I2).
     *
     * 7. Cancellation races. A queued waiter whose token fires settles its own step (one CAS);
     *    the engine unlinks it from the intake (WaitQueue part 7), or the owner skips it in the
     *    taken list. An owner's admit that loses that CAS gets false and gives the permit back
     *    (ruleLeave) before it looks at the next waiter: no permit is lost (I3). A waiter whose
     *    token has fired but whose step is not settled yet is abandoned, not admitted. An admit
     *    that wins is an admission: within(...) then runs the work's andFinally, which releases
     *    even if the work itself ends cancelled at its first step.
     *    The slow path's body sees only its pushed step; a body refused by CLOSED abandons the
     *    step (the task ends cancelled). tryWithin's body: if its admission succeeds but its
     *    completer was cancelled meanwhile (complete returns false), it releases at once.
     *
     * 8. Resumption. node.admit resumes the waiter on its own scheduler (Resume.dispatch): inline
     *    through the trampoline when the owner's thread already runs that scheduler, else by
     *    submission. A waiter resumed inline while the owner still owns is harmless: its release
     *    finds owner == 1, adds to pendingReleases and returns; the owner applies it in the same
     *    loop (no recursion into the owner state, bounded stack).
     *
     * 9. References. Paper P4215 (seed 003): serial_gate, capacity_gate, within(g.acquire(), snd),
     *    try_acquire completing with set_stopped, Destruction; seed 002's unlocker-owned FIFO list;
     *    tokio's batch_semaphore (one engine under many rules); DESIGN principles 4 to 7.
     */

    /** The gate is open: the intake accepts waiters. */
    static final WaitQueue.Sentinel OPEN = new WaitQueue.Sentinel("OPEN", true);
    /** The gate is closed (terminal): the intake refuses waiters, which complete cancelled. */
    static final WaitQueue.Sentinel CLOSED = new WaitQueue.Sentinel("CLOSED", false);

    private final WaitQueue queue = new WaitQueue(OPEN);
    private volatile int owner;
    private volatile int pendingReleases;
    private volatile boolean closeRequested;
    /** Taken waiters, oldest first, linked through WaitQueue.next; owner only (I1). */
    private WaitNode head;

    private final Task<Void> enter = Task.create(new Enter());
    private final Task<Void> tryEnter = Task.create(new TryEnter());
    private final Task<Admission> acquire = enter.map(ignored -> new Admission(this));
    private final Task<Admission> tryAcquire = tryEnter.map(ignored -> new Admission(this));
    private final Runnable releaseOne = () -> release(1);

    AdmissionGate() {}

    // ---- the rule: each gate states only this; called with owner == 1 (I1) ----

    /** Admits one more if the rule allows it now, updating the rule's state; owner only. */
    abstract boolean ruleTryEnter();

    /** Whether {@link #ruleTryEnter()} would admit one more now; owner only. */
    abstract boolean ruleCanEnter();

    /** Gives back {@code weight} admissions (releases, or undone admissions); owner only. */
    abstract void ruleLeave(int weight);

    /** How many admissions are outstanding by the rule's state; owner only. */
    abstract int ruleAdmitted();

    // ---- doors ----

    /**
     * Returns a task that waits until this gate admits the caller and completes with the
     * {@link Admission}, whose {@link Admission#exit()} leaves the gate. Prefer {@link #within(Task)},
     * which exits on every completion path by construction. The task may be started any number of
     * times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing (its place in line is lost); if the admission won the race, it completes with the
     * admission, which must be exited. After {@link #close()} a run completes cancelled.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquire() {
        return acquire;
    }

    /**
     * Returns a task that completes with an {@link Admission} if this gate admits the caller
     * immediately, and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return tryAcquire;
    }

    /**
     * Returns a task that waits for admission, then runs {@code work}, then leaves the gate when
     * {@code work} completes on any channel (value, error or cancellation). If the wait is cancelled,
     * or the gate is closed, the task completes cancelled and {@code work} does not run; if the
     * cancellation comes once the admission is handed over, the admission is exited when
     * {@code work} ends (at once if {@code work} ends cancelled at its first step). The task ends with
     * {@code work}'s outcome.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return enter.then(work.andFinally(releaseOne));
    }

    /**
     * Returns a task that runs {@code work} under this gate only if it is admitted immediately:
     * otherwise it completes on the cancelled channel, without queueing and without running
     * {@code work}. "Immediately" means: the rule allows it, no waiter is queued, and no other thread
     * is deciding an admission at that instant. An admitted {@code work} leaves the gate on every
     * completion path, as with {@link #within(Task)}.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithin(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return tryEnter.then(work.andFinally(releaseOne));
    }

    /**
     * Blocks the calling thread until it is admitted (parking only the virtual thread on a virtual
     * thread), runs {@code body} on it, leaves the gate and returns the body's value: the blocking
     * door, {@code within(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of the body
     *     (an unchecked one is rethrown as is)
     */
    public <T> T call(Callable<? extends T> body) {
        Objects.requireNonNull(body, "body");
        return within(Task.<T>fromCallable(body)).join();
    }

    /**
     * Closes the gate: every queued waiter completes on the cancelled channel, and every later
     * acquisition (including {@code within} and {@code tryWithin}) completes cancelled without running
     * its work. Admitted work is not interrupted: it runs to its end and leaves the gate as usual.
     * Idempotent; never throws.
     */
    public void close() {
        closeRequested = true;
        tryOwnAndDrain();
    }

    /**
     * Closes the gate (as {@link #close()}) and then checks the paper's destruction rule: no admitted
     * work may remain when a gate is dropped. Call it where the gate's life ends, once the work
     * started through it has completed.
     *
     * @throws IllegalStateException naming the count if admitted work remains, or if another thread
     *     is admitting or releasing at this instant (work is then still entering or leaving)
     */
    public void closeAndCheck() {
        closeRequested = true;
        if (!tryOwn()) {
            throw new IllegalStateException(
                    "closeAndCheck: work is still entering or leaving the gate; complete it first");
        }
        int admitted = drainAndRelease(true);
        if (admitted != 0) {
            throw new IllegalStateException("closeAndCheck: " + admitted
                    + " admitted operation(s) still running; a gate must outlive the work it admitted");
        }
    }

    /**
     * Returns whether {@link #close()} (or {@link #closeAndCheck()}) has been called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return closeRequested;
    }

    // ---- engine ----

    /** Leaves the gate with {@code weight}: called once per admission by its exit. */
    final void release(int weight) {
        if (tryOwn()) {
            ruleLeave(weight);
        } else {
            PENDING.getAndAdd(this, weight); // owed by the owner (overview 5)
            if (!tryOwn()) {
                return;
            }
        }
        drainAndRelease(false);
    }

    /** The fast path: admits the caller now if nothing is queued and the rule allows; no allocation. */
    final boolean tryEnterNow() {
        if (closeRequested || queue.hasWaiters() || !tryOwn()) {
            return false;
        }
        boolean entered = false;
        applyPending();
        if (!closeRequested && head == null && !queue.hasWaiters()) { // re-check under ownership (I2)
            entered = ruleTryEnter();
        }
        drainAndRelease(false); // applies a close or releases that raced us, then the re-check
        return entered;
    }

    private boolean tryOwn() {
        return owner == 0 && OWNER.compareAndSet(this, 0, 1);
    }

    private void tryOwnAndDrain() {
        if (tryOwn()) {
            drainAndRelease(false);
        }
    }

    private void applyPending() {
        if (pendingReleases != 0) {
            ruleLeave((int) PENDING.getAndSet(this, 0));
        }
    }

    /**
     * Owner only: drains until nothing is left to do, releases ownership with the re-check of
     * overview 5, and returns the admitted count seen under ownership if {@code count}.
     */
    private int drainAndRelease(boolean count) {
        int admitted = 0;
        for (;;) {
            boolean room = drainOnce();
            if (count) {
                admitted = ruleAdmitted();
                count = false;
            }
            owner = 0; // release: publishes the plain state to the next owner
            if (pendingReleases == 0 && !(closeRequested && queue.state() != CLOSED)
                    && !(room && queue.hasWaiters())) {
                return admitted;
            }
            if (!tryOwn()) {
                return admitted; // the thread that owns now does it
            }
        }
    }

    /** Owner only: one pass; returns whether the taken list is empty and the rule has room. */
    private boolean drainOnce() {
        applyPending();
        if (closeRequested && queue.state() != CLOSED) {
            abandonAll(queue.drain(queue.exchange(CLOSED))); // I4
            return false;
        }
        for (;;) {
            WaitNode w = head;
            if (w == null) {
                if (!queue.hasWaiters() || !ruleCanEnter()) {
                    return ruleCanEnter(); // I5: waiters the rule cannot admit stay in the intake
                }
                // I5: the list is empty, so the taken waiters are the whole list. Not CLOSED: close
                // is applied only above. May take OPEN back if the only waiter popped itself.
                head = queue.drain(queue.exchange(OPEN));
                continue;
            }
            if (w.isSettled()) { // cancelled while in the taken list
                popHead(w);
                continue;
            }
            if (w.isCancelRequested()) {
                popHead(w);
                w.abandon(); // do not admit a task that is being cancelled
                continue;
            }
            if (!ruleTryEnter()) {
                return false; // I2: the oldest waiter blocks the younger ones
            }
            popHead(w);
            if (!w.admit(null)) {
                ruleLeave(1); // lost to its cancellation: the permit goes back (I3)
            }
            applyPending(); // admitted work resumed inline may have released already
        }
    }

    private void popHead(WaitNode w) {
        head = WaitQueue.next(w);
    }

    private void abandonAll(WaitNode fromIntake) {
        for (WaitNode w = head; w != null; ) {
            WaitNode next = WaitQueue.next(w);
            w.abandon();
            w = next;
        }
        head = null;
        for (WaitNode w = fromIntake; w != null; ) {
            WaitNode next = WaitQueue.next(w);
            w.abandon();
            w = next;
        }
    }

    /** Snapshot for monitoring: admissions given back but not yet applied by an owner. */
    final int pendingReleasesSnapshot() {
        return pendingReleases;
    }

    /** The body of the waiting door: the run loop tries {@link #tryNow} first, then queues the step. */
    private final class Enter implements Consumer<Completer<Void>>, FastPath {
        @Override
        public Object tryNow() {
            return tryEnterNow() ? null : NOT_NOW;
        }

        @Override
        public void accept(Completer<Void> completer) {
            WaitNode node = (WaitNode) completer; // every Task.create completer is its step (WaitNode)
            if (queue.push(node) != null) {
                node.abandon(); // refused: CLOSED
                return;
            }
            tryOwnAndDrain(); // the owner admits it (or a later owner, overview 5)
        }
    }

    /** The body of the trying door: admitted now, or cancelled. */
    private final class TryEnter implements Consumer<Completer<Void>>, FastPath {
        @Override
        public Object tryNow() {
            return tryEnterNow() ? null : NOT_NOW;
        }

        @Override
        public void accept(Completer<Void> completer) {
            if (!tryEnterNow()) {
                completer.cancel();
            } else if (!completer.complete(null)) {
                release(1); // cancelled meanwhile: give back the admission it cannot use (overview 7)
            }
        }
    }

    private static final VarHandle OWNER;
    private static final VarHandle PENDING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            OWNER = lookup.findVarHandle(AdmissionGate.class, "owner", int.class);
            PENDING = lookup.findVarHandle(AdmissionGate.class, "pendingReleases", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
