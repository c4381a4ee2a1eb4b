package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.Blocking;
import dev.coro.internal.Durations;
import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitOrder;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A gate that combines pending operations into batches (the batching form of P4215's coalescing
 * gate): each caller {@linkplain #submit submits} one item, the gate calls the batch function once
 * for a list of waiting items, and each caller receives the element of the result at its item's
 * position, or the batch's error. A write-behind log, a bulk insert, a multi-get: one round trip for
 * many callers, without a thread that polls.
 *
 * <p><b>Batching rule.</b> At most {@link #maxConcurrentBatches()} batches run at once (1 by
 * default). When fewer run, a batch is formed from the oldest waiting items, at most
 * {@link #maxBatchSize()} of them, as soon as either {@code maxBatchSize} items wait or the oldest
 * waiting item has waited the {@linkplain #lingerNanos() linger} (zero by default: at once). So while
 * a batch runs, new items accumulate and form the next one: the coalescing of a write-behind log.
 * The batch function gets the items in submission order, as an unmodifiable list; its result must
 * have one element per item: element {@code i} is the value of the caller of item {@code i}.
 *
 * <p><b>Order and fairness.</b> FIFO: items are taken in the order of their submissions, inside a
 * batch and across batches (every item of a batch was submitted before every item of the next). Items
 * submitted concurrently are ordered by the gate.
 *
 * <p><b>Outcomes.</b> A batch that completes with a list of the right size gives each caller its
 * element (which may be null). A batch that fails gives each of its callers that error; a batch
 * that completes cancelled cancels each of its callers; a batch whose list is null or has the wrong
 * size fails each of its callers with {@link IllegalStateException} naming both sizes (a batch
 * function that throws, or returns a null task, fails its batch). Only the batch's own callers are
 * affected: the next batch is formed as usual.
 *
 * <p><b>Time.</b> Linger is measured on the clock of the scheduler the gate was created with, so a
 * virtual-time scheduler drives the gate exactly in tests. The gate keeps one timer, for the oldest
 * waiting item's linger, never one per item.
 *
 * <p><b>Cancellation.</b> A caller cancelled while its item waits leaves the queue: its item is
 * never sent, and nothing of it stays linked. A caller cancelled after its item was taken into a
 * batch completes on the cancelled channel at once; its item is still sent (the batch is not
 * cancelled: the other callers need it) and its element is dropped. A submission is taken when the
 * gate's decision takes it; a cancellation racing that decision has one winner.
 *
 * <p><b>Where work runs.</b> The batch function is called, and the batch task started, on the
 * gate's scheduler ({@link Task#startOn}): on a pool, by submission; on an inline or virtual-time
 * scheduler, on the thread that formed the batch (a submitter, the finishing batch, the linger
 * timer). The batch function must not wait for this gate's own results (it would wait for itself).
 * Each caller resumes on its own scheduler: inline (through a trampoline) when the thread that
 * completes the batch already runs it, otherwise by submission.
 *
 * <p><b>Close.</b> {@link #close()} completes every waiting item's caller on the cancelled channel
 * (those items are never sent), and every later submission completes cancelled; batches already
 * formed run to their end and deliver their results.
 *
 * <p><b>Bad input.</b> {@code maxBatchSize < 1}, {@code maxConcurrentBatches < 1} or a negative
 * linger: {@link IllegalArgumentException} naming the argument; a null batch function, linger,
 * scheduler or item: {@link NullPointerException} naming it.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions of a submitter before its
 * submission starts happen-before the batch function's call that includes its item; actions of the
 * batch before it completes happen-before each of its callers' continuations.
 *
 * {@snippet :
 * BatchGate<Entry, Long> log = new BatchGate<>(entries -> disk.appendAll(entries),  // Task<List<Long>>: offsets
 *         64, Duration.ofMillis(2), scheduler);                                     // up to 64 per write, 2 ms linger
 * Task<Long> offset = log.submit(entry);
 * }
 *
 * @param <I> the item type
 * @param <O> the result type of one item
 */
public final class BatchGate<I, O> {
    /* Implementation overview.
     *
     * The gate writes no lock-free algorithm of its own: it is a rule on the AdmissionEngine (its
     * overview holds the intake, ownership, departures, the one timer and close). A submission is a
     * waiter whose tag is its Slot (item, result promise, its WaitNode); "taken into a batch" is the
     * engine admitting that waiter. The caller's task is: wait for admission, then wait on the slot's
     * promise, which the batch completes.
     *
     * 1. Representation (owner only unless said).
     *    waiting   ArrayDeque<Slot>: every arrival (ruleArrived), in arrival order, not yet in a
     *              batch; slots whose node settled (cancelled, abandoned) are dropped from the head
     *              and by a purge when they crowd it (part 7).
     *    forming   the Batch whose members are chosen and not all met yet, or null. Its members are
     *              the oldest live waiting slots at the flush (at most maxBatchSize); a member is met
     *              when the engine offers it (taken) or its node has settled (departed untaken).
     *    running   batches formed and not finished (forming included); <= maxConcurrent.
     *    Slot.batch / taken / arrivedAt: owner only. Slot.node: written by the submitter before the
     *              push that publishes the slot (WaitQueue part 5), read by the owner after the take.
     *    pending   AtomicLong, any thread: arrivals (arrive) minus refusals, departures and takes; a
     *              snapshot for pending(), never used by a decision.
     * 2. Transitions (rule hooks).
     *    ruleArrived(s):  stamp arrivedAt (with a linger), append s to waiting.
     *    ruleTryEnter(s): s a member of forming: take it (admit), dispatch forming if every member is
     *      met. Else (s is the oldest live waiter): first dispatch a forming batch whose members are
     *      all met; refuse if running == maxConcurrent (a finishing batch's release offers s again);
     *      refuse while s lingers and fewer than maxBatchSize live slots wait (ruleReadyAt: the
     *      engine's one timer offers s again when its linger ends); else flush: forming = s and the
     *      next live slots up to maxBatchSize, running++, and take s.
     *    ruleDeparted:    drop settled heads of waiting, purge if crowded, dispatch forming if met.
     *    ruleUndo(s):     s was taken but its admit lost to its cancellation: its item stays in
     *      the batch (the take came first); only the pending count is corrected.
     *    ruleLeave(n):    n batches finished: running -= n (the batch's exit, release(1)).
     *    dispatch (owner): the batch's items (the taken members, in member order; never none, as
     *      the flush takes its first member at once) go to the batch function, started on the
     *      scheduler; when it ends, each caller's promise is completed, then release(1).
     * 3. Linearization points. submit: the push of its waiter (its place in line). Taken: the owner's
     *    ruleTryEnter that takes it. Cancel while waiting: its node's settle CAS. close: the engine's.
     * 4. Invariants. B1: at most one forming batch; every member precedes every non-member still
     *    waiting (members are the oldest live slots, and the engine offers in arrival order), so a
     *    non-member is offered only once every member is met (asserted). B2: items of a batch are
     *    in submission order, and batches are formed (and dispatched) in submission order. B3:
     *    running <= maxConcurrent. B4: every taken item is in exactly one dispatched batch; an item
     *    whose node settled before its take is in none.
     * 5. Memory ordering: the engine's (ownership orders the owner-only state); the promise
     *    publishes each element to its caller.
     * 6. Progress and fairness: lock-free as the engine; FIFO (the engine's arrival order, no
     *    barging: the engine has no fast path here, every arrival is queued and seen by the rule).
     * 7. Cancellation races. Before the flush: the node settles, the engine drops it when met and
     *    never offers it; the flush counts only live slots. Between the flush and its offer: the
     *    engine drops or abandons it (never offers it), its departure reaches ruleDeparted, which
     *    finds every member met and dispatches without it. Racing its own offer: the take wins (the
     *    owner decided first); the admit CAS then loses, ruleUndo; the caller completes cancelled
     *    and its element is dropped. After: the caller's wait on the promise ends cancelled. Close
     *    abandons the waiting nodes: members not yet offered depart as above, so a forming batch
     *    is dispatched with the members it took.
     * 8. Resumption: the engine's (admissions) and the promise's (results).
     * 9. References: P4215's future gates (coalescing); DESIGN principles 5 and 6.
     */

    private final Rule<I, O> rule;

    /**
     * Creates a gate that flushes as soon as the previous batch has finished (no linger), one batch
     * at a time, starting batches on {@link Scheduler#inline()}.
     *
     * @param batch the batch function: items in submission order to a task of one result per item
     * @param maxBatchSize the most items in one batch
     * @throws IllegalArgumentException if {@code maxBatchSize < 1}
     * @throws NullPointerException if {@code batch} is null
     */
    public BatchGate(Function<? super List<I>, ? extends Task<? extends List<O>>> batch, int maxBatchSize) {
        this(batch, maxBatchSize, Duration.ZERO, 1, Scheduler.inline());
    }

    /**
     * Creates a gate that runs one batch at a time and lets the oldest waiting item linger up to
     * {@code linger} for more items before a batch that is not full is formed.
     *
     * @param batch the batch function: items in submission order to a task of one result per item
     * @param maxBatchSize the most items in one batch
     * @param linger how long the oldest waiting item may wait for more items (zero: no wait)
     * @param scheduler where batches start; its clock times the linger
     * @throws IllegalArgumentException if {@code maxBatchSize < 1} or {@code linger} is negative
     * @throws NullPointerException if an argument is null
     */
    public BatchGate(Function<? super List<I>, ? extends Task<? extends List<O>>> batch, int maxBatchSize,
            Duration linger, Scheduler scheduler) {
        this(batch, maxBatchSize, linger, 1, scheduler);
    }

    /**
     * Creates a gate.
     *
     * @param batch the batch function: items in submission order to a task of one result per item
     * @param maxBatchSize the most items in one batch
     * @param linger how long the oldest waiting item may wait for more items (zero: no wait)
     * @param maxConcurrentBatches the most batches running at once
     * @param scheduler where batches start; its clock times the linger
     * @throws IllegalArgumentException if {@code maxBatchSize < 1}, {@code maxConcurrentBatches < 1},
     *     or {@code linger} is negative
     * @throws NullPointerException if an argument is null
     */
    public BatchGate(Function<? super List<I>, ? extends Task<? extends List<O>>> batch, int maxBatchSize,
            Duration linger, int maxConcurrentBatches, Scheduler scheduler) {
        Objects.requireNonNull(batch, "batch");
        Objects.requireNonNull(linger, "linger");
        Objects.requireNonNull(scheduler, "scheduler");
        if (maxBatchSize < 1) {
            throw new IllegalArgumentException("maxBatchSize must be positive, got " + maxBatchSize);
        }
        if (maxConcurrentBatches < 1) {
            throw new IllegalArgumentException("maxConcurrentBatches must be positive, got " + maxConcurrentBatches);
        }
        if (linger.isNegative()) {
            throw new IllegalArgumentException("linger must not be negative, got " + linger);
        }
        this.rule = new Rule<>(batch, maxBatchSize, Durations.toNanos(linger), maxConcurrentBatches, scheduler);
        rule.describedAs("GATE", this); // dumped as waiting on this gate; a caller its close refuses names it
    }

    /**
     * Returns a task that submits {@code item} (once per start), waits for the batch that takes it,
     * and completes with the batch's element for it: the value at its position, or the batch's
     * error, or cancelled if the batch completes cancelled. If the task is cancelled while the item
     * waits, the item leaves the queue and is never sent; if it is cancelled after the item was
     * taken, it completes cancelled at once and the item is still sent. After {@link #close()}, the
     * task completes cancelled and sends nothing.
     *
     * @param item the item
     * @return the task
     * @throws NullPointerException if {@code item} is null
     */
    public Task<O> submit(I item) {
        Objects.requireNonNull(item, "item");
        return Task.defer(() -> {
            Slot<I, O> slot = new Slot<>(item);
            Consumer<Object> door = rule.waitingDoor(slot);
            return Task.<Void>create(completer -> {
                slot.node = (WaitNode) completer; // a Task.create completer is its wait node; published by the push
                door.accept(completer);
            }).then(slot.result.task());
        });
    }

    /**
     * Submits {@code item} and blocks the calling thread until its result arrives (parking only the
     * virtual thread on a virtual thread): {@code submit(item).join()}.
     *
     * @param item the item
     * @return the batch's element for {@code item}
     * @throws NullPointerException if {@code item} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed before the item is
     *     taken, the batch completes cancelled, or the thread is interrupted while it waits
     * @throws RuntimeException the batch's error (a checked one wrapped in
     *     {@link java.util.concurrent.CompletionException})
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public O call(I item) {
        Blocking.checkAllowed(BatchGate.class, "call");
        return submit(item).join();
    }

    /**
     * Closes the gate: every waiting item's caller completes on the cancelled channel (the item is
     * never sent), and every later submission completes cancelled; joining such a caller's task
     * throws a {@link java.util.concurrent.CancellationException} whose message names the gate and
     * says it is closed. Batches already formed run to
     * their end and deliver their results. Idempotent; never throws.
     */
    public void close() {
        rule.close();
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return rule.isClosed();
    }

    /**
     * Returns the number of submitted items not yet taken into a batch, not cancelled and not
     * refused: a racy snapshot for monitoring (a cancellation is counted a moment after it settles).
     *
     * @return the items waiting
     */
    public long pending() {
        return rule.pending.get();
    }

    /**
     * Returns the most items in one batch.
     *
     * @return the maximum batch size
     */
    public int maxBatchSize() {
        return rule.maxBatchSize;
    }

    /**
     * Returns how long the oldest waiting item may wait for more items before a batch that is not
     * full is formed.
     *
     * @return the linger in nanoseconds (0: none)
     */
    public long lingerNanos() {
        return rule.linger;
    }

    /**
     * Returns the most batches running at once.
     *
     * @return the bound
     */
    public int maxConcurrentBatches() {
        return rule.maxConcurrent;
    }

    @Override
    public String toString() {
        return "BatchGate[maxBatchSize=" + rule.maxBatchSize + ", linger=" + rule.linger + "ns, maxConcurrentBatches="
                + rule.maxConcurrent + ", pending=" + pending() + (isClosed() ? ", closed]" : "]");
    }

    /**
     * For tests: the waiter nodes the engine links plus the slots the rule holds (a waiting item
     * counts twice); racy unless quiescent.
     */
    int linkedWaiters() {
        return rule.linkedWaiters() + rule.waiting.size();
    }

    /** One submission: what the batch gets, what its caller waits on, and its wait node. */
    private static final class Slot<I, O> {
        final I item;
        final Promise<O> result = new Promise<>();
        /** The caller's wait node; written before the push that publishes the slot. */
        WaitNode node;
        /** Owner only: when the engine took the arrival (with a linger). */
        long arrivedAt;
        /** Owner only: the batch it was chosen for, or null. */
        Batch<I, O> batch;
        /** Owner only: taken (admitted) into its batch. */
        boolean taken;

        Slot(I item) {
            this.item = item;
        }

        /** Owner only: still waiting to be taken (neither settled nor being cancelled). */
        boolean live() {
            return !node.isSettled() && !node.isCancelRequested();
        }
    }

    /** The members chosen at a flush; those met so far are before {@code cursor}. */
    private static final class Batch<I, O> {
        final List<Slot<I, O>> members;
        int cursor;

        Batch(int capacity) {
            members = new ArrayList<>(capacity);
        }
    }

    /** The rule (overview above). */
    private static final class Rule<I, O> extends AdmissionEngine {
        private static final int PURGE_SLACK = 32;

        final Function<? super List<I>, ? extends Task<? extends List<O>>> batchFunction;
        final int maxBatchSize;
        final long linger;
        final int maxConcurrent;
        final Scheduler scheduler;
        final AtomicLong pending = new AtomicLong();
        final ArrayDeque<Slot<I, O>> waiting = new ArrayDeque<>();
        private Batch<I, O> forming;
        private int running;
        private long departedSincePurge;

        Rule(Function<? super List<I>, ? extends Task<? extends List<O>>> batchFunction, int maxBatchSize, long linger,
                int maxConcurrent, Scheduler scheduler) {
            super(WaitOrder.arrival(), true, linger > 0 ? new SchedulerClock(scheduler) : null);
            this.batchFunction = batchFunction;
            this.maxBatchSize = maxBatchSize;
            this.linger = linger;
            this.maxConcurrent = maxConcurrent;
            this.scheduler = scheduler;
        }

        @Override
        protected int arrive(Object tag) {
            pending.incrementAndGet();
            return QUEUE;
        }

        @Override
        protected void arrivalRefused(Object tag) {
            pending.decrementAndGet(); // closed: never queued
        }

        @Override
        protected Object ruleArrived(Object tag) {
            @SuppressWarnings("unchecked")
            Slot<I, O> s = (Slot<I, O>) tag;
            if (linger > 0) {
                s.arrivedAt = scheduler.nanoTime();
            }
            waiting.add(s);
            return tag;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            @SuppressWarnings("unchecked")
            Slot<I, O> s = (Slot<I, O>) tag;
            if (s.batch == null) {
                dispatchIfMet(); // B1: every member of a forming batch precedes s, so all are met
                assert forming == null : "B1: a non-member offered before the forming batch's members";
                if (running >= maxConcurrent) {
                    return false; // a finishing batch's release offers s again
                }
                if (linger > 0 && scheduler.nanoTime() - s.arrivedAt < linger && !liveAtLeast(maxBatchSize)) {
                    return false; // lingering: ruleReadyAt arms the one timer for its end
                }
                flush(s);
            }
            assert s.batch == forming && !s.taken;
            s.taken = true;
            pending.decrementAndGet();
            dispatchIfMet();
            return true;
        }

        @Override
        protected long ruleReadyAt(Object tag) {
            if (running >= maxConcurrent) {
                return NO_DEADLINE;
            }
            long at = ((Slot<?, ?>) tag).arrivedAt;
            return at > Long.MAX_VALUE - linger ? NO_DEADLINE : at + linger;
        }

        @Override
        protected boolean ruleCanEnter() {
            return forming != null || running < maxConcurrent;
        }

        @Override
        protected void ruleLeave(long released) {
            running -= (int) released;
            assert running >= 0 : "B3: more batches finished than formed";
        }

        @Override
        protected long ruleAdmitted() {
            return running;
        }

        @Override
        protected void ruleUndo(Object tag) {
            pending.incrementAndGet(); // its departure is counted too; the item stays in its batch
        }

        @Override
        protected void ruleDeparted(long weight) {
            pending.addAndGet(-weight);
            while (!waiting.isEmpty() && waiting.peekFirst().node.isSettled()) {
                waiting.pollFirst();
            }
            departedSincePurge += weight;
            if (departedSincePurge > waiting.size() / 2 + PURGE_SLACK) { // amortized O(1) per departure
                departedSincePurge = 0;
                waiting.removeIf(w -> w.node.isSettled());
            }
            dispatchIfMet();
        }

        /** Whether at least {@code n} live slots wait (walks at most until it has seen n live ones). */
        private boolean liveAtLeast(int n) {
            if (waiting.size() < n) {
                return false;
            }
            int live = 0;
            for (Slot<I, O> w : waiting) {
                if (w.live() && ++live >= n) {
                    return true;
                }
            }
            return false;
        }

        /** Forms a batch: {@code first} (the oldest live slot, being offered) and the next live slots. */
        private void flush(Slot<I, O> first) {
            Batch<I, O> b = new Batch<>(Math.min(maxBatchSize, waiting.size()));
            for (Slot<I, O> w; (w = waiting.pollFirst()) != null; ) {
                if (w == first) {
                    break;
                }
                assert w.node.isSettled() : "B1: a live slot older than the one offered";
            }
            first.batch = b;
            b.members.add(first);
            for (Iterator<Slot<I, O>> it = waiting.iterator(); it.hasNext() && b.members.size() < maxBatchSize; ) {
                Slot<I, O> w = it.next();
                it.remove(); // live: a member; not live: departed, never offered
                if (w.live()) {
                    w.batch = b;
                    b.members.add(w);
                }
            }
            forming = b;
            running++;
            assert running <= maxConcurrent : "B3";
        }

        /** Dispatches the forming batch if each member has been taken or has departed. */
        private void dispatchIfMet() {
            Batch<I, O> b = forming;
            if (b == null) {
                return;
            }
            while (b.cursor < b.members.size()) {
                Slot<I, O> m = b.members.get(b.cursor);
                if (!m.taken && !m.node.isSettled()) {
                    return; // the engine offers it next, or it departs: both come back here
                }
                b.cursor++;
            }
            forming = null;
            List<Slot<I, O>> slots = new ArrayList<>(b.members.size());
            List<I> items = new ArrayList<>(b.members.size());
            for (Slot<I, O> m : b.members) {
                m.batch = null;
                if (m.taken) {
                    slots.add(m);
                    items.add(m.item);
                }
            }
            assert !slots.isEmpty() : "the flush takes its first member at once";
            List<I> view = Collections.unmodifiableList(items);
            Task.<List<O>>defer(() -> batchFunction.apply(view))
                    .outcome()
                    .map(outcome -> deliver(slots, outcome))
                    .startOn(scheduler)
                    .toCompletableFuture();
        }

        /** Completes each caller of a finished batch with its element, then frees the batch's place. */
        private Void deliver(List<Slot<I, O>> slots, Outcome<List<O>> outcome) {
            try {
                switch (outcome) {
                    case Outcome.Value<List<O>> v -> {
                        List<O> out = v.value();
                        if (out == null || out.size() != slots.size()) {
                            failAll(slots, new IllegalStateException("the batch function returned "
                                    + (out == null ? "a null list" : out.size() + " results")
                                    + " for " + slots.size() + " items"));
                        } else {
                            for (int i = 0; i < slots.size(); i++) {
                                slots.get(i).result.complete(out.get(i));
                            }
                        }
                    }
                    case Outcome.Failure<List<O>> f -> failAll(slots, f.error());
                    case Outcome.Cancelled<List<O>> c -> {
                        for (Slot<I, O> s : slots) {
                            s.result.cancel();
                        }
                    }
                }
            } catch (RuntimeException | Error e) {
                failAll(slots, e); // a result list whose get throws
            } finally {
                release(1); // ruleLeave: the batch's place
            }
            return null;
        }

        private static void failAll(List<? extends Slot<?, ?>> slots, Throwable error) {
            for (Slot<?, ?> s : slots) {
                s.result.fail(error);
            }
        }

        @Override
        public String toString() {
            return "BatchGate";
        }
    }
}
