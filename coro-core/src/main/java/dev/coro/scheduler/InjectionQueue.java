package dev.coro.scheduler;

import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The pool's queue for work that does not come from a worker's own task: submissions from other
 * threads, and chunks of tasks that full worker queues moved out. It is a few
 * {@link ConcurrentLinkedQueue}s (as many as workers, rounded up to a power of two): a submitting
 * thread always uses the same one, picked by its thread id, and each worker polls its own first,
 * so that submitters and workers do not all contend on one head and one tail.
 *
 * <p>Order: FIFO per submitting thread (one thread always uses the same shard); none across threads.
 * With one worker there is one shard, so outside submissions start in submission order.
 *
 * <p>Thread-safety: all methods may be called from any thread. {@link #isEmpty()} is a snapshot that
 * is exact for an offer that happened before it (each shard's offer is a volatile CAS, its emptiness
 * check a volatile read), which is what the park re-check of {@link IdleWorkers} needs.
 */
final class InjectionQueue {
    private final ConcurrentLinkedQueue<Runnable>[] shards;
    private final int mask;

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
        return n;
    }

    /** Whether every shard is empty (a snapshot; see the class comment). */
    boolean isEmpty() {
        for (ConcurrentLinkedQueue<Runnable> q : shards) {
            if (!q.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** Moves everything into {@code sink}, unpacking chunks. */
    void drainTo(List<Runnable> sink) {
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
}
