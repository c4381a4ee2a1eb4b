package dev.coro.channel;

import dev.coro.LincheckSupport;
import dev.coro.gate.ManualScheduler;
import java.time.Duration;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;

/**
 * {@link ChannelLincheck}'s checks with two rendezvous channels and selects over both and a timeout:
 * besides every channel operation on either channel, a select receives from the first channel to
 * offer an element, or times out when the manual clock ticks. Each select ends at most once, and
 * exactly-once accounting covers the elements selects took (a losing receive clause took none).
 */
public class SelectChannelLincheckTest extends ChannelLincheck {
    private final ManualScheduler clock = new ManualScheduler();

    /** Creates the test's two channels. */
    public SelectChannelLincheckTest() {
        super(Channel.RENDEZVOUS, 2);
    }

    /** Starts a select over both channels and a one-tick timeout, kept as this thread's latest waiter. */
    @Operation
    public void select(@Param(name = "tid") int tid) {
        start(tid, 0, Select.select(channels[0].onReceive(v -> v), channels[1].onReceive(v -> v),
                Select.onTimeout(Duration.ofNanos(1), () -> 0)).startOn(clock));
    }

    /** Moves the clock one tick: pending selects time out. */
    @Operation
    public void tick() {
        clock.advance(1);
    }

    @Override
    ExecutionScenario[] scenarios() {
        return new ExecutionScenario[] {
            LincheckSupport.scenario(SelectChannelLincheckTest.class, null, "select 1; cancel 1 | send 2 0", null),
            LincheckSupport.scenario(SelectChannelLincheckTest.class, null, "select 1 | send 2 1 | tick", null),
            // found by the stress run: a send pairs with a select's clause that another channel's
            // trySend has just won; the send is done, its element held for the next receiver (part 7)
            LincheckSupport.scenario(SelectChannelLincheckTest.class, null, "send 1 1; trySend 0 | select 2", null),
        };
    }

    @Override
    @Test
    void modelChecking() {
        LincheckSupport.lincheck(SelectChannelLincheckTest.class)
                .scenarios(scenarios())
                .scaledIterations(5).invocations(150) // more than a single channel: two channels and a clock
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }
}
