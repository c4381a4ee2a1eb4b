package dev.coro.examples.io;

import dev.coro.io.AsyncServerSocket;
import dev.coro.io.AsyncSocket;
import dev.coro.io.EventLoop;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

/**
 * A TCP echo server on an {@link EventLoop}, loopback only: it accepts connections and, for each, a
 * task on the loop reads what arrives and writes it back until the client closes.
 *
 * <p>{@link #close()} stops accepting, cancels the connections' tasks and closes their sockets.
 *
 * {@snippet :
 * try (EventLoop loop = EventLoop.start(); EchoServer server = EchoServer.start(loop, 0)) {
 *     System.out.println("echoing on " + server.address());
 * }
 * }
 */
public final class EchoServer implements AutoCloseable {
    private final AsyncServerSocket server;
    private final Scope connections;
    private final CompletableFuture<Long> acceptor;

    private EchoServer(EventLoop loop, AsyncServerSocket server) {
        this.server = server;
        this.connections = Scope.on(loop);
        this.acceptor = Task.loop(0L, n -> true, n -> server.accept().map(socket -> {
            connections.spawn(echo(socket));
            return n + 1;
        })).recoverWith(e -> e instanceof ClosedChannelException ? Task.value(-1L) : Task.failure(e))
                .startOn(loop)
                .toCompletableFuture();
    }

    /**
     * Starts a server on {@code 127.0.0.1:port} (port 0 picks a free one).
     *
     * @param loop the loop that runs it
     * @param port the port, or 0
     * @return the running server
     * @throws IOException if the port cannot be bound
     * @throws NullPointerException if {@code loop} is null
     */
    public static EchoServer start(EventLoop loop, int port) throws IOException {
        Objects.requireNonNull(loop, "loop");
        return new EchoServer(loop,
                AsyncServerSocket.bind(loop, new InetSocketAddress(InetAddress.getLoopbackAddress(), port)));
    }

    /**
     * Returns the address it listens on.
     *
     * @return the address
     */
    public InetSocketAddress address() {
        return server.localAddress();
    }

    /** Echoes one connection until end of stream (or an error), then closes it. */
    static Task<Void> echo(AsyncSocket socket) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(16 * 1024);
        return Task.loop(Boolean.TRUE, open -> open, open -> {
            buffer.clear();
            return socket.read(buffer).flatMap(n -> {
                if (n < 0) {
                    return Task.value(Boolean.FALSE);
                }
                buffer.flip();
                return socket.writeFully(buffer).map(x -> Boolean.TRUE);
            });
        }).andFinally(socket::close).map(x -> (Void) null);
    }

    /** Stops accepting, cancels every connection and waits for their sockets to close. */
    @Override
    public void close() {
        server.close();
        acceptor.join();
        connections.cancel();
        connections.close();
        try {
            connections.joinBlocking();
        } catch (CancellationException expected) {
            // the scope was cancelled on purpose: its join ends cancelled once every connection is closed
        }
    }
}
