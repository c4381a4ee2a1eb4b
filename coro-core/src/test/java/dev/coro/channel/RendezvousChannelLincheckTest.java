package dev.coro.channel;

import dev.coro.LincheckSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link ChannelLincheck}'s checks on a rendezvous channel. */
public class RendezvousChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public RendezvousChannelLincheckTest() {
        super(Channel.RENDEZVOUS, 1);
    }

    @Test
    void modelChecking() {
        LincheckSupport.lincheck(RendezvousChannelLincheckTest.class)
                .scenarios(races(RendezvousChannelLincheckTest.class))
                .scaledIterations(4).invocations(100)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        LincheckSupport.lincheck(RendezvousChannelLincheckTest.class)
                .scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(1)
                .stress();
    }
}
