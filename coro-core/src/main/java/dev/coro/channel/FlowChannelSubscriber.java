package dev.coro.channel;

import dev.coro.task.Completer;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Flow;

/**
 * The subscriber of {@link Flows#channel(Flow.Publisher, int)}: takes the publisher's signals into a
 * bounded queue, and a pump task sends them into the channel, asking the publisher for one more
 * element each time one has gone into the channel.
 */
final class FlowChannelSubscriber<T> implements Flow.Subscriber<T> {
    /* Implementation overview.
     *
     * 1. Representation (each atomic field has its VarHandle, named after it). channel:
     *    buffered(bufferSize), what the caller receives from. queue (ConcurrentLinkedQueue;
     *    producers: the publisher's serial signals, rule 1.3, and the upstream drain once a
     *    subscription call threw; one consumer: the pump): elements, then at most one terminal
     *    marker (COMPLETE or a Failed). credit (volatile long): requested from the publisher and
     *    not yet delivered. subscription (volatile, set once by CAS): the first one given to
     *    onSubscribe. waiter (volatile): the pump's completer while it waits for the queue, else
     *    null. upstreamDone (volatile): a terminal signal arrived, or
     *    the subscription was cancelled: the pump asks for nothing more. pendingRequests,
     *    pendingCancel, upstreamWip: what is to be passed to the subscription, and the count of
     *    callers of drainUpstream, whoever raises it from 0 passes everything on, serially.
     *
     * 2. Transitions. onSubscribe: keep the first (cancel any later one: rule 2.5), credit =
     *    bufferSize, request(bufferSize). onNext: credit - 1; below zero the publisher broke rule
     *    1.1: cancel it, queue Failed(IllegalStateException). Else queue the element. onComplete /
     *    onError: upstreamDone, queue the marker. The pump loop: take the queue's head (waiting for
     *    one); an element: channel.send (waits while the channel is full), then credit + 1 and
     *    request(1) unless upstreamDone; the send fails (the channel was closed or cancelled by its
     *    users): cancel the subscription and stop; COMPLETE: close(); Failed: close(cause). Every
     *    request and cancel goes through drainUpstream, so the subscription sees them one at a
     *    time (rule 2.7) although the pump, a receiving thread and onNext may ask at once.
     *    consumerGone (Flows.generator's consumption ended): upstreamDone, cancel the channel and
     *    the subscription at once, clear the queue and queue STOP, which ends the pump.
     *
     * 3. Linearization points: the queue's offer for each signal; the pump's send for the element's
     *    entry into the channel (its order is the queue's, which is the publisher's).
     *
     * 4. Invariants. I1: credit + (elements queued or in the pump's hand) <= bufferSize, so the
     *    queue never holds more than bufferSize elements from a publisher that keeps rule 1.1, and
     *    the channel holds at most bufferSize more. I2: no request after a terminal signal (rule
     *    2.3: onComplete and onError call nothing on the subscription, even when the pump runs
     *    inline in them).
     *
     * 5. Memory ordering: the queue and the atomics publish elements and markers; the pump's steps
     *    are ordered by its task run.
     *
     * 6. Progress: onNext, onError, onComplete are lock-free (an offer and a wake); drainUpstream
     *    is wait-free for every caller but the one that drains, which loops while others ask.
     *
     * 7. Races. waiter: as FlowSubscription part 7 (publish the completer, re-check the queue;
     *    offer, then take the completer).
     *
     * 8. Resumption: the pump runs on Scheduler.inline(): on the thread whose signal or receive
     *    wakes it, through that thread's trampoline, so onNext -> send -> request(1) -> onNext is a
     *    loop, not a recursion.
     *
     * 9. References: Reactive Streams 1.0.4, rules 1.1, 2.1-2.13.
     */

    /** The queue's marker of onComplete. */
    private static final Object COMPLETE = new Object();
    /** The queue's marker of {@link #consumerGone()}: the pump ends without touching the channel. */
    private static final Object STOP = new Object();

    /** The queue's marker of onError (or of a broken rule): the channel closes with the cause. */
    private record Failed(Throwable cause) {}

    private final Channel<T> channel;
    private final int bufferSize;
    private final ConcurrentLinkedQueue<Object> queue = new ConcurrentLinkedQueue<>();
    /** Requested from the publisher and not yet delivered (I1). */
    private volatile long credit;
    /** The first subscription given to onSubscribe; set once. */
    private volatile Flow.Subscription subscription;
    /** The pump's completer while it waits for the queue, else null. */
    private volatile Completer<Void> waiter;
    private volatile boolean upstreamDone;
    /** Requests not yet passed to the subscription (see {@link #drainUpstream}). */
    private volatile long pendingRequests;
    /** A cancel not yet passed to the subscription. */
    private volatile boolean pendingCancel;
    /** Whether cancel was passed; read and written by the upstream drain only. */
    private boolean cancelSent;
    /** The upstream drain's work-in-progress count: whoever raises it from 0 drains. */
    private volatile int upstreamWip;

    FlowChannelSubscriber(int bufferSize) {
        this.bufferSize = bufferSize;
        this.channel = Channel.buffered(bufferSize);
    }

    Channel<T> channel() {
        return channel;
    }

    /** Starts the pump (it waits for the first signal). */
    FlowChannelSubscriber<T> start() {
        Task.loop(Boolean.TRUE, more -> more, ignored -> Task.defer(this::pumpStep)).toCompletableFuture();
        return this;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        Objects.requireNonNull(s, "subscription (Reactive Streams rule 2.13)");
        if (!SUBSCRIPTION.compareAndSet(this, (Flow.Subscription) null, s)) {
            s.cancel(); // rule 2.5
            return;
        }
        if (upstreamDone || channel.isClosedForSend()) { // subscribe failed, or the channel's users
            // closed or cancelled it before the subscription came
            upstreamDone = true;
            cancelUpstream();
            return;
        }
        credit = bufferSize; // before the request: no element comes earlier
        requestUpstream(bufferSize);
    }

    @Override
    public void onNext(T element) {
        Objects.requireNonNull(element, "element (Reactive Streams rule 2.13)");
        if (upstreamDone) {
            return; // after cancel (rule 2.8) or a broken rule
        }
        if ((long) CREDIT.getAndAdd(this, -1L) <= 0) {
            upstreamDone = true;
            cancelUpstream();
            offer(new Failed(new IllegalStateException("the publisher sent more elements than requested "
                    + "(Reactive Streams rule 1.1): the buffer of " + bufferSize + " is full")));
            return;
        }
        offer(element);
    }

    @Override
    public void onError(Throwable error) {
        Objects.requireNonNull(error, "error (Reactive Streams rule 2.13)");
        if (!upstreamDone) {
            upstreamDone = true;
            offer(new Failed(error));
        }
    }

    @Override
    public void onComplete() {
        if (!upstreamDone) {
            upstreamDone = true;
            offer(COMPLETE);
        }
    }

    /**
     * The one consumer of the channel is gone ({@link Flows#generator}'s consumption ended): cancel
     * the subscription now, even if the publisher is silent, drop what is queued and end the pump.
     * Idempotent. A subscription still to come is cancelled by onSubscribe, which reads
     * upstreamDone after publishing the subscription, as this reads the subscription after writing
     * upstreamDone (both volatile: one of the two sees the other).
     */
    void consumerGone() {
        upstreamDone = true;
        channel.cancel(); // a send the pump is waiting in fails: it stops (sent)
        if (subscription != null) {
            cancelUpstream();
        }
        queue.clear();
        offer(STOP); // wakes a pump waiting for the queue
    }

    /** The publisher's subscribe threw (breaking rule 1.9): the channel closes with what it threw. */
    void subscribeFailed(RuntimeException e) {
        if (!upstreamDone) {
            upstreamDone = true;
            if (subscription != null) {
                cancelUpstream();
            }
            offer(new Failed(e));
        }
    }

    private void offer(Object item) {
        queue.offer(item);
        @SuppressWarnings("unchecked")
        Completer<Void> w = (Completer<Void>) WAITER.getAndSet(this, (Completer<Void>) null);
        if (w != null) {
            w.complete(null);
        }
    }

    /** One turn of the pump: wait for the queue, or move its head into the channel. */
    @SuppressWarnings("unchecked")
    private Task<Boolean> pumpStep() {
        Object item = queue.poll();
        if (item == null) {
            return Task.<Void>create(c -> {
                waiter = c; // volatile write, then the re-check: part 7
                if (!queue.isEmpty() && WAITER.compareAndSet(this, c, null)) {
                    c.complete(null);
                }
            }).map(ignored -> true);
        }
        if (item == COMPLETE) {
            channel.close();
            return Task.value(false);
        }
        if (item == STOP) {
            return Task.value(false);
        }
        if (item instanceof Failed f) {
            channel.close(f.cause());
            return Task.value(false);
        }
        return channel.send((T) item).transform(o -> Task.value(sent(o)));
    }

    private boolean sent(Outcome<Void> o) {
        if (o instanceof Outcome.Value<Void>) {
            if (!upstreamDone) { // I2
                CREDIT.getAndAdd(this, 1L);
                requestUpstream(1);
            }
            return true;
        }
        // the channel was closed or cancelled by its users: the element and the rest are dropped
        upstreamDone = true;
        queue.clear();
        cancelUpstream();
        return false;
    }

    private void requestUpstream(long n) {
        PENDING_REQUESTS.getAndAdd(this, n); // at most bufferSize outstanding (I1): no overflow
        drainUpstream();
    }

    private void cancelUpstream() {
        pendingCancel = true;
        drainUpstream();
    }

    /**
     * Passes requests and cancel to the subscription one call at a time (rule 2.7: the pump, a
     * receiving thread and the publisher's onNext may ask at once); concurrent requests merge.
     */
    private void drainUpstream() {
        if ((int) UPSTREAM_WIP.getAndAdd(this, 1) != 0) {
            return; // the thread that drains now passes it on
        }
        Flow.Subscription s = subscription;
        int missed = 1;
        do {
            try {
                if (pendingCancel) {
                    if (!cancelSent) {
                        cancelSent = true;
                        s.cancel();
                    }
                } else {
                    long n = (long) PENDING_REQUESTS.getAndSet(this, 0L);
                    if (n > 0) {
                        s.request(n);
                    }
                }
            } catch (RuntimeException e) { // the publisher broke rule 3.15 or 3.16: end the stream
                pendingCancel = true;
                if (!cancelSent) {
                    cancelSent = true;
                    try {
                        s.cancel();
                    } catch (RuntimeException ignored) {
                        // the stream ends anyway
                    }
                }
                if (!upstreamDone) {
                    upstreamDone = true;
                    offer(new Failed(e));
                }
            }
            missed = (int) UPSTREAM_WIP.getAndAdd(this, -missed) - missed;
        } while (missed != 0);
    }

    @Override
    public String toString() {
        return "Flows.channel subscriber[" + channel + ", credit " + credit + "]";
    }

    private static final VarHandle CREDIT;
    private static final VarHandle SUBSCRIPTION;
    private static final VarHandle WAITER;
    private static final VarHandle PENDING_REQUESTS;
    private static final VarHandle UPSTREAM_WIP;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CREDIT = lookup.findVarHandle(FlowChannelSubscriber.class, "credit", long.class);
            SUBSCRIPTION = lookup.findVarHandle(FlowChannelSubscriber.class, "subscription", Flow.Subscription.class);
            WAITER = lookup.findVarHandle(FlowChannelSubscriber.class, "waiter", Completer.class);
            PENDING_REQUESTS = lookup.findVarHandle(FlowChannelSubscriber.class, "pendingRequests", long.class);
            UPSTREAM_WIP = lookup.findVarHandle(FlowChannelSubscriber.class, "upstreamWip", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
