package dev.coro.task;

import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitSubject;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * One suspension of a {@link Fiber}: the completer handed to an asynchronous body, and the handshake
 * between that body's completion and the fiber deciding to suspend. The same object is the waiter's
 * node in a primitive's queue (it is a {@link WaitNode}) and the continuation its resumption hands to
 * the fiber's scheduler (a {@link Runnable} that runs the fiber on from this step); the cancellation
 * token reaches it through the fiber, which is registered on the token once (Fiber's overview). One
 * allocation per suspension: 40 bytes with compressed oops and class pointers (a 12-byte header and
 * seven 4-byte fields, four of WaitNode, three here). A suspended task keeps this step and its
 * fiber, nothing else of its own (see Fiber); WaiterLayoutTest pins the field counts.
 */
final class AsyncStep extends WaitNode implements Completer<Object>, Runnable {
    /* Implementation overview.
     *
     * 1. Representation. result (volatile Object):
     *      null        pending; the fiber has not yet decided to suspend (it is inside the body)
     *      SUSPENDED   pending; the fiber has suspended and waits to be resumed
     *      r           completed with the encoded result r (see Completion: raw value, NULL,
     *                  Failed, CANCELLED, Cancelled); terminal
     *    The departure hook (WaitNode's): the onCancel action or the queue the step is in; run once
     *      when the step settles cancelled (cancel, abandon) or rejected.
     *
     * 2. Transitions.
     *    null      -> SUSPENDED  fiber, after the body returns without a result        CAS
     *    null      -> r          completer, while the fiber is still in the body       CAS
     *                            (the fiber sees r after the body and continues inline)
     *    SUSPENDED -> r          completer, after suspension: it resumes the fiber     CAS
     *
     * 3. Linearization point of complete/fail/cancel: the successful CAS of result. Exactly one
     *    completer wins; the others return false (first call wins).
     *
     * 4. Invariants. I1: the fiber is resumed at most once per step, by the completer whose CAS
     *    replaced SUSPENDED. I2: a step whose CAS replaced null is continued by the fiber itself.
     *
     * 5. Memory ordering. Both CASes are volatile: the fiber's CAS (release) publishes its frame
     *    state to the completer, which then hands this step (and so the fiber) to a scheduler; the
     *    completer's CAS (release) publishes the result, read by the fiber after its failed CAS
     *    (acquire) or, through the step, after the scheduler hand-off.
     *
     * 6. Progress: lock-free; each side does one CAS (a completer retries only after the fiber's
     *    null -> SUSPENDED CAS, at most once).
     *
     * 7. Cancellation races. The token's firing is one more completer (through the fiber's
     *    registration, or a wait's own node under a second token; Fiber's overview): it races the
     *    body's completion through the same CAS, so "cancelled" and "completed" have exactly one winner.
     *    The departure hook runs only when a cancelled (or rejected) completion won, exactly once
     *    (WaitNode: an action set after that runs at once). A queue's hook unlinks the node and
     *    gives back what it had reserved (WaitQueue part 7).
     *
     * 8. Resumption: Resume.dispatch hands this step (a Runnable: run() is fiber.resume(this)) to
     *    the fiber's scheduler, inline through the trampoline when the completing thread already
     *    runs it. The step is the resumed fiber's only way to its result, so the fiber keeps no
     *    field for the suspension in progress.
     *
     * 9. References: seed 000 (the same one-word handshake, with SUSPENDED as "the waiting
     *    continuation"); DESIGN principles 2, 3, 5.
     */

    private static final Object SUSPENDED = new Object();

    private final Fiber<?> fiber;
    private final Context context;
    private volatile Object result;

    AsyncStep(Fiber<?> fiber, Context context) {
        this.fiber = fiber;
        this.context = context;
    }

    /** The step behind a completer handed to an internal async body. */
    static AsyncStep of(Completer<?> completer) {
        return (AsyncStep) completer;
    }

    /** Fiber side: returns true if it must suspend, false if the result is already there. */
    boolean trySuspend() {
        return result == null && RESULT.compareAndSet(this, null, SUSPENDED);
    }

    /** Fiber side, after trySuspend failed or after resumption: the encoded result. */
    Object result() {
        return result;
    }

    boolean settleEncoded(Object encoded) {
        return settle(encoded, Completion.isCancelled(encoded));
    }

    private boolean settle(Object encoded, boolean departs) {
        return settle(encoded, departs, false);
    }

    /**
     * Settles the step with {@code encoded}; {@code departs}: then runs the departure hook;
     * {@code queued}: a suspended fiber resumes through its scheduler's queue, never inline here.
     */
    private boolean settle(Object encoded, boolean departs, boolean queued) {
        for (;;) {
            Object cur = result;
            if (cur != null && cur != SUSPENDED) {
                return false;
            }
            if (RESULT.compareAndSet(this, cur, encoded)) {
                if (departs) {
                    departed(); // before the resumption: the queue is told before the task runs on
                }
                if (cur == SUSPENDED) {
                    if (queued) { // run() resumes the fiber from here
                        Resume.dispatchQueued(this, context.scheduler());
                    } else {
                        Resume.dispatch(this, context.scheduler());
                    }
                }
                return true;
            }
        }
    }

    @Override
    public boolean complete(Object value) {
        return settleEncoded(Completion.encodeValue(value));
    }

    @Override
    public boolean fail(Throwable error) {
        Objects.requireNonNull(error, "error");
        return settleEncoded(new Completion.Failed(error));
    }

    @Override
    public boolean cancel() {
        return settleEncoded(Completion.CANCELLED);
    }

    /**
     * The resumption (I1: once, after the CAS that replaced SUSPENDED): runs the fiber on from here.
     * Only Resume.dispatch calls it; the check refuses a stray call while the step is pending (the
     * step is a completer too, handed to user code).
     */
    @Override
    public void run() {
        Object r = result;
        if (r == null || r == SUSPENDED) {
            throw new IllegalStateException("a suspension resumes only once it has completed");
        }
        fiber.resume(this, r);
    }

    /** The fiber this step suspends. */
    Fiber<?> fiber() {
        return fiber;
    }

    /** Whether this is a suspension of {@code f} (the fiber's canceller checks what it reads). */
    boolean belongsTo(Fiber<?> f) {
        return fiber == f;
    }

    @Override
    public boolean admit(Object value) {
        return complete(value);
    }

    @Override
    public boolean admitQueued(Object value) {
        return settle(Completion.encodeValue(value), false, true);
    }

    @Override
    public boolean abandon() {
        return cancel();
    }

    @Override
    public boolean abandon(Object reason) {
        return reason == null ? cancel() : settle(new Completion.Cancelled(reason), true);
    }

    @Override
    public boolean reject(Throwable error) {
        Objects.requireNonNull(error, "error");
        return settle(new Completion.Failed(error), true);
    }

    @Override
    public boolean isSettled() {
        Object r = result;
        return r != null && r != SUSPENDED;
    }

    @Override
    public boolean isCancelRequested() {
        return context.token().isCancelled();
    }

    @Override
    public void onCancel(Runnable action) {
        setHook(Objects.requireNonNull(action, "action"));
    }

    @Override
    public Context context() {
        return context;
    }

    /**
     * What this step waits on, for the task dump only (debug mode): read from the dumping thread,
     * racily, from the departure hook the wait set (its queue, a channel core, an I/O operation, a
     * join's registration, a timer's cancellation), so that a wait pays nothing to be describable.
     */
    CoroDebug.WaitingOn describe() {
        Object h = hookForDump();
        if (h instanceof WaitSubject subject) {
            CoroDebug.WaitKind kind;
            try {
                kind = CoroDebug.WaitKind.valueOf(subject.waitKind(this));
            } catch (IllegalArgumentException e) {
                kind = CoroDebug.WaitKind.OTHER;
            }
            return new CoroDebug.WaitingOn(kind, subject.waitDescription(this), null);
        }
        if (h instanceof DebugProbes.TimerWait timer) {
            return new CoroDebug.WaitingOn(CoroDebug.WaitKind.TIMER, "Task.delay on " + timer.scheduler,
                    timer.remaining());
        }
        if (h instanceof Completion.AwaitNode join) {
            DebugProbes.FiberInfo target = DebugProbes.info(join.source);
            return new CoroDebug.WaitingOn(CoroDebug.WaitKind.JOIN, target != null ? "task #" + target.id
                    : join.source instanceof Fiber<?> ? "a task" : "a promise", null);
        }
        return new CoroDebug.WaitingOn(CoroDebug.WaitKind.OTHER, h == null ? "a callback (no cancellation action)"
                : "a callback (cancelled by " + h.getClass().getName() + ")", null);
    }

    private static final VarHandle RESULT;

    static {
        try {
            RESULT = MethodHandles.lookup().findVarHandle(AsyncStep.class, "result", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
