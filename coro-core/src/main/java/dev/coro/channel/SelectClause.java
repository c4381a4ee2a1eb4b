package dev.coro.channel;

import dev.coro.internal.ChannelCore;
import dev.coro.internal.FastPath;
import dev.coro.internal.WaitNode;
import dev.coro.task.Context;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One alternative of a {@link Select}: an operation that may complete (a channel's receive or send, a
 * task's completion, a timeout) and what the select completes with if it is the one that does. Made
 * by {@link Channel#onReceive}, {@link Channel#onSend}, {@link Select#onComplete} and
 * {@link Select#onTimeout}; immutable, and may be used in any number of selects.
 *
 * @param <R> what the select completes with when this clause wins
 */
public final class SelectClause<R> {
    /* A channel clause is one object: its kind, the channel's core, the element of a send, and the
     * user's function, applied as the kind says (no adapter lambda per clause). A channel clause can
     * also be tried at once (now), which the select's run-loop fast path does before it builds its
     * waiter (Select's overview). */

    /** Queues a clause node where the operation waits (package-private: the clause kinds). */
    interface Registrar {
        void register(WaitNode node, Context context);
    }

    /** A receive clause: {@link #fn} is a {@code Function} of the element (or null at the end). */
    private static final int RECEIVE = 0;
    /** A send clause: {@link #fn} is a {@code Supplier}. */
    private static final int SEND = 1;
    /** Any other clause: {@link #registrar} queues it, {@link #fn} is a {@code Function} of its value. */
    private static final int OTHER = 2;

    private final int kind;
    private final ChannelCore core;
    private final Object element;
    private final Registrar registrar;
    private final Object fn;

    private SelectClause(int kind, ChannelCore core, Object element, Registrar registrar, Object fn) {
        this.kind = kind;
        this.core = core;
        this.element = element;
        this.registrar = registrar;
        this.fn = fn;
    }

    /** A channel's receive clause. */
    static <R> SelectClause<R> receive(ChannelCore core, Function<?, ? extends R> fn) {
        return new SelectClause<>(RECEIVE, core, null, null, fn);
    }

    /** A channel's send clause. */
    static <R> SelectClause<R> send(ChannelCore core, Object element, Supplier<? extends R> fn) {
        return new SelectClause<>(SEND, core, element, null, fn);
    }

    /** A clause that only its registrar can complete (a task, a timeout). */
    static <R> SelectClause<R> of(Registrar registrar, Function<Object, ? extends R> result) {
        return new SelectClause<>(OTHER, null, null, registrar, result);
    }

    /** Queues {@code node} where the operation waits. */
    void register(WaitNode node, Context context) {
        switch (kind) {
            case RECEIVE -> core.enterReceive(node);
            case SEND -> core.enterSend(node, element);
            default -> registrar.register(node, context);
        }
    }

    /**
     * Completes the operation now if it needs no wait, as the one the select takes: the value the
     * clause would be admitted with (the element, or null at a receive's end; null for a send), or
     * {@link FastPath#NOT_NOW} (it must wait, or only the waiting door can tell).
     *
     * @throws ChannelClosedException a send clause on a channel closed for sending
     */
    Object now() {
        switch (kind) {
            case RECEIVE -> {
                Object r = core.receiveNow();
                return r == ChannelCore.EMPTY ? FastPath.NOT_NOW : r == ChannelCore.END ? null : r;
            }
            case SEND -> {
                int r = core.sendNow(element);
                if (r == ChannelCore.CLOSED) {
                    throw Channel.closedForSend(core.sendFailureCause());
                }
                return r == ChannelCore.SENT ? null : FastPath.NOT_NOW;
            }
            default -> {
                return FastPath.NOT_NOW;
            }
        }
    }

    /** What the select completes with when this clause won with {@code value}. */
    @SuppressWarnings("unchecked")
    R result(Object value) {
        return kind == SEND ? ((Supplier<? extends R>) fn).get() : ((Function<Object, ? extends R>) fn).apply(value);
    }
}
