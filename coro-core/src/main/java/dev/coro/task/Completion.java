package dev.coro.task;

import dev.coro.internal.SignalList;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * A result cell that completes once, with any number of waiters: the seed-000 handshake between the
 * completer and the waiters, generalized from one waiter to many. A {@link Fiber} is one (its own
 * run's result); a {@link Promise} holds one.
 *
 * <p>The cell is also the body of the plain wait on itself ({@link #awaitTask()}): a handle is then one
 * {@code Nodes.Async} over the cell, with no wait object between them (a spawn handle of a scope that
 * is not a supervisor is a {@code Nodes.Spawned} instead, which also lets go of the fiber once it
 * is read ended; a spawn handle is kept per child, so every object in it counts).
 */
class Completion extends SignalList implements Consumer<Completer<Object>> {
    /* Implementation overview.
     *
     * 1. Representation. Two words:
     *      result   null (pending) or the encoded result: a raw value, NULL, a Failed box,
     *               CANCELLED, or a Cancelled box (the cancelled channel with a reason, such as a
     *               closed gate's refusal; rare, so CANCELLED stays an identity compare on the
     *               common paths); sentinels and boxes are private types, so no user value collides;
     *      the SignalList head (inherited): empty / waiter nodes / FIRED.
     *
     * 2. Transitions.
     *      completeWith (racing completers, Promise):  result null -> r   CAS;  then fire()
     *      setResultRelease + fire (the fiber, sole completer):  result null -> r  release store
     *      awaitTask: read result (acquire); if set, answer at once; else add a node (CAS); if
     *        the add is refused (FIRED), read result and answer at once; else wait for onFire.
     *        awaitOutcomeTask is the same wait; it answers with the result as an Outcome value
     *        (so only the wait's own cancellation ends it on the cancelled channel).
     *        The plain wait's body is the cell itself (accept); a wait with more to it (an outcome,
     *        a supervised child's observation) is an Await. Both run waitOn.
     *      A combinator handed such a wait (Forks, for whenAll/whenAny/timeout over handles) does
     *        the same with a node of its own, without a fiber: add; if refused, read result.
     *
     * 3. Linearization points. Completion: the write of result (the CAS, or the fiber's release
     *    store). A wait that reads result == null linearizes at that read (before the
     *    completion); one that reads it set linearizes after it and never waits. Found by
     *    CompletionLincheckTest: linearizing completion at fire() instead let a losing
     *    completer see "completed" and then start a wait that looked pending.
     *
     * 4. Invariants. I1: result is written once. I2: every node added before fire() is fired
     *    (SignalList I1), and every node added after it is refused, so no waiter is lost.
     *
     * 5. Memory ordering. The result store is a release (CAS or setRelease) and every read
     *    before fire() is an acquire, so a waiter sees the value's contents; fire()'s exchange
     *    also publishes it to the nodes it fires.
     *
     * 6. Progress: lock-free; completion is one CAS plus one exchange, a wait one CAS.
     *
     * 7. Cancellation: a cancelled wait removes its node (SignalList.remove); if fire() won the
     *    node, the wait's own AsyncStep has already been settled by the cancel and the late
     *    settle is refused there: one winner.
     *
     * 8. Resumption: onFire settles the waiter's AsyncStep, which resumes its fiber on the
     *    fiber's scheduler (inline through the trampoline when the firer runs it).
     *
     * 9. References: seed 000; DESIGN principle 2.
     */

    /** The encoding of a null value. */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "NULL";
        }
    };
    /** The encoding of the cancelled channel. */
    static final Object CANCELLED = new Object() {
        @Override
        public String toString() {
            return "CANCELLED";
        }
    };

    /**
     * The encoding of the cancelled channel with a reason: who ended the wait and why (a closed
     * gate). Everything that decodes {@link #CANCELLED} decodes it as the cancelled channel too
     * ({@link #isCancelled}); a join's {@code CancellationException} says the reason.
     */
    static final class Cancelled {
        /** Why; its {@code toString()} is the message, built only when someone asks. */
        final Object reason;

        Cancelled(Object reason) {
            this.reason = reason;
        }

        @Override
        public String toString() {
            return "CANCELLED[" + reason + "]";
        }
    }

    /** Whether {@code encoded} is the cancelled channel: {@link #CANCELLED} or a {@link Cancelled} box. */
    static boolean isCancelled(Object encoded) {
        return encoded == CANCELLED || encoded instanceof Cancelled;
    }

    /** The message of a join's {@code CancellationException} for a cancelled {@code encoded} result. */
    static String cancelMessage(Object encoded) {
        return encoded instanceof Cancelled c ? String.valueOf(c.reason) : "task was cancelled";
    }

    /** The encoding of an error. */
    static final class Failed {
        final Throwable error;

        Failed(Throwable error) {
            this.error = error;
        }
    }

    /**
     * Written once, before fire(): by a CAS for racing completers (the linearization point of the
     * completion), by a release store for a fiber (its only completer). Read with acquire.
     */
    Object result;

    static Object encodeValue(Object value) {
        return value == null ? NULL : value;
    }

    static Object decodeValue(Object encoded) {
        return encoded == NULL ? null : encoded;
    }

    @SuppressWarnings("unchecked")
    static <T> Outcome<T> toOutcome(Object encoded) {
        if (isCancelled(encoded)) {
            return new Outcome.Cancelled<>();
        }
        if (encoded instanceof Failed f) {
            return new Outcome.Failure<>(f.error);
        }
        return new Outcome.Value<>((T) decodeValue(encoded));
    }

    /**
     * Completes the cell from any thread; returns false if it was complete already. The CAS on
     * {@code result} elects one completer among racing ones; fire() then publishes (release).
     */
    final boolean completeWith(Object encoded) {
        if (result != null || !RESULT.compareAndSet(this, null, encoded)) {
            return false;
        }
        fire();
        return true;
    }

    /**
     * Completes the cell from its only possible completer (a finishing fiber): release, so that a
     * waiter that reads the result before fire() (acquire) sees the value's contents.
     */
    final void setResultRelease(Object encoded) {
        RESULT.setRelease(this, encoded);
    }

    /** Whether the cell has completed: true from the completing CAS on, before its waiters fire. */
    final boolean isCompleted() {
        return RESULT.getAcquire(this) != null;
    }

    /**
     * A task that waits for this cell and ends as it did; cancelling the wait unregisters it. The cell
     * is the wait's body (see {@link #accept}): one small node per handle.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    final <T> Task<T> awaitTask() {
        return (Task<T>) new Nodes.Async(this, true);
    }

    /**
     * The plain wait on this cell, as the body of {@link #awaitTask()}'s node: answers at once when the
     * cell has completed, else registers a node (and answers at once if the add is refused).
     */
    @Override
    public final void accept(Completer<Object> completer) {
        waitOn(this, false, completer);
    }

    /**
     * A task that waits for this cell and completes with its {@link Outcome} as a value, whichever
     * channel the cell ended on; the wait itself, when cancelled, ends on the cancelled channel (and
     * unregisters), so a cancelled waiter is never mistaken for a cancelled cell.
     */
    final <T> Task<Outcome<T>> awaitOutcomeTask() {
        return await(true);
    }

    private <R> Task<R> await(boolean asOutcome) {
        return awaitWith(new Await<>(this, asOutcome));
    }

    /** A result {@link #result} holds once the cell completed ({@code null} before): acquire. */
    final Object resultAcquire() {
        return RESULT.getAcquire(this);
    }

    /** The wait that {@code body} describes, as a task (cancelled by the waiting task's token). */
    static <R> Task<R> awaitWith(Await<R> body) {
        return new Nodes.Async<>(body, true);
    }

    /**
     * The body of a wait on a cell: a named class, so that a combinator handed the wait can register
     * on {@link #source} directly instead of running the wait as a fiber of its own (Forks does, for
     * spawn and run handles in whenAll, whenAny and timeout).
     */
    static class Await<R> implements Consumer<Completer<R>> {
        /** The cell waited for. */
        final Completion source;
        /** Whether the wait answers with the cell's Outcome as a value. */
        final boolean asOutcome;

        Await(Completion source, boolean asOutcome) {
            this.source = source;
            this.asOutcome = asOutcome;
        }

        /** Told when a wait on the cell starts, before it registers (not when its token was cancelled already). */
        void starting() {}

        /** What a waiter gets for the cell's encoded result: the same, or the outcome as a value. */
        final Object answer(Object encoded) {
            return Completion.answer(encoded, asOutcome);
        }

        @Override
        public final void accept(Completer<R> completer) {
            starting();
            waitOn(source, asOutcome, completer);
        }
    }

    /** One wait on {@code cell} for {@code completer}'s task: the body of both wait forms. */
    static void waitOn(Completion cell, boolean asOutcome, Completer<?> completer) {
        Object done = RESULT.getAcquire(cell);
        if (done != null) { // completed (perhaps not yet fired): answer at once, never wait
            AsyncStep.of(completer).settleEncoded(answer(done, asOutcome));
            return;
        }
        AwaitNode node = new AwaitNode(cell, AsyncStep.of(completer), asOutcome);
        if (cell.add(node)) {
            completer.onCancel(node); // unregisters; also tells the task dump what the wait joins
        } else {
            AsyncStep.of(completer).settleEncoded(answer(cell.result, asOutcome));
        }
    }

    /** What a waiter gets for the cell's encoded result: the same, or the outcome as a value. */
    static Object answer(Object encoded, boolean asOutcome) {
        return asOutcome ? encodeValue(toOutcome(encoded)) : encoded;
    }

    /** One waiter's registration; also its cancellation action (it removes itself). */
    static final class AwaitNode extends SignalList.Node implements Runnable {
        final Completion source;
        private final AsyncStep step;
        private final boolean asOutcome;

        AwaitNode(Completion source, AsyncStep step, boolean asOutcome) {
            this.source = source;
            this.step = step;
            this.asOutcome = asOutcome;
        }

        @Override
        protected void onFire() {
            step.settleEncoded(answer(source.result, asOutcome));
        }

        @Override
        public void run() {
            source.remove(this);
        }
    }

    private static final VarHandle RESULT;

    static {
        try {
            RESULT = MethodHandles.lookup().findVarHandle(Completion.class, "result", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
