package dev.coro.task;

import dev.coro.cancel.CancellationToken;
import dev.coro.internal.FastPath;
import dev.coro.internal.SignalList;
import dev.coro.internal.TokenSignals;
import dev.coro.scheduler.Scheduler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;

/**
 * One run of a {@link Task}: the interpreter that walks the task's node tree with a heap-allocated
 * stack of frames, so that neither long chains nor loops of synchronously completing steps deepen
 * the Java stack. It is also the {@link Completion} cell of that run: whoever waits for it (a
 * joining thread, a scope, a parent combinator, a spawn handle) registers on it.
 *
 * <p>A fiber is run by one thread at a time: it is handed from thread to thread only through a
 * scheduler submission (of the fiber, for a start or a hop; of its {@link AsyncStep}, for a
 * resumption) or through the step's handshake, all of which publish its fields.
 *
 * <p>Cancellation: the fiber registers itself, once, on the token of its first cancellable wait (its
 * home token), and stays registered until it finishes; each later wait under that token costs one
 * volatile write and one volatile read instead of a registration and a removal on the token's list
 * (see the overview below). A wait under another token (inside a region that changed the token)
 * registers a small node of its own for that wait.
 *
 * <p>Memory: a suspended task keeps this object and its step, and nothing else of its own while its
 * stack holds at most one frame (the frame is kept in {@link #frames} itself, an array only from the
 * second; a fiber about to wait with one frame or none drops the array it made earlier). So the
 * fields are few on purpose: what a hop carries (the node to evaluate next, or the result in flight)
 * and what a wait publishes to its canceller share one word ({@link #resume}), the thread contexts
 * ride with the listener ({@link Carrying}, only when a propagator is registered), and the step in
 * progress is kept only in that word (the step resumes the fiber itself; the task dump finds it
 * through the debug registry). With compressed oops: 56 bytes (eleven 4-byte fields), and 40 for the
 * step. WaiterLayoutTest pins the fields.
 */
sealed class Fiber<T> extends Completion implements Runnable permits Fiber.Slotted {
    /* Implementation overview: the registration on the home token (the rest of the fiber is run by
     * one thread at a time and needs none; see the class comment).
     *
     * 1. Representation.
     *    home (plain, fiber only): null until the first cancellable wait, then the token the fiber
     *      registered itself on (SignalNode words: LIVE while registered, NODE_FIRED once that
     *      token fired, REMOVED after the fiber finished). Set once; cleared when the fiber finishes.
     *    resume (read racily by the canceller; written by the fiber):
     *      during a wait under home:        that wait's step s (a volatile write, W below)
     *      during a wait under another token: the TokenWait node registered for that wait
     *      during a hop:                    the node to evaluate next, or the encoded result
     *                                       (a Task-valued result boxed in a HopValue)
     *      otherwise:                       null
     *
     * 2. Transitions.
     *    first cancellable wait: list(tok).add(this) (SignalList CAS); refused: the wait ends
     *      cancelled at once, home stays null. Else home = tok.
     *    each wait under home:  W: resume = s (volatile); R: read home's fired flag (volatile);
     *      fired: resume = null and the wait ends cancelled without running its body; else the
     *      body runs and the fiber suspends (AsyncStep's handshake).
     *    the wait ends (resumed, or completed before it suspended): resume = null (plain); a
     *      TokenWait is removed from its list.
     *    home fires: onFire reads resume (volatile); if it is a step of this fiber, cancels it
     *      (AsyncStep's CAS: a step already settled ignores it).
     *    finish: list(home).remove(this).
     *
     * 3. Linearization point of "this wait is cancelled by home": the step's CAS to CANCELLED
     *    (AsyncStep part 3), by onFire or by whoever else settles it first.
     *
     * 4. Invariant. F1: a wait under home whose token fires before the wait's step settles is
     *    cancelled: either the fiber's R sees the fire, or the firer's read of resume sees s.
     *    F2: onFire never settles a step of a wait that is not under home: resume holds only
     *    this fiber's current home step, a TokenWait, hop data, or a settled step (a stale one,
     *    or a step the task returned as a value), and cancel() on a settled step does nothing.
     *
     * 5. Memory ordering. F1 is a Dekker pair: W then R on the fiber, the head getAndSet of fire
     *    then the read of resume on the firer, all four sequentially consistent. If R reads "not
     *    fired", R precedes the getAndSet, so W precedes the firer's read, which sees s or a later
     *    value (only the fiber writes resume, and it writes null only once s has settled, or once
     *    its own R has seen the fire). The
     *    other writes of resume are plain: they publish nothing to the firer (it ignores what they
     *    write), and the hop's value reaches the next run through the scheduler hand-off.
     *
     * 6. Progress: wait-free for the fiber (one add, once; then a write and a read per wait).
     *
     * 7. Races. fire during the body: the canceller's CAS and the body's completion race on the
     *    step (AsyncStep part 7). fire after the step settled: cancel() does nothing, and the
     *    fiber's next wait sees the fire at its first check. fire vs finish: SignalList's remove.
     *
     * 8. Resumption: a cancelled step resumes the fiber as any settled step does (AsyncStep part 8).
     *
     * 9. References. kotlinx.coroutines' reusable cancellable continuation (one registration per
     *    coroutine, reused across suspensions) is the same idea; DESIGN principles 2, 3 and 5.
     */

    /** Told, on the fiber's last thread, when the fiber has completed (before its waiters fire). */
    interface Listener {
        void fiberDone(Fiber<?> fiber);
    }

    private static final int VALUE = 0, ERROR = 1, CANCEL = 2;
    private static final Object RESTORE = new Object();
    /** What {@link #leafNow} answers for a node that does not end here and now. */
    private static final Object LATER = new Object();

    /**
     * The listener, or null; or, when thread contexts were captured at the start, a {@link Carrying}
     * that holds both (one field: most fibers carry no context).
     */
    private final Object listener;
    private Context ctx;
    /**
     * Saved across a hop (a start is a hop too): the node to evaluate next, or the result travelling
     * up the stack, encoded as a {@link Completion} result (raw value, NULL, Failed, CANCELLED,
     * Cancelled; a value that is itself a {@link Task} in a {@link HopValue}). Taken (cleared) by the
     * run that continues. During a wait: what the wait publishes to its canceller (overview part 1).
     */
    private Object resume;
    /** The token this fiber registered itself on, or null (overview part 1). */
    private CancellationToken home;
    /**
     * The frames: null (none), the one frame itself (when sp is 1 and this is not an array: a frame
     * is a task node, a saved Context or RESTORE, never an {@code Object[]}), or an array holding
     * sp frames (kept once made, except that a wait with at most one frame drops it).
     */
    private Object frames;
    private int sp;

    Fiber(Task<? extends T> task, Context ctx, Listener listener) {
        this.resume = task;
        this.ctx = ctx;
        ContextPropagation.Carried carried = ContextPropagation.capture(); // on the starting thread
        this.listener = carried == null ? listener : new Carrying(listener, carried);
        if (CoroDebug.ENABLED) { // a constant: off, the JIT drops the branch
            DebugProbes.created(this);
        }
    }

    /** The listener and the thread contexts captured at the start, installed around each run. */
    private static final class Carrying {
        final Listener listener;
        final ContextPropagation.Carried contexts;

        Carrying(Listener listener, ContextPropagation.Carried contexts) {
            this.listener = listener;
            this.contexts = contexts;
        }
    }

    /**
     * A fiber that knows its place in a batch ({@link Scope#spawnAll}): its listener writes the result
     * into slot {@link #slot} of the batch, so the batch needs no handle or wrapper per child.
     */
    static final class Slotted<T> extends Fiber<T> {
        /** The child's index in its batch, in spawn order. */
        final int slot;

        Slotted(Task<? extends T> task, Context ctx, Listener listener, int slot) {
            super(task, ctx, listener);
            this.slot = slot;
        }
    }

    /** Whether {@code l} is this fiber's listener. */
    final boolean hasListener(Listener l) {
        Object mine = listener;
        return mine == l || mine instanceof Carrying c && c.listener == l;
    }

    /** Starts the fiber on its context's scheduler (submitted, never inline). */
    void dispatch() {
        Scheduler s = ctx.scheduler();
        try {
            s.execute(this);
        } catch (RejectedExecutionException e) {
            resume = new Nodes.Fail<>(e);
            run();
        }
    }

    /** Runs the fiber from where a start or a hop left it, until it suspends or completes. */
    @Override
    public void run() {
        runFrom(null, null);
    }

    /**
     * Runs the fiber on from the suspension {@code s}, which has settled with {@code encoded} and
     * whose resumption runs this (on the fiber's scheduler, Resume.dispatch), until it suspends
     * again or completes.
     */
    void resume(AsyncStep s, Object encoded) {
        runFrom(s, encoded);
    }

    private void runFrom(AsyncStep s, Object encoded) {
        if (!(listener instanceof Carrying c)) {
            runSteps(s, encoded);
            return;
        }
        Object[] previous = c.contexts.install();
        try {
            runSteps(s, encoded);
        } finally {
            c.contexts.restore(previous); // final state only: another thread may be running this fiber by now
        }
    }

    /**
     * Runs the fiber until it suspends or completes: from the step {@code s} with its result
     * {@code encoded}, or (s null) from a hop.
     */
    private void runSteps(AsyncStep s, Object encoded) {
        if (s != null) { // resumed after a suspension
            endWait(s);
        } else {
            Object r = resume;
            resume = null;
            if (r instanceof Task<?> t) {
                loop(t, VALUE, null);
                return;
            }
            if (r instanceof HopValue h) {
                loop(null, VALUE, h.value);
                return;
            }
            encoded = r;
        }
        int k = kindOf(encoded);
        loop(null, k, payloadOf(encoded, k));
    }

    /** The channel of an encoded result. */
    private static int kindOf(Object encoded) {
        return encoded instanceof Failed ? ERROR : isCancelled(encoded) ? CANCEL : VALUE;
    }

    /**
     * What travels up the stack for an encoded result on channel {@code k}: the value, the error, or
     * for the cancelled channel null or the box that carries a reason.
     */
    private static Object payloadOf(Object encoded, int k) {
        return switch (k) {
            case VALUE -> decodeValue(encoded);
            case ERROR -> ((Failed) encoded).error;
            default -> encoded == CANCELLED ? null : encoded; // a Cancelled box carries its reason up
        };
    }

    /** The encoded result of channel {@code k} with {@code v}: the inverse of kindOf and payloadOf. */
    private static Object encode(int k, Object v) {
        return switch (k) {
            case VALUE -> encodeValue(v);
            case ERROR -> new Failed((Throwable) v);
            default -> v instanceof Cancelled ? v : CANCELLED; // a CANCEL carries null or its reason's box
        };
    }

    /**
     * The run loop. Evaluates t (a node) or, when t is null, hands the result (k, v) to the top
     * frame, until the fiber suspends, hops or finishes.
     *
     * <p>Fusion: a composite node ({@link Nodes.Step}: map, flatMap, then, fold, finally, guarded) whose
     * source ends at once (a value, a call, an action, a wait whose fast path answers, after
     * building a deferred source) takes source's outcome right there, as the frame it would have
     * been, without being pushed and popped. Only the order of evaluation of such a source against
     * the push differs, and nothing observes a push. Where the run checks its token does not change:
     * a fused wait checks it as the wait itself does. A map so fused applies its function right there.
     *
     * <p>Loops: a loop's frame ({@link Nodes.Loop}, {@link Nodes.Repeating}, {@link Nodes.Counting})
     * is read where it lies ({@link #peek}) and stays on the stack while the loop goes on, so an
     * iteration moves no frame; the frame drops itself when the loop ends (the condition fails, an
     * error or a cancellation reaches it, the last run of a repeat starts, or a range runs out).
     * Every other frame is dropped as it is read. A loop's, a repeat's or a range's frame runs on to
     * its next iteration itself while iterations end here and now (a value, a call, an action, a
     * built deferred task, a wait whose fast path answers; for a loop also a map over one of these):
     * the fusion above, applied by the frame that takes the iteration's outcome. An iteration that
     * does not end at once leaves for the run loop as it would have (a map pushes its frame first),
     * and so does a repeat's last run, which has no frame.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private void loop(Task<?> t, int k, Object v) {
        Task<?> tried = null; // the node the fusion tried last and found not ending at once (a wait reads it)
        for (;;) {
            Task<?> f = null; // the frame that takes (k, v) now
            if (t != null) {
                switch (t.tag) {
                    case Nodes.PURE -> {
                        v = ((Nodes.Pure<?>) t).value;
                        k = VALUE;
                        t = null;
                    }
                    case Nodes.FAIL -> {
                        v = ((Nodes.Fail<?>) t).error;
                        k = ERROR;
                        if (CoroDebug.ENABLED) {
                            DebugProbes.passed(v, t);
                        }
                        t = null;
                    }
                    case Nodes.CANCELLED -> {
                        v = ((Nodes.Cancelled<?>) t).box; // null, or the reason's box
                        k = CANCEL;
                        t = null;
                    }
                    case Nodes.CALL, Nodes.RUN -> {
                        try {
                            v = leafNow(t);
                            k = VALUE;
                        } catch (Throwable e) {
                            v = e;
                            k = ERROR;
                            if (CoroDebug.ENABLED) {
                                DebugProbes.passed(e, t);
                            }
                        }
                        t = null;
                    }
                    case Nodes.DEFER, Nodes.APPLY -> {
                        try {
                            t = built(t);
                        } catch (Throwable e) {
                            v = e;
                            k = ERROR;
                            t = null;
                        }
                    }
                    case Nodes.MAP, Nodes.FLAT_MAP, Nodes.THEN, Nodes.FOLD, Nodes.FINALLY, Nodes.GUARDED -> {
                        Task<?> source = ((Nodes.Step<?, ?>) t).source;
                        Object now;
                        try {
                            source = builtAll(source);
                            now = leafNow(source);
                        } catch (Throwable e) { // the source failed at once: the node takes the error
                            raisedBy(e, source);
                            f = t;
                            v = e;
                            k = ERROR;
                            t = null;
                            break;
                        }
                        if (now == LATER) { // the source may wait, or is a composite: a frame
                            push(t);
                            tried = t = source;
                        } else if (t.tag == Nodes.MAP) { // fused: apply the function here
                            Nodes.Map m = (Nodes.Map) t;
                            t = null;
                            try {
                                v = m.fn.apply(now);
                                k = VALUE;
                            } catch (Throwable e) {
                                v = e;
                                k = ERROR;
                                if (CoroDebug.ENABLED) { // the error leaves the map, as from its frame
                                    DebugProbes.passed(e, m);
                                }
                            }
                        } else { // fused: the node takes the value as its frame would
                            f = t;
                            v = now;
                            k = VALUE;
                            t = null;
                        }
                    }
                    case Nodes.LOOP -> { // the frame takes the initial state as an iteration's result
                        push(t);
                        v = ((Nodes.Loop<?>) t).initial;
                        k = VALUE;
                        t = null;
                    }
                    case Nodes.FOR_RANGE -> { // the frame takes a null as the end of iteration "start - 1"
                        Nodes.ForRange r = (Nodes.ForRange) t;
                        if (r.start < r.end) {
                            Nodes.Counting c = new Nodes.Counting(r.body, r.start, r.end); // the run's index: one per run
                            if (CoroDebug.ENABLED) {
                                DebugProbes.madeFor(c, r);
                            }
                            push(c);
                        }
                        v = null;
                        k = VALUE;
                        t = null;
                    }
                    case Nodes.REPEAT -> {
                        Nodes.Repeat<?> r = (Nodes.Repeat<?>) t;
                        Nodes.Repeating c = new Nodes.Repeating(r.source, r.times - 1); // the run's counter: one per run
                        if (CoroDebug.ENABLED) {
                            DebugProbes.madeFor(c, r);
                        }
                        push(c);
                        t = r.source;
                    }
                    case Nodes.CONTEXT -> {
                        v = ctx;
                        k = VALUE;
                        t = null;
                    }
                    case Nodes.WITH_CONTEXT -> {
                        Nodes.WithContext<?> w = (Nodes.WithContext<?>) t;
                        Context saved = ctx;
                        Context next;
                        try {
                            next = Objects.requireNonNull(w.change.apply(saved), "context change returned null");
                        } catch (Throwable e) {
                            v = e;
                            k = ERROR;
                            t = null;
                            continue;
                        }
                        push(saved);
                        push(RESTORE);
                        ctx = next;
                        t = w.source;
                        if (next.scheduler() != saved.scheduler() && !next.scheduler().isCurrent()) {
                            if (hop(next.scheduler(), t, k, v)) {
                                return;
                            }
                            ctx = saved; // refused: unwind the region with the refusal as its error
                            pop(); // RESTORE
                            pop(); // saved
                            v = new RejectedExecutionException("startOn: " + next.scheduler() + " refused the task");
                            k = ERROR;
                            t = null;
                        }
                    }
                    case Nodes.YIELD -> {
                        if (ctx.token().isCancelled()) {
                            v = null;
                            k = CANCEL;
                            t = null;
                        } else if (hop(ctx.scheduler(), null, VALUE, null)) {
                            return;
                        } else {
                            v = null; // the scheduler refused: carry on here
                            k = VALUE;
                            t = null;
                        }
                    }
                    case Nodes.SHIFT -> {
                        Scheduler target = ((Nodes.Shift) t).target;
                        Scheduler from = ctx.scheduler();
                        ctx = ctx.withScheduler(target);
                        v = null;
                        k = VALUE;
                        t = null;
                        if (target != from && !target.isCurrent() && hop(target, null, VALUE, null)) {
                            return;
                        }
                    }
                    case Nodes.SPAWNED -> { // a spawn handle: the plain wait on its child's fiber, or its result
                        Object c = ((Nodes.Spawned<?>) t).cellAcquire();
                        if (c instanceof Completion cell) {
                            t = cell.awaitTask(); // the child runs (or has just ended): wait on its fiber
                        } else if (ctx.token().isCancelled()) { // as the plain wait decides first
                            v = null;
                            k = CANCEL;
                            t = null;
                        } else {
                            k = kindOf(c);
                            v = payloadOf(c, k);
                            t = null;
                        }
                    }
                    case Nodes.ASYNC -> {
                        Nodes.Async<Object> a = (Nodes.Async<Object>) t;
                        t = null;
                        boolean fastTried = a == tried; // by the fusion, a moment ago: not ready
                        tried = null;
                        if (a.cancelOnToken && ctx.token().isCancelled()) {
                            v = null;
                            k = CANCEL;
                            continue;
                        }
                        FastPath fast = a.fast;
                        if (fast != null && !fastTried) { // try the wait before paying for it
                            Object now;
                            try {
                                now = fast.tryNow();
                            } catch (Throwable e) {
                                v = e;
                                k = ERROR;
                                continue;
                            }
                            if (now != FastPath.NOT_NOW) {
                                v = now;
                                k = VALUE;
                                continue;
                            }
                        }
                        AsyncStep s = new AsyncStep(this, ctx);
                        if (a.cancelOnToken && ctx.token().canBeCancelled() && !watch(ctx.token(), s)) {
                            v = null; // the token fired meanwhile
                            k = CANCEL;
                            continue;
                        }
                        if (CoroDebug.ENABLED) {
                            DebugProbes.suspending(this, s);
                        }
                        try {
                            a.body.accept(s);
                        } catch (Throwable e) {
                            s.fail(e);
                        }
                        if (sp <= 1 && frames instanceof Object[] fs && s.result() == null) {
                            frames = sp == 0 ? null : fs[0]; // about to wait: keep no array for one frame
                        } // (still ours: only the fiber continues a step completed before trySuspend, I2)
                        if (s.trySuspend()) {
                            return; // the completer resumes us (through s.run()); do not touch fields from here on
                        }
                        endWait(s);
                        Object r = s.result();
                        k = kindOf(r);
                        v = payloadOf(r, k);
                    }
                    default -> throw new AssertionError("unknown node " + t.tag);
                }
                if (f == null) {
                    continue;
                }
            } else {
                if (sp == 0) {
                    finish(k, v);
                    return;
                }
                Object frame = peek();
                if (frame == RESTORE) {
                    drop();
                    Context saved = (Context) pop();
                    Scheduler from = ctx.scheduler();
                    ctx = saved;
                    if (saved.scheduler() != from && !saved.scheduler().isCurrent()
                            && hop(saved.scheduler(), null, k, v)) {
                        return;
                    }
                    continue;
                }
                f = (Task<?>) frame;
                if (f.tag != Nodes.LOOP && f.tag != Nodes.REPEATING && f.tag != Nodes.COUNTING) {
                    drop(); // a loop's frame stays on the stack while the loop goes on
                }
            }
            switch (f.tag) { // the frame f takes (k, v): sets t to run next, or passes (k, v) on
                case Nodes.MAP -> {
                    if (k == VALUE) {
                        try {
                            v = ((Nodes.Map) f).fn.apply(v);
                        } catch (Throwable e) {
                            v = e;
                            k = ERROR;
                        }
                    }
                }
                case Nodes.FLAT_MAP -> {
                    if (k == VALUE) {
                        try {
                            t = Objects.requireNonNull((Task<?>) ((Nodes.FlatMap) f).fn.apply(v),
                                    "flatMap: the function returned null");
                        } catch (Throwable e) {
                            v = e;
                            k = ERROR;
                        }
                    }
                }
                case Nodes.THEN -> {
                    if (k == VALUE) {
                        t = ((Nodes.Then<?, ?>) f).next;
                    }
                }
                case Nodes.LOOP -> { // v: the state after an iteration (or the initial one); f is still on top
                    boolean more = false;
                    if (k == VALUE) {
                        Nodes.Loop l = (Nodes.Loop) f;
                        Task<?> b = null; // the iteration's leaf being evaluated here, if any
                        Nodes.Map m = null; // the map over it, if any
                        try { // iterations that end here and now (a leaf, or a map over one) run in this loop
                            while (l.condition.test(v)) {
                                b = Objects.requireNonNull((Task<?>) l.body.apply(v), "loop: the body returned null");
                                if (b.tag == Nodes.MAP) {
                                    m = (Nodes.Map) b;
                                    b = m.source;
                                }
                                b = builtAll(b);
                                Object now = leafNow(b);
                                if (now == LATER) { // it may wait, or is a composite: evaluated as usual
                                    if (m != null) {
                                        push(m); // the frame the map would have pushed over its source
                                    }
                                    tried = t = b;
                                    more = true; // the same frame for the next iteration: constant stack
                                    break;
                                }
                                b = null;
                                v = m == null ? now : m.fn.apply(now);
                                m = null;
                            }
                        } catch (Throwable e) { // the iteration failed at once: the loop ends with its error
                            raisedBy(e, b); // where it passed, as evaluating it in the run loop records
                            if (CoroDebug.ENABLED && m != null) {
                                DebugProbes.passed(e, m);
                            }
                            v = e;
                            k = ERROR;
                            t = null;
                        }
                    }
                    if (!more) {
                        drop();
                    }
                }
                case Nodes.COUNTING -> { // f is still on top
                    Nodes.Counting c = (Nodes.Counting) f;
                    if (k == VALUE) {
                        v = null; // an iteration's value is dropped; the range's is null
                        Task<?> b = null;
                        try { // iterations that end here and now run in this loop, with no trip through the run loop
                            while (c.next < c.end) {
                                b = Objects.requireNonNull((Task<?>) c.body.apply(c.next++),
                                        "forRange: the body returned null");
                                b = builtAll(b);
                                if (leafNow(b) == LATER) { // it may wait, or is a composite: evaluated as usual
                                    tried = t = b;
                                    break;
                                }
                                b = null;
                            }
                        } catch (Throwable e) { // the iteration failed at once: the range ends with its error
                            raisedBy(e, b);
                            v = e;
                            k = ERROR;
                        }
                    }
                    if (t == null) { // done, or ended early: no frame from here on
                        drop();
                    }
                }
                case Nodes.REPEATING -> { // f is still on top
                    Nodes.Repeating r = (Nodes.Repeating) f;
                    if (k != VALUE) {
                        drop(); // ended early
                        break;
                    }
                    Task<?> b = null;
                    try { // runs that end here and now, all but the last, run in this loop
                        while (--r.left > 0) {
                            b = builtAll(r.source);
                            if (leafNow(b) == LATER) { // it may wait, or is a composite: evaluated as usual
                                tried = t = b;
                                break;
                            }
                            b = null;
                        }
                        if (t == null) { // the run starting now is the last: no frame for it
                            drop();
                            t = r.source;
                        }
                    } catch (Throwable e) { // a run failed at once: the repeat ends with its error
                        raisedBy(e, b);
                        drop();
                        v = e;
                        k = ERROR;
                    }
                }
                case Nodes.FOLD -> {
                    Nodes.Fold<?, ?> fold = (Nodes.Fold<?, ?>) f;
                    try {
                        if (k == VALUE && fold.onValue != null) {
                            t = Objects.requireNonNull(fold.onValue.apply(v), "the value handler returned null");
                        } else if (k == ERROR && fold.onError != null) {
                            t = Objects.requireNonNull(fold.onError.apply((Throwable) v),
                                    "the error handler returned null");
                        } else if (k == CANCEL && fold.onCancel != null) {
                            t = Objects.requireNonNull(fold.onCancel.get(), "the cancel handler returned null");
                        }
                    } catch (Throwable e) {
                        v = e;
                        k = ERROR;
                        t = null;
                    }
                }
                case Nodes.FINALLY, Nodes.GUARDED -> {
                    Runnable cleanup;
                    if (f.tag == Nodes.GUARDED) { // (k, v): the entry's outcome
                        if (k != VALUE) {
                            break; // not entered: nothing to exit
                        }
                        Nodes.Guarded<?> g = (Nodes.Guarded<?>) f;
                        if (g.exit.entered != null && !g.exit.entered.test(v)) {
                            t = g; // not entered after all (a woken waiter lost): ask again from the entry
                            break;
                        }
                        Task<?> b = null;
                        try { // a body that ends here and now runs with no frame (the fusion), else the exit's frame
                            b = builtAll(g.body);
                            Object now = leafNow(b);
                            if (now == LATER) { // nothing runs between entering and the push: no check of the token
                                push(g.exit);
                                tried = t = b;
                                break;
                            }
                            v = now;
                        } catch (Throwable e) {
                            raisedBy(e, b);
                            v = e;
                            k = ERROR;
                        }
                        cleanup = g.exit.cleanup;
                    } else {
                        cleanup = ((Nodes.Finally<?>) f).cleanup;
                    }
                    try {
                        cleanup.run();
                    } catch (Throwable e) {
                        if (k == ERROR) {
                            if (e != v) {
                                ((Throwable) v).addSuppressed(e);
                            }
                        } else {
                            v = e;
                            k = ERROR;
                        }
                    }
                }
                default -> throw new AssertionError("unknown frame " + f.tag);
            }
            if (CoroDebug.ENABLED && k == ERROR && t == null) { // the error leaves this frame
                DebugProbes.passed(v, f);
            }
        }
    }

    /**
     * The outcome of a leaf that ends here and now, with no frame, hop or wait: a PURE's value, a
     * CALL's result, a RUN's null, an ASYNC's value when its token is not cancelled and its fast path
     * answers; {@link #LATER} for any other node (and an ASYNC that must wait, or whose token is
     * cancelled: its own evaluation says so). What the leaf throws is thrown.
     */
    private Object leafNow(Task<?> s) throws Exception {
        switch (s.tag) {
            case Nodes.PURE -> {
                return ((Nodes.Pure<?>) s).value;
            }
            case Nodes.CALL -> {
                return ((Nodes.Call<?>) s).body.call();
            }
            case Nodes.RUN -> {
                ((Nodes.Run) s).body.run();
                return null;
            }
            case Nodes.SPAWNED -> { // an ended child's value; anything else as the full evaluation does
                Object c = ((Nodes.Spawned<?>) s).cellAcquire();
                return c instanceof Completion || kindOf(c) != VALUE || ctx.token().isCancelled() ? LATER
                        : decodeValue(c);
            }
            case Nodes.ASYNC -> {
                Nodes.Async<?> a = (Nodes.Async<?>) s;
                FastPath fast = a.fast;
                if (fast == null || a.cancelOnToken && ctx.token().isCancelled()) {
                    return LATER;
                }
                Object now = fast.tryNow();
                return now == FastPath.NOT_NOW ? LATER : now;
            }
            default -> {
                return LATER;
            }
        }
    }

    /**
     * In debug mode, records that {@code e} was raised by {@code leaf} if it is a call or an action
     * (null: none), as evaluating that leaf in the run loop records it.
     */
    private static void raisedBy(Throwable e, Task<?> leaf) {
        if (CoroDebug.ENABLED && leaf != null && (leaf.tag == Nodes.CALL || leaf.tag == Nodes.RUN)) {
            DebugProbes.passed(e, leaf);
        }
    }

    /** {@code t} with every deferred layer built: what evaluating it would do first. */
    private static Task<?> builtAll(Task<?> t) {
        while (t.tag == Nodes.DEFER || t.tag == Nodes.APPLY) {
            t = built(t);
        }
        return t;
    }

    /** The task a DEFER or APPLY node builds (what evaluating it does first); null is refused. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Task<?> built(Task<?> t) {
        if (t.tag == Nodes.DEFER) {
            return Objects.requireNonNull(((Nodes.Defer<?>) t).supplier.get(), "defer: the supplier returned null");
        }
        Nodes.Apply a = (Nodes.Apply) t;
        return Objects.requireNonNull((Task<?>) a.fn.apply(a.argument), "defer: the function returned null");
    }

    /**
     * Moves the rest of this run to {@code target}: saves where we are and submits the fiber. Returns
     * false (and changes nothing) if the scheduler refuses.
     */
    private boolean hop(Scheduler target, Task<?> next, int k, Object v) {
        if (next != null) {
            resume = next;
        } else { // allocates only for an error (a Failed box) or a Task as a value: rare on a hop
            Object encoded = encode(k, v);
            resume = encoded instanceof Task<?> ? new HopValue(encoded) : encoded;
        }
        try {
            target.execute(this);
            return true;
        } catch (RejectedExecutionException e) {
            resume = null;
            return false;
        }
    }

    /** A result that is itself a {@link Task}, carried across a hop (so it is not taken for the next node). */
    private static final class HopValue {
        final Object value;

        HopValue(Object value) {
            this.value = value;
        }
    }

    /**
     * Makes the wait {@code s} cancellable by {@code token} (which can be cancelled): under the home
     * token, the Dekker half W-then-R (overview part 2); the first time, the fiber's registration on
     * {@code token}; under another token, a {@link TokenWait} for this wait. Returns false, having
     * linked nothing, when the token has fired: the wait ends cancelled without running its body.
     */
    private boolean watch(CancellationToken token, AsyncStep s) {
        if (token != home) {
            if (home != null) { // a region under another token: a node for this wait alone
                TokenWait w = new TokenWait(s);
                if (!TokenSignals.of(token).add(w)) {
                    return false;
                }
                resume = w; // plain: the home token's onFire ignores it, endWait takes it back
                return true;
            }
            if (!TokenSignals.of(token).add(this)) {
                return false;
            }
            home = token;
        }
        RESUME.setVolatile(this, s); // W
        if (token.isCancelled()) { // R: the fired flag of the list the firer exchanges
            resume = null;
            return false;
        }
        return true;
    }

    /** The wait {@code s} is over (resumed, or completed before the fiber suspended). */
    private void endWait(AsyncStep s) {
        Object w = resume;
        if (w != null) {
            resume = null; // plain: a canceller that still reads s finds it settled (F2)
            if (w instanceof TokenWait tw) {
                TokenSignals.of(s.context().token()).remove(tw);
            }
        }
    }

    /** The home token fired: cancels the wait in progress under it, if any (overview part 2). */
    @Override
    protected void onFire() {
        if (RESUME.getVolatile(this) instanceof AsyncStep s && s.belongsTo(this)) {
            s.cancel(); // does nothing if s has settled (F2)
        }
    }

    /** The registration of one wait under a token other than the fiber's home token. */
    private static final class TokenWait extends SignalList.Node {
        private final AsyncStep step;

        TokenWait(AsyncStep step) {
            this.step = step;
        }

        @Override
        protected void onFire() {
            step.cancel();
        }
    }

    private void push(Object frame) {
        assert !(frame instanceof Object[]) : "a frame is never an array (see frames)";
        Object fs = frames;
        if (fs instanceof Object[] a) {
            if (sp == a.length) {
                frames = a = Arrays.copyOf(a, a.length * 2);
            }
            a[sp++] = frame;
        } else if (sp == 0) {
            frames = frame; // one frame: no array (most waiting tasks are one frame deep)
            sp = 1;
        } else { // the second frame: both move to an array, kept from now on
            Object[] a = new Object[4];
            a[0] = fs;
            a[1] = frame;
            frames = a;
            sp = 2;
        }
    }

    /** The top frame, left in place; there is one (sp > 0). */
    private Object peek() {
        Object fs = frames;
        return fs instanceof Object[] a ? a[sp - 1] : fs;
    }

    /** Removes the top frame; there is one (sp > 0). */
    private void drop() {
        Object fs = frames;
        if (fs instanceof Object[] a) {
            a[--sp] = null;
        } else {
            frames = null;
            sp = 0;
        }
    }

    /** Pops the top frame; there is one (sp > 0). */
    private Object pop() {
        Object fs = frames;
        if (fs instanceof Object[] a) {
            Object frame = a[--sp];
            a[sp] = null;
            return frame;
        }
        frames = null;
        sp = 0;
        return fs;
    }

    private void finish(int k, Object v) {
        frames = null;
        CancellationToken h = home;
        if (h != null) {
            home = null;
            TokenSignals.of(h).remove(this);
        }
        if (CoroDebug.ENABLED) {
            DebugProbes.finished(this, k == ERROR, v);
        }
        setResultRelease(encode(k, v));
        Object l = listener;
        Listener done = l instanceof Carrying c ? c.listener : (Listener) l;
        if (done != null) {
            try {
                done.fiberDone(this);
            } catch (Throwable e) {
                Thread th = Thread.currentThread();
                th.getUncaughtExceptionHandler().uncaughtException(th, e);
            }
        }
        fire();
    }

    @Override
    public String toString() {
        return "Fiber[" + (isFired() ? "done" : "pending") + "]";
    }

    private static final VarHandle RESUME;

    static {
        try {
            RESUME = MethodHandles.lookup().findVarHandle(Fiber.class, "resume", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
