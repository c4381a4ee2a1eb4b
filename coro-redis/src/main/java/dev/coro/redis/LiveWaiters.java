package dev.coro.redis;

import dev.coro.sync.WaitListener;
import dev.coro.task.Completer;
import java.util.Collection;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The acquisitions of one Redis gate object that have not ended (its <em>live</em> waiters), and
 * the part of their life that every Redis gate of this package shares: an id unique across the
 * fleet, registration against {@link #close()}, the cancel action, failure, and how an ended wait is
 * reported to the gate's listeners. The gate keeps its own waiter states, its Redis round trips and
 * its shutdown; it says how one of its waiters ends ({@link Ends}), and this class calls that.
 *
 * <p>Close against a new acquisition: {@link #register} puts the waiter in the live map, then reads
 * {@code closed} (volatile); {@link #close()} writes {@code closed}, then ends every waiter in the
 * live map; so one of them sees the other, and no acquisition slips past a close.
 *
 * <p>Thread-safe: the live map is concurrent and {@code closed} is volatile; a waiter's state is the
 * gate's, guarded by the waiter's monitor.
 *
 * @param <W> the gate's waiter type
 */
final class LiveWaiters<W extends LiveWaiters.Entry<W>> {
    /** What a gate's waiter has for this class: its id, its completer, whether it tries, its start. */
    abstract static class Entry<W> {
        final String id;
        final Completer<W> completer;
        /** Whether it is a try: refused without waiting, never reported but when admitted. */
        final boolean trying;
        /** When it started, by System.nanoTime. */
        final long startNanos = System.nanoTime();

        Entry(String id, Completer<W> completer, boolean trying) {
            this.id = id;
            this.completer = completer;
            this.trying = trying;
        }
    }

    /** How a gate ends one of its waiters. */
    @FunctionalInterface
    interface Ends<W> {
        /**
         * Ends {@code w} if it has not ended, undoing whatever of it Redis may hold, and forgets it
         * ({@link #remove}). {@code byToken}: called as the completer's cancel action, which may find
         * the waiter admitted but not handed over. Returns whether this call ended it.
         */
        boolean end(W w, boolean byToken);
    }

    /** The prefix of this gate object's waiter ids: random, so ids are unique across the fleet. */
    private final String idPrefix = UUID.randomUUID() + ":";
    private final AtomicLong nextId = new AtomicLong();
    private final Map<String, W> live = new ConcurrentHashMap<>();
    private final WaitReports reports = new WaitReports();
    private final Ends<W> ends;
    private volatile boolean closed;

    LiveWaiters(Ends<W> ends) {
        this.ends = ends;
    }

    /** The prefix every id of {@link #nextId()} starts with. */
    String idPrefix() {
        return idPrefix;
    }

    /** A new waiter id, unique across the fleet. */
    String nextId() {
        return idPrefix + nextId.incrementAndGet();
    }

    /**
     * Registers {@code w} as live and makes ending it the cancel action of its completer (a wait so
     * cancelled is reported). Returns false if the gate is closed: {@code w} is then ended and its
     * completer cancelled (not reported), and the gate must send nothing for it.
     */
    boolean register(W w) {
        live.put(w.id, w);
        w.completer.onCancel(() -> {
            if (ends.end(w, true)) {
                report(w, WaitListener.Outcome.CANCELLED);
            }
        });
        if (closed) { // after live.put: close() either sees w or is seen here
            if (ends.end(w, false)) {
                w.completer.cancel();
            }
            return false;
        }
        return true;
    }

    /**
     * Closes: every live waiter is ended, reported cancelled and its completer cancelled; later
     * {@link #register} calls refuse. Returns whether this call closed (false if already closed).
     */
    boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        for (W w : live.values()) {
            if (ends.end(w, false)) {
                report(w, WaitListener.Outcome.CANCELLED);
                w.completer.cancel();
            }
        }
        return true;
    }

    boolean isClosed() {
        return closed;
    }

    /** Whether the gate is closed and no waiter is live: nothing of it needs Redis any more. */
    boolean closedAndDrained() {
        return closed && live.isEmpty();
    }

    /** Ends {@code w} if it has not ended, reports it timed out and fails its completer with {@code failure}. */
    void fail(W w, Supplier<? extends Throwable> failure) {
        if (ends.end(w, false)) {
            report(w, WaitListener.Outcome.TIMED_OUT);
            w.completer.fail(failure.get());
        }
    }

    /** The live waiter of {@code id}, or null. */
    W get(String id) {
        return live.get(id);
    }

    /** The live waiters: a weakly consistent view. */
    Collection<W> all() {
        return live.values();
    }

    /** Drops {@code w} from the live waiters; returns whether it was there. */
    boolean remove(W w) {
        return live.remove(w.id, w);
    }

    void addListener(WaitListener listener) {
        reports.add(listener);
    }

    /** Reports an admission after {@code waitedNanos} (0 when admitted at its first round trip). */
    void admitted(long waitedNanos) {
        reports.tell(WaitListener.Outcome.ADMITTED, waitedNanos);
    }

    /** Reports a wait that ended without admission (a try's is not a wait: not reported). */
    void report(W w, WaitListener.Outcome outcome) {
        if (!w.trying) {
            reports.tell(outcome, System.nanoTime() - w.startNanos);
        }
    }
}
