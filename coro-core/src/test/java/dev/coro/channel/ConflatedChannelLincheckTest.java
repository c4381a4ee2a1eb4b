package dev.coro.channel;

import dev.coro.LincheckSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link ChannelLincheck}'s checks on a conflated channel. */
public class ConflatedChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public ConflatedChannelLincheckTest() {
        super(Channel.CONFLATED, 1);
    }

    @Test
    void modelChecking() {
        LincheckSupport.lincheck(ConflatedChannelLincheckTest.class)
                .scenarios(races(ConflatedChannelLincheckTest.class))
                .scaledIterations(4).invocations(100)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        LincheckSupport.lincheck(ConflatedChannelLincheckTest.class)
                .scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(1)
                .stress();
    }
}
