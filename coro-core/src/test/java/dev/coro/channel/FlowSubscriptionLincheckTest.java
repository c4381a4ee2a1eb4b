package dev.coro.channel;

import dev.coro.LincheckSupport;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks how a {@link Flows#publisher(Channel)} subscription learns of the channel's end
 * ({@code FlowSubscription} part 7 with {@code ChannelCore} part 12): requests of one element race
 * the close of a buffered channel that holds two, on {@code Scheduler.inline()} (so the delivery runs
 * on the thread that wakes it: the requester or the closer).
 *
 * <p>Every operation answers nothing; what matters is checked by {@link #validate()} after each run:
 * no more elements delivered than requested (rule 1.1), and once the channel is closed and every
 * element it held was delivered, the subscriber has {@code onComplete} (rule 1.5: the end needs no
 * demand). The second check failed on the code before the end watch (the subscription slept through
 * the close after its last element) and fails on a re-check that forgets the end (mutation F2).
 */
public class FlowSubscriptionLincheckTest {
    private final Channel<Integer> channel = Channel.buffered(4);
    private final AtomicInteger requested = new AtomicInteger();
    private final AtomicInteger delivered = new AtomicInteger();
    private volatile boolean completed;
    private volatile Flow.Subscription subscription;

    public FlowSubscriptionLincheckTest() {
        channel.trySend(1);
        channel.trySend(2);
        Flows.publisher(channel).subscribe(new Flow.Subscriber<Integer>() {
            @Override
            public void onSubscribe(Flow.Subscription s) {
                subscription = s;
            }

            @Override
            public void onNext(Integer item) {
                delivered.incrementAndGet();
            }

            @Override
            public void onError(Throwable t) {
                throw new AssertionError("no error expected", t);
            }

            @Override
            public void onComplete() {
                completed = true;
            }
        });
    }

    /** The subscriber asks for one more element. */
    @Operation
    public void request() {
        requested.incrementAndGet();
        subscription.request(1);
    }

    /** Another thread closes the channel. */
    @Operation
    public void close() {
        channel.close();
    }

    /** Rule 1.1, and the end of a closed, drained channel reaches the subscriber without demand. */
    @Validate
    public void validate() {
        int d = delivered.get();
        if (d > requested.get()) {
            throw new AssertionError(d + " delivered with " + requested.get() + " requested (rule 1.1)");
        }
        if (channel.isClosedForSend() && d == 2 && !completed) {
            throw new AssertionError("closed and drained, but no onComplete: the subscription sleeps for ever");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(5).invocations(500)
                .threads(2).actorsPerThread(2).actorsBefore(1).actorsAfter(0)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(5).invocations(2000)
                .threads(2).actorsPerThread(2).actorsBefore(1).actorsAfter(0)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(FlowSubscriptionLincheckTest.class).scenarios(closeRacesTheLastDelivery());
    }

    /** The first element is delivered; the request for the last one races the close. */
    static ExecutionScenario closeRacesTheLastDelivery() {
        return LincheckSupport.scenario(FlowSubscriptionLincheckTest.class, "request", "request | close", null);
    }
}
