package dev.coro.task;

import dev.coro.cancel.Cancellable;
import dev.coro.cancel.CancellationSource;
import dev.coro.internal.SignalList;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The structured combinators: whenAll, whenAny and timeout start children as fibers of their own, in
 * a cancellation group linked to the parent's token, and complete the parent's suspension only after
 * every child has settled, so that no child outlives the task that started it. A child that only
 * waits on a handle is not run as a fiber: the group registers on the handle's cell itself (Watch).
 */
final class Forks {
    private Forks() {}

    static void all(List<Task<?>> tasks, AsyncStep parent) {
        new Group(tasks, parent, Group.ALL).start();
    }

    static void any(List<Task<?>> tasks, AsyncStep parent) {
        new Group(tasks, parent, Group.ANY).start();
    }

    static void timeout(Task<?> task, Duration timeout, AsyncStep parent) {
        Group group = new Group(List.of(task), parent, Group.TIMEOUT);
        group.timeout = timeout;
        group.timer = parent.context().scheduler().schedule(new TimeoutTimer(group), timeout);
        group.start();
    }

    /**
     * The timer task of a timeout: when it fires, the child is cancelled and the parent fails with a
     * TimeoutException; when its scheduler drops it (shutdown: Scheduler.schedule), the child is
     * cancelled and the parent ends with the child's outcome (cancelled, unless it ends otherwise).
     */
    private static final class TimeoutTimer implements Runnable, Cancellable {
        private final Group group;

        TimeoutTimer(Group group) {
            this.group = group;
        }

        @Override
        public void run() {
            group.timedOut();
        }

        @Override
        public boolean cancel() {
            group.source.cancel();
            return true;
        }
    }

    /**
     * A cancellation group of children and the rule that turns their outcomes into one. A child is a
     * fiber of its own, except a wait on a handle (a spawn or run handle: a task whose body is a
     * {@link Completion} cell or a {@link Completion.Await}, or a {@link Nodes.Spawned} handle, whose
     * cell is its child's fiber or, once the child ended, the child's result): that one is a
     * {@link Watch} registered on
     * the handle's cell directly, which ends as that wait would: with the cell's result, or cancelled
     * when the group is cancelled first; and a wait whose cell has already completed takes no node at
     * all, only its answer. So a join over 200,000 spawn handles costs at most one small node per
     * handle instead of a fiber and a suspension, and nothing per handle that has already ended.
     */
    private static final class Group extends AtomicInteger implements Fiber.Listener {
        /* Implementation overview (the watches; fibers end through fiberDone).
         *
         * 1. Representation. The AtomicInteger: children not yet ended. children (Slots) at i, once
         *    start() has reached i: a Fiber, a Watch, the encoded answer of a wait whose cell was
         *    complete when start() reached it (no node: W3; an answer is a task's encoded result,
         *    never an object of these package-private types, so the slot's type still tells what it
         *    is), or NOT_STARTED (the token had fired before start). Watch.result: null until the watch
         *    ends, then the encoded result it ends with (set once, by CAS). armed (volatile int): 0
         *    while start() registers the watches, then children.size(). plain: start() found every
         *    child a completed wait whose answer is not cancelled.
         * 2. Transitions. A watch ends (result null -> r, CAS) when its cell fires it (onFire), when
         *    start finds the add refused (the cell fired since start read its result: the same
         *    linearization as Completion's own wait), or when the group's token fires and
         *    SignalList.remove takes it back first (cancelled). Whoever wins the CAS counts the group
         *    down; the last count-down runs finish().
         * 3. Linearization: a watch's end is its result CAS; a completed wait's, start's read of the
         *    cell's result.
         * 4. Invariants. W1: a watch ends at most once (the CAS). W2: no watch is left registered
         *    when the group's token fires: the token callback (unwatch) is registered before the
         *    first watch is added; start writes armed after every add and then reads the token; the
         *    callback reads armed after the token fired; of two volatile write-then-read pairs at
         *    least one sees the other, so the callback or start (or both, the one CAS deciding)
         *    takes every registered watch back. remove() is only called on a watch that has not
         *    ended and whose start ran (armed is written after the starts): such a watch was added,
         *    since a start that does not add ends the watch first.
         *    W3: a wait whose cell is complete when start() reaches it (the cell's result is set: the
         *    same linearization as Completion's own wait) takes no node and no count-down of its own:
         *    start() counts all such waits down in one add after its loop. Until that add the count
         *    holds them, so finish() cannot run before start() has written them all; after it,
         *    whoever brings the count to zero (that add, or the last watch or fiber to end) runs
         *    finish(). A deciding answer among them (an error for ALL, a value for ANY) decides in
         *    list order, at start.
         *    W4: plain is true only if no slot holds a fiber, a watch, NOT_STARTED or a cancelled
         *    answer; then finish (ALL, nothing decided) only decodes the slots in place.
         * 5. Memory ordering. result is written by CAS before the count-down (a volatile RMW), so
         *    the last count-down, which runs finish(), reads every result; the slots and plain are
         *    written by start before its count-down, so the same holds for them. Watch.cell is
         *    plain: written before the add (whose CAS publishes it to the firer), dropped by the
         *    thread that ends the watch; unwatch may read it stale, and then its remove fails (the
         *    cell fired, or the node was removed), except for a watch that never registered, whose
         *    end precedes the write of armed (so unwatch sees it ended).
         * 6. Progress: lock-free; the cancellation callback walks the watches once.
         * 7. Cancellation: as for fibers, the group's token ends every watch that has not ended;
         *    the spawned child itself goes on (cancelling a wait on a handle never cancels the child).
         * 8. Resumption: finish settles the parent's AsyncStep, which resumes it on its scheduler.
         */
        static final int ALL = 0, ANY = 1, TIMEOUT = 2;

        /** The slot of a wait that never started: the group's token had fired before start (ends cancelled). */
        private static final Object NOT_STARTED = new Object();

        private final AsyncStep parent;
        private final int mode;
        private final CancellationSource source;
        /** The tasks, in order (read by start only). */
        private final List<Task<?>> tasks;
        /**
         * In the order of the tasks, what start() made of each (part 1). Chunked, not one array: see
         * Slots.
         */
        private final Slots children;
        /** W4: written by start() before its count-down, read by finish() after the last one. */
        private boolean plain;
        /** The first child to end with a value (ANY) or an error (ALL, ANY); set once. */
        private volatile Object decided;
        private volatile boolean expired;
        /** W2: children.length once start() has tried to register every watch, else 0. */
        private volatile int armed;
        Cancellable timer;
        Duration timeout;

        Group(List<Task<?>> tasks, AsyncStep parent, int mode) {
            super(tasks.size());
            this.parent = parent;
            this.mode = mode;
            this.source = CancellationSource.linkedTo(parent.context().token());
            this.tasks = tasks;
            this.children = new Slots(tasks.size());
        }

        void start() {
            boolean cancelledAtStart = source.isCancelled();
            List<Task<?>> ts = tasks;
            Slots all = children;
            int n = all.size();
            int settled = 0; // waits that ended in start without a node: counted down once, below
            boolean registered = false; // W2: unwatch is on the token before the first watch is added
            boolean answersOnly = true; // W4 so far
            Context childCtx = null;
            for (int i = 0; i < n; i++) {
                Task<?> t = ts.get(i);
                Object body = Nodes.Async.cancellableBody(t);
                Completion cell;
                boolean asOutcome;
                if (body instanceof Completion c) { // a plain handle: the cell is the wait's body
                    cell = c;
                    asOutcome = false;
                } else if (body instanceof Completion.Await<?> w) {
                    cell = w.source;
                    asOutcome = w.asOutcome;
                } else if (t instanceof Nodes.Spawned<?>) { // a spawn handle whose child ended: body is its result
                    cell = null;
                    asOutcome = false;
                } else {
                    if (childCtx == null) {
                        childCtx = parent.context().withToken(source.token());
                    }
                    Fiber<?> f = new Fiber<>(t, childCtx, this);
                    all.put(i, f);
                    answersOnly = false;
                    f.dispatch();
                    continue;
                }
                if (cancelledAtStart) { // as a wait whose token had fired: it never starts
                    all.put(i, NOT_STARTED);
                    answersOnly = false;
                    settled++;
                    continue;
                }
                if (body instanceof Completion.Await<?> w) {
                    w.starting();
                }
                Object done = cell == null ? body : cell.resultAcquire();
                if (done != null) { // W3: done already: its answer goes in the slot, no node
                    Object r = Completion.answer(done, asOutcome);
                    assert !(r instanceof Fiber<?> || r instanceof Watch || r == NOT_STARTED) : "part 1";
                    all.put(i, r);
                    settled++;
                    if (Completion.isCancelled(r)) {
                        answersOnly = false;
                    }
                    if (decides(r)) {
                        decide(r);
                    }
                    continue;
                }
                if (!registered) {
                    registered = true;
                    source.token().register(this::unwatch);
                }
                answersOnly = false;
                Watch w = new Watch(this, cell, asOutcome);
                all.put(i, w);
                if (!cell.add(w)) { // fired since the check: at once, as a wait would
                    w.end(Completion.answer(cell.result, asOutcome));
                }
            }
            plain = answersOnly; // W4; published by the count-down below
            if (registered) {
                armed = n; // W2: after every add, before the read of the token
                if (source.isCancelled()) {
                    unwatch();
                }
            }
            if (settled > 0 && addAndGet(-settled) == 0) {
                finish();
            }
        }

        /** The group's token fired: take back every registered watch (W2); each ends cancelled. */
        private void unwatch() {
            int n = armed;
            for (int i = 0; i < n && get() > 0; i++) {
                if (children.at(i) instanceof Watch w) {
                    Completion cell = w.cell;
                    if (cell != null && w.result == null && cell.remove(w)) {
                        w.end(Completion.CANCELLED);
                    }
                }
            }
        }

        void timedOut() {
            expired = true;
            source.cancel();
        }

        @Override
        public void fiberDone(Fiber<?> child) {
            ended(child, child.result);
        }

        /** A child ended with {@code r} (its result is readable from now on). */
        void ended(Object child, Object r) {
            if (decides(r)) {
                decide(child);
            }
            if (decrementAndGet() == 0) {
                finish();
            }
        }

        /** Whether a child ending with {@code r} decides the group: a value (ANY) or an error (ALL, ANY). */
        private boolean decides(Object r) {
            return mode == ANY ? !Completion.isCancelled(r) : r instanceof Completion.Failed;
        }

        /** The first deciding child wins and cancels the rest. */
        private void decide(Object child) {
            if (decided == null && DECIDED.compareAndSet(this, null, child)) {
                source.cancel();
            }
        }

        private static Object resultOf(Object child) {
            if (child instanceof Fiber<?> f) {
                return f.result;
            }
            if (child instanceof Watch w) {
                return w.result;
            }
            if (child == NOT_STARTED) {
                return Completion.CANCELLED;
            }
            return child; // the answer of a wait that was complete at start (W3)
        }

        private void finish() {
            source.close();
            if (timer != null) {
                timer.cancel();
            }
            Object winner = decided;
            switch (mode) {
                case ALL -> {
                    if (winner != null) {
                        Object won = resultOf(winner);
                        Throwable first = ((Completion.Failed) won).error;
                        Slots all = children;
                        for (int i = 0; i < all.size(); i++) {
                            Object c = all.at(i);
                            if (c != winner && resultOf(c) instanceof Completion.Failed f && f.error != first) {
                                first.addSuppressed(f.error);
                            }
                        }
                        parent.settleEncoded(won);
                        return;
                    }
                    // the values replace the children in place: nothing else reads the slots once the
                    // count is 0 (a late unwatch finds no live watch in them), and the slots are chunked,
                    // so a join of 200,000 handles allocates no large array
                    Slots all = children;
                    int n = all.size();
                    if (plain) { // W4: every slot is its raw answer, none cancelled
                        for (int i = 0; i < n; i++) {
                            Object r = all.at(i);
                            if (r == Completion.NULL) {
                                all.put(i, null);
                            }
                        }
                    } else {
                        for (int i = 0; i < n; i++) {
                            Object r = resultOf(all.at(i));
                            if (Completion.isCancelled(r)) {
                                parent.settleEncoded(r); // cancelled, with its reason if it has one
                                return;
                            }
                            all.put(i, Completion.decodeValue(r));
                        }
                    }
                    parent.complete(all); // read-only (Slots)
                }
                case ANY -> parent.settleEncoded(winner != null ? resultOf(winner) : Completion.CANCELLED);
                default -> {
                    Object r = resultOf(children.at(0));
                    if (Completion.isCancelled(r) && expired) {
                        parent.fail(new TimeoutException("timed out after " + timeout));
                    } else {
                        parent.settleEncoded(r);
                    }
                }
            }
        }

        private static final VarHandle DECIDED;

        static {
            try {
                DECIDED = MethodHandles.lookup().findVarHandle(Group.class, "decided", Object.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }

    /** A wait on a handle's cell, run by the group itself: no fiber, no suspension (see Group). */
    private static final class Watch extends SignalList.Node {
        final Group group;
        /** Whether the wait answers with the cell's outcome as a value. */
        final boolean asOutcome;
        /**
         * The cell waited on; dropped (null) once the watch has ended, so that a finished child is not
         * kept alive by the group until the last one ends (only its result is).
         */
        Completion cell;
        /** Null until the watch ends; then what the wait would have ended with. Set once, by CAS. */
        volatile Object result;

        Watch(Group group, Completion cell, boolean asOutcome) {
            this.group = group;
            this.cell = cell;
            this.asOutcome = asOutcome;
        }

        @Override
        protected void onFire() { // the cell fired this node: no other end can have run (W1 aside)
            end(Completion.answer(cell.result, asOutcome));
        }

        /** W1: the first end wins, lets go of the cell and counts the group down. */
        void end(Object r) {
            if (RESULT.compareAndSet(this, null, r)) {
                cell = null; // plain: a racing unwatch that still reads it finds the cell fired or the watch ended
                group.ended(this, r);
            }
        }

        private static final VarHandle RESULT;

        static {
            try {
                RESULT = MethodHandles.lookup().findVarHandle(Watch.class, "result", Object.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }
}
