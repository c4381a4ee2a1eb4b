package dev.coro.scheduler;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * The pool's queue for work that does not come from a worker's own task: submissions from other
 * threads, and chunks of tasks that full worker queues moved out. It is a few shards (as many as
 * workers, rounded up to a power of two): a submitting thread always uses the same one, picked by
 * its thread id, and each worker polls its own first. A shard is a list of fixed arrays
 * (segments) that submitters fill in order and workers empty in order, taking several tasks at a
 * time into their own queue.
 *
 * <p>What a submission costs: no allocation (a segment of {@value #SEGMENT} slots is allocated once
 * per {@value #SEGMENT} submissions), one compare-and-set on the shard's submitter lock (a line the
 * workers never touch, so a lone submitter keeps it in its own cache), one volatile store into
 * the slot, and one load of the slot before it (a submission behind a task still queued wakes no
 * worker: that task's taker takes it too, or wakes one). The only lines a submitter shares with the workers are the slots themselves.
 *
 * <p>Order: FIFO per shard, so per submitting thread (one thread always uses the same shard); none
 * across shards. With one worker there is one shard, so outside submissions start in submission
 * order.
 *
 * <p>Thread-safety: all methods may be called from any thread. {@link #isEmpty()} is a snapshot
 * that is exact for an offer that happened before it (the offer's slot store and the emptiness
 * check's slot load are both volatile), which is what the park re-check of {@link IdleWorkers}
 * needs.
 */
final class InjectionQueue {
    /* Implementation overview.
     *
     * 1. Representation. Per shard:
     *      producer side (its own padded line): lock (volatile int, 0 or 1), and, guarded by it,
     *        tail (the segment being filled), tailSlots (its array) and tailIndex (next index to
     *        fill in it).
     *      consumer side (another padded line): head (volatile Segment): the oldest segment that may
     *        hold a task.
     *    Segment: slots (Runnable[SEGMENT]), head (volatile int: every slot below it is TAKEN),
     *    next (volatile Segment, written once, by the producer that fills the last slot).
     *    A slot holds, in turn and never again (segments are not reused): null (not yet written),
     *    the task, TAKEN (taken by a consumer, or removed by its submitter).
     *
     * 2. Transitions.
     *      offer      lock (CAS 0 -> 1); if tailIndex == SEGMENT: link a new segment (next, then
     *                 tail); slot[tailIndex]: null -> task (volatile store); tailIndex + 1;
     *                 unlock (release store 0)                                       producer
     *      take       at segment head h: slot[h] task -> TAKEN (CAS), then head h -> h + 1 (CAS,
     *                 or found already moved)                                        consumer
     *      help       slot[h] already TAKEN: head h -> h + 1 (CAS)                   any consumer
     *      batch      take at h, then slot[i] task -> TAKEN for i = h + 1, ... (CAS each, skipping
     *                 TAKEN, stopping at null, a chunk, the segment's end or the batch size), then
     *                 head -> the index after the last slot passed (CAS loop, monotonic)  consumer
     *      next seg   head == SEGMENT and next != null: shard head seg -> next (CAS)  any consumer
     *      remove     slot[i] task -> TAKEN (CAS), for the task's slot               its submitter
     *
     * 3. Linearization points. offer: the volatile store of the slot. take (poll, and each task of
     *    a batch): the successful CAS to TAKEN; an empty answer: the load that finds null at the
     *    segment's head (or head == SEGMENT with next == null). remove: its successful CAS; a false
     *    answer: the load of null (or of a null next) at the end of the shard: every occurrence of the
     *    task was taken before it (a slot read as the task and lost to a consumer's CAS is TAKEN).
     *    isEmpty: the load of the first slot at or after head that is not TAKEN (null: empty). A
     *    batch is not one atomic step: it is a run of takes, each linearizable, of consecutive
     *    indices (with one consumer, it is linearizable at its last slot load, as
     *    InjectionQueueBatchLincheckTest checks; with others taking too, it is not).
     *
     * 4. Invariants.
     *      I1: every slot below a segment's head is TAKEN (head only moves past TAKEN slots, and only
     *          forward: every move is a CAS from a value read to a larger one).
     *      I2: producers write slots in index order, one at a time (the lock), and link a segment's
     *          next before writing the next segment's first slot; so a null slot has no written slot
     *          after it in the shard.
     *      I3: each task is taken once: the CAS task -> TAKEN has one winner (a consumer, or the
     *          submitter removing it), and a TAKEN slot never changes.
     *      I4 (no signal is skipped that was needed): offer answers whether the caller must signal:
     *          yes unless the slot before it still held a task after the store (then a consumer
     *          that takes that task reads this slot after its CAS, and either takes this one too,
     *          or stops with tasks pushed into its own queue, and signals: see Worker.takeInjected);
     *          the Dekker pair is (store slot i; load slot i - 1) against (CAS slot i - 1; load
     *          slot i). A consumer that takes the previous task as a chunk, or with no room for more,
     *          does not read slot i, but it is running and polls again before it parks, so the task
     *          is not lost, only run later. If instead the previous task's submitter removes it (it
     *          raced shutdown), no consumer will take it: that submitter signals after its remove
     *          (WorkStealingPool.execute; OutsideSubmitLincheckTest).
     *
     * 5. Memory ordering. Slot stores are volatile: the store publishes the task's fields to the
     *    consumer that loads it, and is the full fence IdleWorkers' I3 needs between publishing and
     *    reading ctl (and I4's Dekker pair above). The lock: CAS to take, release store to give back
     *    (it only orders producers among themselves). head fields: volatile, moved by CAS.
     *
     * 6. Progress. Consumers are lock-free (a CAS fails only when another consumer took or passed
     *    the slot) and never wait for a producer: a slot a producer has not written yet is null, and
     *    null is empty. Producers of one shard take a spin lock (flagged: spin, then yield), held for
     *    a few stores; a producer preempted while holding it delays the others of its shard only
     *    (one shard per submitting thread in the common case, so no one).
     *
     * 7. Races. Two consumers on one slot: the CAS to TAKEN decides (I3); the loser helps head past
     *    it. A consumer against the submitter's remove (a submission racing shutdown): the same CAS
     *    decides, so the task either runs once or is removed and never runs; a submitter whose
     *    remove wins signals, for a task that may have skipped its signal behind it (I4). A
     *    consumer that reads null while a producer writes the slot: it answers empty; the
     *    producer's signal (or I4's consumer) makes a worker look again.
     *
     * 8. Resumption. Not applicable: the queue only stores runnables.
     *
     * 9. References. Segments of slots taken by CAS from a moving head follow the unbounded queues
     *    of JCTools (MpscUnboundedArrayQueue) and the slot CAS of ForkJoinPool's queues; batch takes
     *    into the worker's own queue, Go's globrunqget (runtime/proc.go) and tokio's inject queue.
     */

    /** Slots per segment: one allocation per this many submissions to a shard. */
    static final int SEGMENT = 1024;

    /** The mark of a slot whose task was taken by a consumer or removed by its submitter. */
    static final Runnable TAKEN = () -> {};

    private final Shard[] shards;
    private final int mask;
    private final int segmentSize;

    InjectionQueue(int workers) {
        this(workers, SEGMENT);
    }

    /** A queue with segments of {@code segmentSize} slots (tests use small ones). */
    InjectionQueue(int workers, int segmentSize) {
        assert segmentSize >= 1;
        int n = Integer.highestOneBit(Math.max(1, workers - 1)) << 1;
        if (workers == 1) {
            n = 1;
        }
        n = Math.min(n, 64);
        this.segmentSize = segmentSize;
        this.shards = new Shard[n];
        for (int i = 0; i < n; i++) {
            shards[i] = new Shard(new Segment(segmentSize));
        }
        this.mask = n - 1;
    }

    /** The shard the calling thread submits to. */
    int shardOfCurrentThread() {
        return (int) Thread.currentThread().threadId() & mask;
    }

    /** The shard a worker polls first. */
    int shardOfWorker(int workerIndex) {
        return workerIndex & mask;
    }

    /**
     * Appends {@code task} to shard {@code shard}. The slot store is volatile: a full fence
     * (IdleWorkers I3).
     *
     * @return whether the caller must signal the workers: false only when the task before it in the
     *     shard was still there after this one was published (I4)
     */
    boolean offer(Runnable task, int shard) {
        assert task != null && task != TAKEN;
        Shard s = shards[shard];
        s.lock();
        Runnable[] a = s.tailSlots;
        int t = s.tailIndex;
        if (t == a.length) {
            Segment next = new Segment(segmentSize);
            s.tail.setNextVolatile(next); // I2: linked before its first slot is written
            s.tail = next;
            s.tailSlots = a = next.slots;
            t = 0;
        }
        setSlotVolatile(a, t, task); // publishes; the full fence of IdleWorkers I3 and of I4
        s.tailIndex = t + 1;
        s.unlock();
        return t == 0 || slotVolatile(a, t - 1) == TAKEN;
    }

    /** Takes the oldest task of the first non-empty shard, starting at {@code shard}; or null. */
    Runnable poll(int shard) {
        Shard[] s = shards;
        for (int k = 0; k < s.length; k++) {
            Runnable task = take(s[(shard + k) & mask], null, 1);
            if (task != null) {
                return task;
            }
        }
        return null;
    }

    /**
     * Takes the oldest task of the first non-empty shard, starting at {@code shard}, and, unless it
     * is a chunk, up to {@code max - 1} of the tasks after it in the same segment (stopping before a
     * chunk), which go into {@code dst} in order. Called by {@code dst}'s owner.
     *
     * @param dst the calling worker's own queue, with room for {@code max - 1} tasks
     * @param max the most tasks to take, at least 1
     * @return the oldest task taken (to run first), or null when every shard was empty
     */
    Runnable pollInto(int shard, WorkQueue dst, int max) {
        assert max >= 1 && dst.room() >= max - 1;
        Shard[] s = shards;
        for (int k = 0; k < s.length; k++) {
            Runnable task = take(s[(shard + k) & mask], dst, max);
            if (task != null) {
                return task;
            }
        }
        return null;
    }

    /**
     * Takes the oldest task of {@code s} (null when it is empty) and, unless it is a chunk, up to
     * {@code max} - 1 tasks after it into {@code dst} (the batch described at {@link #pollInto};
     * {@code dst} is not used when {@code max} is 1).
     */
    private static Runnable take(Shard s, WorkQueue dst, int max) {
        Segment seg = s.headVolatile();
        for (;;) {
            Runnable[] a = seg.slots;
            int h = seg.headVolatile();
            if (h == a.length) {
                Segment next = seg.nextVolatile();
                if (next == null) {
                    return null;
                }
                s.casHead(seg, next);
                seg = next;
                continue;
            }
            Runnable x = slotVolatile(a, h);
            if (x == null) {
                return null;
            }
            if (x == TAKEN || !casSlot(a, h, x, TAKEN)) {
                seg.advanceHead(h + 1);
                continue;
            }
            int i = h + 1;
            if (!(x instanceof WorkStealingPool.Chunk)) {
                for (int n = 1; n < max && i < a.length; ) {
                    Runnable y = slotVolatile(a, i);
                    if (y == null || y instanceof WorkStealingPool.Chunk) {
                        break; // not written yet (I4: its producer signals), or a chunk: for the next poll
                    }
                    if (y == TAKEN) {
                        i++; // removed by its submitter, or taken by a consumer that helped head past us
                    } else if (casSlot(a, i, y, TAKEN)) {
                        boolean pushed = dst.push(y);
                        assert pushed : "no room for the batch";
                        n++;
                        i++;
                    } // else: it became TAKEN meanwhile; look again
                }
            }
            seg.advanceHead(i); // I1: every slot below i is TAKEN
            return x;
        }
    }

    /**
     * Removes one occurrence of {@code task} from shard {@code shard} that no consumer has taken: its
     * submitter's way back when it raced with shutdown. Whether it did.
     */
    boolean remove(Runnable task, int shard) {
        Segment seg = shards[shard].headVolatile();
        while (seg != null) {
            Runnable[] a = seg.slots;
            for (int i = seg.headVolatile(); i < a.length; i++) {
                Runnable x = slotVolatile(a, i);
                if (x == null) {
                    return false; // I2: nothing after it; the task was taken
                }
                if (x == task && casSlot(a, i, task, TAKEN)) {
                    return true; // I3: had a consumer won this CAS, it would run the task
                } // else taken meanwhile: the same task may be queued again later (submitted twice)
            }
            seg = seg.nextVolatile();
        }
        return false;
    }

    /** The tasks queued, chunks unpacked (a snapshot that walks every shard: for monitoring). */
    long size() {
        long n = 0;
        for (Shard s : shards) {
            for (Segment seg = s.headVolatile(); seg != null; seg = seg.nextVolatile()) {
                Runnable[] a = seg.slots;
                for (int i = seg.headVolatile(); i < a.length; i++) {
                    Runnable x = slotVolatile(a, i);
                    if (x == null) {
                        break;
                    }
                    if (x != TAKEN) {
                        n += x instanceof WorkStealingPool.Chunk c ? c.tasks().length : 1;
                    }
                }
            }
        }
        return n;
    }

    /** Whether every shard is empty (a snapshot; see the class comment). */
    boolean isEmpty() {
        for (Shard s : shards) {
            if (!isEmpty(s)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isEmpty(Shard s) {
        Segment seg = s.headVolatile();
        for (;;) {
            Runnable[] a = seg.slots;
            int i = seg.headVolatile();
            while (i < a.length) {
                Runnable x = slotVolatile(a, i);
                if (x != TAKEN) {
                    return x == null; // I1, I2
                }
                i++;
            }
            seg = seg.nextVolatile();
            if (seg == null) {
                return true;
            }
        }
    }

    /** Moves everything into {@code sink}, unpacking chunks. */
    void drainTo(List<Runnable> sink) {
        for (Shard s : shards) {
            Runnable t;
            while ((t = take(s, null, 1)) != null) {
                if (t instanceof WorkStealingPool.Chunk c) {
                    sink.addAll(List.of(c.tasks()));
                } else {
                    sink.add(t);
                }
            }
        }
    }

    // --- slots ---

    private static Runnable slotVolatile(Runnable[] a, int i) {
        return (Runnable) SLOT.getVolatile(a, i);
    }

    private static void setSlotVolatile(Runnable[] a, int i, Runnable task) {
        SLOT.setVolatile(a, i, task);
    }

    private static boolean casSlot(Runnable[] a, int i, Runnable expected, Runnable value) {
        return SLOT.compareAndSet(a, i, expected, value);
    }

    /** A fixed array of slots, filled once and emptied once (part 1). */
    static final class Segment {
        final Runnable[] slots;
        /** Every slot below it is TAKEN (I1); moved forward by CAS. */
        private volatile int head;
        /** The segment after this one; written once, before its first slot. */
        private volatile Segment next;

        Segment(int size) {
            this.slots = new Runnable[size];
        }

        int headVolatile() {
            return head;
        }

        /** Moves head forward to {@code to}, unless it is there or beyond already. */
        void advanceHead(int to) {
            int h = head;
            while (h < to) {
                int witness = (int) HEAD.compareAndExchange(this, h, to);
                if (witness == h) {
                    return;
                }
                h = witness;
            }
        }

        Segment nextVolatile() {
            return next;
        }

        void setNextVolatile(Segment value) {
            next = value;
        }

        private static final VarHandle HEAD;

        static {
            try {
                HEAD = MethodHandles.lookup().findVarHandle(Segment.class, "head", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    /** One shard: the submitters' side and the workers' side on separate cache lines (part 1). */
    static final class Shard extends ShardFields {
        Shard(Segment first) {
            tail = first;
            tailSlots = first.slots;
            setHeadRelease(first);
        }

        /** Takes the submitters' lock: a spin (flagged in part 6), held for a few stores. */
        void lock() {
            if (!LOCK.compareAndSet(this, 0, 1)) {
                lockContended();
            }
        }

        private void lockContended() {
            for (int spins = 0; ; spins++) {
                if ((int) LOCK.getVolatile(this) == 0 && LOCK.compareAndSet(this, 0, 1)) {
                    return;
                }
                if (spins < 64) {
                    Thread.onSpinWait();
                } else {
                    Thread.yield(); // the holder was preempted: let it run
                }
            }
        }

        void unlock() {
            LOCK.setRelease(this, 0); // release: the next holder sees tail and tailIndex
        }

        Segment headVolatile() {
            return (Segment) HEAD_SEGMENT.getVolatile(this);
        }

        private void setHeadRelease(Segment value) {
            HEAD_SEGMENT.setRelease(this, value);
        }

        void casHead(Segment expected, Segment value) {
            HEAD_SEGMENT.compareAndSet(this, expected, value);
        }

        private static final VarHandle LOCK;
        private static final VarHandle HEAD_SEGMENT;

        static {
            try {
                MethodHandles.Lookup l = MethodHandles.lookup();
                LOCK = l.findVarHandle(ShardProducer.class, "lock", int.class);
                HEAD_SEGMENT = l.findVarHandle(ShardConsumer.class, "head", Segment.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Runnable[].class);
}

/*
 * Field layout of a shard (as WorkQueue's): HotSpot places a superclass's fields before its
 * subclass's, so this chain puts the submitters' fields and the workers' field on different cache
 * lines, padded against each other and against neighbouring objects (128 bytes: adjacent-line
 * prefetch).
 */

@SuppressWarnings("unused")
abstract class ShardPadBefore {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p0a, p0b, p0c, p0d, p0e, p0f;
}

abstract class ShardProducer extends ShardPadBefore {
    /** The submitters' lock: 1 while one of them appends. */
    volatile int lock;
    /** Guarded by lock: the next index to fill in tail. */
    int tailIndex;
    /** Guarded by lock: the segment being filled. */
    InjectionQueue.Segment tail;
    /** Guarded by lock: tail's slots. */
    Runnable[] tailSlots;
}

@SuppressWarnings("unused")
abstract class ShardPadBetween extends ShardProducer {
    long p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p1a, p1b, p1c, p1d, p1e, p1f;
}

abstract class ShardConsumer extends ShardPadBetween {
    /** The oldest segment that may hold a task; moved forward by CAS. */
    volatile InjectionQueue.Segment head;
}

@SuppressWarnings("unused")
abstract class ShardFields extends ShardConsumer {
    long p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p2a, p2b, p2c, p2d, p2e, p2f;
}
