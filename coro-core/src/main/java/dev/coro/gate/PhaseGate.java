package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.Blocking;
import dev.coro.internal.WaitOrder;
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
 * <p><b>Fairness.</b> FIFO: a boundary admits the oldest waiting arrivals, which are exactly the
 * arrivals it counted. An arrival counts toward the first boundary that has not yet completed: a
 * participant admitted at a boundary that arrives again while that boundary is still handing out its
 * admissions waits for the next one, so a participant never takes a place in a boundary it has
 * already passed. While fewer than {@code parties} have arrived,
 * waiting is not a progress failure: it is the constraint the gate expresses.
 *
 * <p><b>Try.</b> There is no try door. An arrival is what completes a boundary, so a "try" could
 * succeed only for the last arrival; any other would have to withdraw, leaving its boundary one
 * arrival short for ever, or break the gate for everyone. To not wait, do not arrive; to stop
 * waiting, cancel the arrival (which breaks the barrier, below) or {@link #close()} the gate.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiting arrival on the cancelled channel, and
 * every later arrival completes cancelled without running its work; admitted work runs to its end and
 * leaves as usual. Java has no destructor, so the destruction rule (dropping a gate with
 * outstanding work is an error) is {@link #closeAndCheck()}: it closes and throws
 * {@link IllegalStateException} if admitted work remains.
 *
 * <p><b>Cancellation: the broken-barrier rule.</b> The paper's {@code close()} completes waiting
 * operations with {@code set_stopped()} if the phase cannot complete. A phase cannot complete once a
 * participant will not arrive, so if any arrival ends on the cancelled or the error channel, the gate
 * <em>breaks</em>: it closes, every waiting and later arrival completes cancelled, and admitted work
 * runs to its end. That covers an arrival cancelled while it waits (queued, or losing the hand-off to
 * its cancellation) and an arrival
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
     * The admission rule (Rule, below) runs under the engine's ownership (AdmissionEngine I1), and the
     * engine watches arrivals: its owner takes every arrival from the intake as soon as it can and
     * tells the rule (ruleArrived), in arrival order, before any decision. So an arrival is counted
     * once it is queued, never before, and the rule has no concurrency of its own.
     *
     * 1. Representation. Rule state (plain, owner only):
     *      counted   arrivals counted since the gate was made; the i-th (from 1) belongs to boundary
     *                ceil(i / parties), and is stamped with it (its tag) when counted
     *      quota     admissions the open boundary still owes; 0: no boundary is admitting
     *      running   admitted work that has not left yet (ruleAdmitted, for closeAndCheck)
     *    phase (volatile long): boundaries completed (the open boundary, while quota > 0); written
     *      only by the owner.
     *    broken (volatile boolean): the gate closed itself (part 7); for toString only.
     *
     * 2. Transitions.
     *    arrive (the participant, any thread): the engine's waiting door (no fast path: an engine
     *       that watches arrivals queues every one), then ruleArrived: counted + 1, the waiter is
     *       stamped with its boundary; openIfComplete.
     *    openIfComplete:  quota == 0, running == 0, counted >= (phase + 1) * parties, not closed ->
     *       phase++; quota = parties.
     *    ruleTryEnter(b): quota > 0 and b == phase -> quota--, running++. An arrival stamped for a
     *       later boundary is refused, and blocks the later ones behind it (arrival order).
     *    ruleLeave(k):    running -= k; openIfComplete.
     *    break (part 7):  ruleDeparted, ruleUndo (running-- first), or settle seeing a non-value
     *       outcome (of the admitted work, before it leaves; or of the whole arrival) -> close.
     *
     * 3. Linearization points. An arrival: its push (the owner counts it in push order). A boundary:
     *    the owner's openIfComplete (phase() changes there). An admission: the owner's admit CAS.
     *    close: the engine's (the intake exchanged for CLOSED).
     *
     * 4. Invariants.
     *    P1: a boundary admits only arrivals stamped with it: the parties arrivals that completed it,
     *        never a later one. A departure reaches the rule a moment after the waiter settled (the
     *        owner may drop the settled waiter first), so counting alone would let the next
     *        boundary's first arrival take a cancelled arrival's place (PhaseGateLincheckTest found
     *        it); the stamp rules that out, and the departure then breaks the gate.
     *    P2 (Barrier): a boundary opens only with running == 0 and quota == 0: every work admitted
     *        at the previous boundary has ended, and that boundary has admitted all its arrivals.
     *    P3: a boundary admits at most parties arrivals (quota), exactly parties unless the gate
     *        breaks or closes first. A participant admitted at boundary k that arrives again is
     *        counted after all of k's arrivals, so it is stamped k + 1 or later.
     *    P4: once closed, no boundary opens and every queued arrival is abandoned (engine I4).
     *
     * 5. Memory ordering. phase is written by the owner before the admit CAS of any arrival of that
     *    boundary, so admitted work reads its own boundary's phase. The rest is the engine's.
     *
     * 6. Progress. Lock-free, as the engine. Waiting for parties arrivals is the constraint the gate
     *    expresses, not a progress failure.
     *
     * 7. Cancellation: the broken-barrier rule. Any arrival that ends on the cancelled or the error
     *    channel closes the gate (settle, on the arrival's own thread): queued and cancelled,
     *    refused by a closed gate (close again: idempotent), its admitted work failed or cancelled
     *    (its participant will not arrive at the next boundary). For admitted work, settle runs
     *    inside the admission, before the exit: the gate is closed while running > 0, so no later
     *    boundary can complete after a phase whose work failed (P2 then holds for every boundary
     *    that completes, even with more arrivals than parties). The engine's paths that the rule
     *    sees close at once under ownership, before anyone else is admitted: ruleDeparted (a queued
     *    arrival departed) and ruleUndo (an admit lost to the arrival's cancellation; running goes
     *    back). Closing abandons every queued arrival, and admitted work runs to its end, so
     *    closeAndCheck passes once it has.
     *
     * 8. Resumption. The engine resumes an admitted waiter inline (through the trampoline) when the
     *    owner's thread runs its scheduler, so the parties works of a boundary would start one after
     *    another on the thread that completed it, each running until it suspends: a phase of
     *    CPU-bound works would use one thread. So the admitted task first yields (DISPATCH:
     *    resubmitted to its scheduler) and the works spread over the scheduler's threads; the cost is
     *    one submission per arrival.
     *
     * 9. References. Paper P4215 (seed 003): phase_gate, arrive_and_wait, close completing waiters
     *    with set_stopped when the phase cannot complete, Destruction; java.util.concurrent's
     *    CyclicBarrier (a broken barrier releases every waiter); the admission engine.
     */

    /** Where admitted work starts: resubmitted to its own scheduler (part 8). */
    private static final Task<Void> DISPATCH = Task.yieldNow();

    /** The engine's door; package-private so that white-box tests can queue without settling. */
    final Door door;

    /**
     * Creates an open gate for {@code parties} participants, at phase 0.
     *
     * @param parties the arrivals that complete each boundary
     * @throws IllegalArgumentException if {@code parties <= 0}
     */
    public PhaseGate(int parties) {
        super(new Rule(checkParties(parties)));
        this.door = new Door(null, 1);
    }

    private static int checkParties(int parties) {
        if (parties <= 0) {
            throw new IllegalArgumentException("parties must be positive, got " + parties);
        }
        return parties;
    }

    /**
     * Returns the number of participants: the arrivals that complete each boundary.
     *
     * @return the parties, at least 1
     */
    public int parties() {
        return rule().parties;
    }

    /**
     * Returns the number of boundaries completed so far (0 for a new gate): a snapshot. Work admitted
     * at boundary {@code k} reads {@code k} here while it runs, since the next boundary cannot
     * complete before that work ends.
     *
     * @return the boundaries completed
     */
    public long phase() {
        return rule().phase;
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
        return door.within(admitted).transform(this::settle);
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
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T arriveAndCall(Callable<? extends T> body) {
        Blocking.checkAllowed(PhaseGate.class, "arriveAndCall");
        Objects.requireNonNull(body, "body");
        return arriveAndWait(Task.<T>fromCallable(body)).join();
    }

    /** Ends the arrival with its outcome; any outcome but a value breaks the gate (part 7). */
    private <T> Task<T> settle(Outcome<T> outcome) {
        if (outcome instanceof Outcome.Value<T> v) {
            return Task.value(v.value());
        }
        if (!isClosed()) {
            rule().broken = true;
        }
        close();
        return outcome instanceof Outcome.Failure<T> f ? Task.failure(f.error()) : Task.cancelled();
    }

    /** The rule, for white-box tests (its hooks run under {@code engine.runOwned}). */
    Rule rule() {
        return (Rule) engine;
    }

    @Override
    public String toString() {
        Rule r = rule();
        return "PhaseGate[parties=" + r.parties + ", phase=" + r.phase
                + (r.broken ? ", broken]" : isClosed() ? ", closed]" : "]");
    }

    /** The rule: called with the engine's ownership (AdmissionEngine I1); see the overview. */
    static final class Rule extends AdmissionEngine {
        final int parties;
        /** Arrivals counted since the gate was made; owner only. */
        private long counted;
        /** Admissions the open boundary still owes; owner only. */
        private int quota;
        /** Admitted work not yet left; owner only. */
        private long running;
        /** Boundaries completed; written by the owner only. */
        volatile long phase;
        /** Whether the gate closed itself by the broken-barrier rule; for toString. */
        volatile boolean broken;

        Rule(int parties) {
            super(WaitOrder.arrival(), true, null); // watches arrivals: each is counted once queued
            this.parties = parties;
        }

        @Override
        protected Object ruleArrived(Object tag) {
            long boundary = counted / parties + 1; // P1: the boundary this arrival completes part of
            counted++;
            openIfComplete();
            return boundary;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            if (quota == 0 || (Long) tag != phase) {
                return false; // P1: stamped for a later boundary
            }
            quota--;
            running++;
            return true;
        }

        @Override
        protected boolean ruleCanEnter() {
            return quota > 0;
        }

        @Override
        protected void ruleLeave(long released) {
            running -= released;
            assert running >= 0 : "more work left the phase gate than it admitted: " + running;
            openIfComplete();
        }

        @Override
        protected long ruleAdmitted() {
            return running;
        }

        @Override
        protected void ruleUndo(Object tag) {
            running--; // the admission lost to the arrival's cancellation: its phase cannot complete
            breakFromRule();
        }

        @Override
        protected void ruleDeparted(long weight) {
            breakFromRule(); // a queued arrival departed: its boundary cannot complete
        }

        /** Completes the next boundary if every arrival is counted and the previous phase ended (P2). */
        private void openIfComplete() {
            if (quota != 0 || running != 0 || counted < (phase + 1) * parties || isClosed()) {
                return;
            }
            quota = parties;
            phase = phase + 1; // single writer
        }

        private void breakFromRule() {
            if (!isClosed()) {
                broken = true;
            }
            closeFromRule(); // applied by the drain before it admits anyone else
        }
    }
}
