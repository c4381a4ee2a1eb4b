package dev.coro.task;

import dev.coro.internal.SignalList;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;

/**
 * A result cell that completes once: the seed-000 handshake between the completer and the waiters.
 * The result is written first, then {@link SignalList#fire()} exchanges the waiter word with FIRED
 * (release); a waiter that registers with {@link SignalList#add} and is refused (the word was
 * already FIRED, acquire) reads the result at once, and one that is accepted is resumed by the
 * completer. So each side does one atomic operation and learns whether it must resume the other.
 *
 * <p>Result encoding (shared with {@link AsyncStep}): a raw value; {@link #NULL} for a null value;
 * a {@link Failed} box for an error; {@link #CANCELLED} for the cancelled channel. Sentinels are
 * instances of private classes, so no user value can be mistaken for one.
 */
class Completion extends SignalList {
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

    static boolean isValue(Object encoded) {
        return encoded != CANCELLED && !(encoded instanceof Failed);
    }

    @SuppressWarnings("unchecked")
    static <T> Outcome<T> toOutcome(Object encoded) {
        if (encoded == CANCELLED) {
            return new Outcome.Cancelled<>();
        }
        if (encoded instanceof Failed f) {
            return new Outcome.Failure<>(f.error);
        }
        return new Outcome.Value<>((T) decodeValue(encoded));
    }

    static CancellationException cancellation() {
        return new CancellationException("task was cancelled");
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

    /** A task that waits for this cell and ends as it did; cancelling the wait unregisters it. */
    final <T> Task<T> awaitTask() {
        return new Nodes.Async<T>(completer -> {
            Object done = RESULT.getAcquire(this);
            if (done != null) { // completed (perhaps not yet fired): answer at once, never wait
                AsyncStep.of(completer).settleEncoded(done);
                return;
            }
            AwaitNode node = new AwaitNode(this, AsyncStep.of(completer));
            if (add(node)) {
                completer.onCancel(() -> remove(node));
            } else {
                (AsyncStep.of(completer)).settleEncoded(result);
            }
        }, true);
    }

    private static final class AwaitNode extends SignalList.Node {
        private final Completion source;
        private final AsyncStep step;

        AwaitNode(Completion source, AsyncStep step) {
            this.source = source;
            this.step = step;
        }

        @Override
        protected void onFire() {
            step.settleEncoded(source.result);
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
