package dev.coro.io;

import dev.coro.task.Task;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.Objects;

/**
 * A listening TCP socket on one {@link EventLoop}: {@link #accept()} waits for connections without
 * blocking a thread.
 *
 * <p>Accept runs like the operations of {@link AsyncChannel}: tried at once, waiting only while no
 * connection is queued, on the loop thread; one accept may be pending at a time (a second fails with
 * {@link IllegalStateException}); {@link #close()} fails a pending accept with
 * {@link java.nio.channels.AsynchronousCloseException}; cancelling it removes its interest; a
 * shut-down loop completes it cancelled. A connection accepted for a task that was cancelled
 * meanwhile is closed, not leaked.
 *
 * <p><b>Thread-safety.</b> Tasks may be started, and {@link #close()} called, from any thread.
 *
 * {@snippet :
 * try (EventLoop loop = EventLoop.start();
 *         AsyncServerSocket server = AsyncServerSocket.bind(loop, new InetSocketAddress("127.0.0.1", 0))) {
 *     System.out.println("listening on " + server.localAddress());
 *     try (AsyncSocket client = server.accept().join()) {
 *         client.writeFully(ByteBuffer.wrap("hello\n".getBytes())).join();
 *     }
 * }
 * }
 */
public final class AsyncServerSocket implements AutoCloseable {
    private final AsyncChannel base;
    private final ServerSocketChannel channel;
    private final InetSocketAddress localAddress;

    private AsyncServerSocket(EventLoop loop, ServerSocketChannel channel, InetSocketAddress localAddress) {
        this.channel = channel;
        this.localAddress = localAddress;
        this.base = new AsyncChannel(loop, channel);
    }

    /**
     * Opens a server socket bound to {@code local} (port 0 picks a free port), with a backlog of
     * 1024 pending connections, on {@code loop}.
     *
     * {@snippet :
     * AsyncServerSocket server = AsyncServerSocket.bind(loop, new InetSocketAddress("127.0.0.1", 0));
     * int port = server.localAddress().getPort();
     * }
     *
     * @param loop the loop its accepts run on
     * @param local the address to listen on
     * @return the listening socket
     * @throws NullPointerException if an argument is null
     * @throws IOException if the socket cannot be opened or bound (for example, the port is taken)
     */
    public static AsyncServerSocket bind(EventLoop loop, SocketAddress local) throws IOException {
        Objects.requireNonNull(loop, "loop");
        Objects.requireNonNull(local, "local");
        ServerSocketChannel ch = ServerSocketChannel.open();
        try {
            ch.bind(local, 1024);
            ch.configureBlocking(false);
            return new AsyncServerSocket(loop, ch, (InetSocketAddress) ch.getLocalAddress());
        } catch (IOException | RuntimeException e) {
            try {
                ch.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Returns a task that accepts the next connection: a socket bound to the same loop.
     *
     * {@snippet :
     * AsyncSocket client = server.accept().join();
     * }
     *
     * @return the task
     */
    public Task<AsyncSocket> accept() {
        IoHandle h = base.handle;
        return Task.create(c -> h.submit(new IoOp.Accept(c, h, channel)));
    }

    /**
     * Returns the address the socket listens on (with the real port when bound to port 0).
     *
     * @return the local address
     */
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /**
     * Returns the channel.
     *
     * @return the channel
     */
    public ServerSocketChannel channel() {
        return channel;
    }

    /**
     * Stops listening (from any thread); a pending accept fails with
     * {@link java.nio.channels.AsynchronousCloseException}. Idempotent.
     *
     * @throws UncheckedIOException if closing the channel fails
     */
    @Override
    public void close() {
        base.close();
    }

    /** The I/O state on the loop (package). */
    IoHandle channelHandle() {
        return base.handle;
    }

    @Override
    public String toString() {
        return "AsyncServerSocket[" + localAddress + "]";
    }
}
