package dev.coro.task;

import dev.coro.cancel.Cancellable;
import dev.coro.cancel.CancellationSource;
import dev.coro.internal.SignalList;
import dev.coro.internal.Trampoline;
import dev.coro.scheduler.Scheduler;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The scheduler of a blocking {@link Task#join()}: the joining thread itself. Work for the task is
 * queued here and run by the joining thread between parks; the task's completion unparks it.
 *
 * <p>A join may be nested in another (called from work the outer join's loop runs, on the same
 * thread): the inner join sets the outer loop's trampoline drain aside while it runs, so its task
 * starts at once instead of queueing behind the very item that waits for it. The inner join blocks
 * the outer loop meanwhile (its queued work waits), which is what blocking means; work of the outer
 * task that the inner one waits for would hang it, as any cycle of waits does.
 *
 * <p>Wake-ups cannot be lost: both a submission and the completion enqueue-or-mark first and unpark
 * second, and the owner re-checks both before every park (LockSupport's permit covers the window).
 *
 * <p>The queue is made by the first submission (a CAS from null), so a join whose task ends without a
 * hop or a wait allocates none. Work submitted after the end is not stranded: the owner writes
 * {@code closed} then reads {@code queue}, a submitter publishes {@code queue} (CAS) and offers, then
 * reads {@code closed}; all four are volatile, so either the owner sees the queue and drains it, or
 * the submitter sees {@code closed} and takes its task back to run it itself.
 */
final class ThreadLoop implements Scheduler {
    private final Thread owner = Thread.currentThread();
    /**
     * The work submitted to this thread, made by the first submission (CAS from null): a task that
     * ends without a hop or a wait, the common join, never makes one.
     */
    private volatile ConcurrentLinkedQueue<Runnable> queue;
    private volatile boolean closed;

    static <T> T join(Task<T> task) {
        Context base = Context.current();
        Object ended = endedAlready(task, base);
        if (ended != null) {
            return valueOrThrow(ended);
        }
        ThreadLoop loop = new ThreadLoop();
        CancellationSource source = base == null ? new CancellationSource()
                : CancellationSource.linkedTo(base.token());
        Context ctx = (base == null ? Context.of(loop) : base.withScheduler(loop)).withToken(source.token());
        Fiber<T> fiber = new Fiber<>(task, ctx, null);
        Trampoline outer = Trampoline.setAside(); // a join nested in work a drain runs: run ours now
        try {
            loop.runUntilDone(fiber, source);
        } finally {
            Trampoline.restore(outer);
            source.close();
        }
        return valueOrThrow(fiber.result);
    }

    /**
     * The encoded outcome the join of {@code task} would end with, when running it would only read an
     * outcome that is already there; else null. Two shapes: a value ({@code Task.value}), and the
     * plain wait on a cell that has completed (a spawn handle whose child has ended: joining handles
     * one by one after the scope's join is the common case), unless the caller's token is cancelled
     * (the wait would then end cancelled, as the full path decides). The acquire read of the cell's
     * result orders the child's actions before the join's return, as the full path's wait does.
     */
    private static Object endedAlready(Task<?> task, Context base) {
        if (task.tag == Nodes.PURE) {
            return Completion.encodeValue(((Nodes.Pure<?>) task).value);
        }
        Object body = Nodes.Async.cancellableBody(task); // a plain handle, as Forks reads one
        if ((body instanceof Completion || task instanceof Nodes.Spawned<?>)
                && (base == null || !base.token().isCancelled())) {
            // null while the cell is pending (the full path waits); a spawn handle whose child ended
            // holds the child's result itself
            return body instanceof Completion cell ? cell.resultAcquire() : body;
        }
        return null;
    }

    private void runUntilDone(Fiber<?> fiber, CancellationSource source) {
        boolean interrupted = false;
        try {
            Trampoline.run(fiber, null);
            if (!fiber.isFired()) {
                fiber.add(new Unparker(owner));
            }
            while (!fiber.isFired()) {
                ConcurrentLinkedQueue<Runnable> q = queue;
                Runnable next = q == null ? null : q.poll();
                if (next != null) {
                    Trampoline.run(next, null);
                    continue;
                }
                LockSupport.park(this);
                if (Thread.interrupted()) {
                    interrupted = true;
                    source.cancel();
                }
            }
        } finally {
            closed = true;
            ConcurrentLinkedQueue<Runnable> q = queue;
            Runnable stray;
            while (q != null && (stray = q.poll()) != null) { // work submitted after the end still runs
                Trampoline.run(stray, null);
            }
            if (interrupted) {
                owner.interrupt();
            }
        }
    }

    @SuppressWarnings("unchecked")
    static <T> T valueOrThrow(Object encoded) {
        if (Completion.isCancelled(encoded)) {
            throw new CancellationException(Completion.cancelMessage(encoded)); // a reason, if it has one
        }
        if (encoded instanceof Completion.Failed f) {
            Throwable e = f.error;
            if (e instanceof RuntimeException || e instanceof Error) {
                JoinSite.attachOnce(e); // once per error: joining in a loop does not grow it
                if (e instanceof RuntimeException re) {
                    throw re;
                }
                throw (Error) e;
            }
            throw new CompletionException(e);
        }
        return (T) Completion.decodeValue(encoded);
    }

    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        ConcurrentLinkedQueue<Runnable> q = queue;
        if (q == null) {
            q = new ConcurrentLinkedQueue<>();
            if (!QUEUE.compareAndSet(this, null, q)) {
                q = queue; // another submitter made it first
            }
        }
        q.offer(task);
        if (closed && q.remove(task)) { // the owner has stopped draining: run it here
            Trampoline.run(task, null);
            return;
        }
        LockSupport.unpark(owner);
    }

    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        Objects.requireNonNull(task, "task");
        return Scheduler.inline().schedule(() -> execute(task), delay);
    }

    @Override
    public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return Scheduler.inline().schedule(() -> execute(task), delay, unit); // no Duration
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public boolean isCurrent() {
        return Thread.currentThread() == owner;
    }

    @Override
    public String toString() {
        return "ThreadLoop[" + owner.getName() + "]";
    }

    private static final VarHandle QUEUE;

    static {
        try {
            QUEUE = MethodHandles.lookup().findVarHandle(ThreadLoop.class, "queue", ConcurrentLinkedQueue.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final class Unparker extends SignalList.Node {
        private final Thread thread;

        Unparker(Thread thread) {
            this.thread = thread;
        }

        @Override
        protected void onFire() {
            LockSupport.unpark(thread);
        }
    }
}
