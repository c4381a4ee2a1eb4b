package dev.coro.io;

import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.util.concurrent.RejectedExecutionException;

/**
 * One channel's I/O state on its {@link EventLoop}: its selection key, the interest set the loop last
 * gave it, and at most one pending operation per direction (a reader: read, accept, ready-for-read;
 * a writer: write, connect, ready-for-write). The seed's {@code m_awaitables[fd]}, per channel.
 *
 * <p>Confined to the loop thread (every method but {@link #submit} asserts it); the one way in from
 * other threads is {@link #submit}, which goes through the loop's inbox.
 *
 * <p><b>The protocol</b> (seed 004's {@code await_ready} / {@code retry}): an operation is tried at
 * once; only if it would block does it become the pending reader or writer and add its interest
 * bit. When the selector reports the channel ready, the pending operation is tried again; when it
 * finishes, it is cleared from its slot first and completed second, so the task it resumes (inline,
 * on the loop) may start its next operation on this channel at once.
 *
 * <p><b>Interest.</b> The read-side bits (read, accept) stay set after their operation finishes,
 * because the next read usually follows soon (a request-response connection then costs no interest
 * change per round trip); the first readiness reported with no reader pending clears them.
 * Write-side bits (write, connect) are cleared as soon as their operation finishes, since a writable
 * socket is almost always ready. A cancelled operation's bit is cleared at once.
 *
 * <p><b>The read hint.</b> Trying first costs a wasted {@code read} call whenever nothing has arrived
 * yet, which in a request-response exchange is every time: a server reads a request, writes the
 * reply and tries to read the next request at once; a client writes a request and tries to read the
 * reply at once. So the handle remembers whether the channel is presumed drained: after a read that
 * came up short (fewer bytes than it had room for), or an exact-size {@code readFully}, or a read
 * that would block, until the selector next reports the channel readable. A {@code read} or
 * {@code readFully} that starts while the channel is presumed drained and its read interest is still
 * set (kept from the last read) waits for that report instead of trying first. Nothing can be missed:
 * the selector reports readiness as long as unread bytes (or the end of stream) are there, so the
 * operation is tried at the next select, which serves every ready channel of the loop at once (Netty
 * reads only on readiness, always).
 */
final class IoHandle {
    private static final int READ_SIDE = SelectionKey.OP_READ | SelectionKey.OP_ACCEPT;
    private static final int WRITE_SIDE = SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT;

    final EventLoop loop;
    final SelectableChannel channel;
    private SelectionKey key;
    private int interest;
    private IoOp<?> reader;
    private IoOp<?> writer;
    /** The read hint: false while the channel is presumed drained (see the class comment). */
    private boolean readable = true;

    IoHandle(EventLoop loop, SelectableChannel channel) {
        this.loop = loop;
        this.channel = channel;
    }

    /**
     * Starts {@code op}, from any thread: on the loop thread, at once; from elsewhere, through the
     * inbox (its cancellation armed first, so that a cancel arriving before the loop does is seen).
     * A loop that is shut down fails it with {@link RejectedExecutionException}.
     */
    void submit(IoOp<?> op) {
        if (loop.inEventLoop()) {
            if (!loop.isRunning()) {
                op.completer.fail(new RejectedExecutionException(loop + " is shut down"));
                op.withdrawn();
                return;
            }
            start(op);
            return;
        }
        op.armCancel();
        if (!loop.submit(op)) {
            op.completer.fail(new RejectedExecutionException(loop + " is shut down"));
            op.withdrawn();
        }
    }

    /** Loop: the first attempt of {@code op}. */
    void start(IoOp<?> op) {
        assert loop.inEventLoop();
        if (!loop.isRunning()) {
            op.completer.cancel(); // accepted before the shutdown: pending I/O ends cancelled
            op.withdrawn();
            return;
        }
        if (op.cancelled) {
            op.withdrawn(); // cancelled before the loop got to it; its completer already ended
            return;
        }
        boolean readSide = (op.ops & READ_SIDE) != 0;
        IoOp<?> busy = readSide ? reader : writer;
        if (busy != null && busy.cancelled) {
            withdraw(busy); // its cancel is still on its way through the inbox
            busy = null;
        }
        if (busy != null) {
            op.completer.fail(new IllegalStateException((readSide ? "a read-side" : "a write-side")
                    + " operation is already pending on " + channel + ": wait for it before starting another"));
            op.withdrawn();
            return;
        }
        if (readSide && !readable && (interest & SelectionKey.OP_READ) != 0 && op.readsBytes()) {
            reader = op; // presumed drained, and the kept interest makes the selector report new bytes
            op.waited = true;
            op.armCancel();
            return;
        }
        if (attempt(op)) {
            finished(op);
            return;
        }
        if (readSide) {
            reader = op;
            readable = false;
        } else {
            writer = op;
        }
        try {
            addInterest(op.ops);
        } catch (ClosedChannelException | CancelledKeyException e) {
            clear(op);
            op.error = new ClosedChannelException();
            op.finish();
            return;
        } catch (RuntimeException e) {
            clear(op);
            op.error = e;
            op.finish();
            return;
        }
        op.waited = true;
        op.armCancel(); // if already cancelled, this runs withdraw(op) now
    }

    /** Loop: the selector reported the channel ready. */
    void onReady(SelectionKey k) {
        assert loop.inEventLoop();
        int readyOps;
        try {
            readyOps = k.readyOps();
        } catch (CancelledKeyException closed) {
            return; // closed meanwhile: the close fails the pending operations
        }
        if ((readyOps & READ_SIDE) != 0) {
            readable = true;
            IoOp<?> r = reader;
            if (r == null) {
                clearInterest(interest & READ_SIDE); // lazily kept interest: nobody reads now
            } else {
                retry(r);
            }
        }
        if ((readyOps & WRITE_SIDE) != 0) {
            IoOp<?> w = writer;
            if (w == null) {
                clearInterest(interest & WRITE_SIDE);
            } else {
                retry(w);
            }
        }
    }

    private void retry(IoOp<?> op) {
        if (op.cancelled) {
            withdraw(op); // do not touch the buffer of a cancelled task
            return;
        }
        if (!attempt(op)) {
            if ((op.ops & READ_SIDE) != 0) {
                readable = false;
            }
            return; // spurious readiness: keep waiting
        }
        clear(op);
        if ((op.ops & WRITE_SIDE) != 0) {
            clearInterest(op.ops);
        }
        finished(op);
    }

    /** Completes {@code op}, which is done, after noting what its last read says of the channel. */
    private void finished(IoOp<?> op) {
        if (op.error == null && op.readsBytes()) {
            readable = !op.leftDrained();
        }
        op.finish();
    }

    /** Runs one attempt; true when the operation is done (result or error set). */
    private static boolean attempt(IoOp<?> op) {
        try {
            return op.attempt();
        } catch (Throwable e) {
            op.error = op.waited && e instanceof ClosedChannelException && !(e instanceof AsynchronousCloseException)
                    ? new AsynchronousCloseException() : e;
            return true;
        }
    }

    /** Loop: {@code op} was cancelled; forget it and its interest (once). */
    void withdraw(IoOp<?> op) {
        assert loop.inEventLoop();
        if (reader == op || writer == op) {
            clear(op);
            clearInterest(op.ops);
            op.withdrawn();
        }
    }

    /** Loop: the channel was closed: every pending operation fails with AsynchronousCloseException. */
    void failAll() {
        assert loop.inEventLoop();
        IoOp<?> r = reader;
        IoOp<?> w = writer;
        reader = null;
        writer = null;
        interest = 0;
        if (r != null) {
            r.error = new AsynchronousCloseException();
            r.finish();
        }
        if (w != null) {
            w.error = new AsynchronousCloseException();
            w.finish();
        }
    }

    /** Loop: the loop shuts down: every pending operation completes cancelled. */
    void cancelAll() {
        assert loop.inEventLoop();
        IoOp<?> r = reader;
        IoOp<?> w = writer;
        reader = null;
        writer = null;
        if (r != null) {
            r.completer.cancel();
            r.withdrawn();
        }
        if (w != null) {
            w.completer.cancel();
            w.withdrawn();
        }
    }

    /** Whether the channel is presumed drained, so that the next read waits for readiness (tests). */
    boolean presumedDrained() {
        return !readable;
    }

    /** The interest set the loop last gave the key (tests). */
    int interest() {
        return interest;
    }

    /** Loop: the operations pending, 0 to 2 (one per direction). */
    int pendingCount() {
        return (reader != null ? 1 : 0) + (writer != null ? 1 : 0);
    }

    /** Whether an operation is pending in either direction (tests). */
    boolean hasPending() {
        return reader != null || writer != null;
    }

    private void clear(IoOp<?> op) {
        if (reader == op) {
            reader = null;
        } else if (writer == op) {
            writer = null;
        }
    }

    private void addInterest(int bits) throws ClosedChannelException {
        if ((interest & bits) == bits) {
            return;
        }
        int next = interest | bits;
        if (key == null) {
            SelectionKey existing = channel.keyFor(loop.selector);
            if (existing != null && existing.attachment() != this) {
                throw new IllegalStateException(channel + " is already registered with " + loop
                        + " by another wrapper; use one AsyncChannel per channel");
            }
            key = channel.register(loop.selector, next, this);
        } else {
            key.interestOps(next);
        }
        interest = next;
    }

    private void clearInterest(int bits) {
        if ((interest & bits) == 0) {
            return;
        }
        interest &= ~bits;
        SelectionKey k = key;
        if (k != null && k.isValid()) {
            try {
                k.interestOps(interest);
            } catch (CancelledKeyException closed) {
                // closed meanwhile: nothing left to clear
            }
        }
    }
}
