package dev.coro.gate;

import dev.coro.internal.FastPath;
import dev.coro.internal.Trampoline;
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
 * The admission engine under every gate (DESIGN principle 6): the queueing, the hand-off, the
 * cancellation of waiters, the task doors and the blocking door (one {@link Door} per kind of entry),
 * signals from outside ({@link #signal(int)}: readiness, arrivals) and {@link #close()} are written
 * here once; a gate states only its admission rule, through the package-private {@code rule*} hooks,
 * which run only under the engine's ownership, and exposes its doors under its own names.
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
     *    admitting (plain WaitNode): a waiter the rule has admitted whose admit CAS the same owner
     *      makes next, from the trampoline (part 8); null otherwise. Owner only.
     *    pendingReleases (volatile long): releases by admitted work that could not take ownership
     *      (getAndAdd), kind k counted at bits 32k..32k+31; the next owner applies it to the rule.
     *    pendingSignals (volatile int): signals (readiness, arrivals) sent by threads that could not
     *      take ownership; pendingCancels (volatile int): queued waiters cancelled since the owner
     *      last looked (the intake's onCancelled). Both applied by the next owner, like releases.
     *    closeRequested (volatile boolean): close() was called, or the rule closed the gate
     *      (closeFromRule, owner only); the next owner applies it.
     *    A waiter node is the waiting task's own suspension step (a Task.create completer): the
     *      engine allocates nothing per wait. Its kind (a byte on the node, written before the push)
     *      says which door it came through (reader or writer); one-door gates leave it 0.
     *
     * 2. Transitions.
     *    fast path (tryNow / tryEnterNow): intake empty, taken list empty, CAS owner 0 -> 1, re-check
     *       both and closeRequested under ownership, apply pending releases, ask the rule; then
     *       release ownership (part 5's protocol). No allocation.
     *    acquire (slow):  push the step onto the intake (refused by CLOSED: the step is abandoned),
     *       then try to own and drain.
     *    release(w):      CAS owner 0 -> 1 and apply w to the rule directly; else getAndAdd
     *       pendingReleases w, then try to own. Either way an owner then drains.
     *    signal(n), a waiter's cancellation: getAndAdd pendingSignals / pendingCancels, then try to
     *       own and drain (same shape as a release that cannot own).
     *    close():         closeRequested = true, then try to own and drain.
     *    drain (owner):   loop: apply pending releases, signals and cancels (each getAndSet 0, in
     *       that order, to the rule's hooks); if close was requested and not
     *       applied, exchange the intake for CLOSED and abandon every taken and intake waiter;
     *       otherwise admit from the taken list while the rule allows (skip settled waiters, abandon
     *       those whose token fired); when the taken list is empty and the rule still has room, take
     *       the intake (exchange OPEN) into the taken list and go on; then release ownership.
     *       Before its first abandon, and before its first admit CAS unless that admission leaves
     *       the rule full with one admitted, a drain on a thread that runs no trampoline item moves
     *       into the thread's trampoline, still owning (part 8).
     *    admit(w):        ruleTryEnter(w.kind), then w.admit(null); if w.admit fails (cancelled
     *       meanwhile), ruleUndo(kind): by default the permit goes back at once, to the next waiter
     *       in the same loop; a rule may do more (a phase gate closes: its phase cannot complete).
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
     *    I3: every admission is matched by exactly one ruleLeave or ruleUndo: the admitted work's
     *        release, or the owner's undo when the waiter's admit CAS lost to its cancellation.
     *    I4: once close is applied the intake is CLOSED for ever and the taken list is empty.
     *    I5: the intake is taken only when the taken list is empty and the rule has room, so
     *        waiters that the rule cannot admit stay in the intake, where the WaitQueue engine
     *        unlinks cancelled ones (pop or counted sweep).
     *
     * 5. Memory ordering and the missed-signal check. owner is volatile: the CAS 0 -> 1 (acquire)
     *    and the write owner = 0 (release) order successive owners, so the plain state needs no
     *    ordering of its own. Releasing ownership: the owner computes room = taken list empty and
     *    the rule has room, writes owner = 0, then reads pendingReleases, pendingSignals,
     *    pendingCancels, closeRequested (and the
     *    intake's CLOSED) and, if room, queue.hasWaiters(); if any is set it CASes owner 0 -> 1
     *    and drains again. The other side writes first and reads second: a releaser getAndAdds
     *    pendingReleases then CASes owner; a pusher's push CAS then its owner CAS; close writes
     *    closeRequested then CASes owner. Dekker: all these are volatile accesses, totally ordered
     *    in the synchronization order; if the other side's owner CAS failed, it read owner == 1
     *    before our owner = 0, so its write came before our owner = 0, which comes before our
     *    re-check read, and the re-check sees it. So either the other side owns and drains, or
     *    the old owner re-owns and drains: no release, signal, cancel, waiter or close is left
     *    unapplied (signal and cancel write their counter before their owner CAS, as a release). When
     *    room is false the re-check ignores new waiters on purpose: the state of the rule can
     *    change only by a release or a close, which the re-check does see. room is a snapshot of
     *    owner state taken under ownership, so it is exact at the owner = 0 write.
     *
     * 6. Progress and fairness. acquire, release and close are lock-free: the drain loop runs as
     *    long as there is work applied by it (admissions, pending releases, pushes while there is
     *    room); an owner that re-checks and loses the CAS leaves at once. Nobody spins waiting for
     *    ownership: a thread that cannot own leaves its request (a pushed node, a pending release,
     *    signal or cancel, closeRequested) to the owner. tryWithin gives up (declines) when another thread owns the
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
     *    A rule hook that throws (a bug: no shipped rule throws, but an assertion can) breaks the
     *    gate (breakGate): closed, every waiter cancelled, ownership kept for ever so that no later
     *    operation asks the broken rule again, and the error propagates to the operation that ran
     *    the hook; without it the owner never let go and every later waiter hung silently.
     *
     * 8. Resumption. node.admit (and node.abandon) resumes the waiter on its own scheduler
     *    (Resume.dispatch): inline through the thread's trampoline when the owner's thread already
     *    runs that scheduler, else by submission. Inline, and with no trampoline item running on
     *    the thread, the resumed waiter runs at once, inside the drain, while its thread owns.
     *    That is right when nobody else could be admitted meanwhile (the admission leaves the rule
     *    full with this one admitted: a serial gate, a capacity of 1, a writer): the owner then
     *    runs the admitted work and every later waiter in one loop, their releases are pending
     *    adds it applies itself (no recursion into the owner state, bounded stack). Otherwise it
     *    is wrong: the owner would keep ownership for the whole run of the admitted work, the
     *    other threads' fast paths would fail (owner busy) and queue, and the owner's thread would
     *    end up running all the admitted work while the others only queue (measured before this
     *    rule: up to 98 % of 100,000 capacity-4 tasks ran on one of two workers). So then a drain
     *    about to make that admit CAS (after ruleTryEnter, with the waiter in admitting), or about
     *    to abandon a waiter, on a thread that runs no trampoline item, first re-enters itself as
     *    the outermost trampoline item (InTrampoline; still owning; the re-entered pass makes the
     *    admitting CAS first): the waiters it resumes inline then queue behind it and run on that
     *    thread once it has released ownership, before the call that drained returns. On a thread
     *    that already runs a trampoline item (such as a waiter resumed that way, now releasing)
     *    they queue behind that item anyway. Decisions, admit CASes and their order are the same
     *    either way; only where the resumed work runs differs.
     *
     * 9. The permit lane. A rule that is a count of identical permits (PermitGate: the serial and
     *    capacity gates) keeps its count in one atomic word that goes negative by the waiters not
     *    yet served, and overrides three entry points: tryEnterNow (a CAS on the count, no
     *    ownership), arrive (the waiting door, before the push: one getAndAdd admits at once or
     *    registers the waiter) and release (one getAndAdd; only a release that finds an unserved
     *    waiter calls the engine's release, as a credit). Its rule hooks then count credits:
     *    ruleTryEnter spends one on the oldest waiter; a cancelled waiter (ruleWaitersCancelled)
     *    gives its registration back. So while nobody waits, entering and leaving take one atomic
     *    instruction each and never meet the owner: a descheduled owner cannot make the other
     *    threads' arrivals queue (measured before the lane: 30,000 to 97,000 of a 100,000-task batch
     *    went through the slow path after one such event). Queueing, hand-off, cancellation,
     *    resumption and close are this engine's, unchanged; the lane's own state machine and
     *    invariants are PermitGate's overview. The engine's I2 reads, for a permit gate: a newcomer
     *    takes a permit only when every queued waiter already has one on its way (PermitGate P2).
     *
     * 10. References. Paper P4215 (seed 003): serial_gate, capacity_gate, within(g.acquire(), snd),
     *    try_acquire completing with set_stopped, Destruction; seed 002's unlocker-owned FIFO list;
     *    tokio's batch_semaphore (one engine under many rules); DESIGN principles 4 to 7.
     */

    /** The gate is open: the intake accepts waiters. */
    static final WaitQueue.Sentinel OPEN = new WaitQueue.Sentinel("OPEN", true);
    /** The gate is closed (terminal): the intake refuses waiters, which complete cancelled. */
    static final WaitQueue.Sentinel CLOSED = new WaitQueue.Sentinel("CLOSED", false);

    /** The most kinds of entry a gate may have; kind k's released count sits at bits 32k..32k+31. */
    static final int MAX_KINDS = 2;

    private final WaitQueue queue = new WaitQueue(OPEN, this::countCancelledWaiter);
    private volatile int owner;
    private volatile long pendingReleases;
    private volatile int pendingSignals;
    private volatile int pendingCancels;
    private volatile boolean closeRequested;
    /** Taken waiters, oldest first, linked through WaitQueue.next; owner only (I1). */
    private WaitNode head;
    /** Owner only: a waiter admitted by the rule whose admit CAS waits for the trampoline (part 8). */
    private WaitNode admitting;

    AdmissionGate() {}

    // ---- the permit lane (overview 9): outside ownership; only PermitGate overrides these ----

    /** {@link #arrive}'s answers: admitted at once, queue and wait for the owner, or refused (closed). */
    static final int ENTER = 0, QUEUE = 1, REFUSE = 2;

    /**
     * An arrival at a waiting door whose fast path failed, before its step is queued: {@link #ENTER}
     * (admitted now), {@link #QUEUE} (push the step; the owner decides), or {@link #REFUSE} (the gate
     * is closed: the step ends cancelled, not queued). The engine's answer: {@link #QUEUE}.
     */
    int arrive(int kind) {
        return QUEUE;
    }

    /** An arrival that {@link #arrive} answered {@link #QUEUE} found the intake closed: not queued. */
    void arrivalRefused(int kind) {}

    // ---- the rule: each gate states only this; called with owner == 1 (I1) ----

    /** Admits one waiter of {@code kind} if the rule allows it now, updating the rule's state. */
    abstract boolean ruleTryEnter(int kind);

    /**
     * Whether the rule could admit some waiter now (of the least demanding kind): the engine takes
     * new waiters from the intake only then (I5).
     */
    abstract boolean ruleCanEnter();

    /**
     * Gives back admissions: {@code released} holds, for each kind k, the count released at bits
     * 32k to 32k+31 (see {@link #released(long, int)}); releases of admitted work, or undone
     * admissions.
     */
    abstract void ruleLeave(long released);

    /** How many admissions are outstanding by the rule's state. */
    abstract int ruleAdmitted();

    /**
     * An admission of a waiter of {@code kind} was undone: its admit CAS lost to its cancellation.
     * By default the admission is given back, as a release.
     */
    void ruleUndo(int kind) {
        ruleLeave(weight(kind));
    }

    /** Applies {@code count} signals sent with {@link #signal(int)} (readiness, arrivals). */
    void ruleSignal(int count) {
        throw new AssertionError("this gate sends no signals");
    }

    /**
     * {@code count} queued waiters were cancelled since the last call (they are already settled and
     * unlinked, or skipped when met). By default nothing: the drain that follows admits whoever a
     * cancelled waiter was blocking.
     */
    void ruleWaitersCancelled(int count) {}

    /** Closes the gate from inside the rule (a phase that can no longer complete); owner only. */
    final void closeFromRule() {
        closeRequested = true; // applied by the drain loop before it admits anyone else
    }

    /** The released-count word for one admission of {@code kind}. */
    static long weight(int kind) {
        return 1L << (32 * kind);
    }

    /** The count of {@code kind} in a released-count word. */
    static int released(long released, int kind) {
        return (int) (released >>> (32 * kind));
    }

    // ---- doors ----

    /**
     * One kind of entry into the gate: the task doors and the blocking door for waiters of one kind.
     * A gate creates one per kind in its constructor and exposes them under its own names.
     */
    final class Door {
        private final long weight;
        private final Task<Void> enter;
        private final Task<Void> tryEnter;
        private final Task<Admission> acquire;
        private final Task<Admission> tryAcquire;
        private final Runnable exit;

        Door(int kind) {
            if (kind < 0 || kind >= MAX_KINDS) {
                throw new IllegalArgumentException("kind must be in [0, " + MAX_KINDS + "), got " + kind);
            }
            this.weight = weight(kind);
            this.enter = Task.create(new Enter(kind));
            this.tryEnter = Task.create(new TryEnter(kind));
            this.acquire = enter.map(ignored -> new Admission(AdmissionGate.this, weight));
            this.tryAcquire = tryEnter.map(ignored -> new Admission(AdmissionGate.this, weight));
            this.exit = () -> release(weight);
        }

        /** Waits for admission; the value is the admission, whose exit leaves the gate. */
        Task<Admission> acquire() {
            return acquire;
        }

        /** Admission now, or the cancelled channel without queueing. */
        Task<Admission> tryAcquire() {
            return tryAcquire;
        }

        /** Waits for admission, runs {@code work}, leaves on every completion path of {@code work}. */
        <T> Task<T> within(Task<T> work) {
            Objects.requireNonNull(work, "work");
            return enter.then(work.andFinally(exit));
        }

        /** Runs {@code work} under the gate only if admitted immediately, else completes cancelled. */
        <T> Task<T> tryWithin(Task<T> work) {
            Objects.requireNonNull(work, "work");
            return tryEnter.then(work.andFinally(exit));
        }

        /** The blocking door: {@code within(Task.fromCallable(body)).join()}. */
        <T> T call(Callable<? extends T> body) {
            Objects.requireNonNull(body, "body");
            return within(Task.<T>fromCallable(body)).join();
        }
    }

    // ---- close ----

    /**
     * Closes the gate: every queued waiter completes on the cancelled channel, and every later
     * acquisition completes cancelled without running its work. Admitted work is not interrupted: it
     * runs to its end and leaves the gate as usual. Idempotent; never throws.
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
     * Returns whether the gate is closed or closing: {@link #close()} or {@link #closeAndCheck()}
     * has been called, or the gate's rule closed it.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return closeRequested;
    }

    // ---- engine ----

    /**
     * Leaves the gate: called once per admission by its exit, with that admission's weight. The
     * engine's release applies the weight to the rule under ownership; a permit gate first counts it
     * on its lane and comes here only when a queued waiter is owed the permit (overview 9).
     */
    void release(long weight) {
        if (tryOwn()) {
            try {
                ruleLeave(weight);
            } catch (Throwable t) {
                breakGate(); // a rule hook threw (overview 7)
                throw t;
            }
        } else {
            PENDING.getAndAdd(this, weight); // owed by the owner (overview 5)
            if (!tryOwn()) {
                return;
            }
        }
        drainAndRelease(false);
    }

    /**
     * Sends {@code count} signals to the rule (readiness established, arrivals): applied by the owner
     * through {@link #ruleSignal(int)} before it next admits anyone.
     */
    final void signal(int count) {
        SIGNALS.getAndAdd(this, count);
        tryOwnAndDrain();
    }

    /**
     * The intake's onCancelled: a queued waiter was cancelled; the owner tells the rule
     * ({@link #ruleWaitersCancelled}) and drains. A permit gate also reports a refused arrival here.
     */
    final void countCancelledWaiter() {
        CANCELS.getAndAdd(this, 1);
        tryOwnAndDrain();
    }

    /**
     * The fast path: admits the caller now if nothing is queued and the rule allows; no allocation.
     * The engine's fast path decides under ownership; a permit gate overrides it with its lane
     * (overview 9).
     */
    boolean tryEnterNow(int kind) {
        if (closeRequested || queue.hasWaiters() || !tryOwn()) {
            return false;
        }
        boolean entered = false;
        try {
            applyRequests();
            if (!closeRequested && head == null && !queue.hasWaiters()) { // re-check under ownership (I2)
                entered = ruleTryEnter(kind);
            }
        } catch (Throwable t) {
            breakGate(); // a rule hook threw (overview 7)
            throw t;
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

    /** Owner only: applies the requests other threads left (overview 5): releases, signals, cancels. */
    private void applyRequests() {
        if (pendingReleases != 0) {
            ruleLeave((long) PENDING.getAndSet(this, 0L));
        }
        if (pendingSignals != 0) {
            ruleSignal((int) SIGNALS.getAndSet(this, 0));
        }
        if (pendingCancels != 0) {
            ruleWaitersCancelled((int) CANCELS.getAndSet(this, 0));
        }
    }

    /**
     * Owner only: drains until nothing is left to do, releases ownership with the re-check of
     * overview 5, and returns the admitted count seen under ownership if {@code count}. Waiters it
     * resumes run after it has released ownership (overview 8).
     */
    private int drainAndRelease(boolean count) {
        return drain(count, false);
    }

    /**
     * Owner only: {@link #drainAndRelease}; {@code deferred}: this thread runs a trampoline item, so
     * resumptions queue behind it. If not, the first resumption that must not run inside the drain
     * (overview 8) moves the rest of the drain into the trampoline ({@link InTrampoline}), still
     * under ownership.
     */
    private int drain(boolean count, boolean deferred) {
        try {
            return drainLoop(count, deferred);
        } catch (Throwable t) {
            breakGate(); // a rule hook threw (overview 7)
            throw t;
        }
    }

    private int drainLoop(boolean count, boolean deferred) {
        int admitted = 0;
        for (;;) {
            int done = drainOnce(deferred);
            if (done == RESUME) { // not deferred, and about to resume a waiter
                int inside = InTrampoline.drain(this, count);
                if (inside != InTrampoline.ALREADY_INSIDE) {
                    return inside; // drained and released inside the trampoline
                }
                deferred = true; // a trampoline item runs on this thread: resumptions queue behind it
                continue;
            }
            if (count) {
                admitted = ruleAdmitted();
                count = false;
            }
            owner = 0; // release: publishes the plain state to the next owner
            if (pendingReleases == 0 && pendingSignals == 0 && pendingCancels == 0
                    && !(closeRequested && queue.state() != CLOSED)
                    && !(done == ROOM && queue.hasWaiters())) {
                return admitted;
            }
            if (!tryOwn()) {
                return admitted; // the thread that owns now does it
            }
        }
    }

    /** drainOnce's answers: the taken list is empty and the rule has room, or not; or see RESUME. */
    private static final int NO_ROOM = 0, ROOM = 1;
    /** drainOnce's answer when a resumption must move into the trampoline first (overview 8). */
    private static final int RESUME = 2;

    /**
     * Owner only: one pass; first makes the admit CAS of {@code admitting}, if set. Returns
     * {@link #ROOM} if the taken list is empty and the rule has room, {@link #NO_ROOM} otherwise,
     * or, if not {@code deferred}, {@link #RESUME} before it would abandon a waiter (changing
     * nothing), or once the rule has admitted a waiter whose admit CAS must not resume it inside
     * the drain (left in {@code admitting}).
     */
    private int drainOnce(boolean deferred) {
        WaitNode a = admitting;
        if (a != null) { // decided by the pass that moved the drain into the trampoline
            admitting = null;
            admit(a, a.kind());
        }
        for (;;) {
            applyRequests(); // admitted work resumed inline may have released, signalled or arrived
            if (closeRequested && queue.state() != CLOSED) {
                if (!deferred) {
                    return RESUME; // abandoning resumes the waiters
                }
                abandonAll(queue.drain(queue.exchange(CLOSED))); // I4
                return NO_ROOM;
            }
            WaitNode w = head;
            if (w == null) {
                boolean room = ruleCanEnter(); // once: a predicate gate evaluates its predicate here
                if (!room || !queue.hasWaiters()) {
                    return room ? ROOM : NO_ROOM; // I5: waiters the rule cannot admit stay in the intake
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
                if (!deferred) {
                    return RESUME;
                }
                popHead(w);
                w.abandon(); // do not admit a task that is being cancelled
                continue;
            }
            int kind = w.kind();
            if (!ruleTryEnter(kind)) {
                return NO_ROOM; // I2: the oldest waiter blocks the younger ones
            }
            popHead(w);
            if (!deferred && (ruleCanEnter() || ruleAdmitted() != 1)) {
                admitting = w; // others could run meanwhile: admit it from the trampoline (part 8)
                return RESUME;
            }
            admit(w, kind);
        }
    }

    /**
     * Owner only, when a rule hook has thrown (a bug in the rule; no shipped rule throws): the rule's
     * state can no longer be trusted, so the gate breaks for good. It is closed, every waiter (the one
     * being admitted, the taken list, the intake) ends cancelled without another rule hook being
     * called, and this thread keeps ownership for ever, so no later operation asks the rule again:
     * later entries are refused (closed), later releases only add to the pending word. The error
     * then propagates to the operation that ran the hook. Idempotent.
     */
    private void breakGate() {
        closeRequested = true;
        WaitNode a = admitting;
        admitting = null;
        if (a != null) {
            a.abandon();
        }
        abandonAll(queue.drain(queue.exchange(CLOSED)));
    }

    /** Owner only: admits {@code w}, decided with ruleTryEnter(kind); undoes it if cancelled first. */
    private void admit(WaitNode w, int kind) {
        if (!w.admit(null)) {
            ruleUndo(kind); // lost to its cancellation: the admission goes back (I3)
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

    /** Snapshot for monitoring: the released-count word given back but not yet applied by an owner. */
    final long pendingReleasesSnapshot() {
        return pendingReleases;
    }

    /**
     * An owner's drain run as the outermost item of its thread's {@link Trampoline} (overview 8): the
     * waiters it admits or abandons resume inline through that trampoline, so they queue behind the
     * drain and run once it has released ownership, instead of running inside it while it owns. One
     * per thread, reused.
     */
    private static final class InTrampoline implements Runnable {
        /** {@link #drain}'s answer when a trampoline item already runs on this thread. */
        static final int ALREADY_INSIDE = -1;

        private static final ThreadLocal<InTrampoline> CURRENT = ThreadLocal.withInitial(InTrampoline::new);

        /** Whether this thread is inside a {@link Trampoline#run} that {@link #drain} started. */
        private boolean active;
        /** The gate to drain, set only within one call of {@link #drain}; null once taken. */
        private AdmissionGate gate;
        private boolean count;
        private int admitted;

        /**
         * Owner only: drains {@code gate} as the outermost trampoline item and returns its admitted
         * count (see drainAndRelease), or {@link #ALREADY_INSIDE}, having done nothing, if this
         * thread already runs a trampoline item: resumptions then queue behind that one anyway.
         */
        static int drain(AdmissionGate gate, boolean count) {
            InTrampoline d = CURRENT.get();
            if (d.active) {
                return ALREADY_INSIDE; // a waiter resumed behind an earlier drain, now releasing
            }
            d.gate = gate;
            d.count = count;
            d.active = true;
            try {
                Trampoline.run(d, null); // runs d now, then whatever it resumed; or queues d
            } finally {
                d.active = false;
            }
            if (d.gate == null) {
                return d.admitted;
            }
            d.gate = null; // queued behind another trampoline item: the entry will find no gate
            return ALREADY_INSIDE;
        }

        @Override
        public void run() {
            AdmissionGate g = gate;
            if (g != null) { // null: an entry queued behind another item; its caller drained itself
                boolean c = count;
                gate = null;
                admitted = g.drain(c, true);
            }
        }
    }

    /** The body of the waiting door: the run loop tries {@link #tryNow} first, then queues the step. */
    private final class Enter implements Consumer<Completer<Void>>, FastPath {
        private final int kind;

        Enter(int kind) {
            this.kind = kind;
        }

        @Override
        public Object tryNow() {
            return tryEnterNow(kind) ? null : NOT_NOW;
        }

        @Override
        public void accept(Completer<Void> completer) {
            WaitNode node = (WaitNode) completer; // every Task.create completer is its step (WaitNode)
            int arrival = arrive(kind);
            if (arrival == ENTER) {
                if (!node.admit(null)) {
                    release(weight(kind)); // cancelled meanwhile: give back the admission (overview 7)
                }
                return;
            }
            if (arrival == REFUSE) {
                node.abandon();
                return;
            }
            node.kind(kind); // published by the push
            if (queue.push(node) != null) {
                arrivalRefused(kind);
                node.abandon(); // refused: CLOSED
                return;
            }
            tryOwnAndDrain(); // the owner admits it (or a later owner, overview 5)
        }
    }

    /** The body of the trying door: admitted now, or cancelled. */
    private final class TryEnter implements Consumer<Completer<Void>>, FastPath {
        private final int kind;

        TryEnter(int kind) {
            this.kind = kind;
        }

        @Override
        public Object tryNow() {
            return tryEnterNow(kind) ? null : NOT_NOW;
        }

        @Override
        public void accept(Completer<Void> completer) {
            if (!tryEnterNow(kind)) {
                completer.cancel();
            } else if (!completer.complete(null)) {
                release(weight(kind)); // cancelled meanwhile: give back the admission (overview 7)
            }
        }
    }

    private static final VarHandle OWNER;
    private static final VarHandle PENDING;
    private static final VarHandle SIGNALS;
    private static final VarHandle CANCELS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            OWNER = lookup.findVarHandle(AdmissionGate.class, "owner", int.class);
            PENDING = lookup.findVarHandle(AdmissionGate.class, "pendingReleases", long.class);
            SIGNALS = lookup.findVarHandle(AdmissionGate.class, "pendingSignals", int.class);
            CANCELS = lookup.findVarHandle(AdmissionGate.class, "pendingCancels", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
