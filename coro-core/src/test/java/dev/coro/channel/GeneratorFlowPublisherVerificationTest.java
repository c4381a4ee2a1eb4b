package dev.coro.channel;

import dev.coro.task.Task;
import java.util.concurrent.Flow;
import org.reactivestreams.tck.TestEnvironment;
import org.reactivestreams.tck.flow.FlowPublisherVerification;

/**
 * The Reactive Streams TCK (1.0.4) for {@link Flows#publisher(Generator)}: the publisher of
 * {@code n} elements is {@code Generator.iterate(0, i < n, i + 1)}, run anew for each subscriber;
 * the failed publisher is a generator whose producer fails at once.
 *
 * <p>Every required and stochastic rule passes. Skipped: the seven {@code untested_*} tests (rules
 * 1.6, 1.7, 1.8, 1.9's non-fatal throwable, 1.10, 3.4, 3.5), which the TCK always skips, and, for
 * this cold publisher, none of the multicast ones: each subscriber gets the whole sequence.
 */
@SuppressWarnings("exports") // the TCK is on the class path, these tests are patched into dev.coro
public class GeneratorFlowPublisherVerificationTest extends FlowPublisherVerification<Long> {

    public GeneratorFlowPublisherVerificationTest() {
        super(new TestEnvironment(500, 100), 1000);
    }

    @Override
    public Flow.Publisher<Long> createFlowPublisher(long elements) {
        return Flows.publisher(Generator.iterate(0L, i -> i < elements, i -> i + 1));
    }

    @Override
    public Flow.Publisher<Long> createFailedFlowPublisher() {
        return Flows.publisher(Generator.<Long>create(out -> Task.failure(new RuntimeException("a failed producer"))));
    }
}
