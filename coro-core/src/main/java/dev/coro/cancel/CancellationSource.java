package dev.coro.cancel;

import java.util.Objects;

/**
 * The cancelling side of cooperative cancellation: owns a {@link CancellationToken} and cancels it,
 * once.
 *
 * <p>A source may be <em>linked</em> to a parent token ({@link #linkedTo(CancellationToken)}): it is
 * then cancelled when the parent is, and {@link #close()} unlinks it again so that a long-lived
 * parent does not accumulate registrations of finished children.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe and lock-free. See {@link CancellationToken}
 * for where callbacks run and what happens to a throwing callback.
 *
 * {@snippet :
 * CancellationSource parent = new CancellationSource();
 * try (CancellationSource child = CancellationSource.linkedTo(parent.token())) {
 *     parent.cancel();
 *     assert child.token().isCancelled();
 * }
 * }
 */
public final class CancellationSource implements AutoCloseable {
    private final CancellationToken token = new CancellationToken(true);
    private final Registration link;

    /** Creates a source that is cancelled only by its own {@link #cancel()}. */
    public CancellationSource() {
        this.link = Registration.NONE;
    }

    private CancellationSource(CancellationToken parent) {
        // The parent's callback fires this token's list directly instead of calling cancel(): it may
        // run before link is assigned (at once, when the parent is cancelled already, or on another
        // thread that cancels the parent meanwhile), and once the parent fires there is nothing to
        // unregister anyway.
        this.link = parent.register(token.callbacks::fire);
    }

    /**
     * Creates a source that is also cancelled when {@code parent} is cancelled (at once, if it
     * already is).
     *
     * @param parent the token to follow
     * @return a new linked source
     * @throws NullPointerException if {@code parent} is null
     */
    public static CancellationSource linkedTo(CancellationToken parent) {
        Objects.requireNonNull(parent, "parent");
        return new CancellationSource(parent);
    }

    /**
     * Returns the token this source cancels.
     *
     * @return the token, the same instance on every call
     */
    public CancellationToken token() {
        return token;
    }

    /**
     * Cancels the token: the first call runs every registered callback on this thread and returns
     * {@code true}; later calls do nothing and return {@code false}.
     *
     * @return whether this call cancelled the token
     */
    public boolean cancel() {
        boolean first = token.callbacks.fire();
        if (first) {
            link.unregister();
        }
        return first;
    }

    /**
     * Returns whether the token has been cancelled.
     *
     * @return whether cancelled
     */
    public boolean isCancelled() {
        return token.isCancelled();
    }

    /**
     * Unlinks this source from its parent token (if any) without cancelling it. Idempotent.
     */
    @Override
    public void close() {
        link.unregister();
    }

    @Override
    public String toString() {
        return "CancellationSource[" + (isCancelled() ? "cancelled" : "active") + "]";
    }
}
