package dev.coro.channel;

import dev.coro.LincheckSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link ChannelLincheck}'s checks on a buffered channel of capacity 1 (full and empty are one element apart). */
public class BufferedChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public BufferedChannelLincheckTest() {
        super(1, 1);
    }

    @Test
    void modelChecking() {
        LincheckSupport.lincheck(BufferedChannelLincheckTest.class)
                .scenarios(races(BufferedChannelLincheckTest.class))
                .scaledIterations(4).invocations(100)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        LincheckSupport.lincheck(BufferedChannelLincheckTest.class)
                .scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(1)
                .stress();
    }
}
