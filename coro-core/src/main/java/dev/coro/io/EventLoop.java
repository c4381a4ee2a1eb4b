package dev.coro.io;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.TimerThread;
import dev.coro.scheduler.Scheduler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A {@link Scheduler} that owns one thread, one {@link Selector}, its timers and an inbox for work
 * submitted from other threads: the seed's single-threaded scheduler, made safe to feed from any
 * thread. Tasks started on it, their timers and their I/O ({@link AsyncChannel}, {@link AsyncSocket},
 * {@link AsyncServerSocket}) all run on the loop thread, so they need no locks among themselves.
 *
 * <p><b>Order.</b> Runnables given to {@link #execute} run one at a time on the loop thread, in
 * submission order: each thread's submissions in its program order, and a submission that
 * happens-before another runs first. Timers run in deadline order (equal deadlines in the order the
 * loop received them).
 *
 * <p><b>Timers</b> ({@link #schedule}) fire on the loop thread, never early: a timer runs only once
 * {@link #nanoTime()} has reached its deadline. A cancelled timer never runs and the loop forgets it
 * ({@link #pendingTimers()} counts it no more once the loop has removed it, which happens before the
 * loop runs anything submitted after the cancel returned). Adding and cancelling are O(log n) (a
 * 4-ary heap indexed by slot), so a million pending timers are cheap. A timer scheduled from another
 * thread while the loop sleeps wakes it only if the timer is due before the loop's current wake-up
 * time, and the loop then sleeps no longer than the new deadline.
 *
 * <p><b>Failures.</b> A runnable (task or timer) that throws does not stop the loop: the exception
 * goes to the loop thread's {@linkplain Thread#getUncaughtExceptionHandler() uncaught-exception
 * handler} and the loop goes on.
 *
 * <p><b>Where waiting tasks resume.</b> A task running on the loop that waits for anything (an
 * {@code Event}, another task, I/O, another loop) resumes on the loop: inline when the waker runs on
 * the loop thread, otherwise through the inbox ({@link #isCurrent()} and Coro's resumption rule).
 *
 * <p><b>Shutdown.</b> {@link #shutdown()} is graceful: new work is refused with
 * {@link RejectedExecutionException} (from any thread, the loop's own included), work already queued
 * still runs, pending timers are dropped (they never run; their {@code cancel()} answers false), and
 * pending I/O operations complete on the cancelled channel; then the thread closes the selector and
 * exits. {@link #shutdownNow()} does the same but drops queued runnables instead of running them
 * (queued I/O operations still complete cancelled). Registered channels are not closed: their owners
 * close them. {@link #close()} is {@code shutdown()} followed by waiting for the thread to end.
 * A {@code Task.delay} on the loop is a timer like any other: if the loop shuts down under it, its
 * task waits until its own cancellation (the {@link Scheduler} interface gives a timer no way to
 * report "dropped").
 *
 * <p><b>Thread.</b> A platform thread named {@code coro-loop-N} (or the name given), non-daemon like
 * the JDK's executors: close the loop to let the JVM exit. Its interrupt status is cleared before
 * every wait of the selector.
 *
 * <p><b>Thread-safety and memory effects.</b> All public methods may be called from any thread.
 * Actions of a thread before it submits a runnable or schedules a timer happen-before the runnable
 * runs.
 *
 * {@snippet :
 * try (EventLoop loop = EventLoop.start()) {
 *     loop.execute(() -> System.out.println("on " + Thread.currentThread().getName()));
 *     String done = Task.delay(Duration.ofMillis(10))
 *             .map(ignored -> "after 10 ms, on " + Thread.currentThread().getName())
 *             .startOn(loop)
 *             .join();
 *     System.out.println(done);
 * } // close(): shutdown, then wait for the loop thread to end
 * }
 */
public final class EventLoop implements Scheduler, AutoCloseable {
    /* Implementation overview.
     *
     * The loop is the only writer of its state: the timer heap, the selection keys' interest sets,
     * the pending I/O operations (IoHandle) and the ready-key array are touched by the loop thread
     * alone (assert inEventLoop()). Other threads reach it through two lock-free words: the inbox
     * (Inbox: its own overview) and wakeAt, below. runState is a third, monotonic one.
     *
     * 1. Representation. wakeAt (volatile long):
     *      AWAKE (-1)    the loop is not in, nor about to enter, a blocking select; it will look at
     *                    the inbox and runState before it blocks again
     *      FOREVER       the loop is entering or in a select with no timeout
     *      d >= 0        the loop is entering or in a select that times out at deadline d
     *                    (loop-relative nanoseconds, see nanoTime())
     *    runState (volatile int): RUNNING -> SHUTDOWN -> STOP, monotonic (CAS); terminated is the
     *    latch.
     *
     * 2. Transitions of wakeAt.
     *      AWAKE -> d / FOREVER   loop, before blocking: volatile write, then re-check the inbox and
     *                             runState; if either shows work, back to AWAKE and selectNow
     *      d / FOREVER -> AWAKE   loop, after select returns: volatile write
     *      d / FOREVER -> AWAKE   a submitter, by CAS, if its work is due before d (a task: always;
     *                             a timer: if its deadline is earlier); the CAS winner alone calls
     *                             selector.wakeup(), exactly once
     *
     * 3. Linearization points. execute/schedule: the inbox push CAS (or the read of runState that
     *    rejects). shutdown: the runState CAS. A timer's cancel: its task exchange (LoopTimer).
     *
     * 4. Invariants.
     *    I1 (no lost wakeup) when the loop blocks in select, every node pushed before its last
     *       inbox check is being handled, and for every node pushed after it, its pusher reads a
     *       parked wakeAt and either finds its deadline no earlier than the loop's (the loop wakes
     *       on time by itself) or wins a CAS to AWAKE and calls wakeup().
     *    I2 (one wakeup per park) only a CAS from a parked value to AWAKE calls wakeup(), and the
     *       loop sets a parked value once per park: a burst of submissions to a parked loop makes one
     *       wakeup() call, and submissions to a loop that is awake make none.
     *    I3 the loop writes a parked value only right before an inbox check, and AWAKE right after
     *       select returns.
     *
     * 5. Memory ordering and the lost-wakeup argument. The push (a CAS on Inbox.head) and then the
     *    read of wakeAt on the submitter's side; the write of wakeAt and then the read of Inbox.head
     *    on the loop's side: all four are volatile, so they are totally ordered (synchronization
     *    order), and of the two reads at least one sees the other side's write (the Dekker pattern).
     *    Either the loop sees the node and does not block, or the submitter sees the parked value
     *    and wakes the loop. wakeup() is sticky: called before the select starts, it makes the
     *    select return at once, so the CAS winner may call it at any time after its CAS.
     *
     *    Why the Netty wakenUp race cannot happen here. Netty 4.0 kept a boolean wakenUp: the loop
     *    set it false before select and submitters did CAS(false, true) + wakeup(). If a submitter's
     *    wakeup came between the loop's set(false) and its select, the select returned at once, but
     *    wakenUp stayed true until the loop's next set(false), so every submitter in between failed
     *    its CAS and called no wakeup while the loop, back in select, blocked on their tasks. The
     *    flaw is that the "someone already woke it" state outlived the wakeup it stood for. Here the
     *    state that suppresses wakeups is AWAKE, and by I3 the loop leaves AWAKE only by writing a
     *    parked value immediately followed by an inbox check: every submitter that saw AWAKE pushed
     *    before that write (synchronization order), so the check sees its node. A consumed wakeup
     *    leaves nothing stale behind; a wakeup() whose select already returned for another reason
     *    only makes one later select return early (spurious, harmless).
     *
     *    Timers: a submitter that skips the wakeup because its deadline is no earlier than the
     *    parked deadline d relies on the loop waking at d by itself (the select timeout is rounded
     *    up to whole milliseconds, so never before d) and then draining the inbox before it blocks.
     *
     * 6. Progress. Submitters: lock-free (the inbox push and at most a few CASes on wakeAt, each
     *    failing only because the loop moved on). The loop: never blocks on a submitter.
     *
     * 7. Cancellation. A timer cancelled on the loop thread leaves the heap at once; from another
     *    thread, through a removal node pushed after the exchange that decided the cancel, plus a
     *    wake so that the heap forgets it promptly. Pending I/O: IoHandle.
     *
     * 8. Resumption. The loop runs tasks itself; a waiter woken on the loop thread resumes through
     *    the trampoline (Resume.dispatch), so no chain of completions deepens the loop's stack.
     *
     * 9. References. Seed 004 (pump_events: poll, then resume the coroutines that are ready);
     *    Netty's SingleThreadEventExecutor and NioEventLoop (an MPSC task queue beside a selector,
     *    and the wakenUp race described in its comments); the JDK's Selector.wakeup contract.
     */

    private static final AtomicInteger IDS = new AtomicInteger();

    /** wakeAt: the loop is awake and will check the inbox before it blocks. */
    static final long AWAKE = -1;
    /** wakeAt and timer deadlines: no deadline (a select without timeout; a timer that never fires). */
    static final long FOREVER = Long.MAX_VALUE;
    /** A wake request that is due before any park deadline. */
    private static final long NOW = Long.MIN_VALUE;

    /** runState: accepting work. */
    private static final int RUNNING = 0;
    /** runState: graceful shutdown requested. */
    private static final int SHUTDOWN = 1;
    /** runState: immediate shutdown requested. */
    private static final int STOP = 2;

    private final Thread thread;
    final Selector selector;
    private final Inbox inbox = new Inbox();
    private final long origin = System.nanoTime();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private volatile long wakeAt = AWAKE;
    private volatile int runState;
    /** The heap's size, published by the loop after each change, for other threads. */
    private volatile int publishedTimers;
    /** How many times a submitter called selector.wakeup() (tests check the burst property). */
    final AtomicLong wakeups = new AtomicLong();
    /** How many times the loop announced a park (wrote a parked wakeAt); written by the loop only. */
    volatile long parks;

    // ---- loop-confined
    private final TimerHeap timers = new TimerHeap();
    private SelectionKey[] ready = new SelectionKey[64];
    private int readyCount;
    private final Consumer<SelectionKey> collectReady = this::collect;

    private EventLoop(String name) {
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("EventLoop: cannot open a selector", e);
        }
        this.thread = new Thread(this::run, name);
    }

    /**
     * Starts a loop on a new thread named {@code coro-loop-N}.
     *
     * {@snippet :
     * EventLoop loop = EventLoop.start();
     * }
     *
     * @return the running loop
     * @throws UncheckedIOException if the selector cannot be opened
     */
    public static EventLoop start() {
        return start("coro-loop-" + IDS.incrementAndGet());
    }

    /**
     * Starts a loop on a new thread named {@code threadName}.
     *
     * {@snippet :
     * EventLoop loop = EventLoop.start("network");
     * }
     *
     * @param threadName the loop thread's name
     * @return the running loop
     * @throws NullPointerException if {@code threadName} is null
     * @throws UncheckedIOException if the selector cannot be opened
     */
    public static EventLoop start(String threadName) {
        Objects.requireNonNull(threadName, "threadName");
        EventLoop loop = new EventLoop(threadName);
        loop.thread.start();
        return loop;
    }

    /**
     * Returns whether the calling thread is this loop's thread: the same as {@link #isCurrent()}.
     *
     * @return whether called on the loop
     */
    public boolean inEventLoop() {
        return Thread.currentThread() == thread;
    }

    /**
     * Returns whether the calling thread is this loop's thread.
     *
     * @return whether called on the loop
     */
    @Override
    public boolean isCurrent() {
        return Thread.currentThread() == thread;
    }

    /**
     * Runs {@code task} on the loop thread, after the runnables submitted before it.
     *
     * {@snippet :
     * loop.execute(() -> System.out.println("on the loop"));
     * }
     *
     * @param task what to run
     * @throws NullPointerException if {@code task} is null
     * @throws RejectedExecutionException if the loop is shut down
     */
    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (runState != RUNNING || !inbox.push(new TaskNode(task))) {
            throw rejected();
        }
        if (Thread.currentThread() != thread) {
            wakeFor(NOW);
        }
    }

    /**
     * Runs {@code task} on the loop thread once {@code delay} has passed on {@link #nanoTime()};
     * never early.
     *
     * {@snippet :
     * Cancellable timer = loop.schedule(() -> System.out.println("tick"), Duration.ofMillis(100));
     * timer.cancel(); // true: it will not run, and the loop forgets it
     * }
     *
     * @param task what to run
     * @param delay how long to wait; zero or negative means as soon as possible
     * @return a handle whose {@code cancel()} prevents the run if it has not started and removes
     *     the timer from the loop; the handle then holds no reference to {@code task}
     * @throws NullPointerException if {@code task} or {@code delay} is null
     * @throws RejectedExecutionException if the loop is shut down
     */
    @Override
    public Cancellable schedule(Runnable task, Duration delay) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(delay, "delay");
        if (runState != RUNNING) {
            throw rejected();
        }
        long now = relativeNanos();
        long deadline = now + TimerThread.toNanos(delay);
        if (deadline < now) {
            deadline = FOREVER; // overflow: saturate
        }
        LoopTimer timer = new LoopTimer(this, task, deadline);
        if (Thread.currentThread() == thread) {
            timers.add(timer);
            timersChanged();
            return timer;
        }
        if (!inbox.push(timer)) {
            timer.take();
            throw rejected();
        }
        wakeFor(deadline);
        return timer;
    }

    /**
     * Returns the loop's clock: {@link System#nanoTime()}. Timers fire when it reaches their
     * deadline.
     *
     * @return the current time in nanoseconds (only differences are meaningful)
     */
    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    /**
     * Returns the number of timers the loop holds: scheduled and neither fired nor removed. A timer
     * scheduled from another thread counts from when the loop takes it in; a cancelled one stops
     * counting when the loop removes it. Both happen before the loop runs anything submitted after
     * the {@code schedule} or {@code cancel} call returned, so this is exact from within such a
     * runnable (and from any thread that a runnable run after them has handed the answer to).
     *
     * @return the number of pending timers
     */
    public int pendingTimers() {
        return Thread.currentThread() == thread ? timers.size() : publishedTimers;
    }

    /**
     * Starts a graceful shutdown: from now on new work is refused with
     * {@link RejectedExecutionException}; work already queued still runs; pending timers are dropped;
     * pending I/O operations complete on the cancelled channel; then the loop thread exits. Returns
     * at once; idempotent.
     */
    public void shutdown() {
        advanceRunState(SHUTDOWN);
    }

    /**
     * Starts an immediate shutdown: like {@link #shutdown()}, but runnables still queued are dropped
     * without running (queued I/O operations still complete cancelled). Returns at once; idempotent.
     */
    public void shutdownNow() {
        advanceRunState(STOP);
    }

    /**
     * Waits until the loop thread has finished its shutdown, or {@code timeout} passes.
     *
     * @param timeout how long to wait at most
     * @return whether the loop terminated
     * @throws InterruptedException if the calling thread is interrupted while waiting
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalStateException if called on the loop thread (it would wait for itself)
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        if (inEventLoop()) {
            throw new IllegalStateException("awaitTermination: called on the loop thread, which would wait for itself");
        }
        return terminated.await(TimerThread.toNanos(timeout), TimeUnit.NANOSECONDS);
    }

    /**
     * Returns whether {@link #shutdown()} or {@link #shutdownNow()} has been called.
     *
     * @return whether shut down
     */
    public boolean isShutdown() {
        return runState != RUNNING;
    }

    /**
     * Returns whether the loop thread has finished its shutdown.
     *
     * @return whether terminated
     */
    public boolean isTerminated() {
        return terminated.getCount() == 0;
    }

    /**
     * Shuts the loop down gracefully ({@link #shutdown()}) and waits until its thread has ended. If
     * the waiting thread is interrupted, the shutdown becomes immediate ({@link #shutdownNow()}), the
     * wait goes on, and the interrupt status is set again on return. Called on the loop thread
     * itself, it only starts the shutdown (the thread ends after the current runnable). Idempotent.
     */
    @Override
    public void close() {
        shutdown();
        if (inEventLoop()) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                terminated.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
                shutdownNow();
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "EventLoop[" + thread.getName() + (isTerminated() ? ", terminated" : isShutdown() ? ", shut down" : "")
                + "]";
    }

    // ------------------------------------------------------------------ package-private hooks

    /** The loop thread (tests). */
    Thread thread() {
        return thread;
    }

    /** Whether the loop accepts work. */
    boolean isRunning() {
        return runState == RUNNING;
    }

    /** Whether the loop is in (or about to enter) a blocking select (tests). */
    boolean isParked() {
        return wakeAt != AWAKE;
    }

    /** Hands an I/O operation to the loop from another thread; false if the loop refuses it. */
    boolean submit(IoOp<?> op) {
        if (runState != RUNNING || !inbox.push(op)) {
            return false;
        }
        wakeFor(NOW);
        return true;
    }

    /** Runs {@code action} on the loop (inline if called there); false if the loop is shut down. */
    boolean runOnLoop(Runnable action) {
        if (inEventLoop()) {
            action.run();
            return true;
        }
        if (!inbox.push(new TaskNode(action))) {
            return false;
        }
        wakeFor(NOW);
        return true;
    }

    /** A timer's cancel() won: make the loop forget it. */
    void timerCancelled(LoopTimer t) {
        if (Thread.currentThread() == thread) {
            if (timers.remove(t)) {
                timersChanged();
            }
        } else if (inbox.push(new TimerRemoval(t))) {
            wakeFor(NOW);
        } // else: the loop is terminating and drops its whole heap
    }

    /** Loop-relative time: nanoseconds since the loop was created. */
    long relativeNanos() {
        return System.nanoTime() - origin;
    }

    /** Reports {@code e} to the loop thread's uncaught-exception handler; never throws. */
    void report(Throwable e) {
        Thread t = Thread.currentThread();
        try {
            t.getUncaughtExceptionHandler().uncaughtException(t, e);
        } catch (Throwable ignored) {
            // nothing left to report to; keep the loop alive
        }
    }

    // ------------------------------------------------------------------ submitters' half

    /** Wakes the loop if it is parked past {@code deadline} (I1, I2). */
    private void wakeFor(long deadline) {
        for (;;) {
            long w = wakeAt;
            if (w == AWAKE || deadline >= w) {
                return; // awake: it checks the inbox before it blocks; or it wakes by itself in time
            }
            if (WAKE_AT.compareAndSet(this, w, AWAKE)) {
                wakeups.incrementAndGet();
                selector.wakeup();
                return;
            }
        }
    }

    private void advanceRunState(int target) {
        for (;;) {
            int s = runState;
            if (s >= target) {
                break;
            }
            if (RUN_STATE.compareAndSet(this, s, target)) {
                break;
            }
        }
        if (Thread.currentThread() != thread) {
            wakeFor(NOW);
        }
    }

    private RejectedExecutionException rejected() {
        return new RejectedExecutionException(this + " is shut down");
    }

    // ------------------------------------------------------------------ the loop

    private void run() {
        try {
            while (runState == RUNNING) {
                select();
                processReady();
                fireDueTimers();
                runInbox();
            }
        } catch (Throwable fatal) { // the selector failed: nothing more can be waited for
            report(fatal);
            advanceRunState(STOP);
        } finally {
            try {
                terminate();
            } finally {
                terminated.countDown();
            }
        }
    }

    private void select() throws IOException {
        assert inEventLoop();
        long deadline = timers.isEmpty() ? FOREVER : timers.peek().deadline;
        long now = relativeNanos();
        if (!inbox.isEmpty() || deadline <= now) {
            selector.selectNow(collectReady);
            return;
        }
        Thread.interrupted(); // an interrupt would make every select return at once
        parks++; // the only writer
        WAKE_AT.setVolatile(this, deadline); // I3: parked value, then the check
        if (!inbox.isEmpty() || runState != RUNNING) {
            WAKE_AT.setVolatile(this, AWAKE);
            selector.selectNow(collectReady);
            return;
        }
        if (deadline == FOREVER) {
            selector.select(collectReady);
        } else {
            long nanos = deadline - now;
            long millis = nanos / 1_000_000 + (nanos % 1_000_000 == 0 ? 0 : 1); // round up: never early
            selector.select(collectReady, millis);
        }
        WAKE_AT.setVolatile(this, AWAKE); // I3
    }

    private void collect(SelectionKey key) {
        if (readyCount == ready.length) {
            ready = Arrays.copyOf(ready, readyCount * 2);
        }
        ready[readyCount++] = key;
    }

    private void processReady() {
        assert inEventLoop();
        int n = readyCount;
        if (n == 0) {
            return;
        }
        SelectionKey[] keys = ready;
        readyCount = 0;
        for (int i = 0; i < n; i++) {
            SelectionKey key = keys[i];
            keys[i] = null;
            if (key.attachment() instanceof IoHandle h) {
                try {
                    h.onReady(key);
                } catch (Throwable e) {
                    report(e);
                }
            }
        }
    }

    private void fireDueTimers() {
        assert inEventLoop();
        if (timers.isEmpty()) {
            return;
        }
        long now = relativeNanos();
        LoopTimer t;
        while ((t = timers.peek()) != null && t.deadline <= now) {
            timers.poll();
            timersChanged();
            Runnable task = t.take();
            if (task != null) {
                runTask(task);
            }
        }
    }

    private void runInbox() {
        assert inEventLoop();
        Inbox.Node n = inbox.takeAll();
        int sinceTimers = 0;
        while (n != null) {
            Inbox.Node next = n.next;
            n.next = null;
            dispatch(n, false);
            n = next;
            if (++sinceTimers == 256) { // a long batch (a flood of new timers) does not delay due ones
                sinceTimers = 0;
                fireDueTimers();
            }
        }
    }

    private void dispatch(Inbox.Node n, boolean dropTasks) {
        if (n instanceof TaskNode t) {
            if (!dropTasks) {
                runTask(t.task);
            }
        } else if (n instanceof LoopTimer t) {
            if (runState != RUNNING) {
                t.take(); // shutting down: dropped
            } else if (t.isPending()) {
                timers.add(t);
                timersChanged();
            } // else cancelled before it arrived: its removal node finds nothing (LoopTimer I2)
        } else if (n instanceof TimerRemoval r) {
            if (timers.remove(r.timer)) {
                timersChanged();
            }
        } else if (n instanceof IoOp<?> op) {
            op.handle.start(op); // completes cancelled once shutting down
        } else {
            throw new AssertionError("unknown inbox node " + n);
        }
    }

    private void runTask(Runnable task) {
        try {
            task.run();
        } catch (Throwable e) {
            report(e);
        }
    }

    private void timersChanged() {
        PUBLISHED_TIMERS.setRelease(this, timers.size());
    }

    /** The end: pending I/O cancelled, timers dropped, the inbox closed and drained, selector closed. */
    private void terminate() {
        assert inEventLoop();
        boolean now = runState == STOP;
        List<SelectionKey> keys;
        try {
            keys = new ArrayList<>(selector.keys());
        } catch (RuntimeException closed) {
            keys = List.of();
        }
        for (SelectionKey key : keys) {
            if (key.attachment() instanceof IoHandle h) {
                try {
                    h.cancelAll();
                } catch (Throwable e) {
                    report(e);
                }
            }
        }
        for (LoopTimer t : timers.clear()) {
            t.take();
        }
        timersChanged();
        Inbox.Node n = inbox.close();
        while (n != null) {
            Inbox.Node next = n.next;
            n.next = null;
            try {
                dispatch(n, now);
            } catch (Throwable e) {
                report(e);
            }
            n = next;
        }
        for (LoopTimer t : timers.clear()) { // none can have been added; kept for safety
            t.take();
        }
        timersChanged();
        try {
            selector.close();
        } catch (IOException e) {
            report(e);
        }
    }

    /** A runnable in the inbox. */
    private static final class TaskNode extends Inbox.Node {
        final Runnable task;

        TaskNode(Runnable task) {
            this.task = task;
        }
    }

    /** A request, from another thread, to forget a cancelled timer. */
    private static final class TimerRemoval extends Inbox.Node {
        final LoopTimer timer;

        TimerRemoval(LoopTimer timer) {
            this.timer = timer;
        }
    }

    private static final VarHandle WAKE_AT;
    private static final VarHandle RUN_STATE;
    private static final VarHandle PUBLISHED_TIMERS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            WAKE_AT = l.findVarHandle(EventLoop.class, "wakeAt", long.class);
            RUN_STATE = l.findVarHandle(EventLoop.class, "runState", int.class);
            PUBLISHED_TIMERS = l.findVarHandle(EventLoop.class, "publishedTimers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
