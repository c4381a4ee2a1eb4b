package dev.coro.channel;

import dev.coro.internal.SignalList;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Completer;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Flow;
import java.util.concurrent.RejectedExecutionException;

/**
 * One subscriber of {@link Flows#publisher(Channel, Scheduler)}: a task that receives from the
 * channel while the subscriber's demand allows, and signals it.
 */
final class FlowSubscription<T> implements Flow.Subscription {
    /* Implementation overview.
     *
     * 1. Representation (each atomic field has its VarHandle, named after it). demand (volatile
     *    long): requested and not yet delivered, capped at Long.MAX_VALUE (rule 3.17: "effectively
     *    unbounded"). waiter (volatile): the delivery loop's completer while it waits for demand,
     *    else null. cancelled (volatile): the subscriber cancelled (or a signal method threw).
     *    badRequest (volatile): the first IllegalArgumentException of a request(n <= 0) (rule
     *    3.9). subscriber (volatile): dropped (null) once the run has ended (rule 3.13). started
     *    (volatile): the run began. scope: the run's lifetime; its token is the one cancel() and a
     *    bad request fire.
     *
     * 2. Transitions. start: spawn the run in the scope; a scheduler that refuses it fails the
     *    run before its first step (started stays false): then onSubscribe and onError here.
     *    The run (one task on the scheduler, so every signal is serial: rule 1.3):
     *    onSubscribe, then loop { cancelled or bad request: stop; no demand: end now if the channel
     *    has ended, else wait for demand or the channel's end; else receive one: element -> demand - 1, onNext; null ->
     *    onComplete; error -> onError(cause); cancelled -> the channel was cancelled: onError
     *    (CancellationException), unless our own token fired }, then the final step: onError for a
     *    bad request, drop the subscriber. request(n > 0): add n (capped), wake the waiter.
     *    request(n <= 0): record the error, fire the token, wake. cancel(): flag, fire the token.
     *
     * 3. Linearization points. request: its demand update. cancel: the write of cancelled; a
     *    receive decided before it (an element taken) is still delivered (rule 2.8 lets a
     *    subscriber get onNext after cancel; the element is never lost), a waiting receive is
     *    cancelled by the token and takes no element (Channel's cancellation guarantee).
     *
     * 4. Invariants. I1: at most one receive is in flight, and only while demand > 0 (or once
     *    the channel has ended, when it can take no element), so at most demand elements are
     *    delivered (rule 1.1). I2: at most one terminal signal, none after cancel, and nothing
     *    after it (rules 1.6, 1.7, 1.8).
     *
     * 5. Memory ordering: all shared fields are volatile or atomic; the run's steps are ordered by
     *    the task run (each step happens-before the next).
     *
     * 6. Progress. request and cancel are lock-free and never run subscriber code themselves,
     *    except that waking the waiter may resume the run inline (see 8).
     *
     * 7. Cancellation races. waiter: the run publishes its completer, then re-checks demand; a
     *    request adds demand, then takes the completer (getAndSet): Dekker over volatiles, so
     *    one of them sees the other and the run never sleeps with demand. The channel's end wakes
     *    the same way: the run watches it (ChannelCore part 12: the end fires the watch after it
     *    makes isClosedForReceive true), and its re-check reads isClosedForReceive after publishing
     *    the completer; without that, a subscriber that had received all it asked for never got
     *    onComplete when the close came after its last element. A completer completed twice (both
     *    sides saw each other) ignores the second call.
     *
     * 8. Resumption. Waits resume on the run's scheduler; on Scheduler.inline() that is the waking
     *    thread (the requester, the sender of the element), through its trampoline, so request ->
     *    onNext -> request never nests (rule 3.3): a request made inside onNext only adds demand,
     *    since the run is not waiting then.
     *
     * 9. References: Reactive Streams 1.0.4, rules 1.1-1.9, 2.8, 3.3-3.17.
     */

    private final Channel<T> channel;
    private final Scope scope;
    /** Wakes the run when the channel ends while it waits for demand (part 7). */
    private final SignalList.Node endWatch = new SignalList.Node() {
        @Override
        protected void onFire() {
            wake();
        }
    };
    /** Requested and not yet delivered; {@code Long.MAX_VALUE}: unbounded (rule 3.17). */
    private volatile long demand;
    /** The run's completer while it waits for demand, else null. */
    private volatile Completer<Void> waiter;
    /** The first bad request's error (rule 3.9), else null; set once. */
    private volatile IllegalArgumentException badRequest;
    private volatile Flow.Subscriber<? super T> subscriber;
    private volatile boolean cancelled;
    /** Written and read by the run only: a terminal signal was sent. */
    private boolean terminated;
    /** The run has started (so the scheduler did not refuse it). */
    private volatile boolean started;

    FlowSubscription(Channel<T> channel, Flow.Subscriber<? super T> subscriber, Scheduler scheduler) {
        this.channel = channel;
        this.subscriber = subscriber;
        this.scope = Scope.on(scheduler);
    }

    /**
     * Starts the run on the scheduler. A scheduler that refuses it (shut down) ends the run before
     * it starts, with RejectedExecutionException: then the subscriber gets onSubscribe and
     * onError here (rule 1.9: onSubscribe always comes first).
     */
    void start() {
        Task<Void> child = scope.spawn(run()); // the scope's only child (close() would wait for it)
        if (!started) { // not yet run (queued on the scheduler), or refused: find out when it ends
            child.transform(o -> {
                if (!started && o instanceof Outcome.Failure<Void> f
                        && f.error() instanceof RejectedExecutionException e) {
                    refused(e);
                }
                return Task.value(null);
            }).toCompletableFuture();
        }
    }

    private void refused(RejectedExecutionException e) {
        Flow.Subscriber<? super T> s = subscriber;
        subscriber = null;
        try {
            s.onSubscribe(this);
            s.onError(e);
        } catch (Throwable t) {
            report(t);
        }
    }

    private Task<Void> run() {
        Task<Boolean> loop = Task.loop(Boolean.TRUE, more -> more, ignored -> Task.defer(this::step));
        return Task.fromRunnable(() -> {
            started = true;
            channel.core().watchEnd(endWatch);
            signal(SignalKind.SUBSCRIBE, null);
        }).then(loop).transform(this::finish);
    }

    /** One turn of the loop: stop, wait for demand, or receive one element. */
    private Task<Boolean> step() {
        if (cancelled || badRequest != null) {
            return Task.value(false);
        }
        if (demand == 0) {
            if (channel.isClosedForReceive()) {
                // the end needs no demand (rules 1.4, 1.5): the receive takes no element now
                return channel.receive().transform(o -> Task.value(deliver(o)));
            }
            return awaitDemand().map(ignored -> true);
        }
        return channel.receive().transform(o -> Task.value(deliver(o)));
    }

    private Task<Void> awaitDemand() {
        return Task.create(c -> {
            waiter = c; // volatile write, then the re-check: part 7
            if (demand > 0 || cancelled || badRequest != null || channel.isClosedForReceive()) {
                if (WAITER.compareAndSet(this, c, null)) {
                    c.complete(null);
                }
            }
        });
    }

    private void wake() {
        // the volatile read after the caller's volatile write is the Dekker pair of part 7
        @SuppressWarnings("unchecked")
        Completer<Void> w = waiter == null ? null : (Completer<Void>) WAITER.getAndSet(this, (Completer<Void>) null);
        if (w != null) {
            w.complete(null);
        }
    }

    /** Signals what a receive gave; returns whether to go on. */
    private boolean deliver(Outcome<T> o) {
        switch (o) {
            case Outcome.Value<T> v when v.value() != null -> {
                takeOneDemand();
                signal(SignalKind.NEXT, v.value()); // even if cancelled meanwhile: rule 2.8, never lose it
                return !cancelled;
            }
            case Outcome.Value<T> v -> signal(SignalKind.COMPLETE, null);
            case Outcome.Failure<T> f -> signal(SignalKind.ERROR, f.error());
            case Outcome.Cancelled<T> c -> {
                if (!cancelled && badRequest == null) { // not our token: the channel was cancelled
                    signal(SignalKind.ERROR, new CancellationException("the channel was cancelled"));
                }
            }
        }
        return false;
    }

    private Task<Void> finish(Outcome<Boolean> o) {
        channel.core().unwatchEnd(endWatch);
        IllegalArgumentException bad = badRequest;
        if (bad != null) {
            signal(SignalKind.ERROR, bad);
        } else if (o instanceof Outcome.Failure<Boolean> f) { // not expected: the run's own steps do not throw
            report(f.error());
        }
        subscriber = null; // rule 3.13
        return Task.value(null);
    }

    private enum SignalKind { SUBSCRIBE, NEXT, COMPLETE, ERROR }

    /** Calls the subscriber (from the run only); what it throws cancels the subscription (rule 2.13). */
    private void signal(SignalKind kind, Object arg) {
        Flow.Subscriber<? super T> s = subscriber;
        boolean terminal = kind == SignalKind.COMPLETE || kind == SignalKind.ERROR;
        if (s == null || terminated || (terminal && cancelled)) { // I2; after cancel, no terminal signal
            return;
        }
        try {
            switch (kind) {
                case SUBSCRIBE -> s.onSubscribe(this);
                case NEXT -> {
                    @SuppressWarnings("unchecked")
                    T element = (T) arg;
                    s.onNext(element);
                }
                case COMPLETE -> {
                    terminated = true;
                    s.onComplete();
                }
                case ERROR -> {
                    terminated = true;
                    s.onError((Throwable) arg);
                }
            }
        } catch (Throwable t) {
            cancelled = true;
            terminated = true;
            report(t);
        }
    }

    /** A subscriber method threw (a rule 2.13 violation): the thread's uncaught-exception handler. */
    private static void report(Throwable t) {
        Thread thread = Thread.currentThread();
        thread.getUncaughtExceptionHandler().uncaughtException(thread, t);
    }

    /**
     * Adds {@code n} to the demand (capped at {@code Long.MAX_VALUE}); {@code n <= 0} ends the
     * subscription with {@code onError(IllegalArgumentException)} (rule 3.9). A no-op once cancelled
     * (rule 3.6).
     */
    @Override
    public void request(long n) {
        if (cancelled) {
            return;
        }
        if (n <= 0) {
            IllegalArgumentException bad = new IllegalArgumentException(
                    "request(n): n must be positive (Reactive Streams rule 3.9), got " + n);
            if (BAD_REQUEST.compareAndSet(this, null, bad)) { // the first one is signalled
                scope.cancel();
                wake();
            }
            return;
        }
        long d;
        do {
            d = demand;
        } while (!DEMAND.compareAndSet(this, d, d + n < 0 ? Long.MAX_VALUE : d + n)); // rule 3.17
        wake();
    }

    private void takeOneDemand() {
        long d;
        do {
            d = demand;
            assert d > 0 : "I1: an element received without demand";
        } while (d != Long.MAX_VALUE && !DEMAND.compareAndSet(this, d, d - 1));
    }

    /** Stops receiving: a waiting receive is cancelled and takes no element (rules 3.5, 3.7, 3.12). */
    @Override
    public void cancel() {
        if (!cancelled) {
            cancelled = true;
            scope.cancel();
            wake();
        }
    }

    @Override
    public String toString() {
        return "Flows.publisher subscription[" + channel + ", demand " + demand
                + (cancelled ? ", cancelled" : "") + "]";
    }

    private static final VarHandle DEMAND;
    private static final VarHandle WAITER;
    private static final VarHandle BAD_REQUEST;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            DEMAND = lookup.findVarHandle(FlowSubscription.class, "demand", long.class);
            WAITER = lookup.findVarHandle(FlowSubscription.class, "waiter", Completer.class);
            BAD_REQUEST = lookup.findVarHandle(FlowSubscription.class, "badRequest", IllegalArgumentException.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
