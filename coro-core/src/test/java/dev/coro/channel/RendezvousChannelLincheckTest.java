package dev.coro.channel;

/** {@link ChannelLincheck}'s model check and stress run on a rendezvous channel. */
public class RendezvousChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public RendezvousChannelLincheckTest() {
        super(Channel.RENDEZVOUS, 1);
    }
}
