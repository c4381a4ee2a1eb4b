package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.task.Completer;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores a {@link CoalescingGate} over keys 1 and 2 in model-checking and stress modes
 * ({@link CoalescingGateLincheckTest}: the keyed form; {@link SharingCoalescingGateLincheckTest}: the
 * sharing form, where a request for 1 may join an execution for 1 or 2): requests racing the end of
 * an execution, the last caller's cancellation, each other, and close. The work of a request is an
 * execution the test ends by hand ({@code finish}, {@code fail}). As in {@link KeyedSerialGateLincheck}
 * the operations answer nothing and the checked property is the state after each run:
 * <ul>
 *   <li>each request ended at most once; one whose cancel was requested has ended; one that ended
 *       cancelled had its cancel requested or was refused by close (synchronously, after close began);</li>
 *   <li>a request that ended with a value or an error got those of an execution of a compatible key;</li>
 *   <li>counted cancellation: an execution still pending has a waiting request of a compatible key
 *       (else it should have been cancelled); one cancelled too early strands its callers (below);</li>
 *   <li>one execution per key: at most one pending execution per key, and the gate's in-flight keys
 *       are exactly the pending executions' keys;</li>
 *   <li>no stranding: once validate ends every pending execution, no request is left waiting.</li>
 * </ul>
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "key", gen = IntGen.class, conf = "1:2")
public abstract class CoalescingGateLincheck {
    private static final int SLOTS = 5;

    private final CoalescingGate<Integer, Object> gate;
    private final BiPredicate<Integer, Integer> compatible;
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final List<Execution> executions = new CopyOnWriteArrayList<>();
    private final AtomicInteger ids = new AtomicInteger();
    private volatile boolean closeStarted;
    private volatile String broken;
    // Slot tid is touched only by the thread that runs tid's operations.
    private final Request[] latest = new Request[SLOTS];

    /** Runs the test on {@code gate}, which shares a request for a with an execution for b when {@code compatible}. */
    CoalescingGateLincheck(CoalescingGate<Integer, Object> gate, BiPredicate<Integer, Integer> compatible) {
        this.gate = gate;
        this.compatible = compatible;
    }

    /** Makes a request for {@code key} and keeps it as this thread's latest. */
    @Operation
    public void request(@Param(name = "tid") int tid, @Param(name = "key") int key) {
        Request r = new Request(key);
        requests.add(r);
        latest[tid] = r;
        Task<Object> work = Task.create(c -> executions.add(new Execution(key, c)));
        r.future = gate.within(key, work).outcome().map(r::ended).toCompletableFuture();
        if (r.outcome instanceof Outcome.Cancelled<?> && !r.cancelRequested && !closeStarted) {
            broken = "a request for " + key + " ended cancelled at once on an open gate";
        }
    }

    /** Cancels this thread's latest request (a no-op if it has ended). */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        Request r = latest[tid];
        if (r != null) {
            r.cancelRequested = true;
            r.future.cancel(false);
        }
    }

    /** Ends the oldest pending execution of {@code key} with a value (its id). */
    @Operation
    public void finish(@Param(name = "key") int key) {
        for (Execution e : executions) {
            if (e.key == key && e.completer.complete(e.id)) {
                e.completedByTest = true;
                return;
            }
        }
    }

    /** Ends the oldest pending execution of {@code key} with an error (carrying its id). */
    @Operation
    public void fail(@Param(name = "key") int key) {
        for (Execution e : executions) {
            if (e.key == key && e.completer.fail(new Failed(e.id))) {
                e.completedByTest = true;
                return;
            }
        }
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        closeStarted = true;
        gate.close();
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        Map<Integer, Execution> byId = new HashMap<>();
        List<Integer> pendingKeys = new ArrayList<>();
        for (Execution e : executions) {
            byId.put(e.id, e);
            if (e.isPending()) {
                if (pendingKeys.contains(e.key)) {
                    throw new AssertionError("two pending executions of key " + e.key);
                }
                pendingKeys.add(e.key);
            }
        }
        for (Request r : requests) {
            int endings = r.endings.get();
            if (endings > 1) {
                throw new AssertionError("a request for " + r.key + " ended " + endings + " times");
            }
            if (endings == 0 && r.cancelRequested) {
                throw new AssertionError("a cancelled request for " + r.key + " is still waiting");
            }
            Object o = r.outcome;
            if (o instanceof Outcome.Cancelled<?> && !r.cancelRequested && !gate.isClosed()) {
                throw new AssertionError("a request for " + r.key + " ended cancelled unasked");
            }
            Integer from = o instanceof Outcome.Value<?> v ? (Integer) v.value()
                    : o instanceof Outcome.Failure<?> f ? ((Failed) f.error()).id : null;
            if (from != null && !compatible.test(r.key, byId.get(from).key)) {
                throw new AssertionError("a request for " + r.key + " got the outcome of key " + byId.get(from).key);
            }
        }
        for (Execution e : executions) {
            boolean hasCaller = false;
            for (Request r : requests) {
                hasCaller |= r.endings.get() == 0 && compatible.test(r.key, e.key);
            }
            if (e.isPending() && !hasCaller) {
                throw new AssertionError("execution of key " + e.key + " pending with no caller left (not cancelled)");
            }
        }
        List<Integer> inFlight = new ArrayList<>(gate.inFlight());
        Collections.sort(inFlight);
        Collections.sort(pendingKeys);
        if (!inFlight.equals(pendingKeys)) {
            throw new AssertionError("in flight " + inFlight + ", pending executions " + pendingKeys);
        }
        if (gate.listed() != inFlight.size()) {
            throw new AssertionError(gate.listed() + " executions listed, " + inFlight.size() + " live: a dead one was left listed");
        }
        for (Execution e : executions) { // no stranding: end everything, and nobody may be left waiting
            e.completer.complete(e.id);
        }
        for (Request r : requests) {
            if (r.endings.get() != 1) {
                throw new AssertionError("a request for " + r.key + " is stranded: its execution ended");
            }
        }
        if (gate.listed() != 0) {
            throw new AssertionError("executions left in the gate: " + gate.listed());
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(2).invocations(60)
                .threads(3).actorsPerThread(2).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass())
                .scenarios(lastCallerLeavingRacingAJoiner(), endRacingAJoiner(), everyCallerCancellingRacingTheEnd(),
                        closeRacingTwoNewcomers(), twoNewcomersOfCompatibleKeys());
    }

    /**
     * The only caller of an execution cancels while a second request arrives: either the newcomer
     * joins first (the execution goes on, for it) or it finds the execution dead and starts another;
     * never a join of a cancelled execution.
     */
    static ExecutionScenario lastCallerLeavingRacingAJoiner() {
        return LincheckSupport.scenario(CoalescingGateLincheck.class,
                "request 1 1",
                "cancel 1 | request 2 1",
                null);
    }

    /** The execution ends while a request arrives: the newcomer gets this outcome or starts anew, never strands. */
    static ExecutionScenario endRacingAJoiner() {
        return LincheckSupport.scenario(CoalescingGateLincheck.class,
                "request 1 1",
                "finish 1 | request 2 1",
                null);
    }

    /** Both callers cancel while the execution ends: exactly one of the two kills it. */
    static ExecutionScenario everyCallerCancellingRacingTheEnd() {
        return LincheckSupport.scenario(CoalescingGateLincheck.class,
                "request 1 1; request 2 1",
                "cancel 1 | cancel 2 | fail 1",
                null);
    }

    /** Two newcomers race close: each is refused, or shares with the other, and none waits for nothing. */
    static ExecutionScenario closeRacingTwoNewcomers() {
        return LincheckSupport.scenario(CoalescingGateLincheck.class,
                null,
                "request 1 1 | request 2 1 | close",
                null);
    }

    /**
     * Two requests that may share arrive together on an idle gate: exactly one execution starts,
     * whichever request places it (in the sharing form, the second must rescan the very set its
     * placement replaces, or both place one: found by mutation).
     */
    static ExecutionScenario twoNewcomersOfCompatibleKeys() {
        return LincheckSupport.scenario(CoalescingGateLincheck.class,
                null,
                "request 1 1 | request 2 1",
                null);
    }

    /** An error that names its execution. */
    static final class Failed extends RuntimeException {
        final int id;

        Failed(int id) {
            super("execution " + id, null, false, false);
            this.id = id;
        }
    }

    /** One run of a work: started by the gate, ended by the test (or cancelled by the gate). */
    final class Execution {
        final int key;
        final int id = ids.incrementAndGet();
        final Completer<Object> completer;
        volatile boolean cancelled;
        volatile boolean completedByTest;

        Execution(int key, Completer<Object> completer) {
            this.key = key;
            this.completer = completer;
            completer.onCancel(() -> cancelled = true);
        }

        boolean isPending() {
            return !cancelled && !completedByTest;
        }
    }

    /** One request, watched through its outcome. */
    final class Request {
        final int key;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;
        volatile Object outcome;

        Request(int key) {
            this.key = key;
        }

        Void ended(Outcome<Object> o) {
            outcome = o;
            endings.incrementAndGet();
            return null;
        }
    }
}
