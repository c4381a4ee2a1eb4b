package dev.coro.channel;

import dev.coro.LincheckSupport;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.junit.jupiter.api.Test;

/**
 * {@link ChannelLincheck}'s checks on a buffered channel of capacity 1, model-checking the races of
 * its fast lane (ChannelCore part 10) first: a send into the lane racing a receiver that starts to
 * wait; a lane receive that frees the one cell racing a sender that starts to wait; close racing a
 * lane send (the element is received before the end, or the send fails); cancel racing a lane
 * receive (the element is received once or dropped once); a waiter's cancellation racing the owner
 * that opens the lane again; a receive's looks before it waits (ChannelCore part 13) racing a
 * waiter that shuts the lane, a close and a cancel. {@link BufferedChannelLincheckTest} runs the
 * shared races and the generated scenarios on the same channel.
 */
public class BufferedChannelLaneLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public BufferedChannelLaneLincheckTest() {
        super(1, 1);
    }

    @Override
    ExecutionScenario[] scenarios() {
        Class<?> t = BufferedChannelLaneLincheckTest.class;
        return new ExecutionScenario[] {
            LincheckSupport.scenario(t, null, "receive 1 0 | trySend 0; tryReceive 0", null),
            LincheckSupport.scenario(t, "trySend 0", "send 1 0 | tryReceive 0; tryReceive 0", null),
            LincheckSupport.scenario(t, null, "trySend 0; trySend 0 | close 0; receive 2 0", null),
            LincheckSupport.scenario(t, "trySend 0", "tryReceive 0 | cancelChannel 0; trySend 0", null),
            LincheckSupport.scenario(t, "trySend 0", "send 1 0; cancel 1 | tryReceive 0; trySend 0", null),
            LincheckSupport.scenario(t, null, "receive 1 0 | trySend 0; receiveSoon 0", null),
            LincheckSupport.scenario(t, null, "receiveSoon 0; receiveSoon 0 | trySend 0; close 0", null),
            LincheckSupport.scenario(t, "trySend 0", "receiveSoon 0 | send 1 0; cancelChannel 0", null),
        };
    }

    @Override
    @Test
    void modelChecking() {
        LincheckSupport.lincheck(BufferedChannelLaneLincheckTest.class)
                .scenarios(scenarios())
                .scaledIterations(1).invocations(200) // the lane's scenarios, each explored more deeply
                .threads(2).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }
}
