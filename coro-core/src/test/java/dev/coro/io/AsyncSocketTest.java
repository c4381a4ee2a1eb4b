package dev.coro.io;

import static dev.coro.io.EventLoopTimerTest.onLoop;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.EOFException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** TCP on 127.0.0.1 through the loop: real sockets, partial transfers, would-block paths, ends. */
class AsyncSocketTest {
    private EventLoop loop;
    private AsyncServerSocket server;

    @BeforeEach
    void setUp() throws Exception {
        loop = EventLoop.start("socket-loop");
        server = AsyncServerSocket.bind(loop, new InetSocketAddress("127.0.0.1", 0));
    }

    @AfterEach
    void tearDown() {
        server.close();
        loop.close();
    }

    /** A connected pair: [client, server side]. */
    private AsyncSocket[] pair() {
        CompletableFuture<AsyncSocket> accepted = server.accept().toCompletableFuture();
        AsyncSocket client = AsyncSocket.connect(loop, server.localAddress()).join();
        return new AsyncSocket[] {client, accepted.join()};
    }

    static void awaitPending(EventLoop loop, IoHandle h, boolean pending) throws Exception {
        while (onLoop(loop, h::hasPending) != pending) {
            Thread.onSpinWait();
        }
    }

    static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /** Echoes until end of stream, then closes. */
    static Task<Void> echo(AsyncSocket s) {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        return Task.loop(true, more -> more, ignored -> {
            buf.clear();
            return s.read(buf).flatMap(n -> {
                if (n < 0) {
                    s.close();
                    return Task.value(false);
                }
                buf.flip();
                return s.writeFully(buf).map(x -> true);
            });
        }).map(x -> (Void) null);
    }

    @Test
    void connectAcceptAndExchange() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            assertEquals(loop, client.loop());
            assertEquals(loop, peer.loop());
            assertTrue(client.channel().getOption(StandardSocketOptions.TCP_NODELAY));
            client.writeFully(ByteBuffer.wrap("ping".getBytes())).join();
            ByteBuffer got = ByteBuffer.allocate(4);
            peer.readFully(got).join();
            assertEquals("ping", new String(got.array()));
            assertEquals(0, (int) client.write(ByteBuffer.allocate(0)).join(), "an empty write writes nothing");
            assertEquals(0, (int) client.read(ByteBuffer.allocate(0)).join(), "a full buffer reads nothing");
        }
    }

    @Test
    void aReadWaitsThenGetsWhatArrivedWhichMayBeLessThanAsked() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            ByteBuffer dst = ByteBuffer.allocate(100);
            CompletableFuture<Integer> read = client.read(dst).toCompletableFuture();
            awaitPending(loop, client.handle(), true); // the would-block path
            peer.writeFully(ByteBuffer.wrap("hello".getBytes())).join();
            int n = read.get();
            assertTrue(n >= 1 && n <= 5, "read " + n);
            assertEquals("hello".substring(0, n), new String(dst.array(), 0, n));
        }
    }

    @Test
    void readFullyAssemblesPartialArrivals() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            ByteBuffer dst = ByteBuffer.allocate(10);
            CompletableFuture<Void> read = client.readFully(dst).toCompletableFuture();
            awaitPending(loop, client.handle(), true);
            peer.writeFully(ByteBuffer.wrap("012".getBytes())).join();
            peer.writeFully(ByteBuffer.wrap("3456".getBytes())).join();
            assertFalse(read.isDone(), "7 of 10 bytes have been sent");
            peer.writeFully(ByteBuffer.wrap("789".getBytes())).join();
            read.get();
            assertEquals("0123456789", new String(dst.array()));
        }
    }

    @Test
    void aFullSendBufferMakesWritesPartialAndWritersWait() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            client.channel().setOption(StandardSocketOptions.SO_SNDBUF, 8192);
            int size = 1 << 20;
            byte[] data = bytes(size, 1);
            ByteBuffer src = ByteBuffer.wrap(data);
            int first = client.write(src).join(); // nobody reads: the kernel takes only part
            assertTrue(first > 0 && first < size, "first write took " + first);
            CompletableFuture<Void> rest = client.writeFully(src).toCompletableFuture();
            awaitPending(loop, client.handle(), true); // suspended on would-block
            assertEquals(SelectionKey.OP_WRITE, onLoop(loop, client.handle()::interest) & SelectionKey.OP_WRITE);
            // a small send buffer makes delayed acknowledgements dominate the transfer: widen it now
            client.channel().setOption(StandardSocketOptions.SO_SNDBUF, 1 << 20);
            ByteBuffer got = ByteBuffer.allocate(size);
            peer.readFully(got).join();
            rest.get();
            assertArrayEquals(data, got.array());
            assertEquals(0, onLoop(loop, client.handle()::interest) & SelectionKey.OP_WRITE,
                    "write interest is dropped once the write is done");
        }
    }

    @Test
    void peerCloseIsEndOfStream() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            CompletableFuture<Integer> pending = client.read(ByteBuffer.allocate(8)).toCompletableFuture();
            awaitPending(loop, client.handle(), true);
            peer.writeFully(ByteBuffer.wrap("abc".getBytes())).join();
            peer.close();
            assertEquals(3, (int) pending.get());
            assertEquals(-1, (int) client.read(ByteBuffer.allocate(8)).join());
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> client.readFully(ByteBuffer.allocate(8)).toCompletableFuture().get());
            assertInstanceOf(EOFException.class, e.getCause());
            assertEquals("end of stream after 0 of 8 bytes", e.getCause().getMessage());
        }
    }

    @Test
    void readFullyThatMeetsTheEndSaysHowFarItGot() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            CompletableFuture<Void> pending = client.readFully(ByteBuffer.allocate(8)).toCompletableFuture();
            peer.writeFully(ByteBuffer.wrap("abc".getBytes())).join();
            peer.close();
            ExecutionException e = assertThrows(ExecutionException.class, pending::get);
            assertInstanceOf(EOFException.class, e.getCause());
            assertEquals("end of stream after 3 of 8 bytes", e.getCause().getMessage());
        }
    }

    @Test
    void cancellingAPendingReadRemovesItsInterestAndTheSocketStaysUsable() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            IoHandle h = client.handle();
            // cancelled from another thread
            CompletableFuture<Integer> read = client.read(ByteBuffer.allocate(8)).toCompletableFuture();
            awaitPending(loop, h, true);
            assertEquals(SelectionKey.OP_READ, onLoop(loop, h::interest));
            read.cancel(true);
            awaitPending(loop, h, false);
            assertEquals(0, onLoop(loop, h::interest), "the cancelled read's interest is gone");
            // cancelled on the loop thread, by a timeout
            ExecutionException timedOut = assertThrows(ExecutionException.class, () -> client.read(ByteBuffer.allocate(8))
                    .timeout(Duration.ofMillis(2)).startOn(loop).toCompletableFuture().get());
            assertInstanceOf(TimeoutException.class, timedOut.getCause());
            assertFalse(onLoop(loop, h::hasPending));
            assertEquals(0, onLoop(loop, h::interest));
            // still usable: nothing was consumed by the cancelled reads
            peer.writeFully(ByteBuffer.wrap("after".getBytes())).join();
            ByteBuffer got = ByteBuffer.allocate(5);
            client.readFully(got).join();
            assertEquals("after", new String(got.array()));
        }
    }

    @Test
    void closeFailsPendingOperationsWithAsynchronousCloseException() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            CompletableFuture<Integer> read = client.read(ByteBuffer.allocate(8)).toCompletableFuture();
            awaitPending(loop, client.handle(), true);
            client.close();
            ExecutionException e = assertThrows(ExecutionException.class, read::get);
            assertInstanceOf(AsynchronousCloseException.class, e.getCause());
            ExecutionException after = assertThrows(ExecutionException.class,
                    () -> client.read(ByteBuffer.allocate(8)).toCompletableFuture().get());
            assertInstanceOf(ClosedChannelException.class, after.getCause());
            client.close(); // idempotent
            // a pending accept
            CompletableFuture<AsyncSocket> accept = server.accept().toCompletableFuture();
            awaitPending(loop, server.channelHandle(), true);
            server.close();
            ExecutionException a = assertThrows(ExecutionException.class, accept::get);
            assertInstanceOf(AsynchronousCloseException.class, a.getCause());
        }
    }

    @Test
    void aSecondReadWhileOneIsPendingIsRefused() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            CompletableFuture<Integer> first = client.read(ByteBuffer.allocate(8)).toCompletableFuture();
            awaitPending(loop, client.handle(), true);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> client.read(ByteBuffer.allocate(8)).toCompletableFuture().get());
            assertInstanceOf(IllegalStateException.class, e.getCause());
            // a write may be pending beside the read
            client.writeFully(ByteBuffer.wrap("x".getBytes())).join();
            peer.writeFully(ByteBuffer.wrap("y".getBytes())).join();
            assertEquals(1, (int) first.get());
        }
    }

    @Test
    void connectToAClosedPortFails() throws Exception {
        int port;
        try (ServerSocketChannel s = ServerSocketChannel.open()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            port = ((InetSocketAddress) s.getLocalAddress()).getPort();
        }
        ExecutionException e = assertThrows(ExecutionException.class, () -> AsyncSocket
                .connect(loop, new InetSocketAddress("127.0.0.1", port)).toCompletableFuture().get());
        assertInstanceOf(ConnectException.class, e.getCause());
    }

    @Test
    void manyConnectionsEchoConcurrently() throws Exception {
        int connections = 200;
        int rounds = 20;
        Scope scope = Scope.on(loop);
        CompletableFuture<Integer> acceptor = Task.loop(0, i -> i < connections,
                i -> server.accept().map(s -> {
                    scope.spawn(echo(s));
                    return i + 1;
                })).startOn(loop).toCompletableFuture();
        List<Task<Integer>> clients = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            byte[] msg = bytes(64 + c, c);
            clients.add(AsyncSocket.connect(loop, server.localAddress()).flatMap(s -> {
                ByteBuffer in = ByteBuffer.allocate(msg.length);
                return Task.loop(0, i -> i < rounds, i -> s.writeFully(ByteBuffer.wrap(msg))
                        .then(Task.defer(() -> {
                            in.clear();
                            return s.readFully(in);
                        }))
                        .map(x -> {
                            if (!java.util.Arrays.equals(msg, in.array())) {
                                throw new AssertionError("echo mismatch");
                            }
                            return i + 1;
                        })).andFinally(s::close);
            }));
        }
        List<Integer> done = Task.whenAll(clients).startOn(loop).join();
        assertEquals(connections, done.size());
        assertTrue(done.stream().allMatch(r -> r == rounds));
        assertEquals(connections, acceptor.get());
        scope.joinBlocking();
    }

    @Test
    void shutdownCompletesPendingIoCancelledAndRefusesNewIo() throws Exception {
        AsyncSocket[] p = pair();
        try (AsyncSocket client = p[0]; AsyncSocket peer = p[1]) {
            CompletableFuture<Integer> read = client.read(ByteBuffer.allocate(8)).toCompletableFuture();
            CompletableFuture<AsyncSocket> accept = server.accept().toCompletableFuture();
            awaitPending(loop, client.handle(), true);
            awaitPending(loop, server.channelHandle(), true);
            loop.close();
            assertThrows(CancellationException.class, read::join);
            assertThrows(CancellationException.class, accept::join);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> client.read(ByteBuffer.allocate(8)).toCompletableFuture().get());
            assertInstanceOf(RejectedExecutionException.class, e.getCause());
            assertTrue(client.channel().isOpen(), "the loop does not close channels it does not own");
        }
    }
}
