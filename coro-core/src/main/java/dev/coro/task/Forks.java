package dev.coro.task;

import dev.coro.cancel.Cancellable;
import dev.coro.cancel.CancellationSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The structured combinators: whenAll, whenAny and timeout start children as fibers of their own, in
 * a cancellation group linked to the parent's token, and complete the parent's suspension only after
 * every child has settled, so that no child outlives the task that started it.
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

    /** A cancellation group of child fibers and the rule that turns their outcomes into one. */
    private static final class Group extends AtomicInteger implements Fiber.Listener {
        static final int ALL = 0, ANY = 1, TIMEOUT = 2;

        private final AsyncStep parent;
        private final int mode;
        private final CancellationSource source;
        private final Fiber<?>[] children;
        /** The first child to end with a value (ANY) or an error (ALL, ANY); set once. */
        private volatile Fiber<?> decided;
        private volatile boolean expired;
        Cancellable timer;
        Duration timeout;

        Group(List<Task<?>> tasks, AsyncStep parent, int mode) {
            super(tasks.size());
            this.parent = parent;
            this.mode = mode;
            Context ctx = parent.context();
            this.source = CancellationSource.linkedTo(ctx.token());
            Context childCtx = ctx.withToken(source.token());
            this.children = new Fiber<?>[tasks.size()];
            for (int i = 0; i < children.length; i++) {
                children[i] = new Fiber<>(tasks.get(i), childCtx, this);
            }
        }

        void start() {
            for (Fiber<?> child : children) {
                child.dispatch();
            }
        }

        void timedOut() {
            expired = true;
            source.cancel();
        }

        @Override
        public void fiberDone(Fiber<?> child) {
            Object r = child.result;
            boolean decisive = mode == ANY ? !Completion.isCancelled(r) : r instanceof Completion.Failed;
            if (decisive && decided == null && DECIDED.compareAndSet(this, null, child)) {
                source.cancel();
            }
            if (decrementAndGet() == 0) {
                finish();
            }
        }

        private void finish() {
            source.close();
            if (timer != null) {
                timer.cancel();
            }
            Fiber<?> winner = decided;
            switch (mode) {
                case ALL -> {
                    if (winner != null) {
                        Throwable first = ((Completion.Failed) winner.result).error;
                        for (Fiber<?> c : children) {
                            if (c != winner && c.result instanceof Completion.Failed f && f.error != first) {
                                first.addSuppressed(f.error);
                            }
                        }
                        parent.settleEncoded(winner.result);
                        return;
                    }
                    List<Object> values = new ArrayList<>(children.length);
                    for (Fiber<?> c : children) {
                        if (Completion.isCancelled(c.result)) {
                            parent.settleEncoded(c.result);
                            return;
                        }
                        values.add(Completion.decodeValue(c.result));
                    }
                    parent.complete(java.util.Collections.unmodifiableList(values));
                }
                case ANY -> parent.settleEncoded(winner != null ? winner.result : Completion.CANCELLED);
                default -> {
                    Object r = children[0].result;
                    if (Completion.isCancelled(r) && expired) {
                        parent.fail(new TimeoutException("timed out after " + timeout));
                    } else {
                        parent.settleEncoded(r);
                    }
                }
            }
        }

        private static final java.lang.invoke.VarHandle DECIDED;

        static {
            try {
                DECIDED = java.lang.invoke.MethodHandles.lookup()
                        .findVarHandle(Group.class, "decided", Fiber.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }
    }
}
