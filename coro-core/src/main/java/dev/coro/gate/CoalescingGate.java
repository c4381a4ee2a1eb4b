package dev.coro.gate;

import dev.coro.cancel.CancellationToken;
import dev.coro.internal.Blocking;
import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitQueue;
import dev.coro.task.Completer;
import dev.coro.task.Context;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A gate that merges concurrent requests into one execution (one of P4215's future gates): requests
 * for the same key that arrive while an execution for that key is pending or running share it and
 * its outcome, so a storm of cache misses for one key costs one load. Where a team would hand-write a
 * {@code ConcurrentHashMap} of {@code CompletableFuture}s, this gate also counts its callers, so that
 * the shared work is cancelled when, and only when, nobody wants its result any more.
 *
 * <p><b>Admission rule.</b> A request {@link #within(Object, Task) within(key, work)} joins the
 * execution in flight for {@code key} ({@code equals} and {@code hashCode}), if there is one;
 * otherwise its own {@code work} becomes the shared execution, and later requests join it. A
 * joiner's {@code work} never runs. An execution is in flight from the request that started it until
 * it ends (on any channel) or until every caller has cancelled; a request that arrives after that
 * starts a new execution: the gate shares work, it does not cache results (that is a cache's job). In
 * the second form, {@link #sharing(BiPredicate) sharing(compatible)}, a request with key {@code a}
 * joins the oldest execution in flight whose key {@code b} satisfies {@code compatible.test(a, b)}
 * (the request receives the outcome of the work started for {@code b}); the in-flight executions are
 * scanned linearly, so that form suits a modest number of executions in flight at once (tens, not
 * thousands).
 *
 * <p><b>Outcome.</b> Every caller of an execution ends as the execution ended: with the same value
 * (the same instance), the same error (the same {@code Throwable} instance), or cancelled. A caller
 * that joins an execution which then ends with an error fails with that error, even though its own
 * {@code work} was never tried. (The error is shared as it is: a blocking caller's {@code join()}
 * adds its own stack to it as a suppressed exception, as for any shared failure.)
 *
 * <p><b>Fairness.</b> Not an ordering gate: nobody waits for a turn. Callers of one execution all
 * receive its outcome when it ends, in no promised order.
 *
 * <p><b>Cancellation</b> is counted. A caller whose task is cancelled completes on the cancelled
 * channel at once and leaves; the execution goes on for the others. When the last caller leaves, the
 * execution is cancelled (through its own cancellation token; cancellation is cooperative, so the
 * work stops at its next wait) and leaves the gate at once: a request that arrives from then on
 * starts a new execution, even if the cancelled one has not yet stopped. Nothing of a cancelled caller
 * remains in the gate.
 *
 * <p><b>Close.</b> {@link #close()} refuses later requests: they complete on the cancelled channel
 * without running their work or joining an execution. Executions in flight are left alone: they run
 * to their end, their callers receive their outcome, and a caller may still cancel.
 *
 * <p><b>Where the work runs.</b> The shared execution runs under the context of the request that
 * started it: that request's scheduler (it is submitted there, never run inline on the requesting
 * stack, except on an inline scheduler) and context values, but not its cancellation token: the
 * execution has its own, cancelled only as described above. For the blocking door
 * ({@link #call(Object, Callable)}) that scheduler is the calling thread, which runs the work while it
 * waits. Each caller resumes on its own scheduler: inline (through a trampoline) when the thread that
 * ends the execution already runs that scheduler, otherwise by submission. A scheduler that refuses
 * the execution fails every caller with {@link RejectedExecutionException}. Work that waits for a
 * request for its own key through the same gate waits for itself, for ever.
 *
 * <p><b>Bad input.</b> A null key, work, body or predicate: {@link NullPointerException} naming the
 * argument (when the door is built, not when it runs). A key whose {@code hashCode} or
 * {@code equals}, or a predicate, that throws fails that request's task with the exception, leaving
 * nothing behind. The predicate must be free of side effects: it may be called more than once per
 * request, on any thread that makes a request.
 *
 * <p><b>Thread-safety and memory effects.</b> Thread-safe. Joining, leaving and ending an execution
 * are lock-free (the keyed form's map is a {@link ConcurrentHashMap}, whose bin locks are held for a
 * few instructions, never across a wait). Actions of the shared work happen-before every caller
 * resumes with its outcome.
 *
 * {@snippet :
 * CoalescingGate<String, Profile> profiles = new CoalescingGate<>();
 * Task<Profile> load = profiles.within(userId, Task.fromCallable(() -> database.loadProfile(userId)));
 * // however many callers start `load` at once, the database is asked once per user id
 * }
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class CoalescingGate<K, V> {
    /* Implementation overview.
     *
     * 1. Representation.
     *    The in-flight set: keyed form, a ConcurrentHashMap<K, Execution> (at most one execution per
     *    key: putIfAbsent places it); sharing form, the volatile array `scanned` of executions
     *    (copy-on-write, replaced by CAS; oldest first). An execution is listed from its placement
     *    until it dies (below), and removed then by whoever killed it (and by anyone who finds it dead).
     *    Execution:
     *      callers (volatile int):  n >= 1   live: n callers attached (joined and not departed)
     *                               0        dead: every caller left; the work was cancelled
     *                               FINISHED dead: the work ended (-1)
     *        A new execution starts at 1: its starter. Dead states are terminal.
     *      waiters (WaitQueue): the callers' suspension steps (each Task.create completer is its own
     *        WaitNode, so a caller allocates no node of its own). State PENDING (accepts waiters) until
     *        the work ends, then a Done sentinel carrying the outcome, which refuses waiters.
     *      scope (plain): the Scope the work was spawned into; its cancel() cancels the work.
     *    closed (volatile boolean).
     *
     * 2. Transitions (of one request, in its Task.create body).
     *    T1 refuse: closed: complete cancelled.
     *    T2 join: a listed execution e for the key: CAS e.callers n -> n + 1 for n >= 1: joined. Seen a
     *       dead state: remove e from the set (helping) and start over.
     *    T3 place: no live execution for the key: list a fresh execution (callers 1): putIfAbsent, or
     *       CAS scanned -> scanned + e after rescanning that very array. Lost the race: start over
     *       (usually to join the winner). Placed: spawn the work into a Scope made from the request's
     *       context with CancellationToken.NONE, wrapped so that its end runs T5 on every channel.
     *    T4 wait: push the caller's step on e.waiters. Refused (Done): deliver Done's outcome to the
     *       step at once. Queued: the queue tells e (Departures) when the step departs (cancelled).
     *    T5 end (the work's fiber, on any channel): getAndSet callers -> FINISHED; unlist e; exchange
     *       waiters -> Done(outcome); deliver the outcome to every taken step (a step whose token has
     *       fired is abandoned instead: cancelled wins).
     *    T6 leave (a queued step departed: its token fired, or an error was delivered): CAS callers
     *       n -> n - 1 for n >= 1; the CAS 1 -> 0 makes the leaver the canceller: unlist e, then
     *       e.scope.cancel(). Seen a dead state: nothing (the step was delivered an error by T5, or
     *       abandoned by it).
     *    close: closed = true.
     *
     * 3. Linearization points. within, joining: the CAS of T2; starting: the putIfAbsent or array CAS
     *    of T3; refused: its read of closed. The end of an execution: T5's getAndSet. A caller's
     *    cancellation: its step's own result CAS (AsyncStep), which precedes its T6. The last
     *    caller's leaving (the execution's cancellation): T6's CAS 1 -> 0. close: its write.
     *
     * 4. Invariants.
     *    C1 (one execution per key): at any time at most one live execution is listed per key in the
     *       keyed form (putIfAbsent fails on a listed one; a dead one is unlisted before a new one can
     *       be placed); in the sharing form a request places only after a scan, of the very array its
     *       CAS replaces, found no live compatible execution.
     *    C2 (no late joiner): no caller joins a dead execution: T2's CAS needs n >= 1, and dead states
     *       are terminal. So a request that arrives after T5 (or after the last caller left) joins a
     *       new execution.
     *    C3 (every caller answered): a caller's step is pushed after its T2/T3; it is either taken by
     *       T5's exchange (and delivered) or refused by Done (and delivered by T4), or it departed.
     *    C4 (counted cancellation): callers counts the callers whose steps have not departed, plus a
     *       caller between T2/T3 and its push; the work is cancelled only by the T6 that takes it to 0,
     *       that is, after every caller departed.
     *    C5 (no leak): an execution is listed iff live, up to its killer's unlisting right after the
     *       killing CAS or getAndSet; so with nothing in flight the set is empty.
     *
     * 5. Memory ordering. callers and the queue's state are volatile and touched by CAS, getAndSet or
     *    volatile reads (sequentially consistent). The Done sentinel's outcome is a final field,
     *    published by T5's exchange (release) and read after push's refusing read (acquire). The
     *    work's actions happen-before T5 (program order in its fiber), so before every delivery.
     *    scope is a plain field, written by the starter before it pushes its step; it is read only by
     *    the canceller (T6's CAS 1 -> 0), which comes after the starter's own departure (the starter
     *    counts 1 until it departs), and that departure follows the push (the step's departure hook
     *    is installed by the push, a CAS): so the write happens-before the read.
     *
     * 6. Progress. Lock-free: each CAS loop retries only when another request changed the word;
     *    T2 retries past a dead execution, which it unlists itself. The sharing form's array CAS
     *    retries when another execution was placed or unlisted meanwhile.
     *
     * 7. Cancellation races. Cancel vs delivery: decided by the step's own result CAS; a step that
     *    loses to T5 was delivered; one that wins departs, and its T6 finds FINISHED and does
     *    nothing. Last leaver vs T5: whichever of T6's CAS 1 -> 0 and T5's getAndSet comes first kills
     *    the execution; the other finds it dead. Joiner vs last leaver: T2's CAS and T6's CAS on the
     *    same word: either the joiner comes first (the count never reaches 0) or it sees 0 and starts
     *    a new execution. A caller cancelled before its push departs when the push installs the hook.
     *
     * 8. Resumption. Delivery settles each step, which resumes its fiber on its own scheduler (inline
     *    through the trampoline when the ending thread runs that scheduler), so delivering to many
     *    callers does not deepen the stack.
     *
     * 9. References. P4215's future gates (coalescing); seed 000 (one word decides who resumes whom);
     *    KeyedSerialGate (the live-count entry that dies once, unlisted by its killer).
     */

    /** {@link Execution#callers} once the work has ended: dead, terminal. */
    private static final int FINISHED = -1;
    /** The state of an execution's waiters while its work runs: callers may queue. */
    private static final WaitQueue.Sentinel PENDING = new WaitQueue.Sentinel("PENDING", true);
    /** The sharing form's in-flight set when empty. */
    private static final Execution<?, ?>[] NONE = new Execution<?, ?>[0];

    /** The keyed form's in-flight set; null in the sharing form. */
    private final ConcurrentHashMap<K, Execution<K, V>> byKey;
    /** The sharing form's predicate; null in the keyed form. */
    private final BiPredicate<? super K, ? super K> compatible;
    /** The sharing form's in-flight set, oldest first; replaced by CAS (SCANNED). */
    @SuppressWarnings("unused") // through SCANNED
    private volatile Execution<?, ?>[] scanned = NONE;
    private volatile boolean closed;
    /** The reason a caller refused by the closed gate is cancelled with (its message, read lazily). */
    private final Object closedReason = new Object() {
        @Override
        public String toString() {
            return CoalescingGate.this + " is closed";
        }
    };

    /** Creates an open gate in the keyed form: requests with equal keys share an execution. */
    public CoalescingGate() {
        this.byKey = new ConcurrentHashMap<>();
        this.compatible = null;
    }

    private CoalescingGate(BiPredicate<? super K, ? super K> compatible) {
        this.byKey = null;
        this.compatible = compatible;
    }

    /**
     * Creates an open gate in the sharing form: a request with key {@code a} joins the oldest
     * execution in flight whose key {@code b} satisfies {@code compatible.test(a, b)}, and receives
     * its outcome. The predicate need not be symmetric nor reflexive (a request whose key is not
     * compatible with itself still starts its own execution when nothing compatible is in flight).
     * The in-flight executions are scanned linearly on each request.
     *
     * {@snippet :
     * // a request for a page range is served by a read in flight that covers it
     * CoalescingGate<Range, Bytes> reads = CoalescingGate.sharing((wanted, running) -> running.covers(wanted));
     * }
     *
     * @param compatible whether a request with the first key may share the execution started for the
     *     second; free of side effects
     * @param <K> the key type
     * @param <V> the value type
     * @return the gate
     * @throws NullPointerException if {@code compatible} is null
     */
    public static <K, V> CoalescingGate<K, V> sharing(BiPredicate<? super K, ? super K> compatible) {
        return new CoalescingGate<>(Objects.requireNonNull(compatible, "compatible"));
    }

    /**
     * Returns a task that joins the execution in flight for {@code key} or, if there is none, starts
     * {@code work} as the shared execution; it ends with that execution's outcome (value, error or
     * cancelled). Each start of the returned task is a new request. Cancelling a request leaves the
     * execution to its other callers; cancelling the last one cancels the execution. After
     * {@link #close()} the task completes cancelled without running {@code work}.
     *
     * @param key the key: requests with equal (or, in the sharing form, compatible) keys share
     * @param work the work this request runs if it starts the execution (a joiner's never runs)
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null
     */
    public Task<V> within(K key, Task<? extends V> work) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(work, "work");
        return Task.create(new Request<>(this, key, work));
    }

    /**
     * Blocks the calling thread (parking only the virtual thread on a virtual thread) until the
     * execution shared for {@code key} ends, starting {@code body} as that execution if none is in
     * flight, and returns its value: {@code within(key, Task.fromCallable(body)).join()}. The calling
     * thread runs the body when it starts the execution.
     *
     * @param key the key
     * @param body the work this call runs if it starts the execution
     * @return the shared value
     * @throws NullPointerException if {@code key} or {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, the execution was
     *     cancelled, or the thread is interrupted while it waits (the execution goes on for the other
     *     callers)
     * @throws RuntimeException the execution's error (a checked one wrapped in
     *     {@link java.util.concurrent.CompletionException})
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public V call(K key, Callable<? extends V> body) {
        Blocking.checkAllowed(CoalescingGate.class, "call");
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(body, "body");
        return within(key, Task.<V>fromCallable(body)).join();
    }

    /**
     * Closes the gate: every later request completes on the cancelled channel without running its
     * work or joining an execution. Executions in flight run to their end and their callers receive
     * their outcome. Idempotent; never throws.
     */
    public void close() {
        closed = true;
    }

    /**
     * Returns whether {@link #close()} has been called.
     *
     * @return whether closed
     */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Returns the keys of the executions in flight (started, neither ended nor abandoned by all their
     * callers), one per execution: a snapshot, exact when no request or execution is changing it, and
     * otherwise weakly consistent (as a {@link ConcurrentHashMap}'s iteration).
     *
     * @return the keys, a new list
     */
    public List<K> inFlight() {
        List<K> keys = new ArrayList<>();
        if (byKey != null) {
            for (Execution<K, V> e : byKey.values()) {
                if (e.isLive()) {
                    keys.add(e.key);
                }
            }
        } else {
            for (Execution<?, ?> e : scannedAcquire()) {
                if (e.isLive()) {
                    keys.add(this.<K>keyOf(e));
                }
            }
        }
        return keys;
    }

    /** For tests: the executions listed in the in-flight set, live or dead (a dead one is unlisted by its killer). */
    int listed() {
        return byKey != null ? byKey.size() : scannedAcquire().length;
    }

    /** For tests: the callers of the live executions in flight whose key equals {@code key}. */
    int callers(K key) {
        int sum = 0;
        for (Execution<?, ?> e : byKey != null ? byKey.values().toArray(NONE) : scannedAcquire()) {
            int n = e.callers;
            if (n >= 1 && e.key.equals(key)) {
                sum += n;
            }
        }
        return sum;
    }

    @Override
    public String toString() {
        return "CoalescingGate[" + (byKey == null ? "sharing, " : "") + "inFlight=" + inFlight().size()
                + (closed ? ", closed]" : "]");
    }

    // ---- a request (part 2) ----

    /** The body of one request's task: T1 to T4. */
    private static final class Request<K, V> implements Consumer<Completer<V>> {
        private final CoalescingGate<K, V> gate;
        private final K key;
        private final Task<? extends V> work;

        Request(CoalescingGate<K, V> gate, K key, Task<? extends V> work) {
            this.gate = gate;
            this.key = key;
            this.work = work;
        }

        @Override
        public void accept(Completer<V> completer) {
            WaitNode step = (WaitNode) completer; // every Task.create completer is its step (a WaitNode)
            if (gate.closed) { // T1
                step.abandon(gate.closedReason); // cancelled, saying the gate is closed
                return;
            }
            Execution<K, V> e = gate.arrive(key, completer.context(), work);
            WaitQueue.Sentinel refused = e.waiters.push(step); // T4; a departure from here on runs T6
            if (refused != null) {
                deliver(step, ((Done) refused).outcome); // ended before we queued (C3)
            }
        }
    }

    /** T2 and T3: the live execution this request joined, or the one it placed and started. */
    private Execution<K, V> arrive(K key, Context ctx, Task<? extends V> work) {
        for (;;) {
            Execution<K, V> e = find(key);
            if (e == null) {
                Execution<K, V> fresh = new Execution<>(this, key);
                e = place(key, fresh);
                if (e == null) {
                    start(fresh, ctx, work);
                    return fresh;
                }
            }
            if (e.tryJoin()) { // T2 (C2)
                return e;
            }
            unlist(e); // dead: its killer unlists it too; help, then look again
        }
    }

    /** A listed execution this key may join (the keyed form's may be dead), or null. */
    private Execution<K, V> find(K key) {
        return byKey != null ? byKey.get(key) : scan(scannedAcquire(), key);
    }

    /** T3: lists {@code fresh} and returns null, or returns the execution found instead. */
    private Execution<K, V> place(K key, Execution<K, V> fresh) {
        if (byKey != null) {
            return byKey.putIfAbsent(key, fresh);
        }
        for (;;) {
            Execution<?, ?>[] now = scannedAcquire();
            Execution<K, V> found = scan(now, key); // C1: the very array the CAS replaces
            if (found != null) {
                return found;
            }
            Execution<?, ?>[] next = Arrays.copyOf(now, now.length + 1);
            next[now.length] = fresh;
            if (SCANNED.compareAndSet(this, now, next)) {
                return null;
            }
        }
    }

    /** The oldest live execution of {@code set} whose key {@code key} is compatible with, or null. */
    @SuppressWarnings("unchecked")
    private Execution<K, V> scan(Execution<?, ?>[] set, K key) {
        for (Execution<?, ?> e : set) {
            if (e.isLive() && compatible.test(key, (K) e.key)) {
                return (Execution<K, V>) e;
            }
        }
        return null;
    }

    /** Takes a dead execution out of the in-flight set (C5); idempotent. */
    private void unlist(Execution<K, V> e) {
        if (byKey != null) {
            byKey.remove(e.key, e);
            return;
        }
        for (;;) {
            Execution<?, ?>[] now = scannedAcquire();
            int at = -1;
            for (int i = 0; i < now.length; i++) {
                if (now[i] == e) {
                    at = i;
                    break;
                }
            }
            if (at < 0) {
                return;
            }
            Execution<?, ?>[] next = now.length == 1 ? NONE : new Execution<?, ?>[now.length - 1];
            System.arraycopy(now, 0, next, 0, at);
            System.arraycopy(now, at + 1, next, at, now.length - at - 1);
            if (SCANNED.compareAndSet(this, now, next)) {
                return;
            }
        }
    }

    /**
     * T3's start: spawns the work detached from the starter's token (its own scope's token, cancelled
     * by T6), with the starter's scheduler and values; its end runs T5 on every channel.
     */
    @SuppressWarnings("unchecked")
    private void start(Execution<K, V> e, Context ctx, Task<? extends V> work) {
        Scope scope = Scope.childOf(ctx.withToken(CancellationToken.NONE));
        e.scope = scope; // read by the canceller only after our push (part 5)
        scope.spawn(((Task<V>) work).transform(e));
        // A scheduler that refuses the spawn makes the scope run a failure in place of the task, so
        // T5 never runs: the child is then over while the execution is not finished (when the
        // scheduler accepts it, T5 runs before the child is counted over).
        if (scope.activeCount() == 0 && e.callers != FINISHED) {
            e.apply(new Outcome.Failure<>(new RejectedExecutionException(
                    "CoalescingGate: the scheduler " + ctx.scheduler() + " refused the shared execution")));
        }
    }

    /** T6: a caller's step departed; the last one cancels the execution. */
    private void leave(Execution<K, V> e) {
        for (int n = e.callers; n >= 1; n = e.callers) {
            if (CALLERS.compareAndSet(e, n, n - 1)) {
                if (n == 1) { // C4: every caller has departed
                    unlist(e);
                    e.scope.cancel();
                }
                return;
            }
        }
        // dead: delivered (an error departs too) or abandoned by T5; nothing to count
    }

    /** Settles a caller's step with the execution's outcome; a step being cancelled is abandoned. */
    private static void deliver(WaitNode step, Outcome<?> outcome) {
        switch (outcome) {
            case Outcome.Value<?> v -> WaitQueue.settle(step, v.value());
            case Outcome.Failure<?> f -> {
                if (step.isCancelRequested()) {
                    step.abandon();
                } else {
                    step.reject(f.error());
                }
            }
            case Outcome.Cancelled<?> c -> step.abandon();
        }
    }

    private Execution<?, ?>[] scannedAcquire() {
        return (Execution<?, ?>[]) SCANNED.getAcquire(this);
    }

    @SuppressWarnings("unchecked")
    private <T> T keyOf(Execution<?, ?> e) {
        return (T) e.key;
    }

    /** The state of an execution's waiters once its work has ended: carries the outcome, refuses waiters. */
    private static final class Done extends WaitQueue.Sentinel {
        final Outcome<?> outcome;

        Done(Outcome<?> outcome) {
            super("DONE", false);
            this.outcome = outcome;
        }
    }

    /**
     * One shared execution (part 1). As a function of the work's outcome it is T5; as the waiters'
     * Departures it is T6.
     */
    private static final class Execution<K, V> implements Function<Outcome<V>, Task<Void>>, WaitNode.Departures {
        final CoalescingGate<K, V> gate;
        final K key;
        final WaitQueue waiters;
        volatile int callers = 1;
        /** The scope the work was spawned into; plain (part 5). */
        Scope scope;

        Execution(CoalescingGate<K, V> gate, K key) {
            this.gate = gate;
            this.key = key;
            this.waiters = new WaitQueue(PENDING, this);
            waiters.describedAs("GATE", gate); // its waiters are dumped as waiting on the gate
        }

        boolean isLive() {
            return callers >= 1;
        }

        /** T2: one more caller, unless dead (C2). */
        boolean tryJoin() {
            for (int n = callers; n >= 1; n = callers) {
                if (CALLERS.compareAndSet(this, n, n + 1)) {
                    return true;
                }
            }
            return false;
        }

        /** T5: the work ended with {@code outcome}. */
        @Override
        public Task<Void> apply(Outcome<V> outcome) {
            int before = (int) CALLERS.getAndSet(this, FINISHED);
            if (before != FINISHED) {
                if (before >= 1) {
                    gate.unlist(this); // C5 (a last leaver unlisted it already)
                }
                Object taken = waiters.exchange(new Done(outcome));
                for (WaitNode w = waiters.drain(taken); w != null; ) {
                    WaitNode next = WaitQueue.next(w);
                    deliver(w, outcome);
                    w = next;
                }
            }
            return Task.value(null);
        }

        /** T6: a queued caller's step departed. */
        @Override
        public void departed(WaitNode node) {
            gate.leave(this);
        }

        @Override
        public String toString() {
            int n = callers;
            return "Execution[" + key + ", " + (n == FINISHED ? "finished" : n == 0 ? "abandoned" : n + " callers") + "]";
        }
    }

    private static final VarHandle CALLERS;
    private static final VarHandle SCANNED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            CALLERS = lookup.findVarHandle(Execution.class, "callers", int.class);
            SCANNED = lookup.findVarHandle(CoalescingGate.class, "scanned", Execution[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
