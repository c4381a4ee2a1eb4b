package dev.coro.gate;


import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * A readiness gate that owns its readiness condition (P4215's predicate-owned
 * {@code readiness_gate}): it admits dependent work only while a predicate over shared state is
 * true, re-checking it when told that the state changed, as a condition variable's waiter re-checks
 * its condition. Use it when readiness is derived from state (the configuration has been loaded,
 * enough replicas are up) rather than a one-shot fact, so that no caller can declare readiness
 * apart from the condition that justifies it; for the one-shot fact see {@link ReadinessGate}.
 *
 * <p><b>Admission rule.</b> An operation is admitted only when the predicate, evaluated for that
 * admission, returns true. The predicate is the source of truth, not the last {@link #update()}: an
 * entry re-evaluates it rather than reusing the value from the last update, so a state that has
 * become false again admits no one and a waiter is never admitted on a stale answer. The
 * predicate need not be monotonic: while it is false, new entries wait; admitted work is not
 * affected. Any number of operations may be admitted at once.
 *
 * <p><b>When the predicate runs, and how the state it reads is protected.</b> The gate does not
 * lock the state; it gives these guarantees, on which the state's protection rests:
 * <ol>
 *   <li>The predicate runs only under the gate's ownership of its decision: one thread at a time,
 *       never concurrently with itself, with each evaluation ordered before the next. It runs on
 *       whichever thread owns the decision at that moment: the caller of {@code update()}, a task
 *       entering, admitted work leaving, a waiter's cancellation, {@code close()}. It runs when an
 *       operation enters, once per admission, and after every {@code update()}, release and
 *       cancellation (also when nobody waits).</li>
 *   <li>Writes a thread makes before it calls {@code update()} happen-before the predicate
 *       evaluation that this update causes, and so before the work that evaluation admits (the
 *       update's atomic add on the gate's signal counter, the owner's exchange of it, then the
 *       owner's admitting CAS on the waiter). An update applied by another owner is evaluated
 *       after it: the update is never lost.</li>
 *   <li>Nothing orders an evaluation against writes that are not yet followed by an
 *       {@code update()}: an evaluation caused by something else (an entry, another thread's
 *       update) may run while a writer is between its writes. So: publish the state in one write
 *       that the predicate reads (a {@code volatile} field or an {@code AtomicReference} holding an
 *       immutable value, as in the snippet), or write it while no evaluation can make use of a
 *       partial state (each intermediate state reads false), and call {@code update()} after the
 *       change. Work admitted because the predicate returned true may rely on what the predicate
 *       read; writes made after that evaluation need the state's own synchronization.</li>
 * </ol>
 * The predicate must be short and non-blocking, must not call this gate, and should have no side
 * effects: it runs while the gate's decision is owned, so it delays admissions and releases.
 *
 * <p><b>A predicate that throws.</b> Its first error closes the gate (treated as not ready): every
 * waiter and every later acquisition completes cancelled, so no waiter is left waiting on a
 * condition that can no longer be checked; the predicate is not evaluated again. The error is not
 * lost: every {@code update()} from then on, including the one whose evaluation threw if it ran on
 * the updating thread, throws {@link IllegalStateException} with the error as its cause.
 *
 * <p><b>The doors.</b> {@link #within(dev.coro.task.Task)} waits until the predicate admits, then
 * runs the work (at once if it is true now); its exit only counts the work out, for
 * {@link #closeAndCheck()}. {@link #acquire()} is the same wait, completing with the
 * {@link Admission}. {@link #tryWithin(dev.coro.task.Task)} and {@link #tryAcquire()} admit only if
 * the predicate is true now. {@link #call(java.util.concurrent.Callable)} is the blocking door.
 *
 * <p><b>Fairness.</b> Waiters are admitted in arrival order, each after its own evaluation; one
 * that the predicate refuses holds back the younger ones (they wait for the same condition). While
 * the predicate is false, waiting is the constraint the gate expresses; every waiter is resolved,
 * admitted after the state turns true and is followed by an {@code update()} (or by any later entry,
 * release or cancellation), or cancelled by {@code close()}.
 *
 * <p><b>Try.</b> {@link #tryWithin(dev.coro.task.Task)} and {@link #tryAcquire()} evaluate the
 * predicate and admit only if it is true, nobody is queued and no other thread is deciding an
 * admission at that instant; otherwise they complete on the cancelled channel without queueing and
 * without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter not yet admitted on the cancelled
 * channel, and every later acquisition completes cancelled, whatever the predicate says; admitted
 * work runs to its end. After close the predicate is never evaluated again. The
 * destruction rule is {@link #closeAndCheck()}: it closes and throws {@link IllegalStateException}
 * if admitted work has not yet left.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled before it is admitted
 * completes on the cancelled channel, its work never runs and nothing is counted; if the admission
 * won the race, the work runs and is counted out when it ends (one CAS decides).
 *
 * <p><b>Where admitted work starts.</b> On each waiter's own scheduler: inline (through a
 * trampoline) when the thread that admits it (the owner of the decision) already runs that
 * scheduler, otherwise by submission. An operation admitted at once continues on the thread that
 * asked.
 *
 * <p><b>Bad input.</b> A null predicate: {@link NullPointerException}; a null task or body:
 * {@link NullPointerException}.
 *
 * <p><b>Thread-safety.</b> Lock-free, apart from the predicate's own cost. Memory effects as in
 * point 2 above.
 *
 * {@snippet :
 * AtomicReference<Configuration> config = new AtomicReference<>();
 * PredicateGate configLoaded = new PredicateGate(() -> config.get() != null);
 *
 * Task<Void> load = readConfig(path)
 *         .map(loaded -> { config.set(loaded); return (Void) null; })
 *         .then(Task.fromRunnable(configLoaded::update));                 // re-check, admit waiters
 * Task<Reply> reply = configLoaded.within(Task.fromCallable(() -> handle(request, config.get())));
 * }
 */
public final class PredicateGate extends SingleDoorGate {
    /* Rule state, owner only (AdmissionEngine I1): predicate (evaluated only in the rule hooks, so
     * only under ownership: never concurrently with itself, each evaluation ordered after the
     * previous owner's by the owner word), admitted (admissions not yet given back). failure is
     * written once by the owner and read by update() callers, hence volatile. update() is the
     * engine's signal: ruleSignal does nothing, because every drain that applies a signal evaluates
     * the predicate afterwards (ruleCanEnter or ruleTryEnter), after the owner's getAndSet of the
     * signal counter that makes the updater's writes visible. */

    /**
     * Creates an open gate that admits while {@code predicate} returns true.
     *
     * @param predicate the readiness condition; see the class javadoc for where it runs
     * @throws NullPointerException if {@code predicate} is null
     */
    public PredicateGate(BooleanSupplier predicate) {
        super(new Rule(Objects.requireNonNull(predicate, "predicate")));
    }

    /**
     * Tells the gate that the state the predicate reads may have changed: the predicate is
     * re-evaluated (by this thread, or by the thread that owns the gate's decision at this instant,
     * before it decides anything else) and, if it is now true, the queued waiters are admitted in
     * arrival order. Never blocks; may run admitted work inline on this thread.
     *
     * <p>Memory effects: writes of the calling thread before this call happen-before the evaluation
     * it causes and the work that evaluation admits. After {@link #close()} it does nothing.
     *
     * @throws IllegalStateException if the predicate has thrown (in this evaluation, when this
     *     thread ran it, or in any earlier one): the gate is closed, and the exception's cause is
     *     the predicate's first error
     */
    public void update() {
        engine.signal(1);
        Throwable error = rule().failure;
        if (error != null) {
            throw new IllegalStateException("update: the predicate threw, so the gate is closed", error);
        }
    }

    /** Admissions not yet given back: a racy snapshot for tests, exact when the gate is quiescent. */
    long admittedSnapshot() {
        return rule().admitted;
    }

    private Rule rule() {
        return (Rule) engine;
    }

    @Override
    public String toString() {
        return "PredicateGate[" + (rule().failure != null ? "failed" : isClosed() ? "closed" : "open") + "]";
    }

    /** The rule: admit while the predicate holds, evaluated under the engine's ownership only. */
    private static final class Rule extends ConditionRule {
        private final BooleanSupplier predicate;
        /** The predicate's first error; once set the gate is closed and the predicate never runs again. */
        private volatile Throwable failure;

        Rule(BooleanSupplier predicate) {
            this.predicate = predicate;
        }

        /**
         * Evaluates the predicate (owner only). Its first error closes the gate and is kept for
         * update(); the predicate is not evaluated again.
         */
        @Override
        boolean holds() {
            if (failure != null || isClosed()) {
                return false;
            }
            try {
                return predicate.getAsBoolean();
            } catch (Throwable error) { // a rule hook must not throw: the engine would break
                failure = error;
                closeFromRule(); // every waiter and later entry completes cancelled
                return false;
            }
        }

        @Override
        protected void ruleSignal(int count) {
            // Nothing to record: the drain that applies this signal evaluates the predicate next.
        }
    }
}
