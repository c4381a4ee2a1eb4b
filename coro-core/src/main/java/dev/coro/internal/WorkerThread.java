package dev.coro.internal;

/**
 * A pool's worker thread, as the layers below the scheduler see it: it can hold back the count-downs
 * of a count (a scope's count of running children) while it runs work that keeps that count above
 * zero anyway, and applies them in one step when it moves on to anything else. A scope whose
 * children end one after another on the same worker then writes its shared count once per run of
 * such children instead of once per child, so the count's cache line stops moving between workers
 * with every child.
 *
 * <p>The rule (part 2 below) keeps what the count tells its readers: it never reads zero while a
 * member lives, and once the last member has ended it reads zero as soon as the worker that holds
 * count-downs ends the task it is running, before anything else runs on that thread.
 *
 * <p>Thread confinement: everything here is touched only by the worker's own thread.
 */
public abstract class WorkerThread extends Thread {
    /* Implementation overview.
     *
     * 1. Representation (all plain fields, this thread only).
     *    running: the task the worker loop is running now (set around each run), or null.
     *    held: the count whose count-downs are held, or null; heldCount (>= 1 when held != null): how
     *      many; heldBefore: the worker's queue tail (the index its next push takes) at the latest
     *      hold.
     *
     * 2. Transitions.
     *    H1 hold(c), by a member of c ending on this thread: allowed only while the worker loop runs a
     *       task that is a member run of c (Counted.isMemberRun: the start or a resumption of a
     *       member, which ends only by running); first, if held is another count, release it. Then
     *       held = c, heldCount + 1, heldBefore = tail. Refused (false): the caller counts down now.
     *    H2 release: held.countDown(heldCount); held = null, heldCount = 0.
     *    H3 keep or release at each loop step, before the next task runs: the hold is kept only if
     *       the next task comes from the worker's own queue, was pushed there before the latest hold
     *       (its index below heldBefore: only this thread pushes to its queue, in index order), and
     *       is a member run of held. Otherwise (another task, an injected or stolen one, none at all,
     *       the worker exiting): H2.
     *    H4 release before a resumption is dispatched (the task layer's Resume calls releaseHeld):
     *       after a hold, the rest of the task that held is the running member's own code (the
     *       member lives) or, once that member has ended, its completion, which runs other code
     *       only by resuming its waiters.
     *
     * 3. What the count's readers see. Let live be the members that have not ended. The count reads
     *    live + (the held count-downs of every worker), so it never reads zero while one lives
     *    (safety: nothing here ever counts down early). Liveness: while a worker holds, it runs
     *    only (a) the code of a member that lives (the running member run, until its member's own
     *    end, which is a hold or a count-down of its own), (b) a member's completion after its end,
     *    which releases before it resumes any waiter (H4), or (c) after H3 kept the hold, a member
     *    run queued before the latest hold, whose member lived then and lives now (a queued member
     *    run has not ended). So once live has reached zero, a holding worker runs nothing but
     *    completions until the end of its current task, and releases at its next loop step (no
     *    queued member run is left to keep the hold). A join of the count thus sees zero no later
     *    than the end of the holding worker's current task, and never waits for other work: no
     *    code that might wait for the join (a blocked waiter, a task that is not a member) runs on
     *    a worker while it holds.
     *
     * 4. Memory ordering: the fields are thread-confined. The release is the count's own
     *    count-down (volatile), issued by this thread after the members' actions it follows, so what
     *    the count publishes is unchanged.
     */

    /** A count whose count-downs a worker may hold: a scope's running children. */
    public interface Counted {
        /**
         * Whether {@code task}, found in a worker's queue or running on it, is a run of a member of
         * this count: the start or a resumption of one, which has not ended and ends only by running.
         *
         * @param task a task
         * @return whether it is a member run
         */
        boolean isMemberRun(Runnable task);

        /**
         * Counts {@code n} members down, now.
         *
         * @param n how many ended, at least 1
         */
        void countDown(int n);
    }

    private Runnable running;
    private Counted held;
    private int heldCount;
    private int heldBefore;

    /**
     * Creates a platform thread with the given name, no group and no inherited thread-locals.
     *
     * @param name the thread's name
     */
    protected WorkerThread(String name) {
        super(null, null, name, 0, false);
    }

    /**
     * Holds one count-down of {@code c} if the calling thread is a worker running a member run of
     * {@code c} (part 2, H1).
     *
     * @param c the count a member of which has just ended
     * @return whether the count-down is held; if not, the caller counts down now
     */
    public static boolean hold(Counted c) {
        return Thread.currentThread() instanceof WorkerThread w && w.tryHold(c);
    }

    /** Applies this thread's held count-downs now, if it is a worker holding some (part 2, H4). */
    public static void releaseHeld() {
        if (Thread.currentThread() instanceof WorkerThread w && w.held != null) {
            w.release();
        }
    }

    /**
     * The index the worker's next push to its own queue will take.
     *
     * @return the queue's tail
     */
    protected abstract int queueTail();

    /**
     * Marks {@code task} as the task the worker loop runs now (null once it has returned).
     *
     * @param task the task, or null
     */
    protected final void running(Runnable task) {
        running = task;
    }

    /**
     * Whether count-downs are held.
     *
     * @return whether some are
     */
    protected final boolean holds() {
        return held != null;
    }

    /**
     * Part 2, H3: before the loop runs {@code next}, keeps the hold if {@code next} came from the
     * worker's own queue at {@code index} (pushed before the latest hold) and is a member run of the
     * held count; releases it otherwise.
     *
     * @param next the task about to run, or null if there is none
     * @param fromQueue whether it was popped from the worker's own queue (so not null)
     * @param index its index in that queue, if so
     */
    protected final void beforeNext(Runnable next, boolean fromQueue, int index) {
        if (held != null && !(fromQueue && index - heldBefore < 0 && held.isMemberRun(next))) {
            release();
        }
    }

    /** Part 2, H2. */
    protected final void release() {
        Counted c = held;
        if (c != null) {
            int n = heldCount;
            held = null;
            heldCount = 0;
            c.countDown(n);
        }
    }

    private boolean tryHold(Counted c) {
        Runnable r = running;
        if (r == null || !c.isMemberRun(r)) {
            return false;
        }
        if (held != c) {
            release();
            held = c;
        }
        heldCount++;
        heldBefore = queueTail();
        return true;
    }
}
