package dev.coro.io;

import static dev.coro.io.AsyncSocketTest.awaitPending;
import static dev.coro.io.AsyncSocketTest.bytes;
import static dev.coro.io.EventLoopTimerTest.onLoop;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Any selectable channel through the loop: OS pipes, a bare readiness wait, bad input. */
class AsyncChannelTest {
    private EventLoop loop;
    private Pipe pipe;
    private AsyncChannel in;
    private AsyncChannel out;

    @BeforeEach
    void setUp() throws Exception {
        loop = EventLoop.start("pipe-loop");
        pipe = Pipe.open();
        in = AsyncChannel.open(loop, pipe.source());
        out = AsyncChannel.open(loop, pipe.sink());
    }

    @AfterEach
    void tearDown() {
        in.close();
        out.close();
        loop.close();
    }

    @Test
    void aWriterFillsThePipeThenWaitsForTheReader() throws Exception {
        byte[] data = bytes(1 << 20, 3); // far more than a pipe holds
        CompletableFuture<Void> written = out.writeFully(ByteBuffer.wrap(data)).toCompletableFuture();
        awaitPending(loop, out.handle, true); // the pipe is full: the writer suspended
        assertFalse(written.isDone());
        ByteBuffer got = ByteBuffer.allocate(data.length);
        in.readFully(got).join();
        written.get();
        assertArrayEquals(data, got.array());
        assertFalse(pipe.source().isBlocking());
    }

    @Test
    void readyWaitsForTheSelector() throws Exception {
        CompletableFuture<Void> ready = in.ready(SelectionKey.OP_READ).toCompletableFuture();
        awaitPending(loop, in.handle, true);
        out.writeFully(ByteBuffer.wrap(new byte[] {42})).join();
        ready.get();
        ByteBuffer one = ByteBuffer.allocate(1);
        assertEquals(1, (int) in.read(one).join());
        assertEquals(42, one.get(0));
    }

    @Test
    void aReadAfterAShortReadWaitsForTheSelectorAndGetsWhatArrivedMeanwhile() throws Exception {
        out.writeFully(ByteBuffer.wrap(new byte[] {1, 2})).join();
        ByteBuffer dst = ByteBuffer.allocate(8);
        assertEquals(2, (int) in.read(dst).join()); // at once, before any registration with the selector
        assertTrue(onLoop(loop, in.handle::presumedDrained), "a short read leaves the pipe presumed drained");
        out.writeFully(ByteBuffer.wrap(new byte[] {3, 4, 5})).join(); // already there when the next read starts
        assertEquals(3, (int) in.read(dst).join());
        assertEquals(5, dst.position());
        assertEquals(5, dst.get(4));
        CompletableFuture<Integer> next = in.read(dst).toCompletableFuture(); // the selector must report it
        awaitPending(loop, in.handle, true);
        out.writeFully(ByteBuffer.wrap(new byte[] {6})).join();
        assertEquals(1, (int) next.get());
        assertEquals(6, dst.get(5));
    }

    @Test
    void aReadinessReportLiftsTheReadHintSoTheNextReadTriesAtOnce() throws Exception {
        out.writeFully(ByteBuffer.wrap(new byte[] {1})).join();
        in.readFully(ByteBuffer.allocate(1)).join(); // exact: presumed drained
        assertTrue(onLoop(loop, in.handle::presumedDrained));
        CompletableFuture<Void> ready = in.ready(SelectionKey.OP_READ).toCompletableFuture();
        awaitPending(loop, in.handle, true);
        out.writeFully(ByteBuffer.wrap(new byte[] {2})).join();
        ready.get(); // the selector reported the pipe readable: the byte is there
        assertFalse(onLoop(loop, in.handle::presumedDrained), "a readiness report ends the presumption");
        ByteBuffer one = ByteBuffer.allocate(1);
        assertEquals(1, (int) in.read(one).join());
        assertEquals(2, one.get(0));
    }

    @Test
    void anExactReadLeavesThePipePresumedDrainedAndAFullReadDoesNot() throws Exception {
        out.writeFully(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5, 6})).join();
        in.readFully(ByteBuffer.allocate(2)).join();
        assertTrue(onLoop(loop, in.handle::presumedDrained), "readFully: its next read waits for the selector");
        ByteBuffer two = ByteBuffer.allocate(2);
        assertEquals(2, (int) in.read(two).join()); // waited for readiness: the bytes were there
        assertFalse(onLoop(loop, in.handle::presumedDrained), "a read that filled its buffer: more may be there");
        ByteBuffer rest = ByteBuffer.allocate(2);
        assertEquals(2, (int) in.read(rest).join()); // tried at once
        assertEquals(6, rest.get(1));
    }

    @Test
    void endOfStreamWhenTheWriterCloses() throws Exception {
        out.writeFully(ByteBuffer.wrap("ab".getBytes())).join();
        out.close();
        ByteBuffer dst = ByteBuffer.allocate(8);
        assertEquals(2, (int) in.read(dst).join());
        assertEquals(-1, (int) in.read(dst).join());
    }

    @Test
    void closeFailsAPendingRead() throws Exception {
        CompletableFuture<Integer> read = in.read(ByteBuffer.allocate(4)).toCompletableFuture();
        awaitPending(loop, in.handle, true);
        in.close();
        assertTrue(in.isClosed());
        ExecutionException e = assertThrows(ExecutionException.class, read::get);
        assertInstanceOf(AsynchronousCloseException.class, e.getCause());
    }

    @Test
    void badInput() throws Exception {
        assertThrows(NullPointerException.class, () -> AsyncChannel.open(null, pipe.source()));
        assertThrows(NullPointerException.class, () -> AsyncChannel.open(loop, null));
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            assertThrows(IllegalArgumentException.class, () -> AsyncChannel.open(loop, server));
        }
        assertThrows(NullPointerException.class, () -> in.read(null));
        assertThrows(NullPointerException.class, () -> out.write(null));
        assertThrows(UnsupportedOperationException.class, () -> out.read(ByteBuffer.allocate(1)));
        assertThrows(UnsupportedOperationException.class, () -> in.writeFully(ByteBuffer.allocate(1)));
        assertThrows(IllegalArgumentException.class, () -> in.readFully(ByteBuffer.allocate(1).asReadOnlyBuffer()));
        assertThrows(IllegalArgumentException.class, () -> in.ready(SelectionKey.OP_WRITE));
        assertThrows(IllegalArgumentException.class, () -> in.ready(SelectionKey.OP_READ | SelectionKey.OP_WRITE));
        assertEquals(pipe.source(), in.channel());
        assertEquals(loop, in.loop());
    }
}
