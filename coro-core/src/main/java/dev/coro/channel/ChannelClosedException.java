package dev.coro.channel;

/**
 * A send to a channel that is closed for sending: closed with {@link Channel#close()} (no cause),
 * closed with a cause ({@link Channel#close(Throwable)}: the cause is this exception's cause), or
 * cancelled ({@link Channel#cancel()}: the cause is a {@link java.util.concurrent.CancellationException}).
 * The element was not sent: the caller still owns it.
 */
public class ChannelClosedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the message
     * @param cause the close's cause, or null
     */
    public ChannelClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
