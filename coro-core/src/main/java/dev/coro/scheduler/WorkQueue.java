package dev.coro.scheduler;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A worker's local run queue: a bounded single-producer, multi-consumer FIFO ring of runnables. Its
 * one owner thread {@link #push pushes} at the tail and {@link #pop pops} at the head; other
 * workers {@link #stealHalfInto steal} half of it at once into their own queue, so that a thief
 * touches the owner's cache lines once per batch rather than once per task. When the ring is full
 * the owner moves half of it out ({@link #takeHalf}) to the pool's injection queue.
 *
 * <p>Thread-safety: {@code push}, {@code pushAll}, {@code pop} and {@code takeHalf} only by the
 * owner; {@code stealInto} and {@code stealHalfInto} by the owner of the destination queue (never
 * by the source's owner); {@code size} and {@code headIndex} by any thread.
 */
final class WorkQueue extends WorkQueueFields {
    /* Implementation overview.
     *
     * 1. Representation. A ring of `capacity` slots (a power of two; CAPACITY for workers) and
     *    three wrapping 32-bit indices:
     *      tail   (volatile int)   next index to push; written only by the owner
     *      head   (volatile long)  two ints packed: steal (high) and real (low)
     *        real   next index to take
     *        steal  start of the range a thief has claimed but not finished copying; == real when
     *               no steal is in progress
     *    Live tasks are [real, tail); slots [steal, real) still belong to a thief mid-copy; the rest
     *    are free and null. So:  steal == real == tail  empty;  tail - steal == capacity  full.
     *    Owner-only: stealCache, a value steal had (a lower bound, to skip reading head on push);
     *    popped, the index the last pop took (the worker's held count-downs compare it with the
     *    tail at their hold: WorkerThread).
     *
     * 2. Transitions.
     *      push        tail t -> t + 1 after writing slot t           release store  owner
     *      pop         head (s, r) -> (s, r + 1), or (r + 1, r + 1) when s == r
     *                                                                  CAS head       owner
     *      takeHalf    head (r, r) -> (r + n, r + n)                  CAS head       owner
     *      stealInto   claim:  head (r, r) -> (r, r + n), when tail - r >= n
     *                                                                  CAS head       thief
     *                  copy slots [r, r + n) to the thief's own queue, nulling them
     *                  finish: head (r, r') -> (r', r')                CAS head       thief
     *                  (r' >= r + n: the owner may pop meanwhile; the loop re-reads it)
     *
     * 3. Linearization points. push: the release store of tail. pop, takeHalf: the successful CAS
     *    of head (or the read of head that shows real == tail: empty). stealInto(n): the claim CAS
     *    (n tasks were there: tail only grows, so the count read before the CAS still holds at it);
     *    or the read of tail that shows fewer than n (real only grows, so fewer still held then);
     *    CONTENDED (another steal in progress) is not a queue state and is its own result.
     *    stealHalfInto is stealInto with n computed from a size read just before; it is not one
     *    atomic step (the size may grow meanwhile), only "some older half". It takes no more than
     *    the thief's own room plus one: that room counts [s, tail), so slots that a thief of the
     *    thief's queue claimed are not free until its finish, even after the owner popped every
     *    task behind them (a queue that is empty by real == tail may have no room; writing there
     *    would overwrite slots a paused thief has yet to copy). size: its read of
     *    tail, between two reads of head that agree.
     *
     * 4. Invariants.
     *      I1: steal <= real <= tail and tail - steal <= capacity (as wrapping differences).
     *      I2: push writes index t only when t - steal' < capacity for some steal' it read; as
     *          steal only grows, the slot's previous index t - capacity is below steal: taken,
     *          copied and nulled. So a claimed slot is never overwritten while its thief copies it.
     *      I3: each index in [real, tail) is taken once: by the CAS that moves real past it.
     *      I4: at most one steal is in progress per queue (a claim needs steal == real).
     *      I5: a taken task's slot is nulled by its taker before the index can be reused (before
     *          the finish CAS, or before the owner's next push), so the ring keeps no reference to
     *          tasks that have left it.
     *
     * 5. Memory ordering. tail: release store (publishes the slot written just before it), acquire
     *    load by thieves. head: every change is a CAS (volatile); loads are volatile. Slots: plain;
     *    a thief's reads of claimed slots follow its acquire of tail; a thief's null stores are
     *    published to the owner by its finish CAS, which the owner acquires before reusing the
     *    slots (I2, I5).
     *
     * 6. Progress. push is wait-free. pop, takeHalf and the claim are lock-free (a CAS retried only
     *    when another taker changed head). The finish loop retries only when the owner popped; it
     *    completes within a bounded number of owner pops. stealInto returns CONTENDED instead of
     *    waiting when another thief is mid-steal (so a thief never waits for another thief).
     *
     * 7. Races. Owner pop vs thief claim: both CAS head; the loser re-reads and retries, and the
     *    owner only ever advances real past indices the thief has not claimed. Thief vs thief:
     *    I4; the second gets CONTENDED. Owner push vs thief copy: I2.
     *
     * 8. Resumption. Not applicable: the queue only stores runnables.
     *
     * 9. References. tokio's multi-thread run queue (tokio/src/runtime/scheduler/multi_thread/
     *    queue.rs), whose packed (steal, real) head and steal-half protocol this follows.
     */

    /** Slots in a worker's ring; a power of two. */
    static final int CAPACITY = 256;

    /**
     * Returned by {@link #stealInto} when another thief is in the middle of stealing from this
     * queue: nothing was taken, though the queue may hold tasks.
     */
    static final Runnable CONTENDED = () -> {};

    private final Runnable[] buffer;
    private final int capacity;
    private final int mask;
    /**
     * Owner-only: the index the last successful pop took. Written on every pop, so it lives here,
     * not beside tail, whose line thieves read on every scan.
     */
    private int popped;

    WorkQueue() {
        this(CAPACITY);
    }

    /** A queue of {@code capacity} slots, a power of two of at least 2 (tests use small ones). */
    WorkQueue(int capacity) {
        assert capacity >= 2 && Integer.bitCount(capacity) == 1 : capacity;
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.buffer = new Runnable[capacity];
    }

    /** Returns the number of slots. */
    int capacity() {
        return capacity;
    }

    /**
     * Adds {@code task} at the tail. Owner only.
     *
     * @return {@code false}, without adding, when the ring is full (counting slots a thief has
     *     claimed but not finished copying)
     */
    boolean push(Runnable task) {
        assert task != null;
        int t = tailPlain(); // the owner is the only writer
        if (t - stealCache >= capacity) {
            stealCache = steal(headVolatile());
            if (t - stealCache >= capacity) {
                return false;
            }
        }
        buffer[t & mask] = task; // I2: free slot
        setTailRelease(t + 1); // release: publishes the slot to thieves
        return true;
    }

    /**
     * Adds {@code tasks[from..to)} at the tail, in order, as far as they fit. Owner only.
     *
     * @return how many were added
     */
    int pushAll(Runnable[] tasks, int from, int to) {
        int t = tailPlain();
        int n = Math.min(room(), to - from);
        for (int i = 0; i < n; i++) {
            Runnable task = tasks[from + i];
            assert task != null;
            buffer[(t + i) & mask] = task;
        }
        if (n > 0) {
            setTailRelease(t + n);
        }
        return n;
    }

    /**
     * Returns how many tasks {@link #push} would accept now (slots a thief is still copying count as
     * taken). Owner only: only the owner adds, so the room only grows until the owner pushes.
     */
    int room() {
        return capacity - (tailPlain() - steal(headVolatile()));
    }

    /**
     * The index the next {@link #push} takes: every index below it was pushed earlier. Owner only.
     *
     * @return the tail
     */
    int tailIndex() {
        return tailPlain();
    }

    /**
     * The index of the task the last successful {@link #pop} took. Owner only.
     *
     * @return that index
     */
    int poppedIndex() {
        return popped;
    }

    /** Takes the oldest task, or returns null when empty. Owner only. */
    Runnable pop() {
        long h = headVolatile();
        for (;;) {
            int s = steal(h);
            int r = real(h);
            if (r == tailPlain()) {
                return null;
            }
            long next = s == r ? pack(r + 1, r + 1) : pack(s, r + 1);
            long witness = caxHead(h, next);
            if (witness == h) {
                int i = r & mask;
                Runnable task = buffer[i];
                buffer[i] = null; // I5
                assert task != null;
                popped = r;
                return task;
            }
            h = witness;
        }
    }

    /**
     * Removes the older half of the tasks, for moving to the injection queue when the ring is full.
     * Owner only.
     *
     * @return the removed tasks, oldest first, or null when a steal is in progress (the thief is
     *     making room already) or the ring holds fewer than two tasks
     */
    Runnable[] takeHalf() {
        long h = headVolatile();
        for (;;) {
            int s = steal(h);
            int r = real(h);
            if (s != r) {
                return null;
            }
            int n = (tailPlain() - r) / 2;
            if (n == 0) {
                return null;
            }
            long witness = caxHead(h, pack(r + n, r + n));
            if (witness == h) {
                Runnable[] half = new Runnable[n];
                for (int k = 0; k < n; k++) {
                    int i = (r + k) & mask;
                    half[k] = buffer[i];
                    buffer[i] = null; // I5
                }
                return half;
            }
            h = witness;
        }
    }

    /**
     * Steals the older half (rounded up) of this queue's tasks: returns the newest of them and
     * pushes the others into {@code dst}, oldest first. Called by {@code dst}'s owner. Built on
     * {@link #stealInto}; retries only when the queue shrank under it.
     *
     * @param dst the calling thread's own queue; no more is taken than it has room for, plus the
     *     task returned (its room counts slots a thief of {@code dst} has claimed and not finished
     *     copying: an empty queue whose thief is paused may have no room at all)
     * @return a task to run; null if this queue was empty; {@link #CONTENDED} if another thief is
     *     stealing from it right now
     */
    Runnable stealHalfInto(WorkQueue dst) {
        for (;;) {
            int size = size();
            if (size <= 0) {
                return null;
            }
            Runnable task = stealInto(dst, Math.min(size - size / 2, dst.room() + 1));
            if (task != null) {
                return task;
            }
        }
    }

    /**
     * Test seam: claims the {@code n} oldest tasks as {@link #stealInto} does and stops there, as a
     * thief preempted between its claim and its copy (the slots stay claimed for good).
     *
     * @param n how many to claim
     * @return whether the claim succeeded
     */
    boolean claimOnlyForTest(int n) {
        long h = headVolatile();
        int s = steal(h);
        int r = real(h);
        return s == r && tailAcquire() - r >= n && caxHead(h, pack(s, r + n)) == h;
    }

    /**
     * Steals the {@code n} oldest tasks if this queue holds at least {@code n}: returns the newest of
     * them and pushes the others into {@code dst}, oldest first. Called by {@code dst}'s owner.
     *
     * @param dst the calling thread's own queue, which must have room for {@code n - 1} tasks
     * @param n how many to take, from 1 to half this queue's capacity (rounded up)
     * @return a task to run; null if this queue held fewer than {@code n} tasks; {@link #CONTENDED}
     *     if another thief is stealing from it right now
     */
    Runnable stealInto(WorkQueue dst, int n) {
        assert dst != this;
        assert n >= 1 && n <= capacity - capacity / 2 : n;
        int dstTail = dst.tailPlain();
        assert dst.room() >= n - 1 : "no room to steal into";
        // claim
        long h = headVolatile();
        int first;
        for (;;) {
            int s = steal(h);
            int r = real(h);
            if (s != r) {
                return CONTENDED; // I4
            }
            if (tailAcquire() - r < n) {
                return null;
            }
            long witness = caxHead(h, pack(s, r + n));
            if (witness == h) {
                first = r;
                break;
            }
            h = witness;
        }
        // copy: the claimed slots are ours until the finish below (I2)
        Runnable[] src = buffer;
        Runnable[] to = dst.buffer;
        for (int k = 0; k < n - 1; k++) {
            int i = (first + k) & mask;
            to[(dstTail + k) & mask] = src[i];
            src[i] = null; // I5
        }
        int last = (first + n - 1) & mask;
        Runnable task = src[last];
        src[last] = null; // I5
        // finish: steal catches up with real (which the owner may have advanced meanwhile)
        h = pack(first, first + n);
        for (;;) {
            int r = real(h);
            long witness = caxHead(h, pack(r, r));
            if (witness == h) {
                break;
            }
            assert steal(witness) == first && steal(witness) != real(witness);
            h = witness;
        }
        if (n > 1) {
            dst.setTailRelease(dstTail + n - 1); // publishes the copied slots to dst's thieves
        }
        assert task != null;
        return task;
    }

    /**
     * Returns the number of tasks at some instant during the call (tasks being copied by a thief
     * are not counted). Any thread.
     */
    int size() {
        long h = headVolatile();
        for (;;) {
            int t = tailAcquire();
            long again = headVolatile();
            if (again == h) { // head did not move around the read of tail: t - real held then
                return t - real(h);
            }
            h = again;
        }
    }

    /**
     * Returns the index of the next task the owner will take (it changes whenever a task leaves the
     * queue). Thieves compare two readings to tell a busy owner from a stalled one. Any thread.
     */
    int headIndex() {
        return real(headVolatile());
    }

    // --- the packed head ---

    private static int steal(long head) {
        return (int) (head >>> 32);
    }

    private static int real(long head) {
        return (int) head;
    }

    private static long pack(int steal, int real) {
        return ((long) steal << 32) | (real & 0xffff_ffffL);
    }

    // --- accessors, named by memory mode ---

    private long headVolatile() {
        return (long) HEAD.getVolatile(this);
    }

    private long caxHead(long expected, long value) {
        return (long) HEAD.compareAndExchange(this, expected, value);
    }

    private int tailPlain() {
        return (int) TAIL.get(this);
    }

    private int tailAcquire() {
        return (int) TAIL.getAcquire(this);
    }

    private void setTailRelease(int value) {
        TAIL.setRelease(this, value);
    }

    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(WorkQueueHead.class, "head", long.class);
            TAIL = l.findVarHandle(WorkQueueTail.class, "tail", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}

/*
 * Field layout. HotSpot places a superclass's fields before its subclass's, so this chain puts head
 * (CASed by thieves and the owner) and tail (written by the owner on every push) on different cache
 * lines, padded against each other and against neighbouring objects (128 bytes: adjacent-line
 * prefetch).
 */

@SuppressWarnings("unused")
abstract class WorkQueuePadBefore {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p0a, p0b, p0c, p0d, p0e, p0f;
}

abstract class WorkQueueHead extends WorkQueuePadBefore {
    /** The packed (steal, real) head; see WorkQueue's overview. */
    volatile long head;
}

@SuppressWarnings("unused")
abstract class WorkQueuePadBetween extends WorkQueueHead {
    long p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p1a, p1b, p1c, p1d, p1e, p1f;
}

abstract class WorkQueueTail extends WorkQueuePadBetween {
    /** Next index to push; written only by the owner. */
    volatile int tail;
    /** Owner-only: a value steal had (steal only grows), so tail - stealCache bounds the size. */
    int stealCache;
}

@SuppressWarnings("unused")
abstract class WorkQueueFields extends WorkQueueTail {
    long p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p2a, p2b, p2c, p2d, p2e, p2f;
}
