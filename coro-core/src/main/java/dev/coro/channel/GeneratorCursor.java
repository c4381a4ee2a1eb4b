package dev.coro.channel;

import dev.coro.cancel.CancellationSource;
import dev.coro.internal.FastPath;
import dev.coro.task.Completer;
import dev.coro.task.Context;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.function.Consumer;

/**
 * A {@link Cursor}: the pull hand-off between one consumer and one producer run. The cursor is also
 * the sink at the end of the producer's pipeline, so an emit hands its value straight to the waiting
 * {@code next()}.
 */
class GeneratorCursor<T> extends GeneratorSink<T> implements Cursor<T> {
    /* Implementation overview.
     *
     * Built from existing primitives: each side waits as a Task.create step (its Completer, an
     * AsyncStep, which already settles once and resumes its fiber on its own scheduler, inline
     * through the trampoline when the waker runs there); the producer is a fiber spawned into a
     * Scope whose token this cursor owns. The one thing added is the state word below, which says
     * who waits for whom.
     *
     * 1. Representation. state (volatile Object):
     *      NEW          not started: no request yet
     *      c            a Completer: the consumer's next() waits; the producer runs (or is starting)
     *      IDLE         the consumer has its value and has not asked again; the producer runs on
     *                   towards its next emit (or its end)
     *      PARKED       the producer waits at its emit for the next request; its step is in the
     *                   producer field (written before the CAS that publishes PARKED)
     *      Offer(v, p)  the rare path: the producer emits v with no request pending (its previous
     *                   wait was cancelled by a token of its own, a timeout say, and it went on) and
     *                   waits in p; v == null: v was taken, p waits for the next request
     *      Ended(o)     the producer's run ended with o (end: null value; failure; cancelled)
     *      CLOSED       closed by the consumer (close(), or its next() was cancelled); terminal
     *    producer: the parked producer step (hot path); cancellation: the producer's cancellation
     *    source (written before the CAS that starts the producer).
     *
     * 2. Transitions (all CAS but close, a getAndSet).
     *      next(c), consumer:   NEW -> c, then start the producer
     *                           IDLE -> c (the producer will find the request when it parks)
     *                           PARKED -> c, then complete the parked producer step
     *                           Offer(v, p) -> Offer(null, p), then c completes with v
     *                           Offer(null, p) -> c, then complete p
     *                           Ended(o): unchanged; c settles with o at once
     *                           CLOSED, another c': unchanged; c fails (IllegalStateException)
     *      emit(v), producer:   c -> IDLE, then c.complete(v); the producer then waits (park);
     *                             if c.complete lost to c's cancel, the emit stops (STOP) instead
     *                           CLOSED: unchanged; the emit completes cancelled (STOP)
     *                           IDLE | PARKED | Offer (no request): its step p makes Offer(v, p),
     *                             or, if a request c came meanwhile, c -> IDLE, c.complete(v), park
     *      park(p), producer:   IDLE -> PARKED (p suspends)
     *                           c: unchanged; p completes at once (asked again meanwhile; on the
     *                             run loop's fast path no step is even allocated)
     *                           CLOSED: unchanged; p cancelled
     *      end(o), producer:    c -> Ended(o), then c settles with o; IDLE | PARKED | Offer ->
     *                           Ended(o) (a dead parked step); CLOSED: unchanged
     *      close(), anyone:     any -> CLOSED; then by what it replaced: c is cancelled; the parked
     *                           step (PARKED, Offer) is cancelled; the producer's cancellation is
     *                           fired (ends its other waits); NEW / Ended / CLOSED: nothing to do
     *
     * 3. Linearization points. next: its successful CAS, or its read of Ended / CLOSED / c' (which
     *    settle c at once). Delivery of a value: the c -> IDLE CAS (or Offer(v, p) -> Offer(null,
     *    p)). End: the CAS to Ended. close: its getAndSet.
     *
     * 4. Invariants. I1: the producer field is written only by park(), right after the producer's
     *    own c -> IDLE, and read only by the party that replaced PARKED; so while PARKED it is
     *    stable. I2: each request is settled exactly once: by the delivery that replaced it, the end
     *    that replaced it, or the close that replaced it (a cancel racing any of them is the step's
     *    own single winner). I3: a parked step is completed or cancelled by the one party whose CAS
     *    or getAndSet replaced PARKED or Offer (or by its own token first: then that party's
     *    completion is refused, and the producer, running again, meets the state it left).
     *
     * 5. Memory ordering. state is volatile throughout. The producer field is a plain write before
     *    the release of the IDLE -> PARKED CAS and a plain read after the acquire of the read that
     *    saw PARKED (I1). The value travels through the consumer step's own completion (its release
     *    CAS, acquired when the consumer resumes), so actions of the producer before an emit
     *    happen-before the next() that returns it. An Offer is immutable and published by its CAS.
     *    cancellation is set once, by CAS, before the CAS that starts the producer, so a close that
     *    sees the start sees the source (a racing first next(), a misuse, shares it).
     *
     * 6. Progress: lock-free. Every loop retries only after another party's CAS changed the state;
     *    the consumer and the producer each change it at most twice per value. No spin waits.
     *
     * 7. Cancellation races. A waiting next() is cancelled by its token through its step's own CAS;
     *    its departure hook is close(). If a delivery's c.complete loses to that cancel, the value is
     *    dropped, the emit stops the producer (STOP) and the hook's close() closes the cursor (cancel
     *    safety: a cancelled next() closes the cursor; the cancel and its hook are two steps, so an
     *    end may land between them: Ended, then CLOSED). close() racing a delivery: one of the CAS c -> IDLE and the getAndSet wins; if
     *    the delivery won, the consumer has its value and the producer, now IDLE, meets CLOSED at
     *    its park (or its cancelled token first) and ends. A producer step cancelled by the
     *    producer's own token (a timeout around emit, a cancelled whenAll sibling) leaves PARKED or
     *    Offer with a dead step: a later request's completion of it is refused; the producer, going
     *    on, either ends (-> Ended, which settles that request) or emits again (the Offer path). An
     *    Offer's value may still be taken in the instant its emit is cancelled: such an emit may or
     *    may not have handed its value over (documented on Emitter).
     *
     * 8. Resumption. Each side resumes the other by completing its step: inline through the
     *    trampoline when both run on one scheduler thread (one trampoline hop per hand-off, no
     *    thread hop, constant stack), otherwise by submission to the waiter's scheduler.
     *
     * 9. References: seed 004 (Generator::next, and "co_await a Generator::next call"); seed 000
     *    (the one-word handshake the steps use); DESIGN principles 2, 3, 5.
     */

    /** Not started: no request yet. */
    private static final Object NEW = new Named("NEW");
    /** The consumer has its value and has not asked again; the producer runs. */
    private static final Object IDLE = new Named("IDLE");
    /** The producer waits at its emit for the next request. */
    private static final Object PARKED = new Named("PARKED");
    /** Closed by the consumer: terminal. */
    private static final Object CLOSED = new Named("CLOSED");
    /** How an ended producer ends a request: a null value. */
    static final Object END = new Named("END");

    /** The producer's run ended: every request settles with {@code outcome} (END, a Throwable, or a CancellationException). */
    private static final class Ended {
        final Object outcome;

        Ended(Object outcome) {
            this.outcome = outcome;
        }

        @Override
        public String toString() {
            return "Ended[" + outcome + "]";
        }
    }

    /** The producer emitted {@code value} with no request pending and waits in {@code step}; a null value was taken. */
    private static final class Offer {
        final Object value;
        final Completer<Void> step;

        Offer(Object value, Completer<Void> step) {
            this.value = value;
            this.step = step;
        }

        @Override
        public String toString() {
            return value == null ? "Offer[taken]" : "Offer[" + value + "]";
        }
    }

    private final Generator<T> source;
    /** The producer's context, or null: the context of the first next(). */
    private final Context fixed;
    private final Task<T> next = Task.create(new Next());
    private final Task<Void> await = Task.create(new Await());
    private final Runnable closer = this::close;
    private volatile Object state = NEW;
    /** The parked producer step (part 5). */
    private Completer<Void> producer;
    /** The producer's cancellation: set once (CAS), before the CAS that starts the producer. */
    private volatile CancellationSource cancellation;

    GeneratorCursor(Generator<T> source, Context fixed) {
        super(new Run());
        this.source = source;
        this.fixed = fixed;
    }

    @Override
    public final Task<T> next() {
        return next;
    }

    /** The body of {@link #next()}: registers the request. */
    private final class Next implements Consumer<Completer<T>> {
        @Override
        public void accept(Completer<T> c) {
            request(c);
        }
    }

    /**
     * The consumer's request (part 2, next); answers the transition it made (the Lincheck test reads
     * it; the names match part 2).
     */
    final String request(Completer<T> c) {
        c.onCancel(closer); // part 7: a cancelled request closes the cursor
        CancellationSource starting = null;
        for (;;) {
            Object s = state;
            if (s == NEW) {
                Context ctx = fixed != null ? fixed : c.context();
                if (starting == null) { // one source per cursor, set before the starting CAS (part 5)
                    CancellationSource mine = CancellationSource.linkedTo(ctx.token());
                    if (CANCELLATION.compareAndSet(this, null, mine)) {
                        starting = mine;
                    } else { // a racing first next() (misuse) set it: share it, whoever starts
                        mine.close();
                        starting = cancellation;
                    }
                }
                if (STATE.compareAndSet(this, NEW, c)) {
                    startProducer(ctx.withToken(starting.token()));
                    return "start";
                }
            } else if (s == IDLE) {
                if (STATE.compareAndSet(this, IDLE, c)) {
                    return "request";
                }
            } else if (s == PARKED) {
                if (STATE.compareAndSet(this, PARKED, c)) {
                    producer.complete(null); // I3
                    return "resume";
                }
            } else if (s instanceof Offer o) {
                if (o.value == null) {
                    if (STATE.compareAndSet(this, o, c)) {
                        o.step.complete(null);
                        return "resume offer";
                    }
                } else if (STATE.compareAndSet(this, o, new Offer(null, o.step))) {
                    @SuppressWarnings("unchecked")
                    T v = (T) o.value;
                    c.complete(v);
                    return "take offer";
                }
            } else if (s instanceof Ended e) {
                settle(c, e.outcome);
                return "ended";
            } else if (s == CLOSED) {
                unlink(starting); // a close that replaced NEW found no source to cancel
                c.fail(new IllegalStateException("next: the cursor is closed"));
                return "closed";
            } else {
                c.fail(new IllegalStateException(
                        "next: the previous next() of this cursor has not completed; a cursor serves one next() at a time"));
                return "busy";
            }
        }
    }

    private static void unlink(CancellationSource unused) {
        if (unused != null) {
            unused.close(); // made for a start that lost to close (or already cancelled by it)
        }
    }

    /** Starts the producer's run in {@code ctx} (a fiber of its own). Overridden by tests. */
    void startProducer(Context ctx) {
        Task<Void> run = Task.defer(() -> Generator.start(source, this)).transform(this::ended);
        Scope.childOf(ctx).spawn(run);
    }

    /** What {@link #tryAccept} answers when no request is pending (the rare path: an Offer). */
    static final Object NO_REQUEST = new Named("NO_REQUEST");

    @Override
    @SuppressWarnings("unchecked")
    final Task<Void> accept(T value) {
        Object r = tryAccept(value);
        return r == NO_REQUEST ? Task.create(p -> {
            if (offer(value, p) == HAND) {
                park(p);
            }
        }) : (Task<Void>) r;
    }

    /**
     * The producer's emit (part 2): hands {@code value} to the waiting request and answers the wait
     * task ({@code await}); {@link Generator#STOP} when closed; {@link #NO_REQUEST} when no request is
     * pending (the caller then waits in {@link #offer}).
     */
    final Object tryAccept(T value) {
        for (;;) {
            Object s = state;
            if (s instanceof Completer<?> c) {
                if (STATE.compareAndSet(this, s, IDLE)) {
                    // lost to a cancel: the request's hook closes the cursor (part 7); stop now
                    return complete(c, value) ? await : Generator.STOP;
                }
            } else if (s == CLOSED) {
                return Generator.STOP;
            } else {
                assert s == IDLE || s == PARKED || s instanceof Offer : "an emit before the start or after the end: " + s;
                return NO_REQUEST;
            }
        }
    }

    @Override
    final Task<Void> acceptLast(T value) {
        Task<Void> t = accept(value);
        return t == await ? Generator.STOP : t; // handed over: end at once, nobody waits for a request
    }

    @SuppressWarnings("unchecked")
    private static <T> boolean complete(Completer<?> c, T value) {
        return ((Completer<T>) c).complete(value);
    }

    /** What {@link #offer} answers when a request came meanwhile and took the value: the caller parks. */
    static final String HAND = "hand";

    /**
     * The producer emits with no request pending (part 2, emit, the rare path), waiting in {@code p};
     * answers the transition. {@link #HAND}: a request came meanwhile and has the value; the caller
     * then parks {@code p} as after any hand-off.
     */
    final String offer(T value, Completer<Void> p) {
        Offer offer = new Offer(value, p);
        for (;;) {
            Object s = state;
            if (s == IDLE || s == PARKED || s instanceof Offer) { // an old PARKED or Offer holds a dead step
                if (STATE.compareAndSet(this, s, offer)) {
                    return "offer";
                }
            } else if (s instanceof Completer<?> c) {
                if (STATE.compareAndSet(this, s, IDLE)) {
                    if (complete(c, value)) {
                        return HAND;
                    }
                    p.cancel(); // the request was cancelled: its hook closes the cursor
                    return "stop";
                }
            } else {
                p.cancel(); // CLOSED (or, by misuse, ended)
                return "stop";
            }
        }
    }

    /** The emit's wait: tried on the run loop's fast path, else parks the producer's step. */
    private final class Await implements Consumer<Completer<Void>>, FastPath {
        @Override
        public Object tryNow() {
            return state instanceof Completer ? null : NOT_NOW; // asked again already: go on
        }

        @Override
        public void accept(Completer<Void> p) {
            park(p);
        }
    }

    /** The run loop's fast-path check of the emit's wait ({@link Await#tryNow}): asked again already. */
    final boolean tryNowForTest() {
        return state instanceof Completer;
    }

    /** The producer's park (part 2); answers the transition. */
    final String park(Completer<Void> p) {
        producer = p; // I1; part 5: published by the CAS to PARKED
        for (;;) {
            Object s = state;
            if (s == IDLE) {
                if (STATE.compareAndSet(this, IDLE, PARKED)) {
                    return "park";
                }
            } else if (s instanceof Completer) {
                p.complete(null);
                return "go on";
            } else {
                assert s == CLOSED : "park without a delivery: " + s;
                p.cancel();
                return "stop";
            }
        }
    }

    /** The producer's run has ended (part 2, end): settles a waiting request. */
    private Task<Void> ended(Outcome<Void> producerOutcome) {
        end(switch (run.result(producerOutcome)) {
            case Outcome.Value<Void> v -> END;
            case Outcome.Failure<Void> f -> f.error();
            case Outcome.Cancelled<Void> x -> new CancellationException("the generator's producer was cancelled");
        });
        CancellationSource c = cancellation;
        if (c != null) {
            c.close(); // unlink from the starting token: the producer is gone
        }
        return Generator.DONE;
    }

    /**
     * The end transition (part 2); {@code outcome}: END, a Throwable, or a CancellationException.
     * Answers the transition.
     */
    final String end(Object outcome) {
        Ended ended = new Ended(outcome);
        for (;;) {
            Object s = state;
            if (s instanceof Completer<?> c) {
                if (STATE.compareAndSet(this, s, ended)) {
                    settle(c, outcome);
                    return "end request";
                }
            } else if (s == IDLE || s == PARKED || s instanceof Offer) { // PARKED, Offer: a dead step
                if (STATE.compareAndSet(this, s, ended)) {
                    return "end";
                }
            } else {
                assert s == CLOSED : "an end in " + s;
                return "closed";
            }
        }
    }

    private static void settle(Completer<?> c, Object outcome) {
        if (outcome == END) {
            c.complete(null);
        } else if (outcome instanceof CancellationException) {
            c.cancel();
        } else {
            c.fail((Throwable) outcome);
        }
    }

    @Override
    public final void close() {
        Object s = STATE.getAndSet(this, CLOSED);
        if (s == NEW || s == CLOSED || s instanceof Ended) {
            return; // nothing runs
        }
        if (s instanceof Completer<?> c) {
            c.cancel(); // its hook calls close() again: a no-op now
        } else if (s == PARKED) {
            producer.cancel(); // I3
        } else if (s instanceof Offer o) {
            o.step.cancel();
        }
        CancellationSource c = cancellation;
        if (c != null) {
            c.cancel(); // ends whatever else the producer waits for
        }
    }

    /** A snapshot of the state's name, for tests and toString. */
    final String stateName() {
        return name(state);
    }

    private static String name(Object s) {
        return s instanceof Completer ? "REQUESTED" : s instanceof Ended ? "ENDED" : s instanceof Offer ? "OFFER" : s.toString();
    }

    @Override
    public String toString() {
        return "Cursor[" + stateName() + "]";
    }

    /** A named sentinel. */
    private static final class Named {
        private final String name;

        Named(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static final VarHandle STATE;
    private static final VarHandle CANCELLATION;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(GeneratorCursor.class, "state", Object.class);
            CANCELLATION = MethodHandles.lookup().findVarHandle(GeneratorCursor.class, "cancellation",
                    CancellationSource.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
