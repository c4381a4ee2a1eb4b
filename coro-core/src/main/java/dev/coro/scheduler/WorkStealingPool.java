package dev.coro.scheduler;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Durations;
import dev.coro.internal.TimerRequest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A fixed set of worker threads that share work by stealing: the {@link Scheduler} for CPU-bound
 * and fine-grained asynchronous work.
 *
 * <p><b>Where work goes.</b> Work submitted by a task already running on this pool goes to the back
 * of that worker's own queue and typically runs on the same thread, with no other thread involved;
 * when that queue is full (256 tasks), its older half moves to the shared injection queue in one
 * piece. Work submitted from any other thread goes to the injection queue (sharded by submitting
 * thread, so that concurrent submitters do not all contend on one tail; a submission allocates
 * nothing), which every worker polls, taking up to 32 tasks at once into its own queue (one at a
 * time on a one-worker pool, so that they start in order).
 * An idle worker steals half of a busy worker's queue at once, so that work spreads in few steps.
 * Idle workers spin for a short while, looking for work, before they park; a parked worker is woken
 * only when no other worker is already looking, so a burst of submissions costs one wakeup, not one
 * per task.
 *
 * <p><b>Ordering and fairness.</b> No order between tasks is promised (on a one-worker pool, tasks
 * submitted from outside start in submission order relative to one another). Each worker's queue
 * is first-in first-out, and a worker polls the injection queue at least once every 64 tasks, so
 * neither local nor outside work starves behind tasks that keep spawning more.
 *
 * <p><b>Failures.</b> A task that throws does not kill its worker: the exception goes to the worker
 * thread's {@linkplain Thread#getUncaughtExceptionHandler() uncaught-exception handler} and the
 * worker goes on with the next task. A worker's interrupt status is cleared after each task.
 *
 * <p><b>Threads.</b> Workers are non-daemon platform threads named {@code coro-pool-N-worker-M}
 * (or {@code PREFIX-worker-M}): non-daemon, like the JDK's executors, so that the JVM does not exit
 * while accepted work is still queued; {@link #close()} the pool to let it exit. Workers do not
 * block: Coro's blocking doors ({@code Task.join()}, {@code Scope.joinBlocking()}, a gate's
 * {@code call}, {@code Event.awaitBlocking()}, a channel's {@code sendBlocking}, ...) called on a
 * worker throw {@link IllegalStateException} at once, naming the pool, instead of parking a thread
 * the awaited work may need. Compose with {@code then}/{@code flatMap}, or block on a virtual thread
 * ({@code Task.onVirtualThread}) or a plain thread.
 *
 * <p><b>Shutdown.</b> {@link #shutdown()} stops accepting work from outside the pool: from then on
 * {@link #execute} called from other threads, and {@link #schedule} called from any thread, throw
 * {@link RejectedExecutionException}. Work already accepted still runs, and so does work that it
 * submits from the pool's own threads, so a graph of tasks in flight can finish. Pending timers
 * are dropped: cancelled, and a timer task that is a {@link Cancellable} is cancelled too (see
 * {@link Scheduler#schedule}), so a {@code Task.delay} pending on the pool completes on the cancelled
 * channel (its continuation runs on the thread that shut the pool down, the pool refusing it). The
 * pool terminates once every worker is idle and every queue is empty.
 * {@link #shutdownNow()} also drops queued work and interrupts running tasks. {@link #close()} is
 * {@code shutdown()} followed by waiting for termination.
 *
 * <p><b>Memory effects.</b> Actions in a thread before it submits a task happen-before the task
 * runs.
 *
 * <p><b>Thread-safety.</b> All methods may be called from any thread.
 *
 * {@snippet :
 * try (WorkStealingPool pool = WorkStealingPool.create(4)) {
 *     CountDownLatch done = new CountDownLatch(100);
 *     for (int i = 0; i < 100; i++) {
 *         pool.execute(done::countDown); // from outside: the injection queue
 *     }
 *     done.await();
 * } // close(): shutdown, then wait for the workers to finish
 * }
 */
public final class WorkStealingPool implements Scheduler, AutoCloseable {
    /*
     * Structure: each Worker owns a WorkQueue (a bounded FIFO ring that thieves steal half of: see
     * its implementation overview) and runs the loop in Worker (local pop, injection poll, steal,
     * spin, park). The injection queue (InjectionQueue: a few shards of array segments, see its
     * overview) holds outside submissions and Chunks, the halves that full worker queues moved out;
     * a worker polls a batch of submissions at once into its own queue (where others can steal
     * them), and a worker that polls a chunk runs its first task and pushes the rest into its own
     * queue. The park/wake protocol, including why no wakeup is lost, is IdleWorkers'
     * implementation overview; this class holds the submission half of it: publish the task, full
     * fence, IdleWorkers.signal(), skipped when the task before it in its shard is still queued
     * (InjectionQueue I4: whoever takes that one takes this one or signals).
     *
     * runState: RUNNING -> SHUTDOWN -> STOP, monotonic (CAS). SHUTDOWN rejects outside submissions;
     * STOP makes workers exit (reached from SHUTDOWN when the pool is quiescent, or by shutdownNow).
     * Quiescence is detected by the last worker to park: with every worker registered as parked, no
     * task is running, so nothing can be submitted from inside; outside submissions are rejected,
     * and one that raced with shutdown re-checks runState after its offer and takes its task back.
     * That parker checks the queues again after it has read the shutdown: a submission accepted
     * just before the shutdown (its read of RUNNING preceded the shutdown's CAS) may have been
     * published after the parker's first check, but before its read of the shutdown.
     */

    private static final int RUNNING = 0;
    static final int SHUTDOWN = 1; // package-private: tests stop a shutdown after its first step
    private static final int STOP = 2;

    private static final AtomicInteger POOL_IDS = new AtomicInteger();

    final Worker[] workers;
    final InjectionQueue injection;
    final IdleWorkers idle;
    /** Submissions refused because the pool was shut down ({@link #stats()}). */
    private final LongAdder rejections = new LongAdder();
    private final Set<TimerThread.Timer> timers = TimerThread.newRegistry();
    /** Where the timer thread hands a due timer: one object for all timers, not one per schedule. */
    private final java.util.concurrent.Executor fireTarget = this::fire;
    private final CountDownLatch exited;
    private final String name;
    private volatile int runState;

    /** A pool whose workers are not started yet ({@link #create} starts them; tests may not). */
    WorkStealingPool(int n, String prefix) {
        this.name = prefix;
        this.idle = new IdleWorkers(n);
        this.injection = new InjectionQueue(n);
        this.exited = new CountDownLatch(n);
        this.workers = new Worker[n];
        for (int i = 0; i < n; i++) {
            workers[i] = new Worker(this, i, prefix + "-worker-" + (i + 1));
        }
    }

    /**
     * Creates a pool of {@code workers} threads, named {@code coro-pool-N-worker-M}, and starts them.
     *
     * {@snippet :
     * WorkStealingPool pool = WorkStealingPool.create(Runtime.getRuntime().availableProcessors());
     * }
     *
     * @param workers the number of worker threads, from 1 to 32767
     * @return a running pool
     * @throws IllegalArgumentException if {@code workers} is not positive or above 32767
     */
    public static WorkStealingPool create(int workers) {
        checkWorkers(workers);
        return create(workers, "coro-pool-" + POOL_IDS.incrementAndGet());
    }

    /**
     * Creates a pool of {@code workers} threads named {@code namePrefix-worker-M} (M from 1), and
     * starts them.
     *
     * {@snippet :
     * WorkStealingPool cpu = WorkStealingPool.create(2, "compute"); // threads compute-worker-1, -2
     * }
     *
     * @param workers the number of worker threads, from 1 to 32767
     * @param namePrefix the start of every worker's thread name
     * @return a running pool
     * @throws IllegalArgumentException if {@code workers} is not positive or above 32767
     * @throws NullPointerException if {@code namePrefix} is null
     */
    public static WorkStealingPool create(int workers, String namePrefix) {
        checkWorkers(workers);
        Objects.requireNonNull(namePrefix, "namePrefix");
        WorkStealingPool pool = new WorkStealingPool(workers, namePrefix);
        for (Worker w : pool.workers) {
            w.start();
        }
        return pool;
    }

    private static void checkWorkers(int workers) {
        if (workers <= 0) {
            throw new IllegalArgumentException("workers must be > 0, was " + workers);
        }
        if (workers > IdleWorkers.MAX_WORKERS) {
            throw new IllegalArgumentException(
                    "workers must be <= " + IdleWorkers.MAX_WORKERS + ", was " + workers);
        }
    }

    /**
     * Runs {@code task} on one of the workers, soon. Called from a worker of this pool, the task goes
     * to that worker's queue (and is accepted even after {@link #shutdown()}, until the pool stops);
     * called from any other thread, to the shared injection queue.
     *
     * {@snippet :
     * pool.execute(() -> System.out.println("on " + Thread.currentThread().getName()));
     * }
     *
     * @param task what to run
     * @throws NullPointerException if {@code task} is null
     * @throws RejectedExecutionException if the pool is shut down (from outside the pool) or stopped
     */
    @Override
    public void execute(Runnable task) {
        if (task == null) {
            throw new NullPointerException("task");
        }
        if (Thread.currentThread() instanceof Worker w && w.pool == this) {
            if (runState >= STOP) {
                throw rejected();
            }
            w.submitLocal(task);
            return;
        }
        if (runState != RUNNING) {
            throw rejected();
        }
        int shard = injection.shardOfCurrentThread();
        boolean wake = injection.offer(task, shard); // a volatile store: the fence of IdleWorkers I3
        if (runState != RUNNING) {
            if (injection.remove(task, shard)) {
                idle.signal(); // for the task after ours, if its submitter counted on ours (InjectionQueue I4)
                throw rejected(); // raced with shutdown and the pool may be terminating: take it back
            }
            wake = true;
        }
        if (wake) { // else the task before ours is still queued, and its taker takes or signals for ours
            idle.signal();
        }
    }

    /**
     * Runs {@code task} on this pool once {@code delay} has passed; never early. The shared timer
     * thread waits for the delay, then submits the task as if from outside the pool. (The timers of
     * Coro's own gates only post a request to a lock-free owner; those run on the timer thread itself,
     * so that a long queue of work does not make a gate's deadline or ready time late.)
     *
     * {@snippet :
     * Cancellable timeout = pool.schedule(() -> System.out.println("too slow"), Duration.ofSeconds(1));
     * // ... the awaited thing happened in time:
     * timeout.cancel();
     * }
     *
     * @param task what to run
     * @param delay how long to wait; zero or negative means as soon as possible
     * @return a handle whose {@code cancel()} prevents the run if the timer has not fired; a
     *     cancelled timer keeps no reference to {@code task}
     * @throws NullPointerException if {@code task} or {@code delay} is null
     * @throws RejectedExecutionException if the pool is shut down; timers pending at shutdown are
     *     cancelled
     */
    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        if (task == null) {
            throw new NullPointerException("task");
        }
        if (delay == null) {
            throw new NullPointerException("delay");
        }
        return scheduleNanos(task, Durations.toNanos(delay));
    }

    /**
     * Runs {@code task} on this pool once {@code delay} {@code unit}s have passed; never early. As
     * {@link #schedule(Runnable, Duration)}, without allocating a {@link Duration}.
     *
     * {@snippet :
     * Cancellable timeout = pool.schedule(() -> System.out.println("too slow"), 1, TimeUnit.SECONDS);
     * }
     *
     * @param task what to run
     * @param delay how long to wait, in {@code unit}s; zero or negative means as soon as possible
     * @param unit the unit of {@code delay}
     * @return a handle whose {@code cancel()} prevents the run if the timer has not fired
     * @throws NullPointerException if {@code task} or {@code unit} is null
     * @throws RejectedExecutionException if the pool is shut down; timers pending at shutdown are
     *     cancelled
     */
    @Override
    public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        if (task == null) {
            throw new NullPointerException("task");
        }
        if (unit == null) {
            throw new NullPointerException("unit");
        }
        return scheduleNanos(task, Math.max(0, unit.toNanos(delay)));
    }

    private Cancellable scheduleNanos(Runnable task, long delayNanos) {
        if (runState != RUNNING) {
            throw rejected();
        }
        TimerThread.Timer timer = TimerThread.schedule(task, delayNanos, fireTarget, timers);
        if (runState != RUNNING) { // raced with shutdown's cancelAll
            timer.cancel();
            throw rejected();
        }
        return timer;
    }

    /** The pool's name (its workers' thread-name prefix), for its JFR events. */
    String name() {
        return name;
    }

    private void fire(Runnable task) {
        if (runState != RUNNING) {
            TimerThread.dropped(task); // a timer that fired while shutdown cancelled it: dropped like the others
            return;
        }
        if (task instanceof TimerRequest request) {
            request.run(); // on the timer thread, at its time: not behind the queued work
            return;
        }
        execute(task);
    }

    /**
     * Returns {@link System#nanoTime()}: this pool's timers use the system clock.
     *
     * @return the current time in nanoseconds
     */
    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    /**
     * Returns whether the calling thread is one of this pool's workers.
     *
     * {@snippet :
     * pool.execute(() -> { assert pool.isCurrent(); });
     * }
     *
     * @return {@code true} on this pool's worker threads, {@code false} elsewhere
     */
    @Override
    public boolean isCurrent() {
        return Thread.currentThread() instanceof Worker w && w.pool == this;
    }

    /**
     * Returns the number of worker threads.
     *
     * @return the worker count given at creation
     */
    public int workers() {
        return workers.length;
    }

    /**
     * What the pool is doing, for monitoring (a metrics binder reads it on each scrape).
     *
     * @param workers the worker threads
     * @param running the workers running a task, neither parked nor searching for work
     * @param queued the tasks submitted and not yet started: the pool's queue for outside
     *     submissions and every worker's own queue
     * @param steals the times a worker took tasks from another worker's queue, since creation
     * @param parks the times a worker parked with nothing to do, since creation
     * @param rejected the submissions refused because the pool was shut down, since creation
     */
    public record Stats(int workers, int running, long queued, long steals, long parks, long rejected) {}

    /**
     * Returns a snapshot of the pool's activity. Each figure is read on its own while the pool runs,
     * so they are exact only when it is quiet; counting the queue walks it, so call this for
     * monitoring (every few seconds), not per task.
     *
     * {@snippet :
     * WorkStealingPool.Stats s = pool.stats();
     * System.out.println(s.running() + " running, " + s.queued() + " queued");
     * }
     *
     * @return the snapshot
     */
    public Stats stats() {
        long queued = injection.size();
        long steals = 0;
        long parks = 0;
        for (Worker w : workers) {
            queued += w.queue.size();
            steals += w.steals();
            parks += w.parks();
        }
        return new Stats(workers.length, idle.running(), queued, steals, parks, rejections.sum());
    }

    /**
     * Stops accepting work from outside the pool and drops pending timers (as the class comment
     * says); accepted work, and the work it submits from the pool's threads, still runs. Does not
     * wait: see {@link #awaitTermination(Duration)} and {@link #close()}. Idempotent.
     *
     * {@snippet :
     * pool.shutdown();
     * pool.execute(() -> {}); // throws RejectedExecutionException
     * }
     */
    public void shutdown() {
        advanceRunState(SHUTDOWN);
        TimerThread.cancelAll(timers);
        // parked workers look once more; the last to park again finds the pool quiescent and
        // terminates it (Worker.park)
        idle.wakeEveryone();
    }

    /**
     * Stops the pool now: rejects all further work, drops pending timers, removes the queued work
     * that has not started and returns it, and interrupts the workers (running tasks see the
     * interrupt; they are not otherwise stopped). Best effort, like {@code ExecutorService}'s: a task
     * a worker was taking at that moment may still run, or neither run nor be returned. Idempotent.
     *
     * {@snippet :
     * List<Runnable> neverRan = pool.shutdownNow();
     * }
     *
     * @return the tasks that were queued and will now never run, in no particular order
     */
    public List<Runnable> shutdownNow() {
        advanceRunState(STOP);
        TimerThread.cancelAll(timers);
        List<Runnable> dropped = new ArrayList<>();
        injection.drainTo(dropped);
        Runnable t;
        WorkQueue sink = new WorkQueue(); // steal each worker's queue empty, a half at a time
        for (Worker w : workers) {
            while ((t = w.queue.stealHalfInto(sink)) != null) {
                if (t == WorkQueue.CONTENDED) {
                    Thread.onSpinWait(); // a worker is stealing from it; it will be done soon
                    continue;
                }
                dropped.add(t);
                while ((t = sink.pop()) != null) {
                    dropped.add(t);
                }
            }
        }
        idle.wakeEveryone();
        for (Worker w : workers) {
            w.interrupt();
        }
        return dropped;
    }

    /**
     * Returns whether {@link #shutdown()} or {@link #shutdownNow()} has been called.
     *
     * @return {@code true} once shut down
     */
    public boolean isShutdown() {
        return runState >= SHUTDOWN;
    }

    /**
     * Returns whether the pool has shut down and every worker thread has exited.
     *
     * @return {@code true} once terminated
     */
    public boolean isTerminated() {
        return exited.getCount() == 0;
    }

    /**
     * Waits until the pool has terminated (after a shutdown) or {@code timeout} has passed.
     *
     * {@snippet :
     * pool.shutdown();
     * if (!pool.awaitTermination(Duration.ofSeconds(5))) {
     *     pool.shutdownNow();
     * }
     * }
     *
     * @param timeout how long to wait at most
     * @return {@code true} if the pool terminated, {@code false} if the time ran out first
     * @throws InterruptedException if the calling thread is interrupted while waiting
     * @throws NullPointerException if {@code timeout} is null
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        return exited.await(Durations.toNanos(timeout), TimeUnit.NANOSECONDS);
    }

    /**
     * Shuts the pool down and waits for queued work to finish and the workers to exit. If the
     * calling thread is interrupted while waiting, calls {@link #shutdownNow()}, keeps waiting, and
     * restores the interrupt status before returning. Called from one of this pool's own workers it
     * only shuts down (waiting for itself would never end). Idempotent.
     *
     * {@snippet :
     * try (WorkStealingPool pool = WorkStealingPool.create(2)) {
     *     pool.execute(() -> System.out.println("hello"));
     * } // "hello" has been printed here
     * }
     */
    @Override
    public void close() {
        shutdown();
        if (isCurrent()) {
            return;
        }
        boolean interrupted = false;
        while (!isTerminated()) {
            try {
                exited.await();
            } catch (InterruptedException e) {
                if (!interrupted) {
                    shutdownNow();
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Returns a description: the name, the run state, and the worker count.
     *
     * @return a string such as {@code WorkStealingPool[coro-pool-1, running, 4 workers]}
     */
    @Override
    public String toString() {
        String state = isTerminated() ? "terminated" : switch (runState) {
            case RUNNING -> "running";
            case SHUTDOWN -> "shutting down";
            default -> "stopping";
        };
        return "WorkStealingPool[" + name + ", " + state + ", " + workers.length + " workers]";
    }

    // --- for the workers, and for tests ---

    /** How many workers are registered as parked (for tests that wait for an idle pool). */
    int parkedWorkers() {
        return workers.length - IdleWorkers.unparked(idle.ctlVolatile());
    }

    boolean isStopping() {
        return runState >= STOP;
    }

    /** Whether any queue holds work (a racy snapshot, exact enough for the park re-check). */
    boolean hasWork() {
        if (!injection.isEmpty()) {
            return true;
        }
        for (Worker w : workers) {
            if (w.queue.size() > 0) {
                return true;
            }
        }
        return false;
    }

    /** Makes every worker exit: from a quiescent shut-down pool. */
    void terminate() {
        advanceRunState(STOP);
        idle.wakeEveryone();
    }

    void workerExited() {
        exited.countDown();
    }

    /** Tasks a worker's full queue moved out, queued as one injection-queue entry. */
    record Chunk(Runnable[] tasks) implements Runnable {
        /** Not normally called: workers unpack chunks. Runs the tasks in order. */
        @Override
        public void run() {
            for (Runnable t : tasks) {
                t.run();
            }
        }
    }

    /** Moves runState forward to {@code target} (shutdown's first step; tests call it alone). */
    void advanceRunState(int target) {
        for (;;) {
            int s = runState;
            if (s >= target || RUN_STATE.compareAndSet(this, s, target)) {
                return;
            }
        }
    }

    private RejectedExecutionException rejected() {
        rejections.increment();
        return new RejectedExecutionException(this + " is shut down");
    }

    private static final VarHandle RUN_STATE;

    static {
        try {
            RUN_STATE = MethodHandles.lookup().findVarHandle(WorkStealingPool.class, "runState", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
