package dev.coro.scheduler;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The pool's queue for work that does not come from a worker's own task: submissions from other
 * threads, and chunks of tasks that full worker queues moved out. It is a few
 * {@link ConcurrentLinkedQueue}s (as many as workers, rounded up to a power of two): a submitting
 * thread always uses the same one, picked by its thread id, and each worker polls its own first,
 * so that submitters and workers do not all contend on one head and one tail.
 *
 * <p>In a pool of two workers or more it also has submission {@linkplain Lane lanes}: a thread
 * outside the pool leases one (by its thread id, while that lane is free) and from then on pushes
 * its submissions there, with no allocation and no atomic read-modify-write per task; idle workers
 * steal half of a lane at a time, as they steal from each other. A burst of outside submissions so
 * costs about what a worker's own spawns do.
 *
 * <p>Order: FIFO per submitting thread through the shards (one thread always uses the same shard);
 * none across threads, and none for a thread that has a lane (its tasks are stolen in halves by
 * several workers). With one worker there is one shard and no lane, so outside submissions start in
 * submission order.
 *
 * <p>Thread-safety: all methods may be called from any thread, except that only a lane's owner
 * pushes to it or takes from it back. {@link #isEmpty()} is a snapshot that is exact for an offer
 * that happened before it (each shard's offer is a volatile CAS, its emptiness check a volatile
 * read; a lane push is a release store of the lane's tail that the submitter follows with a full
 * fence, and its emptiness check reads that tail with acquire), which is what the park re-check of
 * {@link IdleWorkers} needs.
 */
final class InjectionQueue {
    /* Implementation overview (the lanes; the shards are ConcurrentLinkedQueues, the lane's ring is
     * a WorkQueue, whose own overview covers push and steal).
     *
     * 1. Representation. lanes: a fixed array (a power of two, none for one worker) of Lane, each a
     *    WorkQueue and owner (volatile Thread): null (free), or the thread that leased it (it may
     *    have ended since). leased (volatile int): bit i set once lane i has been leased (never
     *    cleared); the workers' scans (steal, isEmpty) look only at those lanes.
     * 2. Transitions. Lease: owner null or a thread that is no longer alive -> the caller, CAS, by
     *    the caller (a thread whose home lane, lanes[threadId & laneMask], is leased by a live
     *    thread uses the shards). Push: the lane's WorkQueue push, by its owner; when the ring is
     *    full, the owner moves its older half to its shard as one Chunk (WorkQueue.takeHalf), as a
     *    worker does. Steal: a worker's stealHalfInto from the lane into its own queue (only when
     *    that queue has room for half a ring). Take back (the pool was shut down between the
     *    owner's check and its push): the owner steals its whole lane, as a thief, into a sink and
     *    moves it to its shard in order; the pool then removes the task from the shard as for a
     *    shard offer.
     * 3. Linearization points. A lane push: the release store of the ring's tail. Lease: the CAS
     *    (its bit in leased is set right after, before the leaser's first push).
     * 4. Invariants. L1: at most one thread pushes to a lane at a time (WorkQueue's single owner):
     *    the lease CAS elects it, and the lease passes on only from a thread that is not alive,
     *    which pushes no more. L2: every task pushed to a lane leaves it exactly once: stolen by a
     *    worker, moved to a shard (overflow or take back), or drained by shutdownNow (the
     *    WorkQueue's I3).
     * 5. Memory ordering. The lease CAS is volatile; a new owner that took the lane from an ended
     *    thread read that thread's end through isAlive() (the thread's last action happens-before
     *    it), so it sees the ring's owner-only fields (the tail it wrote plainly, stealCache) as the
     *    ended owner left them. The push's fence and the workers' park re-check are IdleWorkers I3.
     * 6. Progress. Push and lease are wait-free (takeHalf, on overflow, is a CAS retried only when a
     *    thief moved head). Take back spins while a thief is mid-steal from the lane (bounded by that
     *    thief's copy), on the rare path of a submission racing shutdown.
     * 7. Cancellation races: none here; the pool's shutdown race is take back (part 2).
     * 8. Resumption: not applicable (the queue only stores runnables).
     * 9. References. The external submission queues of java.util.concurrent.ForkJoinPool (one
     *    array queue per submitting thread's probe, stolen from like the workers' queues), and
     *    tokio's run queue (WorkQueue's steal-half protocol).
     */

    /** Lanes of a pool of two workers or more (leased by thread id, so a few more than submitters usually are). */
    static final int LANES = 8;

    private final ConcurrentLinkedQueue<Runnable>[] shards;
    private final int mask;
    private final Lane[] lanes;
    private final int laneMask;
    /**
     * Bit i set: lane i has been leased at least once (never cleared), so the workers' scans skip
     * lanes nobody ever used. Set (RMW) before the leaser's first push, so a scan that could miss
     * that push reads the bit (IdleWorkers I3: the scan follows the worker's announce).
     */
    private volatile int leased;

    /** One outside thread's submission queue: it pushes, workers steal halves (see the overview). */
    static final class Lane {
        final WorkQueue queue = new WorkQueue();
        /** The leasing thread, or null; set by CAS (L1). */
        volatile Thread owner;
    }

    @SuppressWarnings("unchecked")
    InjectionQueue(int workers) {
        int n = Integer.highestOneBit(Math.max(1, workers - 1)) << 1;
        if (workers == 1) {
            n = 1;
        }
        n = Math.min(n, 64);
        @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
        ConcurrentLinkedQueue<Runnable>[] created = new ConcurrentLinkedQueue[n];
        shards = created;
        for (int i = 0; i < n; i++) {
            shards[i] = new ConcurrentLinkedQueue<>();
        }
        mask = n - 1;
        lanes = new Lane[workers == 1 ? 0 : LANES];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane();
        }
        laneMask = lanes.length - 1;
    }

    /**
     * The calling thread's lane: the one it leased, or its home lane if that is free or its owner
     * has ended (leased now, L1); null if it has none (a one-worker pool, or a live thread holds it).
     */
    Lane laneOfCurrentThread() {
        Lane[] ls = lanes;
        if (ls.length == 0) {
            return null;
        }
        Thread t = Thread.currentThread();
        Lane lane = ls[(int) t.threadId() & laneMask];
        Thread o = lane.owner;
        if (o == t) {
            return lane;
        }
        if ((o == null || !o.isAlive()) && OWNER.compareAndSet(lane, o, t)) { // L1 (part 5: isAlive)
            int bit = 1 << ((int) t.threadId() & laneMask);
            if ((leased & bit) == 0) {
                LEASED.getAndBitwiseOr(this, bit); // before the first push (see leased)
            }
            return lane;
        }
        return null;
    }

    /**
     * Pushes {@code task} to {@code lane}, whose owner the caller is; a full ring first moves its older
     * half to shard {@code shard} as one chunk. No fence: the caller fences before it signals.
     */
    void push(Lane lane, Runnable task, int shard) {
        assert lane.owner == Thread.currentThread() : "L1";
        WorkQueue q = lane.queue;
        if (!q.push(task)) {
            Runnable[] half = q.takeHalf();
            if (half != null) {
                shards[shard].offer(new WorkStealingPool.Chunk(half));
            }
            if (!q.push(task)) { // a thief is making room already, but we cannot wait for it
                shards[shard].offer(task);
            }
        }
    }

    /**
     * Moves everything in {@code lane} (whose owner the caller is) to shard {@code shard}, in order,
     * then removes {@code task} from that shard: whether it did (else a worker has taken it).
     */
    boolean takeBack(Lane lane, Runnable task, int shard) {
        assert lane.owner == Thread.currentThread() : "L1";
        moveAll(lane.queue, shards[shard]);
        return shards[shard].remove(task);
    }

    /** Steals every task of {@code from} (as a thief) and appends them to {@code to}, oldest first. */
    private static void moveAll(WorkQueue from, java.util.Collection<Runnable> to) {
        WorkQueue sink = new WorkQueue();
        Runnable t;
        while ((t = from.stealHalfInto(sink)) != null) {
            if (t == WorkQueue.CONTENDED) {
                Thread.onSpinWait(); // a worker is stealing from it; it will be done soon
                continue;
            }
            Runnable older;
            while ((older = sink.pop()) != null) {
                to.add(older);
            }
            to.add(t); // the newest of the batch
        }
    }

    /**
     * Steals half of the first non-empty lane, starting at lane {@code start}, into {@code dst} (the
     * calling worker's queue), if {@code dst} has room for half a ring: returns a task to run, or null.
     */
    Runnable stealFromLanes(WorkQueue dst, int start) {
        int used = leased;
        if (used == 0 || !dst.hasRoomForHalf()) {
            return null; // no lane ever used; or no room (the next poll, or another worker, takes it)
        }
        Lane[] ls = lanes;
        for (int k = 0; k < ls.length; k++) {
            int i = (start + k) & laneMask;
            if ((used & (1 << i)) == 0) {
                continue;
            }
            WorkQueue q = ls[i].queue;
            if (q.size() > 0) {
                Runnable task = q.stealHalfInto(dst);
                if (task != null && task != WorkQueue.CONTENDED) {
                    return task;
                }
            }
        }
        return null;
    }

    /** The shard the calling thread submits to. */
    int shardOfCurrentThread() {
        return (int) Thread.currentThread().threadId() & mask;
    }

    /** The shard a worker polls first. */
    int shardOfWorker(int workerIndex) {
        return workerIndex & mask;
    }

    /** Appends {@code task} to shard {@code shard}; a volatile CAS, a full fence. */
    void offer(Runnable task, int shard) {
        shards[shard].offer(task);
    }

    /** Takes the oldest task of the first non-empty shard, starting at {@code shard}; or null. */
    Runnable poll(int shard) {
        ConcurrentLinkedQueue<Runnable>[] s = shards;
        for (int k = 0; k < s.length; k++) {
            Runnable task = s[(shard + k) & mask].poll();
            if (task != null) {
                return task;
            }
        }
        return null;
    }

    /** Removes one occurrence of {@code task} from shard {@code shard}; whether it did. */
    boolean remove(Runnable task, int shard) {
        return shards[shard].remove(task);
    }

    /** The tasks queued, chunks unpacked (a snapshot that walks every shard: for monitoring). */
    long size() {
        long n = 0;
        for (ConcurrentLinkedQueue<Runnable> q : shards) {
            for (Runnable r : q) {
                n += r instanceof WorkStealingPool.Chunk c ? c.tasks().length : 1;
            }
        }
        for (Lane lane : lanes) {
            n += lane.queue.size();
        }
        return n;
    }

    /** Whether every shard is empty (a snapshot; see the class comment). */
    boolean isEmpty() {
        for (ConcurrentLinkedQueue<Runnable> q : shards) {
            if (!q.isEmpty()) {
                return false;
            }
        }
        for (int used = leased; used != 0; used &= used - 1) {
            if (lanes[Integer.numberOfTrailingZeros(used)].queue.size() != 0) {
                return false;
            }
        }
        return true;
    }

    /** Moves everything into {@code sink}, unpacking chunks (the lanes are stolen empty, as a thief). */
    void drainTo(List<Runnable> sink) {
        for (Lane lane : lanes) {
            moveAll(lane.queue, sink);
        }
        for (ConcurrentLinkedQueue<Runnable> q : shards) {
            Runnable t;
            while ((t = q.poll()) != null) {
                if (t instanceof WorkStealingPool.Chunk c) {
                    sink.addAll(List.of(c.tasks()));
                } else {
                    sink.add(t);
                }
            }
        }
    }

    private static final VarHandle OWNER;
    private static final VarHandle LEASED;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(Lane.class, "owner", Thread.class);
            LEASED = MethodHandles.lookup().findVarHandle(InjectionQueue.class, "leased", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
