package dev.coro.internal;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;

/**
 * Runs work inline on the calling thread without deepening the stack: the outermost call runs its
 * work at once and then drains whatever nested calls queued meanwhile; a nested call only queues.
 * So a chain of inline resumptions of any length uses a bounded stack.
 *
 * <p>Fairness: one drain runs at most {@link #BUDGET} queued items; after that, nested work is handed
 * to the fallback executor (normally the scheduler it belongs to), so two tasks that keep resuming
 * each other inline cannot starve the rest of a scheduler's queue.
 *
 * <p>Thread confinement: the state is per thread; nothing here is shared.
 */
public final class Trampoline {
    /** How many queued items one outermost drain runs before handing further work to its fallback. */
    static final int BUDGET = 1024;

    private static final ThreadLocal<Trampoline> CURRENT = ThreadLocal.withInitial(Trampoline::new);

    private final ArrayDeque<Runnable> queue = new ArrayDeque<>();
    private boolean running;
    private int ran;

    private Trampoline() {}

    /**
     * Runs {@code work} on this thread: now, if no trampoline drain is active on this thread;
     * otherwise after the active one finishes its current item (or on {@code fallback} once the
     * drain has used its budget). {@code fallback} may be null, meaning "always queue".
     */
    public static void run(Runnable work, Executor fallback) {
        Trampoline t = CURRENT.get();
        if (t.running) {
            if (fallback != null && t.ran >= BUDGET) {
                fallback.execute(work);
            } else {
                t.queue.addLast(work);
            }
            return;
        }
        t.running = true;
        t.ran = 0;
        try {
            work.run();
            Runnable next;
            while ((next = t.queue.pollFirst()) != null) {
                t.ran++;
                next.run();
            }
        } finally {
            t.running = false;
            if (!t.queue.isEmpty()) { // work.run() threw: do not lose what was queued behind it
                drainAfterFailure(t);
            }
        }
    }

    /**
     * Opens a trampoline drain on this thread around a section of code, if none is active: work that
     * the section resumes inline then queues, and runs when {@link #leave} closes the drain, instead
     * of running inside the section. Returns the trampoline to pass to {@code leave}, or null if a
     * drain was already active (the work then queues behind the active one's current item).
     *
     * {@snippet :
     * Trampoline t = Trampoline.enter();
     * try {
     *     section();          // may resume waiters inline
     * } finally {
     *     Trampoline.leave(t); // runs them now, after the section
     * }
     * }
     *
     * @return this thread's trampoline if this call opened the drain, else null
     */
    public static Trampoline enter() {
        Trampoline t = CURRENT.get();
        if (t.running) {
            return null;
        }
        t.running = true;
        t.ran = 0;
        return t;
    }

    /**
     * Closes a drain opened by {@link #enter}: runs what the section queued, then marks the thread
     * free. Does nothing if {@code t} is null (the section ran inside an active drain).
     *
     * @param t what {@code enter} returned
     */
    public static void leave(Trampoline t) {
        if (t == null) {
            return;
        }
        try {
            Runnable next;
            while ((next = t.queue.pollFirst()) != null) {
                t.ran++;
                next.run();
            }
        } finally {
            t.running = false;
            if (!t.queue.isEmpty()) {
                drainAfterFailure(t);
            }
        }
    }

    /**
     * Sets aside the drain active on this thread, if any, for a section that must run its work now
     * rather than behind the active drain's current item: a blocking join called from work the drain
     * runs (a join nested in a join), whose own loop would otherwise only queue its task behind the
     * very item that waits for it, and hang. Until {@link #restore}, this thread has a fresh
     * trampoline of its own; the section must leave it empty (every {@link #run} drains before it
     * returns).
     *
     * @return the trampoline set aside, to pass to {@code restore}, or null if no drain was active
     */
    public static Trampoline setAside() {
        Trampoline t = CURRENT.get();
        if (!t.running) {
            return null;
        }
        CURRENT.set(new Trampoline());
        return t;
    }

    /**
     * Gives back the drain {@link #setAside} set aside. Does nothing if {@code outer} is null.
     *
     * @param outer what {@code setAside} returned
     */
    public static void restore(Trampoline outer) {
        if (outer != null) {
            assert !CURRENT.get().running && CURRENT.get().queue.isEmpty() : "the section left work behind";
            CURRENT.set(outer);
        }
    }

    private static void drainAfterFailure(Trampoline t) {
        Runnable next;
        while ((next = t.queue.pollFirst()) != null) {
            run(next, null);
        }
    }
}
