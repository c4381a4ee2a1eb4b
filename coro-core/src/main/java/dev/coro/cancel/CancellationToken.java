package dev.coro.cancel;

import dev.coro.internal.SignalList;
import dev.coro.internal.TokenSignals;
import java.util.Objects;
import java.util.concurrent.CancellationException;

/**
 * The observing side of cooperative cancellation: work asks {@link #isCancelled()} or registers a
 * callback with {@link #register(Runnable)}; only the owning {@link CancellationSource} cancels.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe and lock-free.
 *
 * <p><b>Callbacks.</b> Each registered callback runs exactly once if the token is cancelled while it
 * is registered: on the thread that calls {@link CancellationSource#cancel()}, in no particular order.
 * A callback registered after cancellation runs at once on the registering thread. A callback that
 * throws is reported to the running thread's uncaught-exception handler and does not stop the others.
 * Callbacks should be short and must not block: they typically complete a waiting task, which hands
 * its continuation to a scheduler.
 *
 * <p><b>Memory effects.</b> Actions before {@code cancel()} happen-before every callback it runs and
 * every {@code isCancelled()} that returns {@code true}.
 *
 * {@snippet :
 * CancellationSource source = new CancellationSource();
 * Registration r = source.token().register(() -> System.out.println("cancelled"));
 * source.cancel();   // prints "cancelled"
 * r.unregister();    // false: it already ran
 * }
 */
public final class CancellationToken {
    /** A token that is never cancelled; registering on it costs nothing and keeps nothing. */
    public static final CancellationToken NONE = new CancellationToken(false);

    static {
        TokenSignals.install(token -> token.callbacks);
    }

    final SignalList callbacks = new SignalList();
    private final boolean cancellable;

    CancellationToken(boolean cancellable) {
        this.cancellable = cancellable;
    }

    /**
     * Returns whether the token has been cancelled.
     *
     * @return {@code true} once the owning source has cancelled
     */
    public boolean isCancelled() {
        return callbacks.isFired();
    }

    /**
     * Returns whether this token can ever be cancelled ({@code false} only for {@link #NONE}).
     *
     * @return whether a cancellation is possible
     */
    public boolean canBeCancelled() {
        return cancellable;
    }

    /**
     * Throws {@link CancellationException} if the token has been cancelled.
     *
     * @throws CancellationException if cancelled
     */
    public void throwIfCancelled() {
        if (isCancelled()) {
            throw new CancellationException("cancelled");
        }
    }

    /**
     * Registers {@code callback} to run once when this token is cancelled; runs it at once, on this
     * thread, if the token is already cancelled (an exception it throws then goes to this thread's
     * uncaught-exception handler, as for any callback, and this method returns normally).
     *
     * @param callback what to run on cancellation
     * @return a registration that takes the callback back
     * @throws NullPointerException if {@code callback} is null
     */
    public Registration register(Runnable callback) {
        Objects.requireNonNull(callback, "callback");
        if (!cancellable) {
            return Registration.NONE;
        }
        CallbackNode node = new CallbackNode(callback, callbacks);
        if (!callbacks.add(node)) {
            try {
                callback.run();
            } catch (Throwable t) { // the same rule as for callbacks that cancel() runs
                Thread current = Thread.currentThread();
                current.getUncaughtExceptionHandler().uncaughtException(current, t);
            }
            return Registration.NONE;
        }
        return node;
    }

    /** Returns the number of linked registrations, live or awaiting unlinking; for tests. */
    int linkedCount() {
        return callbacks.linkedCount();
    }

    @Override
    public String toString() {
        return !cancellable ? "CancellationToken[never]"
                : isCancelled() ? "CancellationToken[cancelled]" : "CancellationToken[active]";
    }

    private static final class CallbackNode extends SignalList.Node implements Registration {
        private final Runnable callback;
        private final SignalList list;

        CallbackNode(Runnable callback, SignalList list) {
            this.callback = callback;
            this.list = list;
        }

        @Override
        protected void onFire() {
            callback.run();
        }

        @Override
        public boolean unregister() {
            return list.remove(this);
        }
    }
}
