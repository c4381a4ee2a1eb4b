package dev.coro.gate;

import dev.coro.internal.Blocking;
import dev.coro.internal.PermitLane;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * A gate that runs one operation at a time and keeps only the newest submission waiting (one of
 * P4215's future gates): a search box whose keystrokes arrive faster than queries run, a refresh that
 * only the latest request needs, a settings save that a newer one makes pointless. Reactor users know
 * the second mode as {@code switchMap}, kotlinx users as {@code collectLatest}.
 *
 * <p><b>Admission rule.</b> At most one admitted operation runs and at most one waits. A submission
 * that finds the gate idle with nobody waiting is admitted at once. Otherwise it waits, and it
 * <em>supersedes</em> the submission that was waiting: that one completes on the cancelled channel
 * without its work ever running. When the running operation leaves, the waiting one (the newest) is
 * admitted. So the last submission always runs (unless it is itself cancelled, or the gate is closed).
 *
 * <p><b>Two modes.</b> {@link #LatestOnlyGate()} lets the running operation finish.
 * {@link #cancellingRunning()} also cancels the running operation when a newer submission arrives
 * (its token fires, so its current and later waits end cancelled; cancellation is cooperative), and
 * the newest starts as soon as the cancelled one has left.
 *
 * <p><b>Fairness.</b> None by design: the newest submission wins. "Newest" is the order in which
 * submissions reached the gate (their arrival on its lock-free intake).
 *
 * <p><b>Try.</b> {@link #tryWithin(Task)} and {@link #tryAcquire()} admit only if no operation runs
 * and nobody waits; otherwise they complete on the cancelled channel without queueing, without
 * superseding anyone, and without running the work.
 *
 * <p><b>Cancellation of a waiter.</b> A waiting submission whose task is cancelled completes on the
 * cancelled channel and leaves; it takes nothing with it and supersedes no one by leaving. If the
 * admission won the race, the work runs and leaves as usual.
 *
 * <p><b>Where admitted work starts.</b> On the submitter's own scheduler: inline (through a
 * trampoline) when the thread whose exit admits it already runs that scheduler, otherwise by
 * submission. A submission admitted at once continues on the thread that asked.
 *
 * <p><b>Close.</b> {@link #close()} completes the waiting submission on the cancelled channel, and
 * every later submission completes cancelled without running its work; the running operation is not
 * cancelled and leaves as usual. {@link #closeAndCheck()} (the destruction rule: a gate must outlive the work it admitted) closes and
 * throws {@link IllegalStateException} if an admitted operation has not yet left.
 *
 * <p><b>Bad input.</b> A null task or body: {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free; while nobody waits, entering and leaving
 * are one atomic instruction each. Actions of an operation before it leaves
 * happen-before the admission of the next one.
 *
 * {@snippet :
 * LatestOnlyGate searches = LatestOnlyGate.cancellingRunning();
 * void onKeystroke(String query) {
 *     scope.spawn(searches.within(search(query)).map(results -> show(query, results)));
 * }   // older queries still waiting end cancelled; a running one is cancelled too
 * }
 */
public final class LatestOnlyGate extends AdmissionGate {
    /* Rule: a permit lane of one (the serial gate's), whose queue holds one waiter (AdmissionEngine
     * I6): a newer arrival supersedes the waiting one before any offer, and the superseded waiter
     * departs holding nothing (PermitLane T6). While nobody waits, entering and leaving are one
     * atomic instruction each.
     *
     * Cancelling the running operation (cancellingRunning): every submission takes a ticket from
     * `tickets` (getAndIncrement, volatile) and then reads `running` (volatile) and cancels it if
     * its ticket is older. An admitted run writes itself to `running` (volatile) and then reads
     * `tickets`: if a newer ticket exists, it cancels itself. Dekker on volatiles: of a submission
     * and a run that race, at least one sees the other's write, so the run is cancelled whichever
     * wins; a run that no newer submission follows is never cancelled by the gate. The run clears
     * `running` (CAS itself -> null) when it leaves, so the gate keeps no finished run. */

    private static final Object SUBMISSION = null;

    private final boolean cancelRunning;
    private final Door door;
    /** cancellingRunning: submissions numbered in the order they asked (see the comment above). */
    private volatile long tickets;
    /** cancellingRunning: the admitted run to cancel when a newer submission comes, or null. */
    private volatile Run running;

    /** Creates a gate that lets a running operation finish and keeps only the newest waiting. */
    public LatestOnlyGate() {
        this(false);
    }

    private LatestOnlyGate(boolean cancelRunning) {
        super(new PermitLane(1, 1));
        this.cancelRunning = cancelRunning;
        this.door = new Door(SUBMISSION, 1);
    }

    /**
     * Creates a gate in which a newer submission also cancels the running operation ({@code switchMap}
     * semantics): the newest starts as soon as the cancelled operation has left.
     *
     * @return the gate
     */
    public static LatestOnlyGate cancellingRunning() {
        return new LatestOnlyGate(true);
    }

    /**
     * Returns a task that submits {@code work}: it waits until no operation runs (superseding the
     * submission that was waiting, and, in the cancelling mode, cancelling the running one), runs
     * {@code work}, and leaves when {@code work} completes on any channel. It ends with {@code work}'s
     * outcome, or completes cancelled without running it if a newer submission superseded it, its
     * wait was cancelled, or the gate is closed. Each start is a new submission.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> within(Task<T> work) {
        Objects.requireNonNull(work, "work");
        if (!cancelRunning) {
            return door.within(work);
        }
        return Task.defer(() -> {
            long ticket = (long) TICKETS.getAndAdd(this, 1L) + 1;
            Run current = running;
            if (current != null && current.ticket < ticket) {
                current.scope.cancel(); // a newer submission: the running one is cancelled
            }
            return door.within(Scope.scoped(scope -> {
                Run mine = new Run(ticket, scope);
                running = mine;
                if (tickets != ticket) {
                    scope.cancel(); // a newer submission came and may not have seen this run
                }
                return work.andFinally(() -> RUNNING.compareAndSet(this, mine, null));
            }));
        });
    }

    /**
     * Returns a task that runs {@code work} only if no operation runs and nobody waits; otherwise it
     * completes on the cancelled channel without queueing, without superseding anyone and without
     * running {@code work}. The admitted work is not cancelled by later submissions, in either mode.
     *
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithin(Task<T> work) {
        return door.tryWithin(work);
    }

    /**
     * Returns a task that waits as {@link #within(Task)} does (superseding the waiting submission)
     * and completes with the {@link Admission}, whose {@link Admission#exit()} leaves the gate. The
     * holder of an admission is not cancelled by later submissions, in either mode. Prefer
     * {@link #within(Task)}.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquire() {
        return door.acquire();
    }

    /**
     * Returns a task that completes with an {@link Admission} if no operation runs and nobody waits,
     * and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquire() {
        return door.tryAcquire();
    }

    /**
     * Blocks the calling thread until its submission is admitted (parking only the virtual thread on
     * a virtual thread), runs {@code body}, leaves and returns the body's value:
     * {@code within(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if a newer submission superseded this one,
     *     the gate is closed, or the thread is interrupted while it waits (the body does not run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(Callable<? extends T> body) {
        Blocking.checkAllowed(LatestOnlyGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(Task.<T>fromCallable(body)).join();
    }

    /**
     * Returns whether a newer submission cancels the running operation.
     *
     * @return whether this gate was made by {@link #cancellingRunning()}
     */
    public boolean cancelsRunning() {
        return cancelRunning;
    }

    @Override
    public String toString() {
        return "LatestOnlyGate[" + (cancelRunning ? "cancelling running" : "letting running finish")
                + (isClosed() ? ", closed]" : "]");
    }

    /** An admitted run of the cancelling mode: its ticket and the scope its work runs in. */
    private record Run(long ticket, Scope scope) {}

    private static final VarHandle TICKETS;
    private static final VarHandle RUNNING;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TICKETS = lookup.findVarHandle(LatestOnlyGate.class, "tickets", long.class);
            RUNNING = lookup.findVarHandle(LatestOnlyGate.class, "running", Run.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
