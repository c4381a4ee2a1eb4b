package dev.coro.channel;

import dev.coro.internal.WaitNode;
import dev.coro.task.Context;
import java.util.function.Function;

/**
 * One alternative of a {@link Select}: an operation that may complete (a channel's receive or send, a
 * task's completion, a timeout) and what the select completes with if it is the one that does. Made
 * by {@link Channel#onReceive}, {@link Channel#onSend}, {@link Select#onComplete} and
 * {@link Select#onTimeout}; immutable, and may be used in any number of selects.
 *
 * @param <R> what the select completes with when this clause wins
 */
public final class SelectClause<R> {
    /** Queues a clause node where the operation waits (package-private: the clause kinds). */
    interface Registrar {
        void register(WaitNode node, Context context);
    }

    private final Registrar registrar;
    private final Function<Object, ? extends R> result;

    SelectClause(Registrar registrar, Function<Object, ? extends R> result) {
        this.registrar = registrar;
        this.result = result;
    }

    void register(WaitNode node, Context context) {
        registrar.register(node, context);
    }

    R result(Object value) {
        return result.apply(value);
    }
}
