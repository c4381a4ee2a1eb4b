package dev.coro.task;

import dev.coro.cancel.CancellationSource;
import dev.coro.cancel.CancellationToken;
import dev.coro.internal.Blocking;
import dev.coro.internal.SignalList;
import dev.coro.scheduler.Scheduler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.function.Function;

/**
 * A lifetime for spawned tasks (the seeds' {@code counting_scope} and {@code CoroPool}): spawn tasks
 * into it, then join it, which waits for every task spawned so far, including those still queued.
 *
 * <p><b>Spawning.</b> {@link #spawn} starts the task at once by submitting it to the scope's
 * scheduler (so it runs inline only on {@link Scheduler#inline()}), with the scope's context: the
 * scheduler, the scope's cancellation token, and the values of the context the scope was made from.
 * It returns a handle task that waits for that child's outcome (start the handle any number of
 * times; it never re-runs the child).
 *
 * <p><b>Failure policy.</b> The first child to fail cancels the scope, so its siblings are cancelled at
 * their next wait; {@link #join()} then ends with that first failure, later failures added to it as
 * suppressed. Cancelled children are not failures. If no child failed and the scope was cancelled,
 * join ends on the cancelled channel; otherwise with a null value.
 *
 * <p><b>Close.</b> {@link #close()} refuses new spawns ({@link IllegalStateException}); spawned children
 * go on, and join still waits for them. Close does not block and does not join: join explicitly, or
 * use {@link #scoped}, which joins on every path.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe; spawn and child completion are lock-free (one
 * CAS each, retried under contention). A spawn either precedes close (and every join started after
 * close returns waits for its child) or throws. Actions of a child happen-before a join that observes
 * its completion.
 *
 * {@snippet :
 * try (WorkStealingPool pool = WorkStealingPool.create(4)) {
 *     Scope scope = Scope.on(pool);
 *     for (int i = 0; i < 4; i++) {
 *         int id = i;
 *         scope.spawn(Task.fromRunnable(() -> System.out.println("child " + id)));
 *     }
 *     scope.joinBlocking();   // all four have run
 * }
 * }
 */
public final class Scope implements AutoCloseable {
    /* Implementation overview.
     *
     * 1. Representation. state (volatile long):
     *      bits 0..30   count: children spawned and not yet ended (at most 2^31 - 1)
     *      bit 31       CLOSED: set once by close(); spawn refuses from then on
     *      bits 32..63  epoch: the number of times the count has come down to zero
     *    joiners (volatile SignalList): the joiners waiting for the current epoch to end; replaced
     *    (CAS) by the child whose completion ends the epoch, which then fires the old list.
     *    failure (volatile Throwable): the first failure, set once by CAS.
     *
     * 2. Transitions.
     *    spawn:    count + 1 if not CLOSED (else throw)         CAS loop      spawner
     *    close:    CLOSED set                                   getAndBitwiseOr  closer
     *    childEnd: count - 1, and epoch + 1 if count reaches 0  CAS loop      child's last thread
     *              then joiners L -> new list, fire L            CAS, fire     same
     *    join:     count == 0: done at once; else register on joiners for epoch e, then re-check;
     *              a joiner woken while the epoch is still e (a spurious wake from an older list)
     *              registers again.
     *
     * 3. Linearization points. spawn: its successful CAS, or (when it throws) its read of CLOSED.
     *    close: its getAndBitwiseOr. join: the read of state that sees count 0, or the CAS that
     *    advances the epoch past the joiner's epoch. Keeping CLOSED in the state word is what
     *    orders spawn against close: with a separate flag, a spawn could read "open", then count
     *    its child up after close() returned and after a join had seen count 0 and completed
     *    (found by ScopeLincheckTest, spawnRacingCloseIsCountedBeforeCloseReturns).
     *
     * 4. Invariants. I1: a joiner completes only after observing count == 0 or an epoch later than
     *    the one it read, so it never completes while a task spawned before it is still running.
     *    I2: every replaced joiner list is fired by the thread that replaced it (no joiner is lost).
     *    I3: once CLOSED is set the count never rises (spawn's CAS fails against it).
     *
     * 5. Memory ordering: all volatile. A child's actions precede its decrement (release), which
     *    precedes the joiner's observation of the new epoch (acquire).
     *
     * 6. Progress: lock-free (CAS loops retry only when another thread made progress).
     *
     * 7. Cancellation: a cancelled join removes its node from the joiner list; the scope is not
     *    affected. Cancelling the scope cancels its token; children end at their next wait.
     *
     * 8. Resumption: joiners are completed through their task's AsyncStep, which resumes them on
     *    their own scheduler.
     *
     * 9. References: seed 001 (CoroPool's numCoros and waitUntilNoCoros), seed 003 (counting_scope).
     */

    /** The bits of the state word that hold the count of live children. */
    private static final long COUNT_MASK = 0x7FFF_FFFFL;
    /** The state bit set by close(): spawns are refused. */
    private static final long CLOSED = 1L << 31;
    /** One epoch, in the state word's high half. */
    private static final long EPOCH = 1L << 32;

    private final Context context;
    private final CancellationSource source;
    private final Fiber.Listener childListener = this::childDone;
    private volatile long state;
    private volatile SignalList joiners = new SignalList();
    private volatile Throwable failure;

    private Scope(Context parent) {
        this.source = parent.token().canBeCancelled()
                ? CancellationSource.linkedTo(parent.token()) : new CancellationSource();
        this.context = parent.withToken(source.token());
    }

    /**
     * Creates a root scope whose children run on {@code scheduler}, with no context values, cancelled
     * only through {@link #cancel()} or a failing child.
     *
     * @param scheduler where children run
     * @return a new open scope
     * @throws NullPointerException if {@code scheduler} is null
     */
    public static Scope on(Scheduler scheduler) {
        return new Scope(Context.of(Objects.requireNonNull(scheduler, "scheduler")));
    }

    /**
     * Creates a scope whose children run with {@code parent}'s scheduler and values, and are cancelled
     * when {@code parent}'s token is.
     *
     * @param parent the context to inherit
     * @return a new open scope
     * @throws NullPointerException if {@code parent} is null
     */
    public static Scope childOf(Context parent) {
        return new Scope(Objects.requireNonNull(parent, "parent"));
    }

    /**
     * Returns a task that opens a scope in the running task's context, runs {@code body} with it (under
     * the scope's token, so a failing child cancels the body too), then closes and joins the scope on
     * every path. It ends with the body's error if the body failed (children's failures suppressed),
     * else with the first child failure, else as the body ended. Children never outlive it.
     *
     * {@snippet :
     * Task<Integer> sum = Scope.scoped(scope -> {
     *     Task<Integer> a = scope.spawn(Task.fromCallable(() -> 1));
     *     Task<Integer> b = scope.spawn(Task.fromCallable(() -> 2));
     *     return Task.whenAll(a, b, Integer::sum);
     * });
     * }
     *
     * @param body uses the scope
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> Task<T> scoped(Function<? super Scope, ? extends Task<? extends T>> body) {
        Objects.requireNonNull(body, "body");
        return Task.context().flatMap(ctx -> {
            Scope scope = new Scope(ctx);
            Task<? extends T> main = Task.defer(() -> body.apply(scope));
            Task<T> joined = new Nodes.WithContext<>(scope.join(), c -> c.withToken(CancellationToken.NONE))
                    .transform(ignored -> Task.<T>value(null));
            return new Nodes.WithContext<T>(main, c -> c.withToken(scope.source.token()))
                    .transform(o -> {
                        if (!(o instanceof Outcome.Value<T>)) {
                            scope.cancel();
                        }
                        scope.close();
                        return joined.transform(ignored -> scope.combine(o));
                    });
        });
    }

    private <T> Task<T> combine(Outcome<T> body) {
        Throwable childFailure = failure;
        source.close();
        return switch (body) {
            case Outcome.Failure<T> f -> {
                if (childFailure != null && childFailure != f.error()) {
                    f.error().addSuppressed(childFailure);
                }
                yield Task.failure(f.error());
            }
            case Outcome.Value<T> v -> childFailure != null ? Task.failure(childFailure) : Task.value(v.value());
            case Outcome.Cancelled<T> c -> childFailure != null ? Task.failure(childFailure) : Task.cancelled();
        };
    }

    /**
     * Starts {@code task} in this scope now (submitted to the scope's scheduler) and returns a task
     * that waits for its outcome. Cancelling a wait on the handle does not cancel the child.
     *
     * @param task the task to run
     * @param <T> the value type
     * @return a handle that ends as the child ends
     * @throws NullPointerException if {@code task} is null
     * @throws IllegalStateException if the scope is closed
     */
    public <T> Task<T> spawn(Task<T> task) {
        Objects.requireNonNull(task, "task");
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) { // I3
                throw new IllegalStateException("scope is closed: no new spawns");
            }
        } while (!STATE.compareAndSet(this, s, s + 1));
        Fiber<T> child = new Fiber<>(task, context, childListener);
        child.dispatch();
        return child.awaitTask();
    }

    private void childDone(Fiber<?> child) {
        if (child.result instanceof Completion.Failed f) {
            Throwable first = failure;
            if (first == null && FAILURE.compareAndSet(this, null, f.error)) {
                source.cancel();
            } else if ((first = failure) != f.error) {
                first.addSuppressed(f.error);
            }
        }
        long s;
        long next;
        do {
            s = state;
            next = (s & COUNT_MASK) == 1 ? s - 1 + EPOCH : s - 1;
        } while (!STATE.compareAndSet(this, s, next));
        if ((next & COUNT_MASK) == 0) {
            SignalList old;
            do {
                old = joiners;
            } while (!JOINERS.compareAndSet(this, old, new SignalList())); // I2
            old.fire();
        }
    }

    /**
     * Returns a task that completes once every task spawned so far has ended (if none is running, at
     * once): with the first failure (others suppressed), else cancelled if the scope was cancelled,
     * else a null value. Cancelling the join task leaves the scope and its children alone.
     *
     * @return the joining task
     */
    public Task<Void> join() {
        return Task.create(completer -> new JoinRequest(AsyncStep.of(completer)).register());
    }

    /**
     * Blocks until every task spawned so far has ended; see {@link #join()} and {@link Task#join()}.
     *
     * @throws java.util.concurrent.CancellationException if the scope was cancelled and no child failed
     * @throws RuntimeException the first child failure (checked ones wrapped in
     *     {@link java.util.concurrent.CompletionException})
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool worker,
     *     an event loop's thread): see {@link Task#join()}
     */
    public void joinBlocking() {
        Blocking.checkAllowed(Scope.class, "joinBlocking");
        join().join();
    }

    /** Cancels the scope's token: children end at their next wait. Idempotent. */
    public void cancel() {
        source.cancel();
    }

    /**
     * Returns whether the scope has been cancelled (explicitly, by a failing child, or by its parent).
     *
     * @return whether cancelled
     */
    public boolean isCancelled() {
        return source.isCancelled();
    }

    /**
     * Returns the number of spawned children that have not ended yet.
     *
     * @return the count
     */
    public int activeCount() {
        return (int) (state & COUNT_MASK);
    }

    /** Refuses further spawns. Does not wait and does not cancel; idempotent. */
    @Override
    public void close() {
        STATE.getAndBitwiseOr(this, CLOSED);
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return (state & CLOSED) != 0;
    }

    private Object outcome() {
        Throwable f = failure;
        return f != null ? new Completion.Failed(f) : source.isCancelled() ? Completion.CANCELLED : Completion.NULL;
    }

    @Override
    public String toString() {
        return "Scope[active=" + activeCount() + (isClosed() ? ", closed" : "") + (isCancelled() ? ", cancelled" : "") + "]";
    }

    /** One join: registers for the end of the epoch it observed, again after a spurious wake. */
    private final class JoinRequest {
        private final AsyncStep step;
        private volatile Waiter current;

        JoinRequest(AsyncStep step) {
            this.step = step;
            step.onCancel(() -> {
                Waiter w = current;
                if (w != null) {
                    w.list.remove(w);
                }
            });
        }

        void register() {
            for (;;) {
                long s = state;
                if ((s & COUNT_MASK) == 0) {
                    step.settleEncoded(outcome());
                    return;
                }
                SignalList list = joiners;
                Waiter w = new Waiter(this, list, s >>> 32);
                current = w;
                if (!list.add(w)) {
                    continue; // that list was fired (its epoch, or an older one, ended): look again
                }
                long now = state;
                if ((now >>> 32) != w.epoch && list.remove(w)) {
                    step.settleEncoded(outcome());
                }
                return; // otherwise the firer wakes w
            }
        }

        void woken(Waiter w) {
            if ((state >>> 32) != w.epoch) { // I1
                step.settleEncoded(outcome());
            } else if (!step.context().token().isCancelled()) {
                register(); // a list swapped out before our epoch began: wait on the current one
            }
        }
    }

    private static final class Waiter extends SignalList.Node {
        final JoinRequest request;
        final SignalList list;
        final long epoch;

        Waiter(JoinRequest request, SignalList list, long epoch) {
            this.request = request;
            this.list = list;
            this.epoch = epoch;
        }

        @Override
        protected void onFire() {
            request.woken(this);
        }
    }

    private static final VarHandle STATE;
    private static final VarHandle JOINERS;
    private static final VarHandle FAILURE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(Scope.class, "state", long.class);
            JOINERS = lookup.findVarHandle(Scope.class, "joiners", SignalList.class);
            FAILURE = lookup.findVarHandle(Scope.class, "failure", Throwable.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
