package dev.coro.io;

import dev.coro.task.Task;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.WritableByteChannel;
import java.util.Objects;

/**
 * Any non-blocking {@link SelectableChannel} bound to one {@link EventLoop} (a pipe end, a socket, a
 * datagram channel), with asynchronous byte operations: the seed's {@code async_read} and
 * {@code async_write}, plus their "fully" forms and a bare wait for readiness.
 *
 * <p><b>How an operation runs</b> (seed 004's {@code await_ready} / {@code retry}): it is tried at once,
 * and waits for the selector only if the channel would block; when the selector reports readiness,
 * the loop tries it again. Every attempt runs on the loop thread. A task that starts an operation on
 * the loop thread tries it inline (an operation that does not block costs no suspension and no
 * thread hop); a task started elsewhere hands the operation to the loop and, when it completes,
 * continues on its own scheduler. We chose "hop to the loop and back" over "must be started on the
 * loop" because the channel's state then never has a second writer, whoever calls, and a caller on
 * the loop (the fast case) pays nothing for it.
 *
 * <p><b>One operation per direction.</b> At most one read-side operation ({@link #read},
 * {@link #readFully}, {@code ready(OP_READ)}) and one write-side operation ({@link #write},
 * {@link #writeFully}, {@code ready(OP_WRITE)}) may be pending on a channel at a time; starting a
 * second one in the same direction fails it with {@link IllegalStateException}. (A read and a write
 * may be pending together.)
 *
 * <p><b>Outcomes.</b> End of stream is a value ({@code -1} from {@link #read}) or an error
 * ({@link java.io.EOFException} from {@link #readFully}); I/O errors end the task on the error
 * channel with the channel's own exception; nothing is swallowed. After {@link #close()}, pending
 * operations fail with {@link java.nio.channels.AsynchronousCloseException} and new ones with
 * {@link java.nio.channels.ClosedChannelException}. If the loop is shut down, pending operations
 * complete cancelled and new ones fail with {@link java.util.concurrent.RejectedExecutionException}.
 *
 * <p><b>Cancellation.</b> A cancelled operation completes on the cancelled channel and the loop drops
 * its interest in the channel; the channel stays usable. Cancel safety: no data is lost, but a
 * cancellation from another thread can race an attempt that has just moved bytes, in which case the
 * task still ends cancelled and the bytes are in (or gone from) the buffer: its position says how
 * many. A cancellation on the loop thread (a timeout on the loop, a sibling's failure) cannot race
 * an attempt. The "fully" forms keep their partial progress in the buffer's position likewise.
 *
 * <p><b>Thread-safety.</b> Tasks may be started from any thread. A buffer belongs to the operation
 * until its task ends: do not touch it meanwhile. Actions before an operation's task starts
 * happen-before its attempts; its attempts happen-before the task's continuation.
 *
 * <p><b>Bad input.</b> A null buffer gets {@link NullPointerException}; a read into a read-only buffer
 * gets {@link IllegalArgumentException}; reading a channel that is not a
 * {@link ReadableByteChannel} (or writing one that is not a {@link WritableByteChannel}) gets
 * {@link UnsupportedOperationException}.
 *
 * {@snippet :
 * Pipe pipe = Pipe.open();
 * try (EventLoop loop = EventLoop.start();
 *         AsyncChannel in = AsyncChannel.open(loop, pipe.source());
 *         AsyncChannel out = AsyncChannel.open(loop, pipe.sink())) {
 *     ByteBuffer got = ByteBuffer.allocate(5);
 *     Task.whenAll(out.writeFully(ByteBuffer.wrap("hello".getBytes())), in.readFully(got), (a, b) -> b)
 *             .startOn(loop)
 *             .join();
 *     System.out.println(new String(got.array())); // hello
 * }
 * }
 */
public final class AsyncChannel implements AutoCloseable {
    private final EventLoop loop;
    private final SelectableChannel channel;
    final IoHandle handle;
    private volatile boolean closed;

    AsyncChannel(EventLoop loop, SelectableChannel channel) {
        this.loop = loop;
        this.channel = channel;
        this.handle = new IoHandle(loop, channel);
    }

    /**
     * Binds {@code channel} to {@code loop}, switching it to non-blocking mode. Use one
     * {@code AsyncChannel} per channel and loop.
     *
     * {@snippet :
     * AsyncChannel source = AsyncChannel.open(loop, Pipe.open().source());
     * }
     *
     * @param loop the loop that runs its operations
     * @param channel the channel; a {@link ReadableByteChannel}, a {@link WritableByteChannel} or both
     * @return the bound channel
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code channel} can neither be read nor written
     * @throws IOException if the channel cannot be made non-blocking (for example, it is closed)
     */
    public static AsyncChannel open(EventLoop loop, SelectableChannel channel) throws IOException {
        Objects.requireNonNull(loop, "loop");
        Objects.requireNonNull(channel, "channel");
        if (!(channel instanceof ReadableByteChannel) && !(channel instanceof WritableByteChannel)) {
            throw new IllegalArgumentException(
                    "channel must be a ReadableByteChannel or a WritableByteChannel, was " + channel.getClass().getName());
        }
        channel.configureBlocking(false);
        return new AsyncChannel(loop, channel);
    }

    /**
     * Returns a task that reads some bytes into {@code dst}: completes with the number read (at
     * least 1 if {@code dst} has room), {@code 0} at once if {@code dst} is full, or {@code -1} at end
     * of stream. Waits (suspending the task, not a thread) only while nothing can be read.
     *
     * {@snippet :
     * int n = channel.read(buffer).join();
     * }
     *
     * @param dst where the bytes go, from its position
     * @return the task
     * @throws NullPointerException if {@code dst} is null
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @throws UnsupportedOperationException if the channel is not readable
     */
    public Task<Integer> read(ByteBuffer dst) {
        ReadableByteChannel in = readable("read", dst);
        return Task.create(c -> handle.submit(new IoOp.Read(c, handle, in, dst, SelectionKey.OP_READ)));
    }

    /**
     * Returns a task that writes some bytes of {@code src}: completes with the number written (at
     * least 1 if {@code src} has bytes left; {@code 0} at once if it has none). Waits only while
     * nothing can be written.
     *
     * {@snippet :
     * int n = channel.write(ByteBuffer.wrap(bytes)).join();
     * }
     *
     * @param src the bytes, from its position to its limit
     * @return the task
     * @throws NullPointerException if {@code src} is null
     * @throws UnsupportedOperationException if the channel is not writable
     */
    public Task<Integer> write(ByteBuffer src) {
        WritableByteChannel out = writable("write", src);
        return Task.create(c -> handle.submit(new IoOp.Write(c, handle, out, src, SelectionKey.OP_WRITE)));
    }

    /**
     * Returns a task that reads until {@code dst} is full; it fails with {@link java.io.EOFException}
     * (saying how many bytes came) if the stream ends first.
     *
     * {@snippet :
     * ByteBuffer header = ByteBuffer.allocate(4);
     * channel.readFully(header).join();
     * }
     *
     * @param dst where the bytes go
     * @return the task
     * @throws NullPointerException if {@code dst} is null
     * @throws IllegalArgumentException if {@code dst} is read-only
     * @throws UnsupportedOperationException if the channel is not readable
     */
    public Task<Void> readFully(ByteBuffer dst) {
        ReadableByteChannel in = readable("readFully", dst);
        return Task.create(c -> handle.submit(new IoOp.ReadFully(c, handle, in, dst, SelectionKey.OP_READ)));
    }

    /**
     * Returns a task that writes every remaining byte of {@code src}.
     *
     * {@snippet :
     * channel.writeFully(ByteBuffer.wrap("hello".getBytes())).join();
     * }
     *
     * @param src the bytes
     * @return the task
     * @throws NullPointerException if {@code src} is null
     * @throws UnsupportedOperationException if the channel is not writable
     */
    public Task<Void> writeFully(ByteBuffer src) {
        WritableByteChannel out = writable("writeFully", src);
        return Task.create(c -> handle.submit(new IoOp.WriteFully(c, handle, out, src, SelectionKey.OP_WRITE)));
    }

    /**
     * Returns a task that waits until the selector reports the channel ready for {@code ops} (the
     * seed's bare {@code await_ready}): for channels whose operations this class does not wrap.
     * It always waits for one selection, even if the channel is ready already.
     *
     * {@snippet :
     * channel.ready(SelectionKey.OP_READ).then(Task.fromCallable(() -> datagram.receive(buffer))).join();
     * }
     *
     * @param ops exactly one of {@link SelectionKey#OP_READ}, {@link SelectionKey#OP_WRITE},
     *     {@link SelectionKey#OP_ACCEPT}, {@link SelectionKey#OP_CONNECT}, valid for the channel
     * @return the task
     * @throws IllegalArgumentException if {@code ops} is not one bit of the channel's valid operations
     */
    public Task<Void> ready(int ops) {
        if (Integer.bitCount(ops) != 1 || (channel.validOps() & ops) != ops) {
            throw new IllegalArgumentException("ops must be one bit of the channel's valid operations "
                    + channel.validOps() + ", was " + ops);
        }
        return Task.create(c -> handle.submit(new IoOp.Ready(c, handle, ops)));
    }

    /**
     * Returns the channel.
     *
     * @return the channel
     */
    public SelectableChannel channel() {
        return channel;
    }

    /**
     * Returns the loop that runs this channel's operations.
     *
     * @return the loop
     */
    public EventLoop loop() {
        return loop;
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Closes the channel at once (from any thread); its pending operations then fail with
     * {@link java.nio.channels.AsynchronousCloseException}, on the loop. Idempotent.
     *
     * @throws UncheckedIOException if closing the channel fails (pending operations still fail)
     */
    @Override
    public void close() {
        if (closed || !CLOSED.compareAndSet(this, false, true)) {
            return;
        }
        IOException failure = null;
        try {
            channel.close();
        } catch (IOException e) {
            failure = e;
        }
        loop.runOnLoop(handle::failAll); // false: the loop is shut down and cancelled them already
        if (failure != null) {
            throw new UncheckedIOException("close of " + channel + " failed", failure);
        }
    }

    @Override
    public String toString() {
        return "AsyncChannel[" + channel + (closed ? ", closed" : "") + "]";
    }

    private ReadableByteChannel readable(String op, ByteBuffer dst) {
        Objects.requireNonNull(dst, "dst");
        if (!(channel instanceof ReadableByteChannel in)) {
            throw new UnsupportedOperationException(op + ": " + channel.getClass().getName() + " is not readable");
        }
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException(op + ": dst must be writable, was a read-only buffer");
        }
        return in;
    }

    private WritableByteChannel writable(String op, ByteBuffer src) {
        Objects.requireNonNull(src, "src");
        if (!(channel instanceof WritableByteChannel out)) {
            throw new UnsupportedOperationException(op + ": " + channel.getClass().getName() + " is not writable");
        }
        return out;
    }

    private static final VarHandle CLOSED;

    static {
        try {
            CLOSED = MethodHandles.lookup().findVarHandle(AsyncChannel.class, "closed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
