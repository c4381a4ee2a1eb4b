package dev.coro.channel;

/** {@link ChannelLincheck}'s model check and stress run on a buffered channel of capacity 1 (full and empty are one element apart). */
public class BufferedChannelLincheckTest extends ChannelLincheck {
    /** Creates the test's channel. */
    public BufferedChannelLincheckTest() {
        super(1, 1);
    }
}
