package dev.coro.task;

/**
 * The stack of a thread that joined a failed task: {@link Task#join()} (and the other blocking
 * joins built on it) rethrows an unchecked error as the same instance, and adds one of these to it
 * as {@linkplain Throwable#getSuppressed() suppressed}, so that the error also shows where it was
 * joined, not only where it was thrown.
 *
 * <p><b>Once per error.</b> An error carries at most one join site: the first join that rethrows it
 * adds it, later joins of the same error (a failed task or {@link Promise} joined in a loop, or by many
 * threads) add nothing, so a failure never grows with the number of times it is joined. An error
 * created with suppression disabled carries none.
 *
 * <p>Never thrown by Coro; it only appears among suppressed exceptions. Its message names the joining
 * thread. Immutable once attached, and thread-safe.
 *
 * {@snippet :
 * try {
 *     task.join();
 * } catch (IllegalStateException e) {
 *     for (Throwable s : e.getSuppressed()) {
 *         if (s instanceof JoinSite site) {
 *             site.printStackTrace();   // where join() was called
 *         }
 *     }
 * }
 * }
 */
public final class JoinSite extends Exception {
    /** Serialization version (the class has no fields of its own). */
    private static final long serialVersionUID = 1L;

    private JoinSite(Thread joiner) {
        super("joined by thread \"" + joiner.getName() + "\"");
    }

    /**
     * Adds a join site with the calling thread's stack to {@code error}, unless it already has one.
     * Under the error's monitor, which {@link Throwable#addSuppressed} and
     * {@link Throwable#getSuppressed} also hold, so that racing joins add one in all.
     */
    static void attachOnce(Throwable error) {
        synchronized (error) {
            for (Throwable s : error.getSuppressed()) {
                if (s instanceof JoinSite) {
                    return;
                }
            }
            error.addSuppressed(new JoinSite(Thread.currentThread()));
        }
    }
}
