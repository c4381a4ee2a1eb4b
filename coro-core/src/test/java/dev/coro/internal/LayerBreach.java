package dev.coro.internal;

import dev.coro.cancel.CancellationToken;
import dev.coro.io.EventLoop;

/**
 * A planted layer violation for {@code LayersTest}: internal code that uses I/O (a higher layer) and
 * cancellation (above internal; only {@link TokenSignals} may). Test code, never used.
 */
final class LayerBreach {
    private LayerBreach() {}

    static boolean reachesUp(EventLoop loop, CancellationToken token) {
        return loop.isCurrent() && token.isCancelled();
    }
}
