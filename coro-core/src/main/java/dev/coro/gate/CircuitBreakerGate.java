package dev.coro.gate;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Blocking;
import dev.coro.internal.Durations;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A circuit breaker as a gate: it admits calls to a dependency while the dependency works, and
 * refuses them at once, without running them, while it is known to be failing, so that callers
 * fail fast and the dependency gets time to recover. Where a team would reach for Resilience4j's
 * {@code CircuitBreaker}, this gate takes its verdict from the admitted work's own outcome, which
 * {@link #within(Task)} sees on every channel, so no decorator has to reconstruct it.
 *
 * <p><b>Admission rule.</b> Three states, on the clock of the scheduler the gate was built with:
 * <ul>
 *   <li>{@link State#CLOSED}: every call is admitted, and its verdict is recorded in a window: the
 *       last {@code n} calls ({@link Builder#countWindow}) or the calls of the last stretch of time
 *       ({@link Builder#timeWindow}). Once the window holds at least {@link Builder#minimumCalls}
 *       calls and the failure rate reaches {@link Builder#failureRateThreshold} (or the slow-call
 *       rate reaches {@link Builder#slowCallRateThreshold}), the gate opens.</li>
 *   <li>{@link State#OPEN}: every call is refused at once with {@link CallNotPermittedException},
 *       which names the gate and says when a trial may pass. After {@link Builder#openFor} (exactly,
 *       on the gate's clock: never a tick earlier) the gate is half-open; its timer makes the change
 *       then, and a call or {@link #state()} that comes first makes it itself.</li>
 *   <li>{@link State#HALF_OPEN}: {@link Builder#halfOpenTrials} trial calls are admitted, and no
 *       more in this period (a cancelled or ignored trial gives its place back); a call beyond them
 *       is refused at once. The trials' verdicts decide, against the same thresholds over all the
 *       trials: open again, or closed with a fresh window. The gate decides as soon as the outcome
 *       is certain (one failure of two trials at 50 % reopens it at once), so a trial that never
 *       ends can keep it half-open: bound the work with {@link Task#timeout}.</li>
 * </ul>
 *
 * <p><b>Verdicts.</b> The admitted work's outcome is its verdict, structurally: a value is a
 * success; an error is a failure if {@link Builder#recordFailure} says so (every error by default),
 * a success otherwise, and neither if {@link Builder#ignoreErrors} says so; cancelled is neither
 * success nor failure: the call is not counted, and a cancelled trial gives its place to another
 * call. A call is slow (when slow calls are measured) if it took at least
 * {@link Builder#slowCallDuration} from admission to its end, whatever its outcome. A verdict counts
 * only in the state period that admitted the call: a call admitted while closed that ends after the
 * gate opened, or a trial of an earlier half-open period, changes nothing.
 *
 * <p><b>Fairness and try.</b> Nobody waits: every call is admitted or refused at once, so there is
 * no queue and no order to keep; {@link #within(Task)} is its own try. A call is refused only for
 * the state: never because other threads call at the same instant.
 *
 * <p><b>Cancellation.</b> Cancelling a call's task cancels the admitted work (its verdict is then
 * neither); a call cancelled before it reached the gate is not admitted.
 *
 * <p><b>Where admitted work starts.</b> On the thread that starts the task, at once: admission never
 * waits, so there is no hand-off. A refused call completes on that thread.
 *
 * <p><b>State changes.</b> Listeners given to {@link Builder#onStateChange} see every transition,
 * each exactly once, in the order the transitions happened, one at a time (never two listeners'
 * calls at once), on the thread that made the transition or on one making a later transition
 * meanwhile. A listener that throws is reported to that thread's uncaught-exception handler; the
 * gate and the other listeners go on.
 *
 * <p><b>Close.</b> {@link #close()} ends the gate's life (it is not the {@link State#CLOSED} state):
 * every later call completes on the cancelled channel without running, and the state no longer
 * changes. Admitted work runs to its end; the gate tracks no admissions, so closing has nothing to
 * check.
 *
 * <p><b>Bad input.</b> Each builder method checks its argument and throws
 * {@link IllegalArgumentException} naming the argument and the rule; {@link Builder#build()} throws
 * it for a {@code minimumCalls} above the count window. A null argument anywhere:
 * {@link NullPointerException} naming it.
 *
 * <p><b>Thread-safety and memory effects.</b> Every method is thread-safe and lock-free; a call in
 * the closed state reads one volatile field to enter and, to leave, makes three atomic updates (count window)
 * or one or two (time window); it reads the clock only when it measures slow calls or has a time window.
 * Actions of a call before its end happen-before the transition its verdict causes, and a
 * transition happens-before the listeners see it.
 *
 * {@snippet :
 * CircuitBreakerGate payments = CircuitBreakerGate.builder("payments")
 *         .failureRateThreshold(50)          // open at 50 % failures
 *         .countWindow(20).minimumCalls(10)  // over the last 20 calls, once there are 10
 *         .openFor(Duration.ofSeconds(30))
 *         .halfOpenTrials(3)
 *         .onStateChange(t -> log.info("payments breaker: {} -> {}", t.from(), t.to()))
 *         .build();
 * Task<Receipt> charge = payments.within(client.charge(order));   // fails at once while open
 * }
 */
public final class CircuitBreakerGate {
    /* Implementation overview.
     *
     * Why not a rule on the AdmissionEngine: a breaker never queues, and the engine's gift is the
     * queue (intake, order, hand-off, expiry); on it every call would pass the owner, and a closed
     * breaker needs only one volatile read to admit. So it is a small state machine of its own.
     *
     * 1. Representation. phase (volatile): the current state period, an object made by the
     *    transition that began it and never reused:
     *      Closed    window (OutcomeWindow: its own overview), since
     *      Open      since, halfOpenAt = since + openFor (compared as a nanoTime difference, so a
     *                wrap is harmless), the metrics that opened it,
     *                timer (volatile; the scheduler's timer for halfOpenAt)
     *      HalfOpen  since, trials (volatile long): admitted (bits 0-13) | decision << 14 (2 bits:
     *                none, TO_OPEN, TO_CLOSED, TO_SHUT) | verdicts << 16 | failures << 32 | slow << 48
     *                (16 bits each; halfOpenTrials <= 10,000)
     *      Shut      last (the phase close replaced; terminal)
     *    next (volatile, on each phase; only with listeners): its successor, the chain listeners
     *    are told along. delivering (volatile int): the listener drain's work count; delivered
     *    (plain, owned by the drainer): the last phase told.
     *
     * 2. Transitions (each a CAS of phase from the period it ends; the loser does nothing: someone
     *    else ended that period first).
     *    Closed -> Open      a recorder whose window passes a threshold (OutcomeWindow.record
     *                        answers from the value its own RMW returned); transitionToOpen.
     *    Open -> HalfOpen    at halfOpenAt: the timer, or a call, state(), metrics() or a manual
     *                        transition that reads the clock at or after it; since = halfOpenAt.
     *    HalfOpen -> Open | Closed | Shut   in two steps. Decide: CAS the decision into trials
     *                        if it has none (the first decision wins): the recorder whose verdict
     *                        makes the outcome certain, transitionTo*, close. Settle: CAS phase from
     *                        the HalfOpen to the successor its decision names: the decider, or
     *                        anyone who finds it decided (an admission helps, then reads again).
     *    any -> Closed / Open  transitionToClosed / transitionToOpen (not from the same state).
     *    any -> Shut         close (terminal: no CAS from Shut ever succeeds).
     *    Admission: Closed: none (a read). HalfOpen: CAS trials + 1 if admitted < N and no
     *    decision. A trial's end: getAndAdd its verdict (or - 1 admitted if neither).
     *    After a successful CAS: an Open arms its timer; with listeners, from.next = to, then drain.
     *
     * 3. Linearization points. within's admission: its read of phase (Closed, Open: refused or
     *    expired), or its trials CAS (HalfOpen: admitted) or read (full: refused). A verdict: its window RMW or its trials getAndAdd.
     *    A transition, transitionTo*, close: the phase CAS. state(), metrics(): the phase read.
     *
     * 4. Invariants.
     *    I1: a HalfOpen admits at most halfOpenTrials calls that are not cancelled or ignored:
     *        admitted counts them (a verdict of neither takes one back), and the admission CAS
     *        checks it below the bound.
     *    I2: no trial is admitted into a HalfOpen once it has a decision, and it has one before
     *        any CAS ends it (asserted in transition); its successor is the one its decision names.
     *    I3: a verdict changes only the period that admitted its call (the phase it captured): a
     *        transition CASes from that period, which fails once it has ended.
     *    I4: listeners see the transitions in the phase CAS order, each once: the chain of next
     *        links is that order (each phase gets one successor), and one drainer at a time walks
     *        it from delivered.
     *
     * 5. Memory ordering. phase, next, trials, delivering and the windows are volatile (or
     *    VarHandle RMWs); a phase object is published by the CAS (release) and read by the volatile
     *    read (acquire), so its final fields and window are seen whole. delivered is plain: written
     *    and read only by the drainer, and successive drainers are ordered by the getAndAdds on
     *    delivering. The drain's missed-work check: a transitioner writes from.next, then
     *    increments delivering; the drainer reads next, then decrements delivering, and walks
     *    again if it was incremented meanwhile (the usual work-in-progress counter).
     *
     * 6. Progress and fairness. Lock-free: the trials CAS loop retries only when another trial
     *    changed the word, and admit reads phase again only after a period ended (its own CAS or
     *    another's, or a decision it helped settle); a transition's CAS does not retry (losing
     *    means the period ended). A call
     *    is refused only by the state (or a HalfOpen's full trials), never by contention. Nobody
     *    waits, so there is no fairness to keep. Listeners run outside any atomic section.
     *
     * 7. Cancellation races. A cancelled call is a verdict of neither: nothing in a Closed window;
     *    its place back in its HalfOpen (admitted - 1, after its own + 1 in the same word, so never
     *    negative). Nothing else is held: no node, no thread, no timer per call.
     *
     * 8. Resumption. No waiting, so none: the admitted work runs on the calling thread at once, and
     *    a refusal completes there. Transitions and listeners run on the thread of the verdict, the
     *    timer, or the manual call; listeners called by a later transition's thread are drained in
     *    a loop (no recursion, bounded stack).
     *
     * 9. References. Issue 12 (Future gates II, CircuitBreakerGate); Resilience4j's CircuitBreaker
     *    (its states, thresholds and defaults); DESIGN principle 4 (release, here the verdict, is
     *    structural).
     */

    /** The states of a breaker. */
    public enum State {
        /** Calls are admitted; their verdicts are counted. */
        CLOSED,
        /** Calls are refused at once, until the open period ends. */
        OPEN,
        /** A bounded number of trial calls is admitted; their verdicts decide the next state. */
        HALF_OPEN
    }

    /**
     * One change of state, as listeners see it.
     *
     * @param from the state before
     * @param to the state after
     * @param atNanos when, on the gate's clock ({@link #nanoTime()}): for a change to half-open,
     *     the end of the open period, even if the timer or the call that made it came later
     */
    public record Transition(State from, State to, long atNanos) {}

    /**
     * A snapshot of what the gate is counting in its current state: the window while closed, the
     * window that opened it while open, the trials' verdicts while half-open.
     *
     * @param state the state
     * @param calls the calls with a verdict (success or failure)
     * @param failures the failed calls among them
     * @param slowCalls the slow calls among them (0 unless slow calls are measured)
     */
    public record Metrics(State state, long calls, long failures, long slowCalls) {
        /**
         * Returns the failure rate in percent: {@code 100 * failures / calls}, or 0 with no calls.
         *
         * @return the failure rate
         */
        public double failureRate() {
            return calls == 0 ? 0 : 100.0 * failures / calls;
        }

        /**
         * Returns the slow-call rate in percent: {@code 100 * slowCalls / calls}, or 0 with no calls.
         *
         * @return the slow-call rate
         */
        public double slowCallRate() {
            return calls == 0 ? 0 : 100.0 * slowCalls / calls;
        }
    }

    // ---- configuration (final) ----
    private final String name;
    private final Scheduler clock;
    private final double failureThreshold;
    private final double slowThreshold;
    /** Whether slow calls are measured (a clock read at each admission and end). */
    private final boolean timesCalls;
    private final long slowNanos;
    /** The count window's size, or 0 for a time window. */
    private final int countWindow;
    private final long bucketNanos;
    private final int minimumCalls;
    private final long openNanos;
    private final int trials;
    private final Predicate<? super Throwable> recordFailure;
    private final Predicate<? super Throwable> ignoreErrors;
    private final List<Consumer<? super Transition>> listeners;

    // ---- state ----
    private volatile Phase phase;
    private volatile int delivering;
    /** The last phase the listeners were told of; the drainer's alone (I4). */
    private Phase delivered;

    /** The verdicts of a call. */
    private static final int SUCCESS = 0, FAILURE = 1, NEITHER = 2;

    /** within's answer for a call to a gate that has been closed. */
    private static final Object SHUT = new Object();

    private CircuitBreakerGate(Builder b) {
        this.name = b.name;
        this.clock = b.clock;
        this.failureThreshold = b.failureRateThreshold;
        this.timesCalls = b.slowCallDuration != null || b.slowCallRateThreshold != null;
        this.slowThreshold = b.slowCallRateThreshold != null ? b.slowCallRateThreshold : 100;
        this.slowNanos = b.slowCallDuration != null ? Durations.toNanos(b.slowCallDuration) : 60_000_000_000L;
        this.countWindow = b.timeWindow == null ? b.countWindow : 0;
        this.bucketNanos = b.timeWindow == null ? 0 : Durations.toNanos(b.timeWindow) / OutcomeWindow.Time.BUCKETS;
        this.minimumCalls = b.minimumCalls > 0 ? b.minimumCalls
                : countWindow > 0 ? Math.min(100, countWindow) : 100;
        this.openNanos = Durations.toNanos(b.openFor);
        this.trials = b.halfOpenTrials;
        this.recordFailure = b.recordFailure;
        this.ignoreErrors = b.ignoreErrors;
        this.listeners = List.copyOf(b.listeners);
        long now = clock.nanoTime();
        this.phase = new Closed(now, newWindow(now));
        this.delivered = phase;
    }

    /**
     * Returns a builder of a gate named {@code name}, with the defaults: failure rate threshold
     * 50 %, a count window of the last 100 calls, minimum calls 100 (or the count window's size if
     * smaller), open for 60 s, 10 half-open trials, every error a failure, slow calls not measured,
     * the clock of {@link Scheduler#inline()} (the system's), no listeners.
     *
     * @param name the gate's name, for messages and {@link CallNotPermittedException#gateName()}
     * @return the builder
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} is blank
     */
    public static Builder builder(String name) {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name must not be blank");
        }
        return new Builder(name);
    }

    // ---- doors ----

    /**
     * Returns a task that, each time it runs, asks the gate: if admitted, it runs {@code work} on
     * the calling thread and ends with {@code work}'s outcome, which is recorded as its verdict;
     * if refused, it fails at once with {@link CallNotPermittedException} without running
     * {@code work}; if the gate has been closed, it completes on the cancelled channel without
     * running {@code work}.
     *
     * @param work the call to the dependency
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return Task.defer(() -> enter(work));
    }

    /**
     * Blocks the calling thread while {@code body} runs if admitted (parking only the virtual
     * thread on a virtual thread) and returns its value: {@code within(Task.fromCallable(body)).join()}.
     *
     * @param body the call to the dependency
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws CallNotPermittedException if the gate refuses the call (the body does not run)
     * @throws java.util.concurrent.CancellationException if the gate is closed (the body does not
     *     run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(Callable<? extends T> body) {
        Blocking.checkAllowed(CircuitBreakerGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(Task.<T>fromCallable(body)).join();
    }

    /**
     * Returns the state, making the change to half-open first if the open period has ended. After
     * {@link #close()}, the state the gate was in when it was closed.
     *
     * @return the state
     */
    public State state() {
        Phase p = current();
        return p instanceof Shut s ? s.last.state() : p.state();
    }

    /**
     * Returns what the gate counts in its current state (see {@link Metrics}), making the change to
     * half-open first if the open period has ended.
     *
     * @return the snapshot
     */
    public Metrics metrics() {
        return metricsOf(current(), clock.nanoTime());
    }

    /**
     * Opens the gate now, for the usual open period, whatever the counts say: every call is refused
     * until then. Does nothing if the gate is open or has been closed. An open period that has
     * ended is half-open first (as {@link #state()} says), and is opened again.
     *
     * @return whether this call changed the state
     */
    public boolean transitionToOpen() {
        for (;;) {
            Phase p = current();
            if (p instanceof Open || p instanceof Shut) {
                return false;
            }
            if (p instanceof HalfOpen h) {
                if (decide(h, TO_OPEN)) {
                    return true;
                }
                continue;
            }
            long now = clock.nanoTime();
            if (transition(p, opened(now, metricsOf(p, now)))) {
                return true;
            }
        }
    }

    /**
     * Closes the breaker now (the {@link State#CLOSED} state, with a fresh window), whatever the
     * counts say. Does nothing if it is in that state or the gate has been closed.
     *
     * @return whether this call changed the state
     */
    public boolean transitionToClosed() {
        for (;;) {
            Phase p = current();
            if (p instanceof Closed || p instanceof Shut) {
                return false;
            }
            if (p instanceof HalfOpen h) {
                if (decide(h, TO_CLOSED)) {
                    return true;
                }
                continue;
            }
            long now = clock.nanoTime();
            if (transition(p, new Closed(now, newWindow(now)))) {
                return true;
            }
        }
    }

    /**
     * Ends the gate's life (this is not the {@link State#CLOSED} state): every later call completes
     * on the cancelled channel without running its work, and the state no longer changes; the open
     * period's timer is cancelled. Admitted work runs to its end. Idempotent; never throws.
     */
    public void close() {
        for (;;) {
            Phase p = phase;
            if (p instanceof Shut) {
                return;
            }
            if (p instanceof HalfOpen h) {
                decide(h, TO_SHUT); // or help the decision made first, and close its successor
            } else if (transition(p, new Shut(clock.nanoTime(), p))) {
                if (p instanceof Open o && o.timer != null) {
                    o.timer.cancel();
                }
                return;
            }
        }
    }

    /**
     * Returns whether {@link #close()} has been called (not whether the breaker is in the
     * {@link State#CLOSED} state: see {@link #state()}).
     *
     * @return whether the gate has been closed
     */
    public boolean isClosed() {
        return phase instanceof Shut;
    }

    /**
     * Returns the gate's name.
     *
     * @return the name
     */
    public String name() {
        return name;
    }

    /**
     * Returns the gate's clock, on which {@link Transition#atNanos()} is a point.
     *
     * @return the scheduler's {@link Scheduler#nanoTime()}
     */
    public long nanoTime() {
        return clock.nanoTime();
    }

    @Override
    public String toString() {
        Phase p = phase;
        if (p instanceof Shut s) {
            return "CircuitBreakerGate[" + name + ", " + s.last.state() + ", gate closed]";
        }
        Metrics m = metricsOf(p, clock.nanoTime());
        return "CircuitBreakerGate[" + name + ", " + p.state() + ", " + m.failures() + " failed and " + m.slowCalls()
                + " slow of " + m.calls() + " calls]";
    }

    // ---- admission and verdicts ----

    private <T> Task<T> enter(Task<T> work) {
        Object admitted = admit();
        if (admitted instanceof Phase p) {
            long start = timesCalls ? clock.nanoTime() : 0;
            return work.transform(o -> leave(p, start, o));
        }
        return admitted == SHUT ? Task.cancelled(this + " is closed") : Task.failure((Throwable) admitted);
    }

    /** The phase that admits the call (Closed or HalfOpen), a refusal, or SHUT. */
    private Object admit() {
        for (;;) {
            Phase p = phase;
            switch (p) {
                case Closed c -> {
                    return c;
                }
                case HalfOpen h -> {
                    long t = h.trials;
                    if ((t & DECISION) != 0) {
                        settle(h); // I2: decided; help install its successor, then read phase again
                    } else if ((t & ADMITTED) >= trials) {
                        return refusal(h, 0);
                    } else if (HalfOpen.TRIALS.compareAndSet(h, t, t + 1)) {
                        assert (t & ADMITTED) < trials : "I1";
                        return h; // I1
                    } // else another trial changed the word: look again
                }
                case Open o -> {
                    long now = clock.nanoTime();
                    if (now - o.halfOpenAt < 0) {
                        return refusal(o, o.halfOpenAt - now);
                    }
                    transition(o, new HalfOpen(o.halfOpenAt)); // lost: someone else ended it; read again
                }
                case Shut s -> {
                    return SHUT;
                }
            }
        }
    }

    private CallNotPermittedException refusal(Phase p, long retryAfterNanos) {
        String message = p instanceof Open
                ? "CircuitBreakerGate '" + name + "' is OPEN: call not permitted; a trial call may pass in "
                        + seconds(retryAfterNanos) + " (the open period of " + seconds(openNanos) + " began at "
                        + p.since + " ns on the gate's clock)"
                : "CircuitBreakerGate '" + name + "' is HALF_OPEN and has admitted its " + trials
                        + " trial call(s): call not permitted until their verdicts decide";
        return new CallNotPermittedException(name, p.state(), retryAfterNanos, message);
    }

    /** Nanoseconds as seconds to the millisecond, rounded up ("0.001 s" for 1 ns): never sooner than true. */
    private static String seconds(long nanos) {
        long ms = nanos / 1_000_000 + (nanos % 1_000_000 != 0 ? 1 : 0);
        String frac = Long.toString(1_000 + ms % 1_000).substring(1);
        return ms / 1_000 + "." + frac + " s";
    }

    private <T> Task<T> leave(Phase p, long start, Outcome<T> o) {
        return switch (o) {
            case Outcome.Value<T> v -> {
                verdict(p, SUCCESS, start);
                yield Task.value(v.value());
            }
            case Outcome.Failure<T> f -> {
                verdict(p, verdictOf(f.error()), start);
                yield Task.failure(f.error());
            }
            case Outcome.Cancelled<T> c -> {
                verdict(p, NEITHER, start);
                yield Task.cancelled();
            }
        };
    }

    /** The verdict on an error; a predicate that throws makes it a failure, its error suppressed into the call's. */
    private int verdictOf(Throwable error) {
        try {
            if (ignoreErrors.test(error)) {
                return NEITHER;
            }
            return recordFailure.test(error) ? FAILURE : SUCCESS;
        } catch (Throwable predicateError) {
            if (predicateError != error) {
                error.addSuppressed(predicateError);
            }
            return FAILURE;
        }
    }

    private void verdict(Phase p, int verdict, long start) {
        if (p instanceof Closed c) {
            if (verdict == NEITHER) {
                return;
            }
            long end = timesCalls || countWindow == 0 ? clock.nanoTime() : 0; // a count window needs no time
            boolean slow = timesCalls && end - start >= slowNanos;
            if (c.window.record(verdict == FAILURE, slow, end, this) && phase == c) {
                long now = clock.nanoTime();
                transition(c, opened(now, metricsOf(c, now))); // I3: fails if c has ended
            }
        } else {
            HalfOpen h = (HalfOpen) p;
            if (verdict == NEITHER) {
                long before = (long) HalfOpen.TRIALS.getAndAdd(h, -1L); // its place goes back (part 7)
                assert (before & ADMITTED) > 0 : "I1: a trial gave back a place it did not hold";
                return;
            }
            boolean slow = timesCalls && clock.nanoTime() - start >= slowNanos;
            long change = ONE_VERDICT + (verdict == FAILURE ? ONE_FAILURE : 0) + (slow ? ONE_SLOW : 0);
            long t = (long) HalfOpen.TRIALS.getAndAdd(h, change) + change;
            judge(h, t);
        }
    }

    /** Ends a HalfOpen if the trials' verdicts in {@code t} make the outcome certain. */
    private void judge(HalfOpen h, long t) {
        long verdicts = (t >>> 16) & FIELD, failures = (t >>> 32) & FIELD, slow = t >>> 48;
        long left = trials - verdicts;
        boolean reopen = failures * 100.0 >= failureThreshold * trials
                || timesCalls && slow * 100.0 >= slowThreshold * trials;
        boolean close = (failures + left) * 100.0 < failureThreshold * trials
                && (!timesCalls || (slow + left) * 100.0 < slowThreshold * trials);
        if (!reopen && !close) {
            return;
        }
        decide(h, reopen ? TO_OPEN : TO_CLOSED);
    }

    /**
     * Decides the end of {@code h} as {@code decision} unless it is decided already (one CAS: the
     * first decision wins, I2), then installs the successor the winning decision names; returns
     * whether this decision won.
     */
    private boolean decide(HalfOpen h, long decision) {
        long t;
        boolean won = false;
        while (((t = h.trials) & DECISION) == 0) {
            if (HalfOpen.TRIALS.compareAndSet(h, t, t | decision)) {
                won = true;
                break;
            } // else a trial changed the word: look again (lock-free: that trial made progress)
        }
        settle(h);
        return won;
    }

    /** Installs the successor of a decided HalfOpen, if it is still current: anyone may help. */
    private void settle(HalfOpen h) {
        if (phase != h) {
            return;
        }
        long decision = h.trials & DECISION;
        long now = clock.nanoTime();
        transition(h, decision == TO_OPEN ? opened(now, metricsOf(h, now))
                : decision == TO_CLOSED ? new Closed(now, newWindow(now)) : new Shut(now, h));
    }

    /** Whether a closed window's sums pass a threshold (OutcomeWindow asks). */
    boolean passes(long calls, long failures, long slow) {
        return calls >= minimumCalls
                && (failures * 100.0 >= failureThreshold * calls || timesCalls && slow * 100.0 >= slowThreshold * calls);
    }

    // ---- transitions ----

    /** The current phase, after the change to half-open if the open period has ended. */
    private Phase current() {
        Phase p = phase;
        if (p instanceof Open o && clock.nanoTime() - o.halfOpenAt >= 0) {
            transition(o, new HalfOpen(o.halfOpenAt));
            p = phase;
        }
        return p;
    }

    private Open opened(long now, Metrics opening) {
        return new Open(now, now + openNanos, opening); // compared as nanoTime differences: may wrap
    }

    private OutcomeWindow newWindow(long now) {
        return countWindow > 0 ? new OutcomeWindow.Count(countWindow) : new OutcomeWindow.Time(now, bucketNanos);
    }

    /** CAS phase from {@code from} to {@code to}; then the timer and the listeners (part 2). */
    private boolean transition(Phase from, Phase to) {
        assert !(from instanceof HalfOpen h) || (h.trials & DECISION) != 0 : "I2: a HalfOpen ended undecided";
        if (phase != from || !PHASE.compareAndSet(this, from, to)) {
            return false;
        }
        if (to instanceof Open o) {
            armTimer(o);
        }
        if (!listeners.isEmpty()) {
            from.next = to;
            deliver();
        }
        return true;
    }

    private void armTimer(Open o) {
        if (o.halfOpenAt - o.since < 0 || o.since > Long.MAX_VALUE - openNanos) {
            return; // no absolute time on the clock for it (centuries away): the first call after it makes the change
        }
        try {
            o.timer = clock.scheduleAt(() -> {
                if (phase == o) {
                    transition(o, new HalfOpen(o.halfOpenAt));
                }
            }, o.halfOpenAt);
        } catch (RejectedExecutionException shutDown) {
            return; // the scheduler is shut down: the first call after halfOpenAt makes the change
        }
        if (phase != o) {
            o.timer.cancel(); // ended meanwhile (closed, or moved on by hand)
        }
    }

    /** Tells the listeners every transition not yet told, in order, one drainer at a time (I4). */
    private void deliver() {
        if ((int) DELIVERING.getAndAdd(this, 1) != 0) {
            return; // the drainer will see it
        }
        int missed = 1;
        for (;;) {
            Phase p = delivered;
            for (Phase n = p.next; n != null; n = p.next) {
                if (!(n instanceof Shut)) {
                    tell(new Transition(p.state(), n.state(), n.since));
                }
                p = n;
            }
            delivered = p;
            missed = (int) DELIVERING.getAndAdd(this, -missed) - missed;
            if (missed == 0) {
                return;
            }
        }
    }

    private void tell(Transition t) {
        for (Consumer<? super Transition> listener : listeners) {
            try {
                listener.accept(t);
            } catch (Throwable e) {
                Thread th = Thread.currentThread();
                th.getUncaughtExceptionHandler().uncaughtException(th, e);
            }
        }
    }

    private Metrics metricsOf(Phase p, long now) {
        return switch (p) {
            case Closed c -> {
                long[] s = c.window.sums(now);
                yield new Metrics(State.CLOSED, s[0], s[1], s[2]);
            }
            case Open o -> o.opening;
            case HalfOpen h -> {
                long t = h.trials;
                yield new Metrics(State.HALF_OPEN, (t >>> 16) & FIELD, (t >>> 32) & FIELD, t >>> 48);
            }
            case Shut s -> metricsOf(s.last, now);
        };
    }

    // ---- phases ----

    /** One period of a state; made by the transition that begins it, never reused. */
    private abstract static sealed class Phase permits Closed, Open, HalfOpen, Shut {
        /** When the period began, on the gate's clock. */
        final long since;
        /** The successor, for the listeners (set only when there are any). */
        volatile Phase next;

        Phase(long since) {
            this.since = since;
        }

        abstract State state();
    }

    private static final class Closed extends Phase {
        final OutcomeWindow window;

        Closed(long since, OutcomeWindow window) {
            super(since);
            this.window = window;
        }

        @Override
        State state() {
            return State.CLOSED;
        }
    }

    private static final class Open extends Phase {
        final long halfOpenAt;
        final Metrics opening;
        volatile Cancellable timer;

        Open(long since, long halfOpenAt, Metrics opening) {
            super(since);
            this.halfOpenAt = halfOpenAt;
            this.opening = new Metrics(State.OPEN, opening.calls(), opening.failures(), opening.slowCalls());
        }

        @Override
        State state() {
            return State.OPEN;
        }
    }

    private static final class HalfOpen extends Phase {
        /** admitted | decision << 14 | verdicts << 16 | failures << 32 | slow << 48. */
        volatile long trials;

        HalfOpen(long since) {
            super(since);
        }

        @Override
        State state() {
            return State.HALF_OPEN;
        }

        static final VarHandle TRIALS;

        static {
            try {
                TRIALS = MethodHandles.lookup().findVarHandle(HalfOpen.class, "trials", long.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    private static final class Shut extends Phase {
        final Phase last;

        Shut(long since, Phase last) {
            super(since);
            this.last = last;
        }

        @Override
        State state() {
            return last.state();
        }
    }

    /** A 16-bit count of a HalfOpen's trials word (verdicts, failures). */
    private static final long FIELD = 0xFFFF;
    /** The admitted trials in a HalfOpen's trials word (bits 0 to 13). */
    private static final long ADMITTED = 0x3FFF;
    /** The decision in a HalfOpen's trials word (bits 14, 15): none (0) or its successor (I2). */
    private static final long DECISION = 3L << 14;
    /** Decisions: open again, closed, the gate closed. */
    private static final long TO_OPEN = 1L << 14, TO_CLOSED = 2L << 14, TO_SHUT = 3L << 14;
    private static final long ONE_VERDICT = 1L << 16, ONE_FAILURE = 1L << 32, ONE_SLOW = 1L << 48;

    private static final VarHandle PHASE;
    private static final VarHandle DELIVERING;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PHASE = l.findVarHandle(CircuitBreakerGate.class, "phase", Phase.class);
            DELIVERING = l.findVarHandle(CircuitBreakerGate.class, "delivering", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ---- builder ----

    /**
     * Builds a {@link CircuitBreakerGate}; every setting has a default (see
     * {@link CircuitBreakerGate#builder(String)}). Each method checks its argument at once. Not
     * thread-safe: build on one thread; {@link #build()} may be called again for another gate.
     */
    public static final class Builder {
        private final String name;
        private double failureRateThreshold = 50;
        private Double slowCallRateThreshold;
        private Duration slowCallDuration;
        private int countWindow = 100;
        private Duration timeWindow;
        private int minimumCalls;
        private Duration openFor = Duration.ofSeconds(60);
        private int halfOpenTrials = 10;
        private Predicate<? super Throwable> recordFailure = e -> true;
        private Predicate<? super Throwable> ignoreErrors = e -> false;
        private Scheduler clock = Scheduler.inline();
        private final List<Consumer<? super Transition>> listeners = new ArrayList<>();

        private Builder(String name) {
            this.name = name;
        }

        /**
         * Sets the failure rate, in percent of the calls in the window, at which the gate opens
         * (and at which the trials reopen it). Default 50.
         *
         * @param percent above 0, at most 100
         * @return this builder
         * @throws IllegalArgumentException if {@code percent} is not above 0 and at most 100
         */
        public Builder failureRateThreshold(double percent) {
            this.failureRateThreshold = checkPercent(percent, "failureRateThreshold");
            return this;
        }

        /**
         * Sets the slow-call rate, in percent, at which the gate opens, and turns on the measuring of
         * slow calls (with a {@link #slowCallDuration} of 60 s unless set). Default: slow calls are
         * not measured (then no call reads the clock in a count window).
         *
         * @param percent above 0, at most 100
         * @return this builder
         * @throws IllegalArgumentException if {@code percent} is not above 0 and at most 100
         */
        public Builder slowCallRateThreshold(double percent) {
            this.slowCallRateThreshold = checkPercent(percent, "slowCallRateThreshold");
            return this;
        }

        /**
         * Sets how long a call must take, from admission to its end, to be slow, and turns on the
         * measuring of slow calls (with a {@link #slowCallRateThreshold} of 100 % unless set).
         *
         * @param duration positive
         * @return this builder
         * @throws NullPointerException if {@code duration} is null
         * @throws IllegalArgumentException if {@code duration} is zero or negative
         */
        public Builder slowCallDuration(Duration duration) {
            this.slowCallDuration = checkPositive(duration, "slowCallDuration");
            return this;
        }

        /**
         * Counts the verdicts of the last {@code calls} calls (the default, with 100). Replaces a
         * {@link #timeWindow}.
         *
         * @param calls between 1 and 1,000,000
         * @return this builder
         * @throws IllegalArgumentException if {@code calls} is below 1 or above 1,000,000
         */
        public Builder countWindow(int calls) {
            if (calls < 1 || calls > 1_000_000) {
                throw new IllegalArgumentException("countWindow must be between 1 and 1,000,000 calls, got " + calls);
            }
            this.countWindow = calls;
            this.timeWindow = null;
            return this;
        }

        /**
         * Counts the verdicts of the calls that ended in the last {@code window}, in ten buckets of
         * a tenth of it each: a verdict counts from its end until its bucket leaves the window, that
         * is for more than nine tenths of the window and at most all of it. Replaces a
         * {@link #countWindow}.
         *
         * @param window at least 10 ns
         * @return this builder
         * @throws NullPointerException if {@code window} is null
         * @throws IllegalArgumentException if {@code window} is shorter than 10 ns
         */
        public Builder timeWindow(Duration window) {
            Objects.requireNonNull(window, "window");
            if (window.compareTo(Duration.ofNanos(OutcomeWindow.Time.BUCKETS)) < 0) {
                throw new IllegalArgumentException("timeWindow must be at least 10 ns, got " + window);
            }
            this.timeWindow = window;
            return this;
        }

        /**
         * Sets how many calls the window must hold before a rate can open the gate. Default 100, or
         * the count window's size if smaller.
         *
         * @param calls at least 1, and at most the count window's size (checked by {@link #build()})
         * @return this builder
         * @throws IllegalArgumentException if {@code calls} is below 1
         */
        public Builder minimumCalls(int calls) {
            if (calls < 1) {
                throw new IllegalArgumentException("minimumCalls must be at least 1, got " + calls);
            }
            this.minimumCalls = calls;
            return this;
        }

        /**
         * Sets how long the gate stays open before it lets trial calls through. Default 60 s.
         *
         * @param duration positive
         * @return this builder
         * @throws NullPointerException if {@code duration} is null
         * @throws IllegalArgumentException if {@code duration} is zero or negative
         */
        public Builder openFor(Duration duration) {
            this.openFor = checkPositive(duration, "openFor");
            return this;
        }

        /**
         * Sets how many trial calls the half-open gate admits in each half-open period (a cancelled
         * or ignored trial gives its place back); their verdicts decide. Default 10.
         *
         * @param calls between 1 and 10,000
         * @return this builder
         * @throws IllegalArgumentException if {@code calls} is below 1 or above 10,000
         */
        public Builder halfOpenTrials(int calls) {
            if (calls < 1 || calls > 10_000) {
                throw new IllegalArgumentException("halfOpenTrials must be between 1 and 10,000, got " + calls);
            }
            this.halfOpenTrials = calls;
            return this;
        }

        /**
         * Sets which errors count as failures; an error it rejects counts as a success (the
         * dependency answered). Default: every error. A predicate that throws makes the call a
         * failure, its exception suppressed into the call's error.
         *
         * @param isFailure true for an error that counts as a failure
         * @return this builder
         * @throws NullPointerException if {@code isFailure} is null
         */
        public Builder recordFailure(Predicate<? super Throwable> isFailure) {
            this.recordFailure = Objects.requireNonNull(isFailure, "isFailure");
            return this;
        }

        /**
         * Sets which errors count as neither success nor failure, as a cancellation does; it is asked
         * before {@link #recordFailure}. Default: none.
         *
         * @param isIgnored true for an error that is not counted
         * @return this builder
         * @throws NullPointerException if {@code isIgnored} is null
         */
        public Builder ignoreErrors(Predicate<? super Throwable> isIgnored) {
            this.ignoreErrors = Objects.requireNonNull(isIgnored, "isIgnored");
            return this;
        }

        /**
         * Sets the scheduler whose clock and timers the gate uses (a virtual-time scheduler in
         * tests). Default: {@link Scheduler#inline()}'s, the system clock.
         *
         * @param scheduler the clock
         * @return this builder
         * @throws NullPointerException if {@code scheduler} is null
         */
        public Builder clock(Scheduler scheduler) {
            this.clock = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * Adds a listener of state changes (see the class javadoc for when and where it is called).
         *
         * @param listener told each transition
         * @return this builder
         * @throws NullPointerException if {@code listener} is null
         */
        public Builder onStateChange(Consumer<? super Transition> listener) {
            listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * Builds a gate, in the {@link State#CLOSED} state with an empty window.
         *
         * @return the gate
         * @throws IllegalArgumentException if {@code minimumCalls} is above the count window's size
         *     (the gate could never open)
         */
        public CircuitBreakerGate build() {
            if (timeWindow == null && minimumCalls > countWindow) {
                throw new IllegalArgumentException("minimumCalls (" + minimumCalls
                        + ") must be at most the countWindow (" + countWindow + "), or the gate could never open");
            }
            return new CircuitBreakerGate(this);
        }

        private static double checkPercent(double percent, String argument) {
            if (!(percent > 0 && percent <= 100)) {
                throw new IllegalArgumentException(argument + " must be above 0 and at most 100 (percent), got " + percent);
            }
            return percent;
        }

        private static Duration checkPositive(Duration duration, String argument) {
            Objects.requireNonNull(duration, argument);
            if (duration.isNegative() || duration.isZero()) {
                throw new IllegalArgumentException(argument + " must be positive, got " + duration);
            }
            return duration;
        }
    }
}
