package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.Blocking;
import dev.coro.internal.Durations;
import dev.coro.internal.TaskDoors;
import dev.coro.sync.WaitListener;
import dev.coro.sync.WaitingPrimitive;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * The public face every gate shares: its doors ({@link Door}: acquire, tryAcquire, within, tryWithin,
 * the blocking call), {@link #close()} and {@link #closeAndCheck()}, over the one admission engine
 * ({@link AdmissionEngine}, in {@code dev.coro.internal}), which holds the queueing, hand-off,
 * cancellation and close, and whose subclass states the gate's rule. A gate class is its rule and its
 * names for the doors.
 *
 * <p>Every public method of a gate is thread-safe and lock-free.
 */
abstract class AdmissionGate implements WaitingPrimitive {
    /** The task layer's doors (the guarded node). */
    static final TaskDoors DOORS = TaskDoors.get();

    /** The engine, whose subclass is this gate's rule. */
    final AdmissionEngine engine;

    AdmissionGate(AdmissionEngine engine) {
        this.engine = engine;
        engine.observedAs(getClass()); // its waits are recorded as this gate's
        engine.describedAs("GATE", this); // its waiters are dumped as waiting on it, and its close names it
    }

    /**
     * One kind of entry into the gate: the task doors and the blocking door for waiters with one tag.
     * A gate creates one per kind of entry (or per request, for a weighted one) and exposes them under
     * its own names.
     */
    final class Door {
        private final Object tag;
        private final long weight;
        private final Task<Void> enter;
        private final Runnable exit;
        // Built on first use: a gate that makes a door per request (a weighted or tagged one) usually
        // uses one of them. Plain fields: a race builds equal tasks or frames twice, each immutable.
        private Task<Void> tryEnter;
        private Task<Admission> acquire;
        private Task<Admission> tryAcquire;
        private Object exitFrame;

        /**
         * A door for waiters that ask for {@code tag}, whose admission weighs {@code weight} (the
         * engine's {@code ruleWeight(tag)}).
         */
        Door(Object tag, long weight) {
            this.tag = tag;
            this.weight = weight;
            this.enter = enterTask(tag);
            this.exit = () -> engine.release(this.weight);
        }

        /** Waits for admission; the value is the admission, whose exit leaves the gate. */
        Task<Admission> acquire() {
            Task<Admission> t = acquire;
            if (t == null) {
                acquire = t = enter.map(ignored -> new Admission(engine, weight));
            }
            return t;
        }

        /** Admission now, or the cancelled channel without queueing. */
        Task<Admission> tryAcquire() {
            Task<Admission> t = tryAcquire;
            if (t == null) {
                tryAcquire = t = tryEnter().map(ignored -> new Admission(engine, weight));
            }
            return t;
        }

        private Task<Void> tryEnter() {
            Task<Void> t = tryEnter;
            if (t == null) {
                tryEnter = t = Task.create(engine.tryingDoor(tag));
            }
            return t;
        }

        /** Waits for admission, runs {@code work}, leaves on every completion path of {@code work}. */
        <T> Task<T> within(Task<T> work) {
            Objects.requireNonNull(work, "work");
            return guarded(enter, work);
        }

        /** Runs {@code work} under the gate only if admitted immediately, else completes cancelled. */
        <T> Task<T> tryWithin(Task<T> work) {
            Objects.requireNonNull(work, "work");
            return guarded(tryEnter(), work);
        }

        /** {@code entry.then(work.andFinally(exit))}, as one node (the task layer's guarded door). */
        @SuppressWarnings("unchecked")
        private <T> Task<T> guarded(Task<Void> entry, Task<T> work) {
            Object x = exitFrame;
            if (x == null) {
                exitFrame = x = DOORS.exitFrame(exit, null);
            }
            return (Task<T>) DOORS.guarded(entry, work, x);
        }

        /**
         * Waits for admission, then runs {@code work}; nothing is given back when it ends: a rule of
         * time (a rate) spends what it admits.
         */
        <T> Task<T> spendThen(Task<T> work) {
            Objects.requireNonNull(work, "work");
            return enter.then(work);
        }

        /** As {@link #spendThen}, only if admitted immediately; else completes cancelled. */
        <T> Task<T> trySpendThen(Task<T> work) {
            Objects.requireNonNull(work, "work");
            return tryEnter().then(work);
        }

        /** Waits for admission; the admission's exit gives nothing back (see {@link #spendThen}). */
        Task<Admission> acquireSpent() {
            return enter.map(ignored -> new Admission(NOTHING));
        }

        /** As {@link #acquireSpent}, only if admitted immediately; else completes cancelled. */
        Task<Admission> tryAcquireSpent() {
            return tryEnter().map(ignored -> new Admission(NOTHING));
        }

        /**
         * The blocking door named {@code name} (for a refusal's message):
         * {@code within(Task.fromCallable(body)).join()}.
         */
        <T> T call(String name, Callable<? extends T> body) {
            Blocking.checkAllowed(AdmissionGate.this.getClass(), name);
            Objects.requireNonNull(body, "body");
            return within(Task.<T>fromCallable(body)).join();
        }
    }

    /**
     * The task a door's waiting entries run until admitted: the engine's waiting door, or a gate's
     * own loop around it (a barging serial gate's). Called while the gate is constructed, with only
     * {@link #engine} set.
     *
     * @param tag what the waiters ask for
     * @return the task
     */
    Task<Void> enterTask(Object tag) {
        return Task.create(engine.waitingDoor(tag));
    }

    /** What leaving does for a rule of time: nothing (its admissions are spent). */
    private static final Runnable NOTHING = () -> {};

    /**
     * A timeout argument in nanoseconds: null is a NullPointerException naming it; zero or negative
     * is 0, a deadline that has passed (not an error); centuries saturate.
     */
    static long timeoutNanos(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return Durations.toNanos(timeout);
    }

    /** A gate's capacity argument, checked: {@code capacity <= 0} is an IllegalArgumentException. */
    static int checkCapacity(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, got " + capacity);
        }
        return capacity;
    }

    // ---- close ----

    /**
     * Closes the gate: every queued waiter completes on the cancelled channel, and every later
     * acquisition completes cancelled without running its work. Joining such a task throws a
     * {@link java.util.concurrent.CancellationException} whose message names the gate (its
     * {@code toString()}) and says it is closed; its {@code Outcome} is
     * {@link dev.coro.task.Outcome.Cancelled}, as for any cancellation. Admitted work is not interrupted: it
     * runs to its end and leaves the gate as usual. Idempotent; never throws.
     */
    public void close() {
        engine.close();
    }

    /**
     * Closes the gate (as {@link #close()}) and then checks the paper's destruction rule: no admitted
     * work may remain when a gate is dropped. Call it where the gate's life ends, once the work
     * started through it has completed.
     *
     * @throws IllegalStateException naming the count if admitted work remains, or if another thread
     *     is admitting or releasing at this instant (work is then still entering or leaving)
     */
    public void closeAndCheck() {
        long admitted = engine.closeAndCountAdmitted();
        if (admitted != 0) {
            throw new IllegalStateException("closeAndCheck: " + admitted
                    + " admitted operation(s) still running; a gate must outlive the work it admitted");
        }
    }

    /**
     * Returns whether the gate is closed or closing: {@link #close()} or {@link #closeAndCheck()}
     * has been called, or the gate's rule closed it.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return engine.isClosed();
    }

    private static final WaitListener.Outcome[] OUTCOMES = WaitListener.Outcome.values();

    /**
     * Adds a listener told how each admission ended (admitted, with the time it waited, 0 when at
     * once; cancelled while queued; timed out): for metrics. A refused try is not reported.
     * Admissions that started before it was added are not reported to it.
     *
     * {@snippet :
     * LongAdder timedOut = new LongAdder();
     * gate.addListener((outcome, waitedNanos) -> {
     *     if (outcome == WaitListener.Outcome.TIMED_OUT) {
     *         timedOut.increment();
     *     }
     * });
     * }
     *
     * @param listener the listener
     * @throws NullPointerException if {@code listener} is null
     */
    @Override
    public void addListener(WaitListener listener) {
        Objects.requireNonNull(listener, "listener");
        engine.addObserver((outcome, waited) -> listener.waitEnded(OUTCOMES[outcome], waited));
    }

    /**
     * Returns how many tasks wait at the gate: a snapshot, which may still count a waiter that was
     * cancelled a moment ago.
     *
     * @return the waiters
     */
    @Override
    public int queueLength() {
        return engine.linkedWaiters();
    }
}
