package dev.coro.channel;

/** {@link ChannelLincheck}'s model check and stress run on an unlimited channel. */
public class UnlimitedChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public UnlimitedChannelLincheckTest() {
        super(Channel.UNLIMITED, 1);
    }
}
