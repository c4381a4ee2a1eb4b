package dev.coro.io;

import dev.coro.task.Task;
import java.io.IOException;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Objects;

/**
 * A connected TCP socket whose operations run on one {@link EventLoop}. Made by {@link #connect} or
 * by {@link AsyncServerSocket#accept()}; {@code TCP_NODELAY} is on (request-response traffic should
 * not wait for Nagle's algorithm).
 *
 * <p>Its operations are those of {@link AsyncChannel}, with the same rules: tried at once, waiting
 * only on would-block; run on the loop thread, the caller continuing on its own scheduler; one
 * read-side and one write-side operation pending at a time; end of stream is {@code -1} from
 * {@link #read} and {@link java.io.EOFException} from {@link #readFully}; {@link #close()} fails
 * pending operations with {@link java.nio.channels.AsynchronousCloseException}; cancellation removes
 * the operation's interest and leaves the socket usable; a shut-down loop completes pending
 * operations cancelled.
 *
 * <p><b>Thread-safety.</b> Tasks may be started, and {@link #close()} called, from any thread.
 *
 * {@snippet :
 * try (EventLoop loop = EventLoop.start();
 *         AsyncSocket socket = AsyncSocket.connect(loop, new InetSocketAddress("127.0.0.1", port)).join()) {
 *     socket.writeFully(ByteBuffer.wrap("ping".getBytes())).join();
 *     ByteBuffer reply = ByteBuffer.allocate(4);
 *     socket.readFully(reply).join();
 * }
 * }
 */
public final class AsyncSocket implements AutoCloseable {
    private final AsyncChannel io;
    private final SocketChannel channel;

    private AsyncSocket(EventLoop loop, SocketChannel channel) {
        this.channel = channel;
        this.io = new AsyncChannel(loop, channel);
    }

    /** Wraps a connected (or connecting) channel: non-blocking, TCP_NODELAY. Closes it on failure. */
    static AsyncSocket adopt(EventLoop loop, SocketChannel channel) throws IOException {
        try {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException | RuntimeException e) {
            try {
                channel.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return new AsyncSocket(loop, channel);
    }

    /**
     * Returns a task that opens a socket and connects it to {@code remote}, on {@code loop}; each run
     * opens a new socket. It fails with the connect error (for example
     * {@link java.net.ConnectException}); if it fails or is cancelled, the socket is closed.
     *
     * {@snippet :
     * AsyncSocket socket = AsyncSocket.connect(loop, new InetSocketAddress("127.0.0.1", 8080)).join();
     * }
     *
     * @param loop the loop its operations run on
     * @param remote where to connect
     * @return the task
     * @throws NullPointerException if an argument is null
     */
    public static Task<AsyncSocket> connect(EventLoop loop, SocketAddress remote) {
        Objects.requireNonNull(loop, "loop");
        Objects.requireNonNull(remote, "remote");
        return Task.create(c -> {
            AsyncSocket socket;
            try {
                socket = adopt(loop, SocketChannel.open());
            } catch (IOException e) {
                c.fail(e);
                return;
            }
            socket.io.handle.submit(new IoOp.Connect(c, socket, remote));
        });
    }

    /**
     * Returns a task that reads some bytes into {@code dst}: the number read (at least 1 when
     * {@code dst} has room, 0 when it has none), or {@code -1} at end of stream.
     *
     * @param dst where the bytes go
     * @return the task
     * @throws NullPointerException if {@code dst} is null
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @see AsyncChannel#read(ByteBuffer)
     */
    public Task<Integer> read(ByteBuffer dst) {
        return io.read(dst);
    }

    /**
     * Returns a task that writes some bytes of {@code src}: the number written (at least 1 unless
     * {@code src} is empty).
     *
     * @param src the bytes
     * @return the task
     * @throws NullPointerException if {@code src} is null
     * @see AsyncChannel#write(ByteBuffer)
     */
    public Task<Integer> write(ByteBuffer src) {
        return io.write(src);
    }

    /**
     * Returns a task that fills {@code dst}; it fails with {@link java.io.EOFException} if the stream
     * ends first.
     *
     * @param dst where the bytes go
     * @return the task
     * @throws NullPointerException if {@code dst} is null
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @see AsyncChannel#readFully(ByteBuffer)
     */
    public Task<Void> readFully(ByteBuffer dst) {
        return io.readFully(dst);
    }

    /**
     * Returns a task that writes all remaining bytes of {@code src}.
     *
     * @param src the bytes
     * @return the task
     * @throws NullPointerException if {@code src} is null
     * @see AsyncChannel#writeFully(ByteBuffer)
     */
    public Task<Void> writeFully(ByteBuffer src) {
        return io.writeFully(src);
    }

    /**
     * Returns the socket channel (non-blocking; for options and addresses; do not read or write it
     * directly while operations are pending).
     *
     * @return the channel
     */
    public SocketChannel channel() {
        return channel;
    }

    /**
     * Returns the loop that runs this socket's operations.
     *
     * @return the loop
     */
    public EventLoop loop() {
        return io.loop();
    }

    /**
     * Closes the socket at once (from any thread); pending operations fail with
     * {@link java.nio.channels.AsynchronousCloseException}. Idempotent.
     *
     * @throws java.io.UncheckedIOException if closing the channel fails
     */
    @Override
    public void close() {
        io.close();
    }

    /** The I/O state on the loop (package). */
    IoHandle handle() {
        return io.handle;
    }

    @Override
    public String toString() {
        return "AsyncSocket[" + channel + "]";
    }
}
