package dev.coro.gate;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.Objects;

/**
 * A gate that holds dependent work back until readiness has been established (P4215's
 * {@code readiness_gate}, the explicit-transition design): queries wait until a service has
 * started, requests until the first configuration is loaded. Readiness is a one-shot fact that one
 * operation establishes with {@link #setReady()}; dependent work enters with
 * {@link #within(Task)}. For readiness derived from shared state, re-checked on every change, see
 * {@link PredicateGate}.
 *
 * <p><b>Admission rule.</b> An operation is admitted once {@link #setReady()} has been applied, and
 * never before; readiness, once established, stays. The gate limits nothing else: any number of
 * operations may be admitted at once.
 *
 * <p><b>The doors.</b> {@link #within(Task)} waits until the gate is ready, then runs the work (at
 * once if it is ready already); its exit only counts the work out, for {@link #closeAndCheck()}.
 * {@link #acquire()} is the same wait, completing with the {@link Admission} (its exit counts it
 * out). {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if the gate is ready now.
 * {@link #call(java.util.concurrent.Callable)} is the blocking door: it parks the calling thread
 * until ready.
 *
 * <p><b>Fairness.</b> Every waiter queued before readiness is admitted when readiness is
 * established, in arrival order, and none of them holds back another. While the gate is not ready,
 * waiting is the constraint the gate expresses, not a progress failure: every waiter is eventually
 * resolved, admitted after {@code setReady()} or cancelled by {@code close()}.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if the gate is
 * ready, nobody is queued and no other thread is deciding an admission at that instant (for example
 * admitting the waiters of a {@code setReady()} that has just been applied); otherwise they complete
 * on the cancelled channel without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter not yet admitted on the cancelled
 * channel, and every later acquisition completes cancelled without running its work: also after
 * readiness (closing a ready gate ends its admissions; the work admitted so far runs to its end).
 * A {@code setReady()} after {@code close()} admits nothing. Java has no destructor, so the
 * destruction rule (dropping a gate with outstanding work is an error) is {@link #closeAndCheck()}:
 * it closes and throws {@link IllegalStateException} if admitted work has not yet left. Waiters are
 * not outstanding after it: closing has resolved them cancelled.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled before it is admitted
 * completes on the cancelled channel, its work never runs and nothing is counted; if the admission
 * won the race, the work runs and is counted out when it ends (one CAS decides).
 *
 * <p><b>Where admitted work starts.</b> On each waiter's own scheduler: inline (through a trampoline)
 * when the thread that applies readiness (the caller of {@code setReady()}, or whichever thread
 * owns the gate's decision at that moment) already runs that scheduler, otherwise by submission. So
 * on the inline scheduler, {@code setReady()} runs the queued work, one after the other, before it
 * returns. An operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> A null task or body: {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions of a thread before it calls
 * {@code setReady()} happen-before the admitted work (the signal's atomic add, then the admitting
 * owner's exchange of it).
 *
 * {@snippet :
 * ReadinessGate initialized = new ReadinessGate();
 * Task<Void> start = initialized.readyAfter(service.start(config));   // ready when start succeeds
 * Task<Result> answer = initialized.within(service.query(q));         // waits until then
 * }
 */
public final class ReadinessGate extends LatchGate {
    /* The rule is LatchGate's: setReady() sends its opening signal. readyCalled is the caller-side
     * fact for isReady(): written before the signal, so a thread that sees it true and then enters
     * finds the signal applied or pending, and the owner applies pending signals before it decides
     * (AdmissionEngine part 5). */

    /** Whether {@link #setReady()} has been called. */
    private volatile boolean readyCalled;

    /** Creates an open gate that is not ready. */
    public ReadinessGate() {
        super(false);
    }

    /**
     * Establishes readiness: every queued waiter is admitted (in arrival order), and every later
     * acquisition is admitted at once. Idempotent: later calls change nothing. After
     * {@link #close()} it admits nothing (the gate stays closed), though {@link #isReady()} turns
     * true. Never blocks; may run admitted work inline (see the class javadoc).
     *
     * <p>Memory effects: actions of the calling thread before this call happen-before the work it
     * admits. Thread-safe from any thread, including from admitted work and other gates' work.
     */
    public void setReady() {
        readyCalled = true;
        open(); // applied by the owner: the rule opens, then the drain admits everyone
    }

    /**
     * Returns a task that runs {@code work} and makes the gate ready when it completes with a value
     * (the paper's {@code work | let_value(set_ready)}), then completes with that value. If
     * {@code work} fails or is cancelled, readiness can no longer be established by it, so the gate
     * is closed instead: waiters and later acquisitions complete cancelled rather than wait for ever.
     * The task then ends as {@code work} did. Each run of the task does this once.
     *
     * @param work the work whose success establishes readiness
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> readyAfter(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return work.transform(outcome -> {
            if (outcome instanceof Outcome.Value<T> v) {
                setReady();
                return Task.value(v.value());
            }
            close();
            return outcome instanceof Outcome.Failure<T> f ? Task.failure(f.error()) : Task.cancelled();
        });
    }

    /**
     * Returns whether readiness has been established: {@link #setReady()} has been called (whether
     * or not the gate has been closed since; see {@link #isClosed()}). Once true, stays true.
     *
     * @return whether {@code setReady()} has been called
     */
    public boolean isReady() {
        return readyCalled;
    }

    @Override
    public String toString() {
        return "ReadinessGate[" + (readyCalled ? "ready" : "not ready") + (isClosed() ? ", closed]" : "]");
    }
}
