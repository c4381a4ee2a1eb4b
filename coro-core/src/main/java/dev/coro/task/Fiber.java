package dev.coro.task;

import dev.coro.internal.FastPath;
import dev.coro.internal.TokenSignals;
import dev.coro.scheduler.Scheduler;
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
 * scheduler submission or through the {@link AsyncStep} handshake, both of which publish its fields.
 */
sealed class Fiber<T> extends Completion implements Runnable permits Fiber.Slotted {
    /** Told, on the fiber's last thread, when the fiber has completed (before its waiters fire). */
    interface Listener {
        void fiberDone(Fiber<?> fiber);
    }

    private static final int VALUE = 0, ERROR = 1, CANCEL = 2;
    private static final Object RESTORE = new Object();

    private final Listener listener;
    private Context ctx;
    /** The node to evaluate next, or null when a result (kind, val) is travelling up the stack. */
    private Task<?> cur;
    private int kind;
    private Object val;
    private Object[] stack;
    private int sp;
    /** The suspension in progress, or null. */
    private AsyncStep step;
    /** The thread contexts captured at the start, installed around each run; null: none registered. */
    private final ContextPropagation.Carried carried;

    Fiber(Task<? extends T> task, Context ctx, Listener listener) {
        this.cur = task;
        this.ctx = ctx;
        this.listener = listener;
        this.carried = ContextPropagation.capture(); // on the starting thread
        if (CoroDebug.ENABLED) { // a constant: off, the JIT drops the branch
            DebugProbes.created(this);
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

    /** The suspension in progress, or null: for the task dump, read racily from its thread. */
    AsyncStep pendingStep() {
        return step;
    }

    /** Starts the fiber on its context's scheduler (submitted, never inline). */
    void dispatch() {
        Scheduler s = ctx.scheduler();
        try {
            s.execute(this);
        } catch (RejectedExecutionException e) {
            cur = new Nodes.Fail<>(e);
            run();
        }
    }

    @Override
    public void run() {
        ContextPropagation.Carried c = carried;
        if (c == null) {
            runSteps();
            return;
        }
        Object[] previous = c.install();
        try {
            runSteps();
        } finally {
            c.restore(previous); // final state only: another thread may be running this fiber by now
        }
    }

    /** Runs the fiber until it suspends or completes. */
    private void runSteps() {
        AsyncStep s = step;
        if (s != null) { // resumed after a suspension
            step = null;
            unregister(s);
            takeResult(s.result());
        }
        loop();
    }

    private void takeResult(Object encoded) {
        cur = null;
        if (encoded == CANCELLED) {
            kind = CANCEL;
            val = null;
        } else if (encoded instanceof Failed f) {
            kind = ERROR;
            val = f.error;
        } else if (encoded instanceof Cancelled) { // cancelled with a reason: val carries the box up
            kind = CANCEL;
            val = encoded;
        } else {
            kind = VALUE;
            val = decodeValue(encoded);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void loop() {
        Task<?> t = cur;
        int k = kind;
        Object v = val;
        for (;;) {
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
                    case Nodes.CALL -> {
                        try {
                            v = ((Nodes.Call<?>) t).body.call();
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
                    case Nodes.DEFER -> {
                        try {
                            t = Objects.requireNonNull(((Nodes.Defer<?>) t).supplier.get(),
                                    "defer: the supplier returned null");
                        } catch (Throwable e) {
                            v = e;
                            k = ERROR;
                            t = null;
                        }
                    }
                    case Nodes.MAP -> {
                        push(t);
                        t = ((Nodes.Map<?, ?>) t).source;
                    }
                    case Nodes.FLAT_MAP -> {
                        push(t);
                        t = ((Nodes.FlatMap<?, ?>) t).source;
                    }
                    case Nodes.FOLD -> {
                        push(t);
                        t = ((Nodes.Fold<?, ?>) t).source;
                    }
                    case Nodes.FINALLY -> {
                        push(t);
                        t = ((Nodes.Finally<?>) t).source;
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
                            sp -= 2;
                            stack[sp] = null;
                            stack[sp + 1] = null;
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
                    case Nodes.ASYNC -> {
                        Nodes.Async<Object> a = (Nodes.Async<Object>) t;
                        t = null;
                        if (a.cancelOnToken && ctx.token().isCancelled()) {
                            v = null;
                            k = CANCEL;
                            continue;
                        }
                        if (a.body instanceof FastPath fast) { // try the wait before paying for it
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
                        if (a.cancelOnToken && ctx.token().canBeCancelled()) {
                            if (!TokenSignals.of(ctx.token()).add(s)) { // the token fired meanwhile
                                v = null;
                                k = CANCEL;
                                continue;
                            }
                        } else {
                            s.markUnlisted(); // plain write: the step is not shared yet
                        }
                        if (CoroDebug.ENABLED) {
                            DebugProbes.suspending(this);
                        }
                        step = s;
                        try {
                            a.body.accept(s);
                        } catch (Throwable e) {
                            s.fail(e);
                        }
                        if (s.trySuspend()) {
                            return; // the completer resumes us; do not touch fields from here on
                        }
                        step = null;
                        unregister(s);
                        takeResult(s.result());
                        k = kind;
                        v = val;
                    }
                    default -> throw new AssertionError("unknown node " + t.tag);
                }
            } else {
                if (sp == 0) {
                    finish(k, v);
                    return;
                }
                Object frame = stack[--sp];
                stack[sp] = null;
                if (frame == RESTORE) {
                    Context saved = (Context) stack[--sp];
                    stack[sp] = null;
                    Scheduler from = ctx.scheduler();
                    ctx = saved;
                    if (saved.scheduler() != from && !saved.scheduler().isCurrent()
                            && hop(saved.scheduler(), null, k, v)) {
                        return;
                    }
                    continue;
                }
                Task<?> f = (Task<?>) frame;
                switch (f.tag) {
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
                    case Nodes.FINALLY -> {
                        try {
                            ((Nodes.Finally<?>) f).cleanup.run();
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
    }

    /**
     * Moves the rest of this run to {@code target}: saves where we are and submits the fiber. Returns
     * false (and changes nothing) if the scheduler refuses.
     */
    private boolean hop(Scheduler target, Task<?> next, int k, Object v) {
        cur = next;
        kind = k;
        val = v;
        try {
            target.execute(this);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Takes the step back from the token's list once the suspension is over. */
    private static void unregister(AsyncStep s) {
        if (s.isListed()) {
            TokenSignals.of(s.context().token()).remove(s);
        }
    }

    private void push(Object frame) {
        Object[] s = stack;
        if (s == null) {
            stack = s = new Object[4]; // small: most tasks nest a few frames, and a waiting fiber keeps it
        } else if (sp == s.length) {
            stack = s = Arrays.copyOf(s, s.length * 2);
        }
        s[sp++] = frame;
    }

    private void finish(int k, Object v) {
        cur = null;
        val = null;
        stack = null;
        if (CoroDebug.ENABLED) {
            DebugProbes.finished(this, k == ERROR, v);
        }
        setResultRelease(switch (k) {
            case VALUE -> encodeValue(v);
            case ERROR -> new Failed((Throwable) v);
            default -> v instanceof Cancelled ? v : CANCELLED; // a CANCEL carries null or its reason's box
        });
        if (listener != null) {
            try {
                listener.fiberDone(this);
            } catch (Throwable e) {
                Thread th = Thread.currentThread();
                th.getUncaughtExceptionHandler().uncaughtException(th, e);
            }
        }
        fire();
    }

    @Override
    public String toString() {
        return "Fiber[" + (isFired() ? "done" : step != null ? "suspended" : "running") + "]";
    }
}
