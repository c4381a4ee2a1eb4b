package dev.coro.channel;

import dev.coro.LincheckSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link ChannelLincheck}'s checks on an unlimited channel. */
public class UnlimitedChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public UnlimitedChannelLincheckTest() {
        super(Channel.UNLIMITED, 1);
    }

    @Test
    void modelChecking() {
        LincheckSupport.lincheck(UnlimitedChannelLincheckTest.class)
                .scenarios(races(UnlimitedChannelLincheckTest.class))
                .scaledIterations(4).invocations(100)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        LincheckSupport.lincheck(UnlimitedChannelLincheckTest.class)
                .scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(1)
                .stress();
    }
}
