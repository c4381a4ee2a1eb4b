package dev.coro.task;

import dev.coro.cancel.CancellationSource;
import dev.coro.cancel.CancellationToken;
import dev.coro.internal.Blocking;
import dev.coro.internal.CoroEvents;
import dev.coro.internal.SignalList;
import dev.coro.internal.WorkerThread;
import dev.coro.scheduler.Scheduler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Collection;
import java.util.List;
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
 * times; it never re-runs the child). {@link Task#whenAll(java.util.List)} over handles waits on them
 * without a fiber per handle, and without a node per handle that has already ended. To collect the
 * values of many children in spawn order, {@link #spawnAll} spawns them all and gives one task of the
 * list of their values, with no handle per child.
 *
 * <p><b>Failure policy.</b> A scope made by {@link #on}, {@link #childOf} or {@link #scoped} fails
 * fast: the first child to fail cancels the scope, so its siblings are cancelled at their next wait;
 * {@link #join()} then ends with that first failure, later failures added to it as suppressed.
 * Cancelled children are not failures. If no child failed and the scope was cancelled, join ends on
 * the cancelled channel; otherwise with a null value.
 *
 * <p><b>Supervisor scopes.</b> A scope made by {@link #supervisorOn} or {@link #supervised} lets
 * children fail alone: a failure cancels neither the scope nor the siblings, and join ignores it
 * (join ends cancelled if the scope was cancelled, else with a null value). A child's failure is
 * seen through its handle. A failure whose handle nobody waited on (a wait started on it, by
 * {@link Task#join()}, by composition or by {@code whenAll}, at any time before close) is not
 * lost: {@link #close()} (and the end of {@link #supervised}) hands it to the closing thread's
 * uncaught-exception handler. Until then the scope keeps such failures, so a long-lived supervisor
 * whose children may fail unwatched should handle failures inside the child
 * ({@link Task#recover}, {@link Task#outcome}). Cancelling the scope, explicitly, through its
 * parent, or by closing it with children left, still cancels every child.
 *
 * <p><b>Close.</b> {@link #close()} ends the scope's lifetime, so that a try-with-resources block
 * never leaves children running: it refuses new spawns ({@link IllegalStateException}), and if
 * children are still running it cancels the scope and blocks until every child has ended (it goes
 * on waiting if the thread is interrupted, and keeps the interrupt status). It never throws a
 * child's failure: join for that (join first, to let children finish instead of cancelling them).
 * Close is idempotent. Called from inside one of the scope's own children (seen from a body started
 * by {@link Task#onVirtualThread}, or anything started under it), where it would wait for itself,
 * it throws {@link IllegalStateException} and changes nothing; from a fiber running on a thread the
 * scope's children need (for example {@link Scheduler#inline()}), it would never return: close from
 * outside, or use {@link #scoped}, whose task form closes and joins on every path without blocking.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe; spawn and child completion are lock-free (one
 * CAS each, retried under contention; children that end one after another on the same pool worker
 * share one). A spawn either precedes close (and every join started after
 * close returns waits for its child) or throws. Actions of a child happen-before a join that observes
 * its completion, and the return of a close that waited for it.
 *
 * {@snippet :
 * try (WorkStealingPool pool = WorkStealingPool.create(4);
 *      Scope scope = Scope.on(pool)) {
 *     for (int i = 0; i < 4; i++) {
 *         int id = i;
 *         scope.spawn(Task.fromRunnable(() -> System.out.println("child " + id)));
 *     }
 *     scope.joinBlocking();   // all four have run; close then finds nothing left to cancel
 * }
 * }
 */
public final class Scope implements AutoCloseable {
    /* Implementation overview.
     *
     * 1. Representation. state (volatile long):
     *      bits 0..30   count: children spawned and not yet ended (at most 2^31 - 1)
     *      bit 31       CLOSED: set once by refuseSpawns() (close's first step); spawn refuses from then on
     *      bits 32..63  epoch: the number of times the count has come down to zero
     *    joiners (volatile SignalList): the joiners waiting for the current epoch to end; replaced
     *    (CAS) by the child whose completion ends the epoch, which then fires the old list.
     *    failure (volatile Throwable): the first failure, set once by CAS (fail-fast scopes only).
     *    unobserved (final SignalList, supervisors only; null otherwise): the failed children whose
     *    handle nobody has waited on; fired once, by close, which reports each node it fires.
     *    Supervised.watch (volatile int, one per supervised child): RUNNING, OBSERVED (a wait on its
     *    handle started), FAILED (ended failed, unobserved, and linked in unobserved).
     *
     * 2. Transitions.
     *    spawn:    count + 1 if not CLOSED and below the bound  CAS loop      spawner
     *              (else throw)
     *    refuseSpawns: CLOSED set                               getAndBitwiseOr  closer
     *    childEnd: count - 1, and epoch + 1 if count reaches 0  CAS loop      child's last thread
     *              then, unless L is empty, joiners L -> new     read, CAS,    same
     *              list, fire L                                  fire
     *    join:     count == 0: done at once; else register on joiners for epoch e, then re-check;
     *              a joiner woken while the epoch is still e (a spurious wake from an older list)
     *              registers again.
     *    close:    refuseSpawns; if the count it saw was not 0: cancel the token, then a blocking
     *              join (masked, so nothing but the count reaching 0 ends it); then fire unobserved
     *              (supervisors) and unlink the token from the parent's.
     *    Supervised child (before its childEnd): RUNNING -> OBSERVED when a wait on its handle
     *              starts (CAS); on ending failed: add to unobserved, then RUNNING -> FAILED (CAS), or,
     *              if the CAS finds OBSERVED, remove itself again. A wait that finds FAILED moves it
     *              FAILED -> OBSERVED (CAS) and removes the node. So a node is linked only while
     *              FAILED, and is added before it is FAILED: the remover always finds it.
     *
     * 3. Linearization points. spawn: its successful CAS, or (when it throws) its read of CLOSED.
     *    refuseSpawns (and so close's refusal): its getAndBitwiseOr. close returns after a join that
     *    saw count 0 after that point. join: the read of state that sees count 0, or the CAS that
     *    advances the epoch past the joiner's epoch. Keeping CLOSED in the state word is what
     *    orders spawn against close: with a separate flag, a spawn could read "open", then count
     *    its child up after close had refused and after a join had seen count 0 and completed
     *    (found by ScopeLincheckTest, spawnRacingCloseIsCountedBeforeCloseReturns).
     *
     * 4. Invariants. I1: a joiner completes only after observing count == 0 or an epoch later than
     *    the one it read, so it never completes while a task spawned before it is still running.
     *    I2: every replaced joiner list is fired by the thread that replaced it, and a count-down that
     *    ends an epoch replaces the list unless it reads it empty after its state CAS (no joiner is
     *    lost): a joiner lists itself, then re-reads the state; the count-down writes the state, then
     *    reads the list. Of these two volatile write-then-read pairs at least one sees the other, so
     *    the count-down finds the joiner (and fires it), or the joiner finds the new epoch (and
     *    removes itself and completes), or both, and then SignalList's remove/fire CAS decides.
     *    An epoch with no joiner so ends with one read of the list: no list is made or fired (a
     *    burst of spawns from outside, which the pool's workers keep up with, ends many epochs).
     *    I3: once CLOSED is set the count never rises (spawn's CAS fails against it). I5: the count
     *       never passes COUNT_MASK (spawn and spawnAll refuse what would carry into CLOSED).
     *    I4: a supervised child that failed unobserved is linked in unobserved before its childEnd,
     *    so the close that saw the count reach 0 fires (reports) it; none is reported twice (the
     *    fire/remove CAS of SignalList decides).
     *
     * 5. Memory ordering: all volatile. A child's actions precede its decrement (release), which
     *    precedes the joiner's observation of the new epoch (acquire). The empty-list read of I2 is a
     *    volatile read after the state CAS: the Dekker pair with the joiner's add and re-read.
     *
     * 6. Progress: lock-free (CAS loops retry only when another thread made progress), except close,
     *    which blocks by design while children run.
     *
     * 7. Cancellation: a cancelled join removes its node from the joiner list; the scope is not
     *    affected. Cancelling the scope cancels its token; children end at their next wait.
     *
     * 8. Resumption: joiners are completed through their task's AsyncStep, which resumes them on
     *    their own scheduler.
     *
     * 9. References: seed 001 (CoroPool's numCoros and waitUntilNoCoros), seed 003 (counting_scope).
     *
     * 10. Batches (spawnAll). One CAS adds the batch's n children to the count (refused whole if
     *    CLOSED, as spawn: I3). A Batch is the listener of its children's fibers (Fiber.Slotted, which
     *    carries the child's index) and the result cell of the batch (a Completion):
     *      slots (Slots): slot i holds task i until child i ends, then child i's encoded result;
     *      remaining (volatile int): children of the batch not yet ended;
     *      firstFailure (volatile): the first child of the batch to fail, set once by CAS;
     *      watch (supervisors): RUNNING, OBSERVED, FAILED, as Supervised.watch, for the batch as a whole.
     *    A child's end: write its slot (plain), record a failure (the batch's first by CAS; the scope's
     *    policy through childFailed in a fail-fast scope), then getAndAdd(remaining, -1). The one that
     *    brings remaining to 0 finishes: B1: its getAndAdd follows every other child's in the total
     *    order of the RMWs on remaining, so it reads every slot written before them. It decides the
     *    result (the first failure with the batch's other failures suppressed, else cancelled if any
     *    child was, else the values decoded in place), links an Unreported node if a supervisor's
     *    batch failed with no wait started (B3: linked before FAILED, as for Supervised), completes
     *    the cell (its linearization point), and only then counts the scope down by n (B2: a join
     *    that sees the count reach 0 finds the batch's task complete). So activeCount counts the
     *    batch's children until the last has ended, and the scope's state word takes one CAS per
     *    batch instead of one per child.
     *
     * 11. Count-downs a worker holds (children spawned one by one, fail-fast scopes). A child's
     *    end (Children.fiberDone) on a pool worker that is running a run of one of this scope's
     *    children (its start or a resumption: isMemberRun) does not CAS the state word: the worker
     *    holds the count-down (WorkerThread.hold) and applies all it holds in one childrenEnded(n)
     *    as soon as its next task is anything but a child of this scope queued before the hold, or
     *    before it resumes any waiter (WorkerThread, parts 2 and 3). So children that end one
     *    after another on one worker write the state word once per run of them, not once each,
     *    and its line does not move between workers with every child. The state's count is then
     *    live children plus held count-downs: it is never below the live children (I1 holds as
     *    is), and once the last child has ended it reaches zero by the end of the holding worker's
     *    current task (WorkerThread part 3), where I2 takes over unchanged. The count-down's
     *    linearization point moves from the child's end to the worker's release; the child's
     *    result is visible before either.
     */

    /** The bits of the state word that hold the count of live children. */
    private static final long COUNT_MASK = 0x7FFF_FFFFL;
    /** The state bit set by refuseSpawns(): spawns are refused. */
    private static final long CLOSED = 1L << 31;
    /** One epoch, in the state word's high half. */
    private static final long EPOCH = 1L << 32;
    /** The scope a context's task runs in as a child, if any: how close() sees that it is called from one. */
    private static final Context.Key<Scope> CHILD_OF = Context.Key.named("coro.scope");

    private final Context context;
    private final CancellationSource source;
    /** The nearest scope (made by on, supervisorOn or childOf) the creating context is a child of, or null. */
    private final Scope enclosing;
    /** Supervisors: the failed children nobody has observed (see part 1); null for fail-fast scopes. */
    private final SignalList unobserved;
    private final Children childListener = new Children();
    private volatile long state;
    private volatile SignalList joiners = new SignalList();
    private volatile Throwable failure;

    /**
     * Makes a scope under {@code parent}'s token and values.
     *
     * @param marked whether children's contexts name this scope (CHILD_OF), so that close() can see
     *     a call from inside one; false for the task forms, which never close blockingly (and so add
     *     no context entry per nesting level)
     */
    private Scope(Context parent, boolean supervisor, boolean marked) {
        this.source = parent.token().canBeCancelled()
                ? CancellationSource.linkedTo(parent.token()) : new CancellationSource();
        this.enclosing = parent.get(CHILD_OF);
        Context ctx = parent.withToken(source.token());
        this.context = marked ? ctx.with(CHILD_OF, this) : ctx;
        this.unobserved = supervisor ? new SignalList() : null;
    }

    /**
     * Creates a root scope whose children run on {@code scheduler}, with no context values, cancelled
     * only through {@link #cancel()}, {@link #close()} or a failing child.
     *
     * @param scheduler where children run
     * @return a new open scope
     * @throws NullPointerException if {@code scheduler} is null
     */
    public static Scope on(Scheduler scheduler) {
        return new Scope(Context.of(Objects.requireNonNull(scheduler, "scheduler")), false, true);
    }

    /**
     * Creates a root supervisor scope whose children run on {@code scheduler}, with no context values:
     * a child's failure cancels neither the scope nor its siblings (see the class comment); the scope
     * is cancelled only through {@link #cancel()} or {@link #close()}.
     *
     * {@snippet :
     * try (Scope jobs = Scope.supervisorOn(pool)) {
     *     Task<String> a = jobs.spawn(fetch("a"));
     *     Task<String> b = jobs.spawn(fetch("b"));   // goes on if a fails
     *     Outcome<String> first = a.outcome().join();
     *     Outcome<String> second = b.outcome().join();
     * }
     * }
     *
     * @param scheduler where children run
     * @return a new open supervisor scope
     * @throws NullPointerException if {@code scheduler} is null
     */
    public static Scope supervisorOn(Scheduler scheduler) {
        return new Scope(Context.of(Objects.requireNonNull(scheduler, "scheduler")), true, true);
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
        return new Scope(Objects.requireNonNull(parent, "parent"), false, true);
    }

    /**
     * Returns a task that opens a scope in the running task's context, runs {@code body} with it (under
     * the scope's token, so a failing child cancels the body too), then closes and joins the scope on
     * every path, without blocking a thread. It ends with the body's error if the body failed
     * (children's failures suppressed), else with the first child failure, else as the body ended.
     * Children never outlive it. If the body ends other than with a value, the children still running
     * are cancelled.
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
        return open(Objects.requireNonNull(body, "body"), false);
    }

    /**
     * Returns a task that opens a supervisor scope in the running task's context (kotlinx's {@code
     * supervisorScope}), runs {@code body} with it, then closes and joins the scope on every path,
     * without blocking a thread. A failing child cancels neither the body nor its siblings; its failure
     * is seen through its handle, and one whose handle nobody waited on is reported to the
     * uncaught-exception handler of the thread that ends the task. The task ends as the body ended
     * (once every child has ended); if the body ends other than with a value, or the task is
     * cancelled, the children still running are cancelled.
     *
     * {@snippet :
     * Task<List<Outcome<String>>> pages = Scope.supervised(scope -> Task.whenAll(
     *         urls.stream().map(url -> scope.spawn(fetch(url)).outcome()).toList()));
     * }
     *
     * @param body uses the scope
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code body} is null
     */
    public static <T> Task<T> supervised(Function<? super Scope, ? extends Task<? extends T>> body) {
        return open(Objects.requireNonNull(body, "body"), true);
    }

    private static <T> Task<T> open(Function<? super Scope, ? extends Task<? extends T>> body, boolean supervisor) {
        return Task.context().flatMap(ctx -> {
            Scope scope = new Scope(ctx, supervisor, false);
            Task<? extends T> main = Task.defer(() -> body.apply(scope));
            Task<T> joined = new Nodes.WithContext<>(scope.join(), c -> c.withToken(CancellationToken.NONE))
                    .transform(ignored -> Task.<T>value(null));
            return new Nodes.WithContext<T>(main, c -> c.withToken(scope.source.token()))
                    .transform(o -> {
                        if (!(o instanceof Outcome.Value<T>)) {
                            scope.cancel();
                        }
                        scope.refuseSpawns();
                        return joined.transform(ignored -> scope.combine(o));
                    });
        });
    }

    private <T> Task<T> combine(Outcome<T> body) {
        Throwable childFailure = failure;
        source.close();
        if (unobserved != null) {
            unobserved.fire(); // every child has ended: report the failures nobody observed
        }
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
     * that waits for its outcome. Cancelling a wait on the handle does not cancel the child. In a
     * supervisor scope, a wait started on the handle (at any time before close) is what makes the
     * child's failure observed, so that close does not report it.
     *
     * <p>Memory: in a scope that is not a supervisor, a handle that has been read after its child
     * ended (joined, collected by {@link Task#whenAll(List)}, or awaited) holds the child's result and
     * nothing of the child's run (a 24-byte node and the value), so a list of many handles to collect
     * costs about what a list of completed futures does. The child does not keep its handle: a
     * handle nobody keeps costs nothing while its child waits.
     *
     * @param task the task to run
     * @param <T> the value type
     * @return a handle that ends as the child ends
     * @throws NullPointerException if {@code task} is null
     * @throws IllegalStateException if the scope is closed, or if it would count more than
     *     2<sup>31</sup> - 1 running children
     */
    public <T> Task<T> spawn(Task<T> task) {
        Objects.requireNonNull(task, "task");
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) { // I3
                throw new IllegalStateException("scope is closed: no new spawns");
            }
            if ((s & COUNT_MASK) == COUNT_MASK) { // one more would carry into CLOSED
                throw new IllegalStateException("a scope counts at most " + COUNT_MASK + " running children: "
                        + COUNT_MASK + " running, 1 more asked");
            }
        } while (!STATE.compareAndSet(this, s, s + 1));
        if (unobserved == null) {
            Fiber<T> child = new Fiber<>(task, context, childListener);
            Nodes.Spawned<T> handle = new Nodes.Spawned<>(child); // lets go of the fiber once read ended
            child.dispatch();
            return handle;
        }
        Supervised<T> supervised = new Supervised<>();
        Fiber<T> child = new Fiber<>(task, context, supervised);
        supervised.fiber = child;
        child.dispatch();
        return Completion.awaitWith(supervised.new Handle(child));
    }

    /**
     * Starts every task of {@code tasks} in this scope now, as {@link #spawn} does for one, and returns
     * a task that waits for all of them and completes with their values in the order of
     * {@code tasks}: collecting the values of many children without a handle per child. The children
     * are counted into the scope in one step, and each writes its value straight into its place in
     * the list, which is stored in small chunks (no single large array however many children).
     *
     * <p><b>Ending.</b> The returned task completes once every one of these children has ended: with
     * the list of their values if all ended with a value; else with the first of them to fail (the
     * failures of the others added to it as suppressed); else (none failed, some were cancelled) on
     * the cancelled channel. Each child is a child of the scope like any other: in a fail-fast scope
     * the first child to fail, in this batch or not, cancels the scope and so the rest of the batch;
     * in a supervisor scope a failure cancels nothing, the batch's task fails once every child of the
     * batch has ended, and if no wait on the batch's task has started by {@link #close()}, close reports
     * its failure (as for a handle nobody waited on). Cancelling a wait on the returned task leaves
     * the children running. The task can be started any number of times; it never re-runs the
     * children. {@link Task#whenAll(List)} over such tasks waits on them without a fiber each.
     *
     * <p><b>Counting.</b> {@link #activeCount()} counts the batch's children as running until the last
     * of them has ended; a {@link #join()} waits for all of them, as for children spawned one by one.
     *
     * <p>The list is read-only, allows nulls, and is safe to read from any thread once the task has
     * completed. An empty {@code tasks} spawns nothing and gives a task that completes at once with an
     * empty list.
     *
     * {@snippet :
     * try (Scope scope = Scope.on(pool)) {
     *     List<Task<Integer>> work = new ArrayList<>();
     *     for (int i = 0; i < 1000; i++) {
     *         int n = i;
     *         work.add(Task.fromCallable(() -> n * n));
     *     }
     *     List<Integer> squares = scope.spawnAll(work).join();   // squares.get(i) == i * i
     * }
     * }
     *
     * @param tasks the tasks to start, in the order their values are wanted
     * @param <T> the value type
     * @return a task that ends as described above
     * @throws NullPointerException if {@code tasks} or one of its elements is null (the message names
     *     its index); nothing is spawned then
     * @throws IllegalStateException if the scope is closed (nothing is spawned), or if the scope would
     *     count more than 2<sup>31</sup> - 1 running children
     */
    @SuppressWarnings("unchecked")
    public <T> Task<List<T>> spawnAll(Collection<? extends Task<? extends T>> tasks) {
        Objects.requireNonNull(tasks, "tasks");
        Slots slots = Slots.copyOfNonNull(tasks, "tasks"); // checked before anything is spawned
        int n = slots.size();
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) { // I3
                throw new IllegalStateException("scope is closed: no new spawns");
            }
            if (n > COUNT_MASK - (s & COUNT_MASK)) {
                throw new IllegalStateException("a scope counts at most " + COUNT_MASK + " running children: "
                        + (s & COUNT_MASK) + " running, " + n + " more asked");
            }
        } while (n > 0 && !STATE.compareAndSet(this, s, s + n));
        if (n == 0) {
            return Task.value(List.of());
        }
        Batch<T> batch = new Batch<>(slots);
        for (int i = 0; i < n; i++) { // slot i holds task i until child i ends and writes its result there
            new Fiber.Slotted<>((Task<? extends T>) slots.at(i), context, batch, i).dispatch();
        }
        return Completion.awaitWith(batch.new Handle());
    }

    /**
     * The listener of the children spawned one by one in a scope that is not a supervisor, and the
     * count a pool worker may hold their count-downs for (part 11).
     */
    private final class Children implements Fiber.Listener, WorkerThread.Counted {
        @Override
        public void fiberDone(Fiber<?> child) {
            if (child.result instanceof Completion.Failed f) {
                childFailed(f.error);
            }
            if (!WorkerThread.hold(this)) {
                childrenEnded(1);
            }
        }

        @Override
        public boolean isMemberRun(Runnable task) {
            return task instanceof Fiber<?> f ? f.hasListener(this)
                    : task instanceof AsyncStep s && s.fiber().hasListener(this);
        }

        @Override
        public void countDown(int n) {
            childrenEnded(n);
        }
    }

    /** A child of a fail-fast scope failed: the first failure cancels the scope, later ones are suppressed. */
    private void childFailed(Throwable error) {
        Throwable first = failure;
        if (first == null && FAILURE.compareAndSet(this, null, error)) {
            source.cancel();
        } else if ((first = failure) != error) {
            first.addSuppressed(error);
        }
    }

    /** Counts {@code n} children down; the count-down that reaches zero ends the epoch. */
    private void childrenEnded(long n) {
        long s;
        long next;
        do {
            s = state;
            assert (s & COUNT_MASK) >= n : "more children ended than were spawned";
            next = (s & COUNT_MASK) == n ? s - n + EPOCH : s - n;
        } while (!STATE.compareAndSet(this, s, next));
        if ((next & COUNT_MASK) == 0) {
            SignalList old = joiners;
            if (old.isEmpty()) { // I2: no joiner of this epoch is listed; one that lists itself later sees the epoch
                return;
            }
            while (!JOINERS.compareAndSet(this, old, new SignalList())) {
                old = joiners;
            }
            old.fire();
        }
    }

    /**
     * Returns a task that completes once every task spawned so far has ended (if none is running, at
     * once): in a fail-fast scope with the first failure (others suppressed), else cancelled if the
     * scope was cancelled, else a null value; in a supervisor scope, cancelled if the scope was
     * cancelled, else a null value. Cancelling the join task leaves the scope and its children alone.
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
     * Returns whether the scope has been cancelled (explicitly, by a failing child of a fail-fast
     * scope, by its parent, or by a close that found children running).
     *
     * @return whether cancelled
     */
    public boolean isCancelled() {
        return source.isCancelled();
    }

    /**
     * Returns the number of spawned children that have not ended yet (the children of a
     * {@link #spawnAll} count until the last of them has ended). A snapshot for diagnostics: a child
     * is counted down after its result becomes visible (on a pool worker that goes on to run another
     * child of this scope, when it moves on to other work), so a thread that has just seen a
     * child's result (through its handle) may still find it counted; to wait for the children, join
     * the scope.
     *
     * @return the count
     */
    public int activeCount() {
        return (int) (state & COUNT_MASK);
    }

    /**
     * Ends the scope's lifetime: refuses further spawns, and if children are still running, cancels
     * the scope and blocks until every one of them has ended; then, in a supervisor scope, reports the
     * failures whose handle nobody waited on to this thread's uncaught-exception handler. It never
     * throws a child's failure (join for that, before closing). If the thread is interrupted while it
     * waits, it goes on waiting and returns with the interrupt status set. Idempotent: a later call
     * finds nothing running and returns at once.
     *
     * {@snippet :
     * try (Scope scope = Scope.on(pool)) {
     *     scope.spawn(poll);        // runs until cancelled
     *     work.join();              // if this throws, close cancels poll and waits for it
     * }                             // either way, poll has ended here
     * }
     *
     * @throws IllegalStateException if children are still running and it is called from inside one
     *     of them (which it would wait for forever, as seen from a body started by
     *     {@link Task#onVirtualThread}) or on a thread that must not block (a pool worker, an event
     *     loop's thread: see {@link Task#join()}); the scope is then left unchanged
     */
    @Override
    public void close() {
        if ((state & COUNT_MASK) != 0) { // it may have to wait: refuse first what would hang, changing nothing
            if (calledFromChild()) {
                throw new IllegalStateException("close() called from inside a child of this scope would wait for"
                        + " itself: let the child end, or cancel()");
            }
            Blocking.checkAllowed(Scope.class, "close"); // on a worker or a loop thread
        }
        if ((refuseSpawns() & COUNT_MASK) != 0) {
            source.cancel();
            // masked: only the count reaching 0 ends the wait (an interrupt is kept, not obeyed)
            new Nodes.WithContext<>(join().outcome(), c -> c.withToken(CancellationToken.NONE)).join();
        }
        if (unobserved != null) {
            unobserved.fire(); // every child has ended: report the failures nobody observed
        }
        source.close();
    }

    /** Sets CLOSED (close's first step, without waiting) and returns the state before. */
    long refuseSpawns() {
        return (long) STATE.getAndBitwiseOr(this, CLOSED);
    }

    /**
     * Whether the calling body runs in a child of this scope, or of a scope made inside one: the
     * context's nearest marked scope, then the scopes enclosing it. A task-form scope adds no mark, and
     * its children's contexts keep the mark of the scope around it, so the walk passes through it.
     */
    private boolean calledFromChild() {
        Context current = Context.current();
        for (Scope s = current == null ? null : current.get(CHILD_OF); s != null; s = s.enclosing) {
            if (s == this) {
                return true;
            }
        }
        return false;
    }

    /**
     * Returns whether {@link #close()} has been called (or close has begun: new spawns are refused).
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return (state & CLOSED) != 0;
    }

    /**
     * Returns whether this is a supervisor scope (children fail alone).
     *
     * @return whether a supervisor
     */
    public boolean isSupervisor() {
        return unobserved != null;
    }

    private Object outcome() {
        Throwable f = failure;
        return f != null ? new Completion.Failed(f) : source.isCancelled() ? Completion.CANCELLED : Completion.NULL;
    }

    @Override
    public String toString() {
        return "Scope[active=" + activeCount() + (unobserved != null ? ", supervisor" : "")
                + (isClosed() ? ", closed" : "") + (isCancelled() ? ", cancelled" : "") + "]";
    }

    /**
     * A child of a supervisor: its fiber's listener, and its node in {@link #unobserved} while it has
     * failed with nobody waiting on its handle (part 1: watch).
     */
    private final class Supervised<T> extends SignalList.Node implements Fiber.Listener {
        static final int RUNNING = 0, OBSERVED = 1, FAILED = 2;

        Fiber<T> fiber;
        volatile int watch;

        /** A wait on the handle is starting: from now on its failure is the waiter's to see. */
        void observe() {
            for (;;) {
                int w = watch;
                if (w == OBSERVED) {
                    return;
                }
                if (WATCH.compareAndSet(this, w, OBSERVED)) {
                    if (w == FAILED) {
                        unobserved.remove(this); // linked before FAILED was set, so it is found
                    }
                    return;
                }
            }
        }

        @Override
        public void fiberDone(Fiber<?> child) {
            if (child.result instanceof Completion.Failed && watch == RUNNING) {
                if (!unobserved.add(this)) { // cannot happen (close fires after the count is 0): report now
                    onFire();
                } else if (!WATCH.compareAndSet(this, RUNNING, FAILED)) { // observed meanwhile
                    unobserved.remove(this);
                }
            }
            childrenEnded(1);
        }

        /** Close found this failure unobserved: report it (and record it for JFR). */
        @Override
        protected void onFire() {
            Throwable error = ((Completion.Failed) fiber.result).error;
            CoroEvents.unobservedFailure(Scope.this.toString(), error);
            Thread th = Thread.currentThread();
            th.getUncaughtExceptionHandler().uncaughtException(th, error);
        }

        /** The body of a wait on this child's handle: marks the child observed as the wait starts. */
        final class Handle extends Completion.Await<T> {
            Handle(Fiber<T> child) {
                super(child, false);
            }

            @Override
            void starting() {
                observe();
            }
        }
    }

    /**
     * The children of one {@link #spawnAll}: the listener of each child's fiber, and the result cell
     * of the batch. See part 10 of the implementation overview.
     */
    private final class Batch<T> extends Completion implements Fiber.Listener {
        static final int RUNNING = 0, OBSERVED = 1, FAILED = 2;

        /** Slot i: task i until child i ends, then its encoded result; decoded in place at the end. */
        final Slots slots;
        /** Children of the batch not yet ended. */
        volatile int remaining;
        /** The first child of the batch to fail (its encoded result); set once. */
        volatile Completion.Failed firstFailure;
        /** Supervisors: RUNNING, OBSERVED (a wait on the batch's task started), FAILED (linked unobserved). */
        volatile int watch;
        /** Supervisors: the node linked in unobserved while FAILED; written before the CAS to FAILED. */
        Unreported unreported;

        Batch(Slots slots) {
            this.slots = slots;
            this.remaining = slots.size();
        }

        @Override
        public void fiberDone(Fiber<?> child) {
            Object r = child.result;
            slots.put(((Fiber.Slotted<?>) child).slot, r); // B1: published by the count-down below
            if (r instanceof Completion.Failed f) {
                if (firstFailure == null) {
                    FIRST_FAILURE.compareAndSet(this, null, f);
                }
                if (unobserved == null) {
                    childFailed(f.error); // the scope's policy: the first failure cancels it
                }
            }
            if ((int) REMAINING.getAndAdd(this, -1) == 1) {
                finish(); // B2: before the scope's count-down, so a join that ends sees the batch done
                childrenEnded(slots.size());
            }
        }

        /** On the last child's thread: decides the batch's result and completes the cell. */
        private void finish() {
            Slots all = slots;
            int n = all.size();
            Completion.Failed first = firstFailure;
            if (first != null) {
                // a fail-fast scope whose first failure is this one has added the others to it already
                if (unobserved != null || failure != first.error) {
                    for (int i = 0; i < n; i++) {
                        if (all.at(i) instanceof Completion.Failed f && f.error != first.error) {
                            first.error.addSuppressed(f.error);
                        }
                    }
                }
                if (unobserved != null && watch == RUNNING) { // B3: nobody waits yet: close may report it
                    Unreported node = new Unreported(first.error);
                    unreported = node;
                    if (!unobserved.add(node)) { // cannot happen (close fires after the count is 0): report now
                        node.onFire();
                    } else if (!BATCH_WATCH.compareAndSet(this, RUNNING, FAILED)) { // observed meanwhile
                        unobserved.remove(node);
                    }
                }
                completeWith(first);
                return;
            }
            for (int i = 0; i < n; i++) {
                Object r = all.at(i);
                if (Completion.isCancelled(r)) {
                    completeWith(r); // cancelled, with its reason if it has one
                    return;
                }
            }
            for (int i = 0; i < n; i++) {
                all.put(i, Completion.decodeValue(all.at(i)));
            }
            completeWith(Completion.encodeValue(all));
        }

        /** A wait on the batch's task is starting: from now on a failure is the waiter's to see. */
        void observe() {
            if (unobserved == null) {
                return;
            }
            for (;;) {
                int w = watch;
                if (w == OBSERVED) {
                    return;
                }
                if (BATCH_WATCH.compareAndSet(this, w, OBSERVED)) {
                    if (w == FAILED) {
                        unobserved.remove(unreported); // linked (and written) before FAILED was set
                    }
                    return;
                }
            }
        }

        /** The body of a wait on the batch: marks the batch observed as the wait starts. */
        final class Handle extends Completion.Await<List<T>> {
            Handle() {
                super(Batch.this, false);
            }

            @Override
            void starting() {
                observe();
            }
        }
    }

    /** A batch's failure that nobody has waited for: close reports it (supervisors). */
    private final class Unreported extends SignalList.Node {
        private final Throwable error;

        Unreported(Throwable error) {
            this.error = error;
        }

        @Override
        protected void onFire() {
            CoroEvents.unobservedFailure(Scope.this.toString(), error);
            Thread th = Thread.currentThread();
            th.getUncaughtExceptionHandler().uncaughtException(th, error);
        }
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
    private static final VarHandle WATCH;
    private static final VarHandle REMAINING;
    private static final VarHandle FIRST_FAILURE;
    private static final VarHandle BATCH_WATCH;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(Scope.class, "state", long.class);
            JOINERS = lookup.findVarHandle(Scope.class, "joiners", SignalList.class);
            FAILURE = lookup.findVarHandle(Scope.class, "failure", Throwable.class);
            WATCH = lookup.findVarHandle(Supervised.class, "watch", int.class);
            REMAINING = lookup.findVarHandle(Batch.class, "remaining", int.class);
            FIRST_FAILURE = lookup.findVarHandle(Batch.class, "firstFailure", Completion.Failed.class);
            BATCH_WATCH = lookup.findVarHandle(Batch.class, "watch", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
