package dev.coro.channel;

import dev.coro.scheduler.Scheduler;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.util.Objects;
import java.util.concurrent.Flow;

/**
 * Adapters between channels and {@link java.util.concurrent.Flow} (Reactive Streams 1.0.4): a
 * channel seen as a {@link Flow.Publisher}, and a publisher drained into a channel. Both keep the
 * Reactive Streams rules (checked by the Reactive Streams TCK); rules are cited below as "rule
 * 3.9" for the specification's rule §3.9.
 *
 * <p><b>{@link #publisher(Channel, Scheduler) publisher(channel)}.</b> Each subscriber gets its own
 * subscription, which receives from the channel one element at a time, only while the subscriber's
 * demand ({@code request(n)}) allows, and signals it. Several subscribers <em>compete</em> for the
 * elements, as several receivers of a channel do: each element goes to one subscriber only (this is
 * not a broadcast). The stream ends as the channel does: {@code onComplete} once the channel is
 * closed and drained, {@code onError(cause)} if it was closed with {@link Channel#close(Throwable)},
 * and {@code onError(CancellationException)} if the channel is cancelled (its elements were dropped:
 * the stream did not complete). Cancelling the subscription stops receiving; a receive waiting at
 * that moment is cancelled and takes no element, so the elements go to the channel's other
 * receivers; an element already taken when {@code cancel()} arrives is still delivered (rule 2.8
 * allows it; it is never lost).
 *
 * <p><b>{@link #channel(Flow.Publisher, int) channel(publisher, bufferSize)}.</b> Subscribes at
 * once and returns a {@linkplain Channel#buffered(int) buffered} channel of {@code bufferSize} fed by
 * the publisher: {@code onComplete} closes the channel, {@code onError} closes it with the cause
 * (receivers take every element first); closing or cancelling the channel cancels the subscription.
 *
 * <p><b>What a channel cannot tell.</b> A channel has no callback for its end, nor for an element
 * taken from its buffer. So a subscription of {@code publisher(channel)} whose demand is zero
 * learns that the channel has ended at its next {@code request(n)} (or at once, if the channel had
 * ended when the demand ran out); and {@code channel(publisher, n)} learns that its channel was
 * closed or cancelled when it next moves an element into it. Both are documented below.
 *
 * <p><b>Thread-safety.</b> Thread-safe: publishers may be subscribed to from any thread, and the
 * subscription methods called from any thread. Actions of a sender before it sends an element
 * happen-before the {@code onNext} of that element; actions of a publisher before an {@code onNext}
 * happen-before the receive that takes that element from the channel.
 *
 * {@snippet :
 * Channel<String> lines = Channel.buffered(16);
 * Flow.Publisher<String> publisher = Flows.publisher(lines);          // lines, as a publisher
 * Channel<String> copy = Flows.channel(publisher, 8);                 // and back
 * Task<Void> print = copy.forEach(System.out::println);
 * }
 */
public final class Flows {
    private Flows() {}

    /**
     * Returns a publisher of {@code channel}'s elements whose subscriptions receive and signal on
     * {@link Scheduler#inline()}: on the thread that makes delivery possible, which is the thread
     * that subscribes, the thread that calls {@code request(n)} while the subscription waits for
     * demand, or the thread whose send gives a waiting receive its element. Nested deliveries
     * queue on that thread's trampoline, so a subscriber that calls {@code request(1)} in
     * {@code onNext} never deepens the stack (rule 3.3). See {@link #publisher(Channel, Scheduler)}.
     *
     * @param channel the channel to receive from
     * @param <T> the element type
     * @return a publisher; each subscriber competes with the channel's other receivers
     * @throws NullPointerException if {@code channel} is null
     */
    public static <T> Flow.Publisher<T> publisher(Channel<T> channel) {
        return publisher(channel, Scheduler.inline());
    }

    /**
     * Returns a publisher of {@code channel}'s elements (see the class javadoc for the semantics)
     * whose subscriptions run on {@code scheduler}: {@code onSubscribe} and every later signal of a
     * subscription run there, one at a time (rule 1.3); a wait (for demand, for an element) resumes
     * there.
     *
     * <p><b>Demand.</b> A subscription receives only while it has demand: at most one receive is in
     * flight, and the number of {@code onNext} never exceeds the sum requested (rule 1.1). Demand
     * adds up to {@code Long.MAX_VALUE} and stays there (rule 3.17). {@code request(n)} with
     * {@code n <= 0} ends the subscription with {@code onError(IllegalArgumentException)} whose
     * message names rule 3.9. Requests and cancels after the end are no-ops (rules 3.6, 3.7).
     *
     * <p><b>The end without demand.</b> {@code onComplete} and {@code onError} need no demand: a
     * subscription whose demand runs out while the channel has already ended (closed and drained,
     * or cancelled) signals the end at once; if the channel ends while the subscription waits for
     * demand, the end is signalled at the next {@code request(n)} (a channel has no end callback).
     *
     * <p><b>Cancellation.</b> {@code cancel()} stops receiving (rule 3.12): a receive waiting then is
     * cancelled and takes no element; no terminal signal follows; the subscription drops its
     * subscriber once its run ends (rule 3.13).
     *
     * <p><b>Bad subscribers.</b> {@code subscribe(null)} throws {@link NullPointerException} (rule
     * 1.9). A subscriber method that throws (breaking rule 2.13) cancels its subscription; the
     * exception goes to the signalling thread's uncaught-exception handler. If {@code scheduler}
     * refuses the subscription's run (shut down), the subscriber gets {@code onSubscribe} and then
     * {@code onError(RejectedExecutionException)} on the subscribing thread.
     *
     * @param channel the channel to receive from
     * @param scheduler where each subscription's signals run
     * @param <T> the element type
     * @return a publisher; each subscriber competes with the channel's other receivers
     * @throws NullPointerException if {@code channel} or {@code scheduler} is null
     */
    public static <T> Flow.Publisher<T> publisher(Channel<T> channel, Scheduler scheduler) {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(scheduler, "scheduler");
        return new FlowPublisher<>(channel, scheduler);
    }

    /**
     * Subscribes to {@code publisher} now and returns a {@linkplain Channel#buffered(int) buffered}
     * channel of capacity {@code bufferSize} that receives its elements, in order.
     *
     * <p><b>Why at once.</b> The channel is a buffer that fills ahead of its receivers (as a producer
     * task started at once would fill it), and a channel has no hook on its first receive; so the
     * subscription is made by this call, on this thread ({@code onSubscribe} may run here).
     *
     * <p><b>Demand.</b> The subscriber requests {@code bufferSize} elements in {@code onSubscribe},
     * then one more each time an element has gone into the channel (a {@code request(1)} per
     * element; requests that several threads cause at the same time are merged into one
     * {@code request(n)}): at most {@code bufferSize} elements are requested and not yet in the
     * channel, and at most {@code bufferSize} wait in it. (Exactly {@code bufferSize} in all,
     * with a request per element <em>taken</em>, would need the channel to tell when an element
     * is taken from its buffer, which it does not.) While the channel is full, the element at
     * the head waits in a send, so once the buffer is full, each element a receiver takes lets one
     * more in and asks the publisher for one more. The requested elements wait in a queue in front
     * of the channel, which a publisher that keeps rule 1.1 never overflows; one that sends more
     * than it was asked for is cancelled, and the channel is closed (after the elements accepted
     * before) with an {@link IllegalStateException} naming rule 1.1.
     *
     * <p><b>Threads.</b> The subscriber's work runs on {@link Scheduler#inline()}: on the thread of
     * the publisher's signal, or on the thread of the receive that makes room in the channel (so
     * {@code request(1)} may be called from a receiving thread). Nested work queues on that
     * thread's trampoline.
     *
     * <p><b>The end.</b> {@code onComplete} closes the channel and {@code onError} closes it with the
     * cause, once the elements before them are in it: receivers take every element, then see the
     * end ({@code null}) or the cause. Closing or cancelling the channel (by its users) cancels the
     * subscription, at the latest when the next element should go into the channel; the elements
     * not yet in it are dropped. A subscription whose {@code request} or {@code cancel} throws
     * (breaking rules 3.15 and 3.16) is cancelled, and the channel is closed with what it threw.
     * The subscriber calls {@code request} and {@code cancel} one at a time (rule 2.7), though
     * the publisher's thread and receiving threads may both be the cause of a call.
     *
     * @param publisher the publisher to subscribe to
     * @param bufferSize the channel's capacity and the publisher's first request, at least 1
     * @param <T> the element type
     * @return the channel
     * @throws NullPointerException if {@code publisher} is null
     * @throws IllegalArgumentException if {@code bufferSize < 1}
     */
    public static <T> Channel<T> channel(Flow.Publisher<? extends T> publisher, int bufferSize) {
        Objects.requireNonNull(publisher, "publisher");
        if (bufferSize < 1) {
            throw new IllegalArgumentException("bufferSize must be at least 1, got " + bufferSize);
        }
        return Flows.<T>subscribe(publisher, bufferSize).channel();
    }

    private static <T> FlowChannelSubscriber<T> subscribe(Flow.Publisher<? extends T> publisher, int bufferSize) {
        FlowChannelSubscriber<T> subscriber = new FlowChannelSubscriber<T>(bufferSize).start();
        try {
            publisher.subscribe(subscriber);
        } catch (RuntimeException e) { // the publisher broke rule 1.9 (subscribe must return normally)
            subscriber.subscribeFailed(e);
        }
        return subscriber;
    }

    /**
     * Returns a publisher of {@code generator}'s values: each subscriber runs the generator anew
     * (a cold publisher, as a generator is a description), on {@code scheduler}, and receives its
     * values as its demand allows, through a rendezvous hand-off, so the producer runs only as far
     * as the demand (one value ahead at most). The stream completes when the producer ends, fails
     * with its error, and cancelling the subscription (or a subscriber method that throws) cancels
     * the producer, whose {@code finally} then runs.
     *
     * @param generator the values
     * @param scheduler where the producer and the subscription's signals run
     * @param <T> the value type
     * @return the publisher
     * @throws NullPointerException if an argument is null
     */
    public static <T> Flow.Publisher<T> publisher(Generator<T> generator, Scheduler scheduler) {
        Objects.requireNonNull(generator, "generator");
        Objects.requireNonNull(scheduler, "scheduler");
        return subscriber -> {
            Objects.requireNonNull(subscriber, "subscriber (Reactive Streams rule 1.9)");
            Channel<T> values = Channel.rendezvous();
            Task<Void> produce = generator.forEachTask(values::send).outcome().map(o -> {
                switch (o) {
                    case Outcome.Value<Void> v -> values.close();
                    case Outcome.Failure<Void> f -> values.close(f.error());
                    case Outcome.Cancelled<Void> c -> values.cancel();
                }
                return null;
            });
            TaskHandle<Void> producer;
            try {
                producer = produce.start(scheduler);
            } catch (RuntimeException refused) { // a shut-down scheduler: the subscription reports it
                values.close(refused);
                publisher(values, scheduler).subscribe(subscriber);
                return;
            }
            publisher(values, scheduler).subscribe(new GeneratorSubscriber<>(subscriber, producer));
        };
    }

    /**
     * {@link #publisher(Generator, Scheduler)} on {@link Scheduler#inline()}.
     *
     * @param generator the values
     * @param <T> the value type
     * @return the publisher
     * @throws NullPointerException if {@code generator} is null
     */
    public static <T> Flow.Publisher<T> publisher(Generator<T> generator) {
        return publisher(generator, Scheduler.inline());
    }

    /**
     * Returns a generator of {@code publisher}'s elements: each consumption subscribes anew (a
     * generator is a description), requests up to {@code bufferSize} elements ahead (a publisher
     * pushes, so the buffer is what the consumer's demand allows ahead of its {@code next()}), and
     * ends as the publisher does: at {@code onComplete}, or with the {@code onError} cause where the
     * next value would have been. Closing or cancelling the consumer cancels the subscription at
     * once, even while the publisher sends nothing.
     *
     * @param publisher the publisher
     * @param bufferSize how many elements may be requested ahead, at least 1
     * @param <T> the element type
     * @return the generator
     * @throws NullPointerException if {@code publisher} is null
     * @throws IllegalArgumentException if {@code bufferSize < 1}
     */
    public static <T> Generator<T> generator(Flow.Publisher<? extends T> publisher, int bufferSize) {
        Objects.requireNonNull(publisher, "publisher");
        if (bufferSize < 1) {
            throw new IllegalArgumentException("bufferSize must be at least 1, got " + bufferSize);
        }
        return Generator.create(out -> Task.defer(() -> {
            FlowChannelSubscriber<T> subscriber = Flows.<T>subscribe(publisher, bufferSize);
            // the consumption's end cancels the subscription at once, even while the publisher is silent
            return subscriber.channel().forEachAsync(out::emit).andFinally(subscriber::consumerGone);
        }));
    }

    /** Cancels the generator's producer when the subscription ends early or a signal method throws. */
    private static final class GeneratorSubscriber<T> implements Flow.Subscriber<T> {
        private final Flow.Subscriber<? super T> subscriber;
        private final TaskHandle<Void> producer;

        GeneratorSubscriber(Flow.Subscriber<? super T> subscriber, TaskHandle<Void> producer) {
            this.subscriber = subscriber;
            this.producer = producer;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            Flow.Subscription cancelling = new Flow.Subscription() {
                @Override
                public void request(long n) {
                    subscription.request(n);
                }

                @Override
                public void cancel() {
                    subscription.cancel();
                    producer.cancel();
                }
            };
            guard(() -> subscriber.onSubscribe(cancelling));
        }

        @Override
        public void onNext(T item) {
            guard(() -> subscriber.onNext(item));
        }

        @Override
        public void onError(Throwable error) {
            guard(() -> subscriber.onError(error));
        }

        @Override
        public void onComplete() {
            guard(subscriber::onComplete);
        }

        private void guard(Runnable signal) {
            try {
                signal.run();
            } catch (RuntimeException | Error e) {
                producer.cancel(); // the subscription ends: so does the producer
                throw e;
            }
        }
    }
}
