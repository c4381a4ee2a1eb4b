package dev.coro.channel;

import dev.coro.scheduler.Scheduler;
import java.util.Objects;
import java.util.concurrent.Flow;

/** The publisher of {@link Flows#publisher(Channel, Scheduler)}: one subscription per subscriber. */
final class FlowPublisher<T> implements Flow.Publisher<T> {
    private final Channel<T> channel;
    private final Scheduler scheduler;

    FlowPublisher(Channel<T> channel, Scheduler scheduler) {
        this.channel = channel;
        this.scheduler = scheduler;
    }

    @Override
    public void subscribe(Flow.Subscriber<? super T> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber (Reactive Streams rule 1.9)");
        new FlowSubscription<T>(channel, subscriber, scheduler).start();
    }

    @Override
    public String toString() {
        return "Flows.publisher[" + channel + " on " + scheduler + "]";
    }
}
