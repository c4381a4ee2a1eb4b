package dev.coro.channel;

/** {@link ChannelLincheck}'s model check and stress run on a conflated channel. */
public class ConflatedChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public ConflatedChannelLincheckTest() {
        super(Channel.CONFLATED, 1);
    }
}
