package dev.coro.channel;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.FastPath;
import dev.coro.internal.Select.Selected;
import dev.coro.internal.WaitNode;
import dev.coro.task.Completer;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Waits on several operations at once and completes with exactly one of them, as Go's
 * {@code select} and kotlinx.coroutines' {@code select}: receive from any of several channels, send
 * to a channel, a task's completion, a timeout on the scheduler's clock.
 *
 * {@snippet :
 * Task<String> next = Select.select(
 *         prices.onReceive(p -> "price " + p),
 *         quit.onReceive(q -> "quit"),
 *         Select.onTimeout(Duration.ofSeconds(1), () -> "idle"));
 * }
 *
 * <p><b>Exactly one.</b> The clause that wins is the only one that takes effect: a losing receive
 * clause took no element, a losing send clause sent nothing, a losing task is cancelled, a losing
 * timeout is disarmed. The select completes with the winner's result function applied to what it got;
 * if the winning clause failed (a send to a closed channel, a task that failed, a receive from a
 * channel closed with a cause), the select fails with that error.
 *
 * <p><b>Fairness.</b> {@link #select} is biased: the clauses are tried in the order given, so when
 * several could complete at once, the first of them wins (a loop over a busy first channel can starve
 * the second). {@link #selectUnbiased} tries them from a random clause onwards each time it runs, so
 * that no ready clause is starved. While nothing is ready, the first clause to become ready wins,
 * either way.
 *
 * <p><b>Closed channels.</b> A receive clause on a closed, drained channel is ready at once and gives
 * its function {@code null}, so a select in a loop over a closed channel ends as soon as the loop
 * checks for it. A send clause on a closed channel fails the select with
 * {@link ChannelClosedException}.
 *
 * <p><b>Cancellation.</b> Cancelling the select's task withdraws every clause: nothing is received or
 * sent, the clause tasks are cancelled, and the select completes cancelled.
 */
public final class Select {
    /* Implementation overview. A select is one suspension (the task's step) with a clause node in each
     * operation's queue: dev.coro.internal.Select, the select-able waiter, decides among them with
     * one CAS, and makes every losing clause depart from its queue (its overview has the state
     * machine and the races). Each SelectClause queues its node where its operation waits: a
     * channel's receive or send intake (ChannelCore: a clause whose claim fails is a departed waiter,
     * so a losing receive consumes nothing and a losing send delivers nothing), a child scope running
     * the task (its departure cancels the scope), a timer (its departure cancels the timer). The
     * winner's value passes through the clause's function once the step has resumed.
     *
     * Before any of that, the run loop's fast path (Run.tryNow) tries each channel clause's operation
     * at once, in the select's order (from a random clause when unbiased): receiveNow or sendNow on
     * the clause's channel, each a whole operation decided by the channel (ChannelCore). The first
     * that completes is the select's winner, and no other clause was queued anywhere, so nothing else
     * can take effect; one that would wait answers "not now" and took nothing. Only if none completes
     * does the select build its waiter and queue its clauses, which tries them all again (an
     * operation that became possible meanwhile wins then). This is the order the waiting door would
     * decide in too: a clause wins only if every clause before it could not complete when tried. A
     * send clause on a channel closed for sending fails the select in either door. Clauses other than
     * a channel's (a task, a timeout) are never tried early: only their door can complete them. */

    private Select() {}

    /**
     * Returns a task that waits on every clause and completes with the result of the one that wins,
     * trying the clauses in the order given (biased: see the class javadoc).
     *
     * @param clauses the alternatives, at least one
     * @param <R> the result type
     * @return the select's task (each run selects once)
     * @throws IllegalArgumentException if no clause is given
     * @throws NullPointerException if a clause is null
     */
    @SafeVarargs
    @SuppressWarnings("varargs") // copy only reads the array
    public static <R> Task<R> select(SelectClause<? extends R>... clauses) {
        return build(copy(clauses), false);
    }

    /**
     * Returns a task that waits on every clause and completes with the result of the one that wins,
     * trying the clauses from a random one onwards on each run (unbiased: see the class javadoc).
     *
     * @param clauses the alternatives, at least one
     * @param <R> the result type
     * @return the select's task (each run selects once)
     * @throws IllegalArgumentException if no clause is given
     * @throws NullPointerException if a clause is null
     */
    @SafeVarargs
    @SuppressWarnings("varargs") // copy only reads the array
    public static <R> Task<R> selectUnbiased(SelectClause<? extends R>... clauses) {
        return build(copy(clauses), true);
    }

    /** The clauses, checked, in an array of our own: read one by one, the varargs array never escapes. */
    private static SelectClause<?>[] copy(SelectClause<?>[] clauses) {
        SelectClause<?>[] all = new SelectClause<?>[clauses.length];
        for (int i = 0; i < all.length; i++) {
            all[i] = Objects.requireNonNull(clauses[i], "clauses: a clause is null");
        }
        return all;
    }

    /**
     * Returns a select over a list of clauses (see {@link #select}).
     *
     * @param clauses the alternatives, at least one
     * @param unbiased whether to start from a random clause on each run
     * @param <R> the result type
     * @return the select's task
     * @throws IllegalArgumentException if the list is empty
     * @throws NullPointerException if the list or a clause is null
     */
    public static <R> Task<R> select(List<? extends SelectClause<? extends R>> clauses, boolean unbiased) {
        return build(copy(clauses.toArray(new SelectClause<?>[0])), unbiased);
    }

    private static <R> Task<R> build(SelectClause<?>[] clauses, boolean unbiased) {
        if (clauses.length == 0) {
            throw new IllegalArgumentException("clauses: a select needs at least one clause");
        }
        Run<R> run = new Run<>(clauses, unbiased);
        return Task.create(run).map(run);
    }

    /**
     * One select, as its task runs it: the run loop's fast path tries each clause's operation now,
     * in the select's order, and the first that completes wins; if none can, the waiting door queues
     * a clause node of the select-able waiter in every clause's queue. Either way the task's value is
     * a {@code Selected} (which clause, with what), and the map step applies that clause's function.
     */
    private static final class Run<R> implements Consumer<Completer<Selected>>, FastPath, Function<Selected, R> {
        private final SelectClause<?>[] clauses;
        private final boolean unbiased;

        Run(SelectClause<?>[] clauses, boolean unbiased) {
            this.clauses = clauses;
            this.unbiased = unbiased;
        }

        private int start() {
            int n = clauses.length;
            return unbiased && n > 1 ? ThreadLocalRandom.current().nextInt(n) : 0;
        }

        @Override
        public Object tryNow() {
            int n = clauses.length;
            for (int k = 0, i = start(); k < n; k++, i = i + 1 == n ? 0 : i + 1) {
                Object v = clauses[i].now(); // a send clause on a closed channel throws: the select fails
                if (v != NOT_NOW) {
                    return new Selected(i, v);
                }
            }
            return NOT_NOW;
        }

        @Override
        public void accept(Completer<Selected> completer) {
            int n = clauses.length;
            dev.coro.internal.Select select = new dev.coro.internal.Select((WaitNode) completer, n);
            for (int k = 0, i = start(); k < n && !select.isSettled(); k++, i = i + 1 == n ? 0 : i + 1) {
                clauses[i].register(select.clause(i), completer.context());
            }
        }

        @Override
        @SuppressWarnings("unchecked")
        public R apply(Selected selected) {
            return ((SelectClause<? extends R>) clauses[selected.index()]).result(selected.value());
        }
    }

    /**
     * A clause that wins once {@code timeout} has passed on the select's scheduler's clock; the
     * select then completes with what {@code fn} supplies. A non-positive timeout is ready at once
     * (after the clauses before it in a biased select).
     *
     * @param timeout how long to wait
     * @param fn what the select completes with
     * @param <R> the result type
     * @return the clause
     * @throws NullPointerException if an argument is null
     */
    public static <R> SelectClause<R> onTimeout(Duration timeout, Supplier<? extends R> fn) {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(fn, "fn");
        return SelectClause.of((node, context) -> {
            if (timeout.isNegative() || timeout.isZero()) {
                node.admit(null);
                return;
            }
            Cancellable timer = context.scheduler().schedule(() -> node.admit(null), timeout);
            node.cancelInto(departed -> timer.cancel()); // lost, or the select was cancelled: disarm
        }, v -> fn.get());
    }

    /**
     * A clause that runs {@code task} (in a child scope of the select's task: same scheduler and
     * values) and wins when it completes with a value; the select then completes with {@code fn}
     * applied to it. If the task fails, the select fails with its error; if it is cancelled, the
     * select completes cancelled. If another clause wins, the task is cancelled.
     *
     * @param task the task to run
     * @param fn what the select completes with
     * @param <T> the task's value type
     * @param <R> the result type
     * @return the clause
     * @throws NullPointerException if an argument is null
     */
    public static <T, R> SelectClause<R> onComplete(Task<T> task, Function<? super T, ? extends R> fn) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(fn, "fn");
        return SelectClause.of((node, context) -> {
            Scope scope = Scope.childOf(context);
            scope.spawn(task.outcome().map(outcome -> {
                switch (outcome) {
                    case Outcome.Value<T> v -> node.admit(v.value());
                    case Outcome.Failure<T> f -> node.reject(f.error());
                    case Outcome.Cancelled<T> c -> node.abandon();
                }
                return null;
            }));
            node.cancelInto(departed -> scope.cancel()); // lost, or the select was cancelled
        }, v -> {
            @SuppressWarnings("unchecked")
            T value = (T) v;
            return fn.apply(value);
        });
    }
}
