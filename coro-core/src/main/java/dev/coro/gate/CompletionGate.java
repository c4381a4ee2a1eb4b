package dev.coro.gate;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * A gate that holds dependent work back until a fixed number of contributing operations have
 * completed (P4215's {@code completion_gate}, a latch for structured concurrency): accept requests
 * once the index is loaded, the database connected and the cache warm; write a batch's summary once
 * every file is processed. The contributions are not ordered with respect to each other.
 *
 * <p><b>Admission rule.</b> An operation is admitted once {@code n} arrivals have been recorded
 * ({@link #arrive()}, or {@link #contribute(Task)} attached to the contributing work), and never
 * before. With {@code n == 0} the gate is open from the start. Once open, it stays open (until
 * closed) and limits nothing: any number of operations may be admitted at once.
 *
 * <p><b>Arrivals.</b> {@link #arrive()} records one arrival; the {@code n}-th opens the gate.
 * Arriving more than {@code n} times throws {@link IllegalStateException}: an extra arrival means
 * the batch was miscounted, so the gate may have opened before one of its contributions completed,
 * which silently ignoring it would hide. {@link #contribute(Task)} is the paper's structural form:
 * the arrival is attached to the contributing work's completion with a value, and a contribution
 * that fails or is cancelled closes the gate, because the count can then never be reached: the
 * dependents are resolved (cancelled) rather than left waiting for ever.
 *
 * <p><b>The doors.</b> {@link #within(Task)} waits for the {@code n} arrivals, then runs the
 * dependent work (at once if they have been recorded); its exit only counts the work out, for
 * {@link #closeAndCheck()}. {@link #acquire()} is the same wait, completing with the
 * {@link Admission}. {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if the gate is
 * open now. {@link #call(java.util.concurrent.Callable)} is the blocking door.
 *
 * <p><b>Fairness.</b> Every waiter queued before the gate opens is admitted when it opens, in
 * arrival order, and none holds back another. Before that, waiting is the constraint the gate
 * expresses; every waiter is resolved, admitted after the last arrival or cancelled by
 * {@code close()}.
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if the gate is open,
 * nobody is queued and no other thread is deciding an admission at that instant; otherwise they
 * complete on the cancelled channel without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiter not yet admitted on the cancelled channel
 * (so if the gate has not opened, every waiter), and every later acquisition completes cancelled,
 * also after the gate opened; admitted work runs to its end. Arrivals after close are still
 * counted (a contribution that completes after another one failed is not an error), but admit
 * nothing. Java has no destructor, so the destruction rule is {@link #closeAndCheck()}: it
 * closes and throws {@link IllegalStateException} if admitted work has not yet left.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled before it is admitted
 * completes on the cancelled channel, its work never runs and nothing is counted; if the admission
 * won the race, the work runs and is counted out when it ends (one CAS decides). A cancelled
 * waiter is not an arrival.
 *
 * <p><b>Where admitted work starts.</b> On each waiter's own scheduler: inline (through a trampoline)
 * when the thread that opens the gate (the last arrival's, or whichever thread owns the gate's
 * decision at that moment) already runs that scheduler, otherwise by submission. So on the inline
 * scheduler the last {@code arrive()} runs the queued work before it returns. An operation admitted
 * at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> {@code n < 0}: {@link IllegalArgumentException} naming the value; a null task
 * or body: {@link NullPointerException}; an arrival beyond {@code n}: {@link IllegalStateException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions of every contributor before its
 * arrival happen-before the admitted work (the arrival's CAS on the count, the last arrival's
 * signal, the admitting owner's exchange of it).
 *
 * {@snippet :
 * CompletionGate startupDone = new CompletionGate(3);
 * scope.spawn(startupDone.contribute(loadIndex()));
 * scope.spawn(startupDone.contribute(connectDatabase()));
 * scope.spawn(startupDone.contribute(warmCache()));
 * scope.spawn(startupDone.within(acceptRequests()));   // admitted after all three
 * }
 */
public final class CompletionGate extends LatchGate {
    /* Implementation overview.
     *
     * The queueing, admission, cancellation and close are the engine's (AdmissionEngine); this
     * class adds one lock-free counter of its own, the arrivals, so its parts are short.
     *
     * 1. Representation. arrivals (volatile int, 0..n): arrivals recorded. Rule state, LatchGate's,
     *    owner only (AdmissionEngine I1): open (the n-th arrival's signal has been applied; true from the start
     *    when n == 0; never cleared) and admitted (admissions not yet given back, for closeAndCheck).
     * 2. Transitions. arrive: CAS arrivals a -> a + 1 while a < n (a == n: throw, nothing changes);
     *    the thread whose CAS makes it n sends the opening signal. The owner's ruleSignal sets open;
     *    the drain that applies it admits every waiter. close and the doors: AdmissionGate.
     * 3. Linearization points. arrive: its successful CAS (or, when it throws, its read of n).
     *    The gate opens at the owner's application of the n-th arrival's signal: an arrival is
     *    recorded (arrivals() shows it) a moment before the gate admits.
     * 4. Invariants. C1: 0 <= arrivals <= n, and it only grows. C2: open implies arrivals == n
     *    (only the n-th CAS signals, before which nothing sets open).
     *    C3: admitted counts exactly the admissions not yet given back (AdmissionEngine I3).
     * 5. Memory ordering. Every arrival's CAS reads the previous one's write (volatile), so each
     *    contributor's actions happen-before the n-th CAS, which precedes its signal's getAndAdd,
     *    which the admitting owner's getAndSet reads: contributors' actions happen-before the
     *    admitted work.
     * 6. Progress. arrive is lock-free (the CAS loop retries only when another arrival succeeded)
     *    and at most n arrivals succeed; only one arrival touches the engine.
     * 7. Cancellation. Arrivals cannot be cancelled (a void call). A waiter's cancellation is the
     *    engine's (AdmissionEngine part 7); it is not an arrival.
     * 8. Resumption. The waiters admitted on opening resume as AdmissionEngine part 8 says.
     * 9. References. P4215 (seed 003) completion_gate and its (Latch) constraint; Destruction.
     */

    private final int expected;
    /** Arrivals recorded, 0 to {@link #expected}; written by CAS in {@link #arrive()}. */
    private volatile int arrivals;

    /**
     * Creates a gate that admits once {@code n} arrivals have been recorded.
     *
     * @param n the number of arrivals expected; 0 opens the gate at once
     * @throws IllegalArgumentException if {@code n < 0}
     */
    public CompletionGate(int n) {
        super(checkArrivals(n) == 0); // the rule is LatchGate's: the n-th arrival sends its signal
        this.expected = n;
    }

    private static int checkArrivals(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n must be >= 0, got " + n);
        }
        return n;
    }

    /**
     * Records one arrival; the {@code n}-th admits every queued waiter (in arrival order) and every
     * later acquisition at once. Never blocks; the last arrival may run admitted work inline.
     *
     * <p>Memory effects: actions of the calling thread before this call happen-before the work
     * admitted when the gate opens. After {@link #close()} the arrival is counted but admits nothing.
     *
     * @throws IllegalStateException if {@code n} arrivals have already been recorded (the arrival
     *     is not counted)
     */
    public void arrive() {
        int a;
        do {
            a = arrivals;
            if (a == expected) {
                throw new IllegalStateException("arrive: all " + expected
                        + " expected arrivals are already recorded; an extra arrival means the batch was miscounted");
            }
        } while (!ARRIVALS.compareAndSet(this, a, a + 1));
        if (a + 1 == expected) {
            open(); // applied by the owner: the rule opens, then the drain admits everyone
        }
    }

    /**
     * Returns a task that runs {@code work} and records one arrival when it completes with a value
     * (the paper's {@code work | let_value(arrive)}), then completes with that value. If
     * {@code work} fails or is cancelled, the expected count can no longer be reached, so the gate
     * is closed instead: waiters and later acquisitions complete cancelled rather than wait for
     * ever. The task then ends as {@code work} did. Each run of the task is one contribution: it
     * arrives (or closes) once.
     *
     * <p>If the arrival is one too many, the task fails with the {@link IllegalStateException} of
     * {@link #arrive()}.
     *
     * @param work the contributing work
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> contribute(Task<T> work) {
        Objects.requireNonNull(work, "work");
        return work.transform(outcome -> {
            if (outcome instanceof Outcome.Value<T> v) {
                arrive();
                return Task.value(v.value());
            }
            close();
            return outcome instanceof Outcome.Failure<T> f ? Task.failure(f.error()) : Task.cancelled();
        });
    }

    /**
     * Returns the number of arrivals recorded so far (a snapshot; between 0 and {@code n}).
     *
     * @return the arrivals
     */
    public int arrivals() {
        return arrivals;
    }

    /**
     * Returns whether the gate admits: all {@code n} arrivals have been recorded and the gate has
     * not been closed. A snapshot.
     *
     * @return whether open
     */
    public boolean isOpen() {
        return arrivals == expected && !isClosed();
    }

    @Override
    public String toString() {
        return "CompletionGate[" + arrivals + "/" + expected + (isClosed() ? ", closed]" : "]");
    }

    private static final VarHandle ARRIVALS;

    static {
        try {
            ARRIVALS = MethodHandles.lookup().findVarHandle(CompletionGate.class, "arrivals", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
