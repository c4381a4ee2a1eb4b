package dev.coro.internal;

/**
 * The rule of Coro's blocking doors: a thread that runs a scheduler's work must not block waiting for
 * work that the same scheduler would have to run. Such a thread carries a mark (the scheduler that
 * owns it), and every blocking door ({@code Task.join()}, {@code Scope.joinBlocking()},
 * {@code Event.awaitBlocking()}, a gate's {@code call}, a channel's {@code sendBlocking}, a generator's
 * iterator, ...) calls {@link #checkAllowed} before it waits, which refuses at once on a marked thread
 * instead of hanging it.
 *
 * <p>Marked: the workers of a {@code WorkStealingPool}, the thread of an {@code EventLoop} and the
 * shared timer thread that runs the inline scheduler's timers (for their whole life), and the thread inside a run method of coro-test's {@code VirtualTimeScheduler}
 * (for the length of the call). Not marked: plain and virtual threads, the thread of a join (whose own
 * loop is private to that join, so a join nested in it waits on a loop of its own), and the threads
 * of an executor adapted by {@code Scheduler.from} (the executor is the user's; Coro cannot tell
 * whether blocking it is safe).
 *
 * <p>Why a {@link ThreadLocal}: one mark serves a thread marked for its life and one marked for the
 * length of a call, without a thread class of its own; setting it costs one store per thread start
 * (or per run call), nothing on a scheduler's fast path; reading it costs one thread-local lookup per
 * blocking door, which allocates and may park anyway.
 */
public final class Blocking {
    private static final ThreadLocal<Object> OWNER = new ThreadLocal<>();

    private Blocking() {}

    /**
     * Marks the calling thread as running {@code owner}'s work: blocking doors refuse on it until the
     * mark is changed again. {@code null} removes the mark.
     *
     * @param owner the scheduler whose work this thread runs, or null
     * @return the previous mark, or null: pass it back here to restore it
     */
    public static Object mark(Object owner) {
        Object previous = OWNER.get();
        if (owner == null) {
            OWNER.remove();
        } else {
            OWNER.set(owner);
        }
        return previous;
    }

    /**
     * Returns the scheduler that marked the calling thread, or null if it may block.
     *
     * @return the mark
     */
    public static Object owner() {
        return OWNER.get();
    }

    /**
     * Refuses a blocking door on a marked thread.
     *
     * @param type the class of the door (its simple name starts the door's name in the message)
     * @param door the door's method, as the caller wrote it ({@code "join"}, {@code "iterator().hasNext"})
     * @throws IllegalStateException on a marked thread, naming the door, the thread, its scheduler and
     *     the way out
     */
    public static void checkAllowed(Class<?> type, String door) {
        Object owner = OWNER.get();
        if (owner != null) {
            throw refusal(type, door, owner);
        }
    }

    private static IllegalStateException refusal(Class<?> type, String door, Object owner) {
        return new IllegalStateException(type.getSimpleName() + "." + door + " would block thread "
                + Thread.currentThread().getName() + " of " + owner
                + ", which must stay free to run the work it would wait for: compose with then/flatMap instead,"
                + " or block on a virtual thread (Task.onVirtualThread) or a plain thread");
    }
}
