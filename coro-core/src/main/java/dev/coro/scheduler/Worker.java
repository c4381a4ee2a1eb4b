package dev.coro.scheduler;

import dev.coro.internal.Blocking;
import dev.coro.internal.WorkerThread;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * One thread of a {@link WorkStealingPool}: runs its local queue, then the pool's injection queue,
 * then steals, spins a while searching, and parks. Between two tasks it applies the count-downs of a
 * scope it holds (WorkerThread), unless the next task is a child of that scope from its own queue.
 *
 * <p>Thread confinement: everything but {@link #parked} and {@link #queue}'s thief side is touched
 * only by this thread.
 */
final class Worker extends WorkerThread {
    /**
     * Every this many tasks (plus one) the worker polls the injection queue before its own, so that
     * outside submissions do not starve behind local work that keeps spawning more.
     */
    static final int FAIRNESS_MASK = 63;

    /**
     * Search rounds (a scan of every queue, then a backoff) before a searcher parks: with
     * {@link #MAX_BACKOFF} about 50 us of searching, near the cost of one park/unpark round trip
     * (about 30 to 45 us on the 2-core VMs this was tuned on).
     */
    static final int SPIN_ROUNDS = 64;

    /** Longest backoff between two scans, in {@link Thread#onSpinWait()} calls. */
    static final int MAX_BACKOFF = 64;

    /** The most tasks one poll of the injection queue takes (the first runs, the rest are queued here). */
    static final int INJECTED_BATCH = 32;

    final WorkStealingPool pool;
    final int index;
    final WorkQueue queue = new WorkQueue();
    /** Steal passes that took tasks, and parks, for {@link WorkStealingPool#stats()}: written by this worker only (opaque). */
    private long steals, parks;

    /** True while registered as parked in {@link IdleWorkers}; written under its lock. */
    volatile boolean parked;

    private final int homeShard; // the injection shard this worker polls first and overflows to
    /**
     * The most tasks one injection poll takes: {@link #INJECTED_BATCH}, or 1 on a one-worker pool,
     * where outside submissions start in submission order (a batch in this queue would run behind
     * the fairness poll's newer task, and could overflow behind newer submissions).
     */
    private final int injectedBatch;
    private final int[] seenHead; // per victim: its head index when this thief last saw one task there
    private int tick;
    private int seed;

    Worker(WorkStealingPool pool, int index, String name) {
        super(name);
        this.pool = pool;
        this.index = index;
        this.homeShard = pool.injection.shardOfWorker(index);
        this.injectedBatch = pool.workers.length == 1 ? 1 : INJECTED_BATCH;
        this.seenHead = new int[pool.workers.length];
        Arrays.fill(seenHead, -1);
        this.seed = 0x9E3779B9 * (index + 1);
        setDaemon(false);
    }

    @Override
    public void run() {
        Blocking.mark(pool); // blocking doors refuse on a worker (Blocking): it runs the work they would wait for
        try {
            runLoop();
        } finally {
            keepOrRelease(null, false, 0); // a scope's count-downs held back are applied before the thread ends
            pool.workerExited();
        }
    }

    private void runLoop() {
        WorkStealingPool p = pool;
        for (;;) {
            if (p.isStopping()) {
                return;
            }
            Runnable task = nextLocal();
            if (task == null) {
                task = takeInjected();
                if (task == null) {
                    task = stealPass(true);
                    if (task == null) {
                        task = findWork();
                        if (task == null) {
                            return; // the pool stopped
                        }
                    }
                }
            }
            runTask(task);
        }
    }

    /**
     * The next task from this worker's own queue (or, every {@link #FAIRNESS_MASK} + 1 tasks, from
     * the injection queue first), or null; count-downs held back (WorkerThread) are kept only for a
     * task of this queue that keeps their count above zero.
     */
    private Runnable nextLocal() {
        if ((++tick & FAIRNESS_MASK) == 0) {
            Runnable task = takeInjected();
            if (task != null) {
                keepOrRelease(task, false, 0);
                return task;
            }
        }
        Runnable task = queue.pop();
        keepOrRelease(task, task != null, queue.poppedIndex());
        return task;
    }

    /**
     * WorkerThread's H3 before the next task. A release that ends the scope's count resumes its
     * joiners, which may run here inline: what they throw is reported as a task's would be.
     */
    private void keepOrRelease(Runnable next, boolean fromQueue, int index) {
        if (holds()) {
            try {
                beforeNext(next, fromQueue, index);
            } catch (Throwable ex) {
                reportUncaught(ex);
            }
        }
    }

    @Override
    protected int queueTail() {
        return queue.tailIndex();
    }

    /**
     * Polls the injection queue: takes the oldest task there and up to {@link #injectedBatch} - 1
     * after it into this worker's queue (where others can steal them), so that a burst of outside
     * submissions is fetched from the submitters' cache lines a batch at a time. A polled chunk
     * (tasks a worker's full queue overflowed) is unpacked: its first task is returned and the rest
     * go into this worker's queue. Called by this worker only (or by a test, before it starts).
     */
    Runnable takeInjected() {
        WorkStealingPool p = pool;
        WorkQueue q = queue;
        Runnable x = p.injection.pollInto(homeShard, q, Math.min(injectedBatch, q.room() + 1));
        if (x == null) {
            return null;
        }
        if (x instanceof WorkStealingPool.Chunk chunk) {
            Runnable[] tasks = chunk.tasks();
            int pushed = q.pushAll(tasks, 1, tasks.length);
            if (1 + pushed < tasks.length) { // no room for all of it (this queue was not empty)
                Runnable[] rest = Arrays.copyOfRange(tasks, 1 + pushed, tasks.length);
                p.injection.offer(new WorkStealingPool.Chunk(rest), homeShard);
            }
            x = tasks[0];
        }
        if (q.size() > 0) { // the rest of a batch or chunk landed here (InjectionQueue I4): others may share it
            VarHandle.fullFence(); // IdleWorkers I3: publish, fence, signal
            p.idle.signal();
        }
        return x;
    }

    /** Pushes a task submitted by this worker; when the queue is full, half of it overflows. */
    void submitLocal(Runnable task) {
        if (!queue.push(task)) {
            WorkStealingPool p = pool;
            Runnable[] half = queue.takeHalf();
            if (half != null) {
                p.injection.offer(new WorkStealingPool.Chunk(half), homeShard);
            }
            if (!queue.push(task)) { // a thief is making room already, but we cannot wait for it
                p.injection.offer(task, homeShard);
            }
        }
        VarHandle.fullFence(); // IdleWorkers I3: publish, fence, signal
        pool.idle.signal();
    }

    private void runTask(Runnable task) {
        running(task);
        try {
            task.run();
        } catch (Throwable ex) {
            reportUncaught(ex);
        } finally {
            running(null);
        }
        Thread.interrupted(); // a task's stray interrupt must not leak into the next task
    }

    private void reportUncaught(Throwable ex) {
        try {
            getUncaughtExceptionHandler().uncaughtException(this, ex);
        } catch (Throwable ignored) {
            // the handler failed too: nothing sensible is left to do with it, and the worker lives on
        }
    }

    /**
     * One scan of the other workers' queues, starting at a random one; steals half of the first
     * non-empty one into this worker's queue. With {@code holdBack}, a queue holding a single task
     * is left to its owner while that owner is making progress (the task was most likely just
     * submitted by the running task and will run next, hot in the owner's cache); it is stolen when
     * a later scan finds the owner has not taken a task since (it is blocked or busy).
     */
    private Runnable stealPass(boolean holdBack) {
        Worker[] all = pool.workers;
        int n = all.length;
        if (n == 1) {
            return null;
        }
        int start = nextRandom(n);
        for (int k = 0; k < n; k++) {
            int i = start + k;
            if (i >= n) {
                i -= n;
            }
            if (i == index) {
                continue;
            }
            WorkQueue q = all[i].queue;
            int size = q.size();
            if (size == 0) {
                continue;
            }
            if (size == 1 && holdBack) {
                int head = q.headIndex();
                if (seenHead[i] != head) {
                    seenHead[i] = head;
                    continue;
                }
            }
            Runnable task = q.stealHalfInto(queue);
            if (task != null && task != WorkQueue.CONTENDED) {
                STEALS.setOpaque(this, steals + 1); // the only writer: a plain read of its own count
                if (queue.size() > 0) { // the rest of the batch landed here: others may share it
                    VarHandle.fullFence(); // IdleWorkers I3
                    pool.idle.signal();
                }
                return task;
            }
        }
        return null;
    }

    /**
     * Called with nothing to do: searches (spinning) if allowed, then parks; returns a task, or null
     * when the pool stops.
     */
    private Runnable findWork() {
        IdleWorkers idle = pool.idle;
        boolean searching = idle.tryStartSearching();
        boolean holdBack = true;
        for (;;) {
            if (searching) {
                Runnable task = spin(holdBack);
                if (task != null) {
                    idle.stopSearching();
                    return task;
                }
            }
            switch (park(searching)) {
                case EXIT:
                    return null;
                case WORK_SEEN:
                    holdBack = false; // the re-check saw work: take it even if its owner is busy
                    break;
                default:
                    holdBack = true;
            }
            searching = true; // section 8 of IdleWorkers: we come back as a searcher
        }
    }

    /**
     * Spin phase of a search: scans with exponential backoff for a bounded number of rounds. This
     * is the pool's one deliberate spin: waking a parked thread costs tens of microseconds, a
     * spinning thread takes new work within about one scan.
     */
    private Runnable spin(boolean holdBack) {
        WorkStealingPool p = pool;
        int backoff = 1;
        for (int round = 0; round < SPIN_ROUNDS; round++) {
            Runnable task = takeInjected();
            if (task == null) {
                task = stealPass(holdBack);
            }
            if (task != null) {
                return task;
            }
            if (p.isShutdown()) {
                return null; // go park, where the quiescence check lives
            }
            for (int i = 0; i < backoff; i++) {
                Thread.onSpinWait();
            }
            if (backoff < MAX_BACKOFF) {
                backoff <<= 1;
            }
            holdBack = true;
        }
        return null;
    }

    private static final int EXIT = 0;
    private static final int WOKEN = 1;
    private static final int WORK_SEEN = 2;

    /** Parks until woken; see the protocol in {@link IdleWorkers}. */
    private int park(boolean searching) {
        WorkStealingPool p = pool;
        IdleWorkers idle = p.idle;
        int c = idle.announcePark(this, searching);
        // I3 of IdleWorkers: re-check after announcing (the announce was a full fence)
        if (p.isStopping()) {
            return EXIT;
        }
        if (p.hasWork()) {
            idle.cancelPark(this);
            return WORK_SEEN;
        }
        if (IdleWorkers.unparked(c) == 0 && p.isShutdown()) {
            // look once more: a submission that read RUNNING just before the shutdown's CAS was
            // accepted, and may have been published after the check above (it precedes our read of
            // the shutdown, so this check sees it)
            if (p.hasWork()) {
                idle.cancelPark(this);
                return WORK_SEEN;
            }
            p.terminate(); // everyone parked, nothing queued, nothing can be submitted: quiescent
            return EXIT;
        }
        PARKS.setOpaque(this, parks + 1); // the only writer
        idle.awaitUnpark(this, p);
        return p.isStopping() ? EXIT : WOKEN;
    }

    private int nextRandom(int bound) {
        int x = seed; // xorshift32
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        seed = x;
        return (x & Integer.MAX_VALUE) % bound;
    }

    /** Steal passes of this worker that took tasks (a racy but never torn snapshot). */
    long steals() {
        return (long) STEALS.getOpaque(this);
    }

    /** Times this worker parked (a racy but never torn snapshot). */
    long parks() {
        return (long) PARKS.getOpaque(this);
    }

    private static final VarHandle STEALS;
    private static final VarHandle PARKS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STEALS = lookup.findVarHandle(Worker.class, "steals", long.class);
            PARKS = lookup.findVarHandle(Worker.class, "parks", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
