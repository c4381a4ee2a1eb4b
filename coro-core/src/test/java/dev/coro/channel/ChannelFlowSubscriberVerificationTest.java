package dev.coro.channel;

import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowSubscriberBlackboxVerification;

/**
 * The Reactive Streams TCK (1.0.4, blackbox) for the subscriber behind
 * {@link Flows#channel(Flow.Publisher, int)}, with a buffer of 4: the subscriber requests the
 * buffer's size in {@code onSubscribe}, and one more each time an element has gone into its
 * channel; {@link #triggerFlowRequest} receives one element from that channel.
 *
 * <p>Every required rule passes (26 tests: 11 pass, 15 skipped). The TCK skips the fifteen
 * {@code untested_*} tests by itself: no blackbox test exists for rules 2.2, 2.4, 2.6, 2.7, 2.8,
 * 2.11, 2.12, 2.13's failing signal, 3.1, 3.8, 3.10, 3.11, 3.14, 3.15 and 3.16. {@link FlowsTest}
 * covers for this subscriber 2.8 (signals after cancel are ignored), 3.16 (a request that throws
 * ends the channel) and 1.1 (a publisher that sends more than requested).
 */
@SuppressWarnings("exports") // the TCK is on the class path, these tests are patched into dev.coro
public class ChannelFlowSubscriberVerificationTest extends FlowSubscriberBlackboxVerification<Integer> {
    public ChannelFlowSubscriberVerificationTest() {
        super(new TestEnvironment());
    }

    @Override
    public Flow.Subscriber<Integer> createFlowSubscriber() {
        return new FlowChannelSubscriber<Integer>(4).start();
    }

    @Override
    public void triggerFlowRequest(Flow.Subscriber<? super Integer> subscriber) {
        ((FlowChannelSubscriber<?>) subscriber).channel().tryReceive();
    }

    @Override
    public Integer createElement(int element) {
        return element;
    }
}
