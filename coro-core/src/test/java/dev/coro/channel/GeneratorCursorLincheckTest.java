package dev.coro.channel;

import dev.coro.LincheckSupport;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Completer;
import dev.coro.task.Context;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks the cursor's hand-off ({@link GeneratorCursor}'s state word) for linearizability, in
 * model-checking and stress modes: the consumer's {@code next} and the cancellation of its wait, the
 * producer's emit, park, own cancellation and end, and {@code close} from a third thread.
 *
 * <p><b>The parties are modelled, not run.</b> Each wait is a {@link Step}: a completer that settles
 * once (first call wins) and runs its {@code onCancel} hook when cancelled, as the task layer's steps
 * do. The consumer (one thread at a time: {@code nonParallelGroup}) calls {@code request} and
 * cancels its latest request as its token would ({@link #cancelNext()}, whose hook closes the
 * cursor). The producer (one thread at a time) runs only as a real producer can: after it was started
 * and while its last wait has ended; it emits 1, 2, 3... ({@code tryAccept}, or the {@code offer}
 * path when no request is pending), runs the emit's wait ({@link #await()}: the run loop's fast-path
 * check, then {@code park}), ends, or has its parked wait cancelled by a token of its own
 * ({@link #producerCancel()}: it then goes on). Each operation answers the transition it made, read
 * at its linearization point; the sequential specification is this class run sequentially.
 *
 * <p>{@link #validate()} checks after each run what no history shows: the values received arrive in
 * order, none twice; a waiting request never meets a parked producer (no lost wake-up); once the
 * cursor is closed or ended, no request is left waiting, and once closed, no producer step is left
 * parked (nothing leaks). Each of these checks was seen to fail on a mutant of the cursor (close not
 * cancelling the parked step; park not going on when a request came).
 */
public class GeneratorCursorLincheckTest {
    private static final Context CONTEXT = Context.of(Scheduler.inline());

    private final ModelCursor cursor = new ModelCursor();
    private final List<Step> requests = new CopyOnWriteArrayList<>();
    private final List<Step> waits = new CopyOnWriteArrayList<>();
    /** The consumer's latest request; written by the consumer group only. */
    private volatile Step latest;
    /** The producer's last wait; producer group only. */
    private Step parked;
    /** Whether the producer's run has ended; producer group only. */
    private boolean ended;
    /** Whether the producer handed a value over and has yet to run its wait; producer group only. */
    private boolean awaiting;
    /** The step of an offer that handed its value over, to park in {@link #await()}; producer group only. */
    private Step offerStep;
    /** The values emitted so far (1, 2, ...); producer group only. */
    private int emitted;

    /** The cursor with the producer's start recorded instead of run. */
    static final class ModelCursor extends GeneratorCursor<Integer> {
        volatile boolean started;

        ModelCursor() {
            super(Generator.empty(), CONTEXT);
        }

        @Override
        void startProducer(Context ctx) {
            started = true;
        }
    }

    /** The consumer asks for the next value; answers the transition its request made. */
    @Operation(nonParallelGroup = "consumer")
    public String next() {
        Step c = new Step();
        requests.add(c);
        latest = c;
        return cursor.request(c.as());
    }

    /**
     * The consumer's token cancels its latest request (its hook closes the cursor). Answers nothing:
     * the cancel and the close it triggers are two steps (as in the task layer), and a racing close
     * may cancel the request in between; what they did shows in the other operations' answers and in
     * {@link #validate()}.
     */
    @Operation(nonParallelGroup = "consumer")
    public void cancelNext() {
        Step c = latest;
        if (c != null) {
            c.cancel();
        }
    }

    /** The producer emits the next number, if it runs; answers the transition. */
    @Operation(nonParallelGroup = "producer")
    public String emit() {
        if (!running() || awaiting) {
            return "idle";
        }
        int v = ++emitted;
        Object r = cursor.tryAccept(v);
        if (r == Generator.STOP) {
            ended = true; // the producer ends through its cleanup
            cursor.end(new CancellationException("stopped")); // closed, or about to be (the request's hook)
            return "stop";
        }
        if (r == GeneratorCursor.NO_REQUEST) {
            Step p = new Step();
            waits.add(p);
            String offered = cursor.offer(v, p.as());
            if (offered == GeneratorCursor.HAND) { // handed over after all: wait as after any hand-off
                awaiting = true;
                offerStep = p;
                return "hand";
            }
            parked = p;
            return offered;
        }
        awaiting = true;
        return "hand";
    }

    /** The producer runs its emit's wait after a hand-off: the run loop's fast path, else park. */
    @Operation(nonParallelGroup = "producer")
    public String await() {
        if (!awaiting) {
            return "idle";
        }
        awaiting = false;
        Step p = offerStep; // the offer's own step parks (the task layer runs no fast path there)
        offerStep = null;
        if (p == null) {
            if (cursor.tryNowForTest()) {
                parked = null;
                return "go on"; // as park answers when it finds the request: the same transition
            }
            p = new Step();
            waits.add(p);
        }
        parked = p;
        return cursor.park(p.as());
    }

    /** The producer's run ends with a value (the end of the sequence), if it runs. */
    @Operation(nonParallelGroup = "producer")
    public String finish() {
        if (!running() || awaiting) {
            return "idle";
        }
        ended = true;
        return cursor.end(GeneratorCursor.END);
    }

    /** A token of the producer's own cancels its parked wait; the producer then goes on. */
    @Operation(nonParallelGroup = "producer")
    public boolean producerCancel() {
        Step p = parked;
        return p != null && !ended && p.cancelQuietly();
    }

    /**
     * Closes the cursor. Answers nothing: close replaces the state and then cancels what waited
     * there, two steps that a racing cancel of the request may separate (see {@link #cancelNext()}).
     */
    @Operation
    public void close() {
        cursor.close();
    }

    private boolean running() {
        return cursor.started && !ended && (parked == null || parked.isSettled());
    }

    /**
     * After each run: the requests received distinct values in increasing order (none twice, none
     * out of order); nothing is left waiting once the cursor is closed or ended.
     */
    @Validate
    public void validate() {
        int last = 0;
        for (Step c : requests) {
            if (c.value() instanceof Integer v) {
                if (v <= last) {
                    throw new AssertionError("value " + v + " after " + last);
                }
                last = v;
            }
        }
        String state = cursor.stateName();
        if (state.equals("CLOSED") || state.equals("ENDED")) {
            for (Step c : requests) {
                if (!c.isSettled()) {
                    throw new AssertionError("a request left waiting in " + state);
                }
            }
        }
        boolean requestWaits = requests.stream().anyMatch(c -> !c.isSettled());
        if (requestWaits && parked != null && !parked.isSettled() && !awaiting) {
            throw new AssertionError("a request and the parked producer wait for each other, in " + state);
        }
        if (state.equals("CLOSED")) {
            for (Step p : waits) {
                if (!p.isSettled()) {
                    throw new AssertionError("a producer wait left parked after close");
                }
            }
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(20).invocations(500)
                .threads(3).actorsPerThread(2).actorsBefore(3).actorsAfter(2)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(2).actorsBefore(3).actorsAfter(2)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(GeneratorCursorLincheckTest.class)
                .scenarios(closeRacesADelivery(), cancelRacesADelivery(), ownCancelThenEmitAgain());
    }

    /** A request is pending; the producer hands a value over and waits while another thread closes. */
    static ExecutionScenario closeRacesADelivery() {
        return LincheckSupport.scenario(GeneratorCursorLincheckTest.class,
                "next",
                "emit; await; emit | close | next",
                null);
    }

    /** The consumer's token cancels its request while the producer hands a value to it. */
    static ExecutionScenario cancelRacesADelivery() {
        return LincheckSupport.scenario(GeneratorCursorLincheckTest.class,
                "next; emit; await; next",
                "emit; await; finish | cancelNext; next",
                null);
    }

    /** The producer's own token cancels its parked wait; it emits again while the consumer asks. */
    static ExecutionScenario ownCancelThenEmitAgain() {
        return LincheckSupport.scenario(GeneratorCursorLincheckTest.class,
                "next; emit; await",
                "producerCancel; emit; finish | next; next",
                "next");
    }

    /** A wait that settles once, first call wins; cancelling it runs its hook, as the task layer's steps do. */
    static final class Step implements Completer<Object> {
        private static final Object NULL = new Object();
        private static final Object CANCELLED = new Object();
        private static final Runnable RAN = () -> {};

        private final AtomicReference<Object> result = new AtomicReference<>();
        private final AtomicReference<Runnable> hook = new AtomicReference<>();

        @Override
        public boolean complete(Object value) {
            return result.compareAndSet(null, value == null ? NULL : value);
        }

        @Override
        public boolean fail(Throwable error) {
            return result.compareAndSet(null, error);
        }

        @Override
        public boolean cancel() {
            if (!result.compareAndSet(null, CANCELLED)) {
                return false;
            }
            Runnable h = hook.getAndSet(RAN);
            if (h != null) {
                h.run();
            }
            return true;
        }

        /** Cancelled by a token that has no hook to run here (the producer's own). */
        boolean cancelQuietly() {
            return result.compareAndSet(null, CANCELLED);
        }

        @Override
        public void onCancel(Runnable action) {
            Runnable prev = hook.compareAndExchange(null, action);
            if (prev == RAN) {
                action.run();
            } else if (prev != null) {
                throw new IllegalStateException("a hook was already set");
            }
        }

        @Override
        public Context context() {
            return CONTEXT;
        }

        /** This step as a completer of the type the cursor wants. */
        @SuppressWarnings("unchecked")
        <T> Completer<T> as() {
            return (Completer<T>) (Completer<?>) this;
        }

        Object value() {
            return result.get();
        }

        boolean isSettled() {
            return result.get() != null;
        }

        String describe() {
            Object r = result.get();
            if (r == null) {
                return "pending";
            }
            if (r == NULL) {
                return "end";
            }
            if (r == CANCELLED) {
                return "cancelled";
            }
            if (r instanceof IllegalStateException e) {
                return e.getMessage().contains("closed") ? "refused: closed" : "refused: busy";
            }
            if (r instanceof Throwable e) {
                return "failed " + e.getClass().getSimpleName();
            }
            return "value " + r;
        }
    }
}
