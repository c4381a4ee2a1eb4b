package dev.coro.gate;

import dev.coro.sync.Event;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A barrier for a fixed set of {@code parties} participants that move through phases together
 * (P4215's {@code phase_gate}): each participant arrives at a phase boundary with the work of its
 * next phase, and that work is admitted once every participant has arrived. Iterative algorithms
 * (compute a step, then exchange boundaries) and pipeline stages (parse, then validate, then
 * publish) use it so that all work of one phase ends before any work of the next starts, without a
 * blocking barrier wait.
 *
 * <p><b>Admission rule.</b> The gate completes boundary {@code k + 1} (and {@link #phase()} becomes
 * {@code k + 1}) when {@code parties} arrivals have been counted for it <em>and</em> every work
 * admitted at boundary {@code k} has ended; it then admits exactly {@code parties} waiting arrivals,
 * oldest first. So the paper's ordering (Barrier: all work in one phase completes before any work in
 * the next phase executes) is enforced by the gate itself, not only by the participants' discipline.
 * Work admitted at the same boundary is not ordered and may run concurrently. Arrivals beyond
 * {@code parties} count toward the next boundary.
 *
 * <p><b>Fairness.</b> FIFO: a boundary admits the oldest waiting arrivals. An arrival made while a
 * boundary is still handing out its admissions (a participant that was admitted, finished its work
 * and arrived again before the last arrival of its own boundary reached the gate) waits until that
 * boundary has admitted all of its arrivals, and then counts toward the next one: a participant never
 * takes a place in a boundary it has already passed. While fewer than {@code parties} have arrived,
 * waiting is not a progress failure: it is the constraint the gate expresses.
 *
 * <p><b>Try.</b> There is no try door. An arrival is what completes a boundary, so a "try" could
 * succeed only for the last arrival; any other would have to withdraw, leaving its boundary one
 * arrival short for ever, or break the gate for everyone. To not wait, do not arrive; to stop
 * waiting, cancel the arrival (which breaks the barrier, below) or {@link #close()} the gate.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiting arrival on the cancelled channel, and
 * every later arrival completes cancelled without running its work; admitted work runs to its end and
 * leaves as usual. Java has no destructor, so the paper's destruction rule (dropping a gate with
 * outstanding work is an error) is {@link #closeAndCheck()}: it closes and throws
 * {@link IllegalStateException} if admitted work remains.
 *
 * <p><b>Cancellation: the broken-barrier rule.</b> The paper's {@code close()} completes waiting
 * operations with {@code set_stopped()} if the phase cannot complete. A phase cannot complete once a
 * participant will not arrive, so if any arrival ends on the cancelled or the error channel, the gate
 * <em>breaks</em>: it closes, every waiting and later arrival completes cancelled, and admitted work
 * runs to its end. That covers an arrival cancelled while it waits (queued, or waiting for the
 * previous boundary to finish admitting, or losing the hand-off to its cancellation) and an arrival
 * whose admitted work fails or is cancelled (its participant will not arrive at the next boundary;
 * the gate closes before that work leaves, so no later boundary completes). The arrival itself ends
 * with its own outcome (its work's error, or cancelled). Nobody is left waiting: no hang. A
 * participant that stops between arrivals for another reason must close the gate itself.
 *
 * <p><b>Where admitted work starts.</b> By submission to the arriving task's own scheduler: a
 * boundary admits {@code parties} works at once, and each is handed to its scheduler rather than run
 * on the thread that completed the boundary, so that the works of one phase spread over the
 * scheduler's threads and run in parallel. An arrival cancelled after its admission but before its
 * work starts does not run its work (it ends cancelled, and the gate breaks).
 *
 * <p><b>Bad input.</b> {@code parties <= 0}: {@link IllegalArgumentException} naming the value; a
 * null work or body: {@link NullPointerException}. Misuse that the gate cannot detect: phase work that
 * arrives at its own gate waits for ever (its boundary needs that work to end first).
 *
 * <p><b>Thread-safety and memory effects.</b> Thread-safe and lock-free. Actions of every participant
 * before its arrival, and of every work admitted at boundary {@code k} before it ends, happen-before
 * the start of every work admitted at boundary {@code k + 1}.
 *
 * {@snippet :
 * PhaseGate stepDone = new PhaseGate(workers.size());
 *
 * Task<Void> worker(WorkerState state) {
 *     return computeStep(state)
 *             .then(stepDone.arriveAndWait(exchangeBoundaries(state)))   // once all computed
 *             .then(stepDone.arriveAndWait(computeNextStep(state)));     // once all exchanged
 * }
 * }
 */
public final class PhaseGate extends AdmissionGate {
    /* Implementation overview.
     *
     * The admission rule runs under the engine's ownership (AdmissionGate I1); this class adds one
     * piece of concurrency of its own, the window (part 4, P4), because the engine has no hook that
     * runs after a waiter is pushed: an arrival is counted by signal(1) sent BEFORE its waiter
     * enters the engine's door.
     *
     * 1. Representation.
     *    Rule state (plain, owner only):
     *      arrived   arrivals counted toward the next boundary (signals applied, minus parties for
     *                every boundary opened); may exceed parties
     *      quota     admissions the open boundary still owes; 0: no boundary is admitting
     *      running   admitted work that has not left yet (ruleAdmitted, for closeAndCheck)
     *    window (volatile Event<Void>): null, or the event of the boundary that is admitting
     *      (quota > 0); set once that boundary has admitted all its arrivals, or when the gate
     *      closes. Written only by the owner; read by arrivals and by close().
     *    phase (volatile long): boundaries completed; written only by the owner.
     *    broken (volatile boolean): the gate closed itself (part 7); for toString only.
     *
     * 2. Transitions.
     *    arrive (the participant, any thread): closed -> cancelled; window != null -> await it,
     *       then arrive again; window == null -> signal(1) (its count), then the engine's door
     *       (fast path, or push and wait for the owner).
     *    ruleSignal(c):  arrived += c; openIfComplete.
     *    openIfComplete: quota == 0, running == 0, arrived >= parties, not closed ->
     *       arrived -= parties; quota = parties; window = new Event; phase++; re-check closed (5).
     *    ruleTryEnter:   quota > 0 -> quota--, running++; at quota 0: window = null, then set it.
     *    ruleLeave(k):   running -= k; openIfComplete.
     *    break (part 7): ruleWaitersCancelled, ruleUndo (running-- first), or settle seeing a
     *       non-value outcome (of the admitted work, before it leaves; or of the whole arrival)
     *       -> closeFromRule / close(), then set the window.
     *    close(), closeAndCheck(): the engine's close, then set the window.
     *
     * 3. Linearization points. An arrival: the getAndAdd of its signal (the owner counts it). A
     *    boundary: the owner's openIfComplete (phase() changes there). An admission: the owner's
     *    admit CAS (engine). close: the engine's (the intake exchanged for CLOSED).
     *
     * 4. Invariants.
     *    P1: while the gate is open, window != null exactly while quota > 0 (the event is set
     *        when quota reaches 0, after window is cleared). Once closed, window may stay non-null:
     *        it is then set (P5), and arrivals read closed first.
     *    P2 (Barrier): a boundary opens only with running == 0 and quota == 0: every work admitted
     *        at the previous boundary has ended, and that boundary has admitted all its arrivals.
     *    P3: a boundary admits at most parties arrivals (quota), exactly parties unless the gate
     *        breaks or closes first.
     *    P4 (the window): an arrival signals only after reading window == null, i.e. when no
     *        boundary is admitting. Why: the signal precedes the push, so when the owner counts the
     *        last arrival of boundary k, that arrival's waiter may not be queued yet. Without P4, a
     *        participant admitted at k could finish its work, arrive again and be queued before
     *        that late waiter, and the owner would hand it k's last admission: its next-phase work
     *        would run before the late participant's phase-k work even started, and boundary k + 1
     *        would then wait for an arrival that is queued for ever (checked by
     *        PhaseGateTest.aReArrivalWaitsUntilItsBoundaryHasAdmittedEveryArrival and by the
     *        Lincheck check "admitted at a later boundary than the one completed when it arrived";
     *        without P4 the 1,000-phase stress test hangs). With P4, while boundary k admits, the
     *        only arrivals that reach the queue are its own late ones: for a fixed set of parties
     *        participants, the oldest parties waiters when k opens are exactly k's arrivals.
     *        Counting after the push instead (an engine door that pushes, then signals) is not
     *        enough: a cancelled arrival's count outlives its waiter (the owner skips the settled
     *        node before the cancellation request reaches ruleWaitersCancelled), so a later arrival
     *        would take its place; PhaseGateLincheckTest found that when it was tried. The window
     *        keeps later arrivals out of the queue until the boundary has admitted all its own.
     *    P5: every window is set: at quota 0, or by a break or a close (with part 5's re-check).
     *
     * 5. Memory ordering. window and phase are written by the owner before the admit CAS of any
     *    arrival of that boundary, so admitted work reads them (an admitted participant's next
     *    arrival sees the window of its own boundary, or null). close() against openIfComplete is a
     *    Dekker pair of volatile accesses: close writes closeRequested (engine) then reads window;
     *    openIfComplete writes window then reads closeRequested. One of them sees the other, so an
     *    arrival never waits on a window nobody will set (P5). An arrival reads closed before
     *    window, and every window is set only after the gate is closed or after it was cleared,
     *    so an arrival that wakes from a set window never finds that same window again: no spin.
     *
     * 6. Progress. Lock-free, as the engine. An arrival that finds a window waits on its event (it
     *    does not spin); for a fixed set of participants it finds null when it wakes, since the
     *    next window cannot open before it arrives.
     *
     * 7. Cancellation: the broken-barrier rule. Any arrival that ends on the cancelled or the error
     *    channel closes the gate (settle, on the arrival's own thread): cancelled while waiting for
     *    a window (never counted), cancelled between its signal and its push, queued and cancelled,
     *    refused by a closed gate (close again: idempotent), its admitted work failed or cancelled
     *    (its participant will not arrive at the next boundary). For admitted work, settle runs
     *    inside the admission, before the exit: the gate is closed while running > 0, so no later
     *    boundary can complete after a phase whose work failed (P2 then holds for every boundary
     *    that completes, even with more arrivals than parties). The engine's paths that the rule
     *    sees close at once under ownership, before anyone else is admitted: ruleWaitersCancelled
     *    (a queued waiter's token fired) and ruleUndo (an admit lost to the waiter's
     *    cancellation; running goes back). Closing abandons every queued waiter, the window's
     *    event wakes every arrival that waited for it (they see closed and end cancelled), and
     *    admitted work runs to its end, so closeAndCheck passes once it has.
     *
     * 8. Resumption. The engine resumes an admitted waiter inline (through the trampoline) when the
     *    owner's thread runs its scheduler, so the parties works of a boundary would start one after
     *    another on the thread that completed it, each running until it suspends: a phase of
     *    CPU-bound works would use one thread (measured: at most 1 work inside at once, 8 parties on
     *    2 workers). So the admitted task first yields (DISPATCH: resubmitted to its scheduler) and
     *    the works spread over the scheduler's threads; the cost is one submission per arrival.
     *    Setting a window from a rule hook resumes the arrivals that waited on it the same way; such
     *    an arrival only signals (left to the owner as a pending signal) and queues: no user code
     *    runs inside the owner's decision before it suspends (AdmissionGate part 8).
     *
     * 9. References. Paper P4215 (seed 003): phase_gate, arrive_and_wait, close completing waiters
     *    with set_stopped when the phase cannot complete, Destruction; java.util.concurrent's
     *    CyclicBarrier (a broken barrier releases every waiter); the admission engine
     *    (AdmissionGate).
     */

    private static final Task<Void> ARRIVED = Task.value(null);
    /** Where admitted work starts: resubmitted to its own scheduler (part 8). */
    private static final Task<Void> DISPATCH = Task.yieldNow();

    private final int parties;
    /** The engine's door; package-private so that white-box tests can queue without arriving. */
    final Door door = new Door(0);
    private final Task<Void> arrival = Task.defer(this::arrive);

    /** Arrivals counted toward the next boundary; owner only (AdmissionGate I1). */
    private int arrived;
    /** Admissions the open boundary still owes; owner only. */
    private int quota;
    /** Admitted work not yet left; owner only. */
    private int running;
    /** The event of the boundary that is admitting, or null (P1); written by the owner only. */
    private volatile Event<Void> window;
    /** Boundaries completed; written by the owner only. */
    private volatile long phase;
    /** Whether the gate closed itself by the broken-barrier rule; for toString. */
    private volatile boolean broken;

    /**
     * Creates an open gate for {@code parties} participants, at phase 0.
     *
     * @param parties the arrivals that complete each boundary
     * @throws IllegalArgumentException if {@code parties <= 0}
     */
    public PhaseGate(int parties) {
        if (parties <= 0) {
            throw new IllegalArgumentException("parties must be positive, got " + parties);
        }
        this.parties = parties;
    }

    /**
     * Returns the number of participants: the arrivals that complete each boundary.
     *
     * @return the parties, at least 1
     */
    public int parties() {
        return parties;
    }

    /**
     * Returns the number of boundaries completed so far (0 for a new gate): a snapshot. Work admitted
     * at boundary {@code k} reads {@code k} here while it runs, since the next boundary cannot
     * complete before that work ends.
     *
     * @return the boundaries completed
     */
    public long phase() {
        return phase;
    }

    /**
     * Returns a task that records the caller's arrival at the current phase boundary, waits until
     * every participant has arrived there and all work of the previous phase has ended, then runs
     * {@code work} (the caller's work for the next phase) and leaves the gate when {@code work} ends,
     * on any channel. The task ends with {@code work}'s outcome. Each run is one arrival.
     *
     * <p>Where {@code work} runs: submitted to the run's own scheduler once admitted (the works of a
     * phase run in parallel). Memory effects: see the class javadoc.
     *
     * <p>Cancellation: if a run is cancelled before {@code work} starts, or {@code work} ends with an
     * error or cancelled, the gate breaks (see the class javadoc): it closes and every waiting and
     * later arrival completes cancelled; a failed or cancelled {@code work} closes it before leaving.
     * On a closed gate a run completes cancelled without running {@code work}.
     *
     * @param work the work of the next phase
     * @param <T> the value type
     * @return the arriving task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> arriveAndWait(Task<T> work) {
        Objects.requireNonNull(work, "work");
        Task<T> admitted = DISPATCH.then(work).transform(this::settle); // breaks before it leaves (P2)
        return arrival.then(door.within(admitted)).transform(this::settle);
    }

    /**
     * Blocks the calling thread (parking only the virtual thread on a virtual thread) while it arrives
     * and waits for the boundary, then runs {@code body} on it as the next phase's work, leaves the
     * gate and returns the body's value: the blocking door,
     * {@code arriveAndWait(Task.fromCallable(body)).join()}. Do not call it from a scheduler thread
     * that the other participants need to arrive.
     *
     * @param body the work of the next phase
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed or breaks before the
     *     body is admitted, or the thread is interrupted while it waits (the gate then breaks)
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of the body
     *     (an unchecked one is rethrown as is); the gate breaks
     */
    public <T> T arriveAndCall(Callable<? extends T> body) {
        Objects.requireNonNull(body, "body");
        return arriveAndWait(Task.<T>fromCallable(body)).join();
    }

    /**
     * Closes the gate: every waiting arrival completes on the cancelled channel, and every later
     * arrival completes cancelled without running its work. Admitted work is not interrupted: it runs
     * to its end and leaves the gate as usual. Idempotent; never throws.
     */
    @Override
    public void close() {
        super.close();
        releaseWindow(); // after closeRequested is written (part 5)
    }

    /**
     * Closes the gate (as {@link #close()}) and then checks the paper's destruction rule: no admitted
     * work may remain when a gate is dropped. Call it where the gate's life ends, once the work
     * admitted through it has completed.
     *
     * @throws IllegalStateException naming the count if admitted work remains, or if another thread
     *     is admitting or releasing at this instant (work is then still entering or leaving)
     */
    @Override
    public void closeAndCheck() {
        try {
            super.closeAndCheck();
        } finally {
            releaseWindow();
        }
    }

    // ---- the arrival and the broken-barrier rule (any thread) ----

    /** One arrival: counted now, or after the boundary that is admitting has admitted all (P4). */
    private Task<Void> arrive() {
        if (isClosed()) {
            return Task.cancelled();
        }
        Event<Void> admitting = window;
        if (admitting == null) {
            signal(1); // counted by the owner before it next admits anyone
            return ARRIVED;
        }
        return admitting.await().then(arrival);
    }

    /** Ends the arrival with its outcome; any outcome but a value breaks the gate (part 7). */
    private <T> Task<T> settle(Outcome<T> outcome) {
        if (outcome instanceof Outcome.Value<T> v) {
            return Task.value(v.value());
        }
        if (!isClosed()) {
            broken = true;
        }
        close();
        return outcome instanceof Outcome.Failure<T> f ? Task.failure(f.error()) : Task.cancelled();
    }

    private void releaseWindow() {
        Event<Void> admitting = window;
        if (admitting != null) {
            admitting.set();
        }
    }

    // ---- the rule: called with the engine's ownership (AdmissionGate I1) ----

    @Override
    boolean ruleTryEnter(int kind) {
        if (quota == 0) {
            return false;
        }
        running++;
        if (--quota == 0) {
            Event<Void> admitting = window;
            window = null; // P1: before the set, so a woken arrival reads null
            admitting.set();
        }
        return true;
    }

    @Override
    boolean ruleCanEnter() {
        return quota > 0;
    }

    @Override
    void ruleLeave(long released) {
        running -= released(released, 0);
        assert running >= 0 : "more work left the phase gate than it admitted: " + running;
        openIfComplete();
    }

    @Override
    int ruleAdmitted() {
        return running;
    }

    @Override
    void ruleSignal(int count) {
        arrived += count;
        openIfComplete();
    }

    @Override
    void ruleUndo(int kind) {
        running--; // the admission lost to the waiter's cancellation: its phase cannot complete
        breakFromRule();
    }

    @Override
    void ruleWaitersCancelled(int count) {
        breakFromRule(); // a queued arrival was cancelled: its boundary cannot complete
    }

    /** Completes the next boundary if every arrival is counted and the previous phase ended (P2). */
    private void openIfComplete() {
        if (quota != 0 || running != 0 || arrived < parties || isClosed()) {
            return;
        }
        arrived -= parties;
        quota = parties;
        Event<Void> admitting = new Event<>();
        window = admitting; // P1, P4: before any arrival of this boundary is admitted
        phase = phase + 1; // single writer
        if (isClosed()) {
            admitting.set(); // close() may have read window before this write (part 5)
        }
    }

    private void breakFromRule() {
        if (!isClosed()) {
            broken = true;
        }
        closeFromRule(); // applied by the drain loop before it admits anyone else
        releaseWindow();
    }

    @Override
    public String toString() {
        return "PhaseGate[parties=" + parties + ", phase=" + phase
                + (broken ? ", broken]" : isClosed() ? ", closed]" : "]");
    }
}
