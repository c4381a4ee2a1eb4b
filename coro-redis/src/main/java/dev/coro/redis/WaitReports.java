package dev.coro.redis;

import dev.coro.sync.WaitListener;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The listeners of one Redis gate object and how they are told: each in turn, on the thread that
 * ended the wait, a listener's exception going to that thread's uncaught-exception handler so that
 * the others are still told. Thread-safe.
 */
final class WaitReports {
    private final List<WaitListener> listeners = new CopyOnWriteArrayList<>();

    /** @throws NullPointerException if {@code listener} is null */
    void add(WaitListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Tells every listener that a wait ended with {@code outcome} after {@code waitedNanos}. */
    void tell(WaitListener.Outcome outcome, long waitedNanos) {
        for (WaitListener l : listeners) {
            try {
                l.waitEnded(outcome, waitedNanos);
            } catch (RuntimeException | Error e) {
                Thread t = Thread.currentThread();
                t.getUncaughtExceptionHandler().uncaughtException(t, e);
            }
        }
    }
}
