package dev.coro.channel;

import dev.coro.scheduler.WorkStealingPool;
import java.util.concurrent.Flow;
import org.testng.annotations.AfterClass;

/**
 * The Reactive Streams TCK of {@link ChannelFlowPublisherVerificationTest} (the same channels,
 * the same skipped rules, for the same reasons), for {@link Flows#publisher(Channel,
 * dev.coro.scheduler.Scheduler)} on a two-worker {@link WorkStealingPool}: every signal is
 * asynchronous, so the TCK's threads request and cancel while the pool's workers deliver.
 */
@SuppressWarnings("exports") // the TCK is on the class path, these tests are patched into dev.coro
public class ChannelFlowPublisherOnPoolVerificationTest extends ChannelFlowPublisherVerificationTest {
    private final WorkStealingPool pool = WorkStealingPool.create(2, "flow-tck");

    /** Creates the verification and its pool. */
    public ChannelFlowPublisherOnPoolVerificationTest() {}

    @Override
    Flow.Publisher<Integer> publisherOf(Channel<Integer> channel) {
        return Flows.publisher(channel, pool);
    }

    @AfterClass(alwaysRun = true)
    public void closePool() {
        pool.close();
    }
}
