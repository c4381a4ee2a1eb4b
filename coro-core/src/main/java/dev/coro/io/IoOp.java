package dev.coro.io;

import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitSubject;
import dev.coro.task.Completer;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritableByteChannel;
import java.util.Locale;

/**
 * One I/O operation of a task, run by its channel's {@link IoHandle} on the loop thread: the seed's
 * {@code Awaitable}. {@link #attempt()} is {@code await_ready} and {@code retry}: it tries the
 * non-blocking call and answers whether the operation is done.
 *
 * <p>Also the inbox node that carries the operation to the loop when it starts on another thread, and
 * (as a {@link Runnable}) its completer's cancellation action.
 *
 * @param <T> the value the task completes with
 */
abstract class IoOp<T> extends Inbox.Node implements Runnable, WaitSubject {
    final Completer<T> completer;
    final IoHandle handle;
    /** The one interest bit it waits for. */
    final int ops;
    /** Set (any thread) when the task's cancellation won; the loop then forgets the operation. */
    volatile boolean cancelled;
    /** Whether it has waited for readiness at least once (loop). */
    boolean waited;
    /** The result once done (loop). */
    T result;
    /** The error once done, or null (loop). */
    Throwable error;
    private boolean cancelArmed;

    IoOp(Completer<T> completer, IoHandle handle, int ops) {
        this.completer = completer;
        this.handle = handle;
        this.ops = ops;
    }

    /** Tries the operation without blocking; true when done (result set), false to wait for ops. */
    abstract boolean attempt() throws IOException;

    /** Completes the task with the result or the error (loop). */
    void finish() {
        Throwable e = error;
        if (e != null) {
            completer.fail(e);
        } else {
            completer.complete(result);
        }
    }

    /** The operation was cancelled and forgotten (loop): release what it holds. */
    void withdrawn() {}

    /**
     * Whether this is a read of bytes that may wait for readiness before its first attempt when the
     * channel is presumed drained ({@link IoHandle}'s read hint): {@code read} and {@code readFully}.
     */
    boolean readsBytes() {
        return false;
    }

    /**
     * Once done: whether its last read presumably left nothing behind to read (a short read, or an
     * exact-size read), so the channel's next read waits for readiness instead of trying first.
     */
    boolean leftDrained() {
        return false;
    }

    /** Sets the cancellation action, once. */
    final void armCancel() {
        if (!cancelArmed) {
            cancelArmed = true;
            completer.onCancel(this); // run() below: no allocation per wait
        }
    }

    /**
     * The cancellation action: the task's cancellation won (any thread), so the loop forgets the
     * operation and its interest.
     */
    @Override
    public final void run() {
        cancelled = true;
        if (handle.loop.inEventLoop()) {
            handle.withdraw(this);
        } else {
            handle.loop.runOnLoop(() -> handle.withdraw(this)); // false: shut down, which forgets it anyway
        }
    }

    /** The task dump's view of a waiting operation: it is the cancellation hook of its step. */
    @Override
    public final String waitKind(WaitNode node) {
        return "IO";
    }

    @Override
    public final String waitDescription(WaitNode node) {
        return getClass().getSimpleName().toLowerCase(Locale.ROOT) + " on " + handle.channel;
    }

    /** {@code read}: bytes read, or -1 at end of stream. */
    static final class Read extends IoOp<Integer> {
        private final ReadableByteChannel ch;
        private final ByteBuffer dst;

        Read(Completer<Integer> c, IoHandle h, ReadableByteChannel ch, ByteBuffer dst, int ops) {
            super(c, h, ops);
            this.ch = ch;
            this.dst = dst;
        }

        /** Whether the last read filled less than the room it had. */
        private boolean shortRead;

        @Override
        boolean attempt() throws IOException {
            int room = dst.remaining();
            if (room == 0) {
                result = 0;
                return true;
            }
            int n = ch.read(dst);
            if (n == 0) {
                return false;
            }
            shortRead = n < room;
            result = n;
            return true;
        }

        @Override
        boolean readsBytes() {
            return true;
        }

        @Override
        boolean leftDrained() {
            return shortRead; // a full buffer: more may be waiting
        }
    }

    /** {@code write}: bytes written. */
    static final class Write extends IoOp<Integer> {
        private final WritableByteChannel ch;
        private final ByteBuffer src;

        Write(Completer<Integer> c, IoHandle h, WritableByteChannel ch, ByteBuffer src, int ops) {
            super(c, h, ops);
            this.ch = ch;
            this.src = src;
        }

        @Override
        boolean attempt() throws IOException {
            if (!src.hasRemaining()) {
                result = 0;
                return true;
            }
            int n = ch.write(src);
            if (n == 0) {
                return false;
            }
            result = n;
            return true;
        }
    }

    /** {@code readFully}: fills the buffer, or fails with EOFException. */
    static final class ReadFully extends IoOp<Void> {
        private final ReadableByteChannel ch;
        private final ByteBuffer dst;
        private final int wanted;

        ReadFully(Completer<Void> c, IoHandle h, ReadableByteChannel ch, ByteBuffer dst, int ops) {
            super(c, h, ops);
            this.ch = ch;
            this.dst = dst;
            this.wanted = dst.remaining();
        }

        @Override
        boolean attempt() throws IOException {
            while (dst.hasRemaining()) {
                int n = ch.read(dst);
                if (n == 0) {
                    return false;
                }
                if (n < 0) {
                    throw new EOFException("end of stream after " + (wanted - dst.remaining()) + " of " + wanted
                            + " bytes");
                }
            }
            return true;
        }

        @Override
        boolean readsBytes() {
            return true;
        }

        @Override
        boolean leftDrained() {
            return true; // an exact-size read (a message, a frame): its reply or next frame is usually not there yet
        }
    }

    /** {@code writeFully}: writes every remaining byte. */
    static final class WriteFully extends IoOp<Void> {
        private final WritableByteChannel ch;
        private final ByteBuffer src;

        WriteFully(Completer<Void> c, IoHandle h, WritableByteChannel ch, ByteBuffer src, int ops) {
            super(c, h, ops);
            this.ch = ch;
            this.src = src;
        }

        @Override
        boolean attempt() throws IOException {
            while (src.hasRemaining()) {
                if (ch.write(src) == 0) {
                    return false;
                }
            }
            return true;
        }
    }

    /** {@code ready}: done at the first readiness after it starts waiting. */
    static final class Ready extends IoOp<Void> {
        private boolean armed;

        Ready(Completer<Void> c, IoHandle h, int ops) {
            super(c, h, ops);
        }

        @Override
        boolean attempt() {
            if (!armed) {
                armed = true;
                return false;
            }
            return true;
        }
    }

    /** {@code accept}: the next connection, as a socket on the same loop. */
    static final class Accept extends IoOp<AsyncSocket> {
        private final ServerSocketChannel server;

        Accept(Completer<AsyncSocket> c, IoHandle h, ServerSocketChannel server) {
            super(c, h, java.nio.channels.SelectionKey.OP_ACCEPT);
            this.server = server;
        }

        @Override
        boolean attempt() throws IOException {
            SocketChannel ch = server.accept();
            if (ch == null) {
                return false;
            }
            result = AsyncSocket.adopt(handle.loop, ch);
            return true;
        }

        @Override
        void finish() {
            if (error != null) {
                completer.fail(error);
            } else if (!completer.complete(result)) {
                result.close(); // the accepting task was cancelled meanwhile: do not leak the connection
            }
        }
    }

    /** {@code connect}: connects the handle's socket channel to {@code remote}. */
    static final class Connect extends IoOp<AsyncSocket> {
        private final AsyncSocket socket;
        private final SocketAddress remote;
        private boolean started;

        Connect(Completer<AsyncSocket> c, AsyncSocket socket, SocketAddress remote) {
            super(c, socket.handle(), java.nio.channels.SelectionKey.OP_CONNECT);
            this.socket = socket;
            this.remote = remote;
        }

        @Override
        boolean attempt() throws IOException {
            SocketChannel ch = socket.channel();
            if (!started) {
                started = true;
                if (!ch.connect(remote)) {
                    return false;
                }
            } else if (!ch.finishConnect()) {
                return false;
            }
            result = socket;
            return true;
        }

        @Override
        void finish() {
            if (error != null) {
                socket.close();
                completer.fail(error);
            } else if (!completer.complete(socket)) {
                socket.close(); // cancelled meanwhile
            }
        }

        @Override
        void withdrawn() {
            socket.close();
        }
    }
}
