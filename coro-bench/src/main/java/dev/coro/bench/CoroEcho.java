package dev.coro.bench;

import dev.coro.io.AsyncServerSocket;
import dev.coro.io.AsyncSocket;
import dev.coro.io.EventLoop;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Coro's side of {@link EchoLoopback}: an {@link AsyncServerSocket} and its connections on one
 * {@link EventLoop}, all client {@link AsyncSocket}s on a second one (the thread split of the Netty
 * peer). Every I/O task is started on its loop ({@code startOn}), so it runs there throughout.
 *
 * <p>Two forms of the same loops. {@code coro} is written as {@code ./coro demo echo} (the examples'
 * {@code EchoServer} and {@code EchoClient}) teaches: each iteration of a {@code Task.loop} builds its
 * steps anew ({@code socket.read(buffer).flatMap(n -> socket.writeFully(buffer)...)} on the server,
 * {@code Task.defer(...)} around each write and read on the client). {@code coroPrebuilt} builds the
 * read and write tasks once per connection and reruns them (tasks are reusable descriptions).
 */
final class CoroEcho {
    private CoroEcho() {}

    /** One round: fresh loops, server and connections; returns the nanoseconds of the timed phase. */
    static long run(EchoLoopback.Load load, boolean idiomatic) throws Exception {
        EventLoop serverLoop = EventLoop.start("echo-coro-server");
        EventLoop clientLoop = EventLoop.start("echo-coro-client");
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AsyncServerSocket server = null;
        try {
            server = AsyncServerSocket.bind(serverLoop, EchoLoopback.loopback(0));
            AsyncServerSocket listening = server;
            Scope connections = Scope.on(serverLoop);
            boolean[] closing = {false};
            Task<Integer> acceptLoop = Task.loop(0, n -> true, n -> listening.accept().map(s -> {
                connections.spawn(idiomatic ? demoEcho(s, failure) : echo(s, failure));
                return n + 1;
            })).recover(e -> {
                if (!closing[0]) { // set on the server loop before the close below
                    failure.compareAndSet(null, e);
                }
                return -1;
            });
            Scope acceptor = Scope.on(serverLoop);
            acceptor.spawn(acceptLoop);

            List<AsyncSocket> sockets = new ArrayList<>();
            try {
                for (int c = 0; c < load.connections(); c++) {
                    AsyncSocket s = AsyncSocket.connect(clientLoop, listening.localAddress()).startOn(clientLoop).join();
                    s.channel().setOption(StandardSocketOptions.TCP_NODELAY, true);
                    sockets.add(s);
                }
                List<Task<Integer>> clients = new ArrayList<>();
                for (int c = 0; c < load.connections(); c++) {
                    clients.add(idiomatic ? demoClient(sockets.get(c), c, load) : client(sockets.get(c), c, load));
                }
                Task<List<Integer>> all = Task.whenAll(clients).startOn(clientLoop);
                long t0 = System.nanoTime();
                List<Integer> done = all.join();
                long t1 = System.nanoTime();
                for (int k : done) {
                    if (k != load.roundTrips()) {
                        throw new IllegalStateException("a client ended after " + k + " round trips");
                    }
                }
                if (failure.get() != null) {
                    throw new IllegalStateException("coro: the server failed", failure.get());
                }
                return t1 - t0;
            } finally {
                for (AsyncSocket s : sockets) {
                    s.close(); // the server's echo tasks then read end of stream and end
                }
                Task.fromRunnable(() -> {
                    closing[0] = true;
                    listening.close();
                }).startOn(serverLoop).join();
                acceptor.joinBlocking();
                connections.joinBlocking();
                if (failure.get() != null) {
                    throw new IllegalStateException("coro: the server failed", failure.get());
                }
            }
        } finally {
            if (server != null) {
                server.close(); // idempotent; only needed if the round failed before its own close
            }
            clientLoop.close();
            serverLoop.close();
            if (!serverLoop.awaitTermination(Duration.ZERO) || !clientLoop.awaitTermination(Duration.ZERO)) {
                throw new IllegalStateException("coro: a loop did not terminate");
            }
        }
    }

    /**
     * A server connection: read what is there, write all of it back, until end of stream; then close.
     * The read and write tasks are built once and rerun (tasks are reusable descriptions).
     */
    private static Task<Integer> echo(AsyncSocket s, AtomicReference<Throwable> failure) {
        try {
            s.channel().setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            failure.compareAndSet(null, e);
        }
        ByteBuffer buf = ByteBuffer.allocateDirect(4096);
        Task<Integer> read = Task.fromRunnable(buf::clear).then(s.read(buf));
        Task<Void> writeBack = Task.fromRunnable(buf::flip).then(s.writeFully(buf));
        return Task.loop(0, n -> n >= 0, n -> read.flatMap(r -> r < 0 ? Task.value(-1) : writeBack.map(ignored -> r)))
                .recover(e -> {
                    if (!(e instanceof IOException)) { // a reset at teardown is not a failure; a wrong echo shows at the client
                        failure.compareAndSet(null, e);
                    }
                    return -1;
                })
                .andFinally(s::close);
    }

    /**
     * A server connection as the demo's {@code EchoServer.echo} writes it: each iteration reads into
     * the buffer and, unless at end of stream, writes what it read back in full.
     */
    private static Task<Integer> demoEcho(AsyncSocket s, AtomicReference<Throwable> failure) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(16 * 1024);
        return Task.loop(0, n -> n >= 0, n -> {
            buffer.clear();
            return s.read(buffer).flatMap(r -> {
                if (r < 0) {
                    return Task.value(-1);
                }
                buffer.flip();
                return s.writeFully(buffer).map(x -> r);
            });
        }).recover(e -> {
            if (!(e instanceof IOException)) {
                failure.compareAndSet(null, e);
            }
            return -1;
        }).andFinally(s::close);
    }

    /**
     * A client connection as the demo's {@code EchoClient.roundTrips} writes it: each iteration defers
     * the write of the message and the read of its echo, then checks it.
     */
    private static Task<Integer> demoClient(AsyncSocket s, int c, EchoLoopback.Load load) {
        int size = load.size();
        ByteBuffer request = ByteBuffer.allocateDirect(size);
        ByteBuffer reply = ByteBuffer.allocateDirect(size);
        return Task.loop(0, k -> k < load.roundTrips(), k -> Task.defer(() -> {
            request.clear();
            for (int j = 0; j < size; j++) {
                request.put(EchoLoopback.payload(c, k, j));
            }
            request.flip();
            return s.writeFully(request);
        }).then(Task.defer(() -> {
            reply.clear();
            return s.readFully(reply);
        })).map(ignored -> {
            for (int j = 0; j < size; j++) {
                byte b = reply.get(j);
                if (b != EchoLoopback.payload(c, k, j)) {
                    throw EchoLoopback.mismatch(c, k, j, b);
                }
            }
            return k + 1;
        }));
    }

    /** A client connection: {@code roundTrips} x (write the message, read its echo in full, check it). */
    private static Task<Integer> client(AsyncSocket s, int c, EchoLoopback.Load load) {
        int size = load.size();
        ByteBuffer out = ByteBuffer.allocateDirect(size);
        ByteBuffer in = ByteBuffer.allocateDirect(size);
        Task<Void> write = s.writeFully(out);
        Task<Void> read = s.readFully(in);
        return Task.loop(0, k -> k < load.roundTrips(), k -> {
            out.clear();
            for (int j = 0; j < size; j++) {
                out.put(EchoLoopback.payload(c, k, j));
            }
            out.flip();
            in.clear();
            return write.then(read).map(ignored -> {
                for (int j = 0; j < size; j++) {
                    byte b = in.get(j);
                    if (b != EchoLoopback.payload(c, k, j)) {
                        throw EchoLoopback.mismatch(c, k, j, b);
                    }
                }
                return k + 1;
            });
        });
    }
}
