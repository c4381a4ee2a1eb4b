package dev.coro.internal;

import dev.coro.cancel.CancellationToken;
import java.util.Objects;
import java.util.function.Function;

/**
 * Lets the task layer link its own suspension node on a cancellation token's callback list, so that a
 * suspension costs one object rather than a step plus a registration. The token class installs the
 * accessor when it is initialized; nothing else may.
 */
public final class TokenSignals {
    private static volatile Function<CancellationToken, SignalList> lists;

    private TokenSignals() {}

    /**
     * Installs the accessor; called once, by {@code CancellationToken}'s static initializer.
     *
     * @param accessor returns a token's callback list
     * @throws IllegalStateException if an accessor is installed already
     */
    public static synchronized void install(Function<CancellationToken, SignalList> accessor) {
        if (lists != null) {
            throw new IllegalStateException("TokenSignals: the accessor is installed already");
        }
        lists = Objects.requireNonNull(accessor, "accessor");
    }

    /**
     * Returns the callback list of {@code token}. The token class is initialized (it has an
     * instance), so the accessor is installed; the field is volatile so that a thread that received
     * the token through a race still sees it.
     *
     * @param token a token
     * @return its callback list
     */
    public static SignalList of(CancellationToken token) {
        return lists.apply(token);
    }
}
