package dev.coro.io;

import dev.coro.cancel.Cancellable;
import dev.coro.internal.Blocking;
import dev.coro.internal.CoroEvents;
import dev.coro.internal.Durations;
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
import java.util.concurrent.locks.LockSupport;
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
 * loop took them in). Timers and runnables are ordered by time only: a timer runs once it is due,
 * even if runnables submitted before it still wait behind a busy loop (a timer due within about a
 * millisecond of its {@code schedule} call from another thread travels with the runnables, behind
 * those its thread submitted before).
 *
 * <p><b>Timers</b> ({@link #schedule}) fire on the loop thread, never early: a timer runs only once
 * {@link #nanoTime()} has reached its deadline. A cancelled timer never runs and the loop forgets it
 * ({@link #pendingTimers()} counts it no more once the loop has removed it, which happens before the
 * loop runs anything submitted after the cancel returned). A timer due within about two seconds goes
 * into a timing wheel (one slot per tick of about a millisecond), and from another thread straight
 * into its slot, without a hop through the loop's queue; the loop sorts a slot's timers only a tick
 * before they can be due, one tick at a time, and fires them by exact deadline. Later timers go into a
 * 4-ary heap at once. So scheduling is O(1) for near timers and O(log n) for far ones, cancelling is
 * O(1) in the wheel and O(log n) in the heap, a loop that fell behind catches up a tick at a time
 * at the same cost per timer, and a burst of timers from another
 * thread does not keep the loop from firing the timers that come due meanwhile. A timer scheduled
 * from another thread while the loop sleeps wakes it only if the loop must act on it (fire it, or
 * sort its slot) before its current wake-up time, and the loop then sleeps no longer than that.
 * How late a due timer fires depends on how the loop sleeps: a loop with a channel registered sleeps
 * in its selector, whose timeout is whole milliseconds, so up to about a millisecond late; a loop
 * with no channel (a timer loop) sleeps on its thread, to within a quarter of a millisecond or the
 * operating system's timer slack, whichever is more.
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
 * still runs, pending timers are dropped (they never run; their {@code cancel()} answers false; a
 * timer task that is also a {@link Cancellable} is cancelled, as {@link Scheduler#schedule} says, so
 * a {@code Task.delay} or {@code timeout} waiting on the loop completes on the cancelled channel), and
 * pending I/O operations complete on the cancelled channel; then the thread closes the selector and
 * exits. The pending timers do not wait for their deadlines: shutdown is prompt, like the I/O.
 * {@link #shutdownNow()} does the same but drops queued runnables instead of running them (queued
 * I/O operations and dropped timers still complete cancelled). What completes cancelled resumes on
 * the loop thread during the shutdown, so a task waiting for the loop's timers or I/O finishes;
 * whatever it then submits to the loop is refused. Registered channels are not closed: their owners
 * close them. {@link #close()} is {@code shutdown()} followed by waiting for the thread to end.
 *
 * <p><b>Thread.</b> A platform thread named {@code coro-loop-N} (or the name given), non-daemon like
 * the JDK's executors: close the loop to let the JVM exit. Its interrupt status is cleared before
 * every wait of the selector. The loop thread does not block: Coro's blocking doors
 * ({@code Task.join()}, {@code Scope.joinBlocking()}, a gate's {@code call},
 * {@code Event.awaitBlocking()}, a channel's {@code sendBlocking}, ...) called on it throw
 * {@link IllegalStateException} at once, naming the loop, instead of stopping the only thread that
 * runs the loop's I/O, timers and continuations. Compose with {@code then}/{@code flatMap}, or block
 * on a virtual thread ({@code Task.onVirtualThread}) or a plain thread.
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
     * The loop is the only writer of its state: the timers (LoopTimers: run, heap, wheel cursor,
     * owned lists), the selection keys' interest sets, the pending I/O operations (IoHandle) and the
     * ready-key array are touched by the loop thread alone (assert inEventLoop()). Other threads
     * reach it through lock-free words, each with its own overview: the inbox (Inbox), the slots of
     * the timer wheel (TimerWheel) and the park word wakeAt (Parking). runState is one more,
     * monotonic.
     *
     * 1. Representation. inbox: runnables, I/O operations, timers that the wheel refused, removal
     *    requests of cancelled timers, in push order. wheel slots: timers pushed from other threads,
     *    per tick. park (Parking.wakeAt): AWAKE or the deadline of the loop's sleep. The loop sleeps
     *    in the selector, except a loop with no channel registered and a finite wake time, which
     *    sleeps on its thread (LockSupport.parkNanos, at least MIN_PARK_NANOS): the selector's
     *    timeout is in whole milliseconds, so a timer-only loop would fire up to a millisecond late.
     *    Only the loop thread registers channels, so none appears during such a sleep; a wakeup
     *    both wakes the selector and unparks the thread, and a stale one of either only ends the
     *    next sleep early (the loop goes round and sleeps again).
     *    runState (volatile int): RUNNING -> SHUTDOWN -> STOP, monotonic (CAS); terminated is the
     *    latch. One loop iteration: select (park if there is nothing to do), run the ready keys,
     *    run the inbox (firing due timers every 256 items), fire the due timers.
     *
     * 2. Transitions. A submitter makes its work visible, then calls park.wakeFor(due):
     *      execute, I/O                inbox push, then wakeFor(NOW)
     *      cancel of a timer           inbox push of a removal, then wakeFor(its deadline): never a
     *                                  wakeup, as the loop wakes by then anyway
     *      schedule, due after the     wheel push into its slot, then, unless it landed behind a
     *      next tick, slot on its tick timer whose push told the loop (TimerWheel I4), wakeFor(take
     *                                  time of the slot: a tick before the tick starts), then mark
     *                                  the timer told
     *      schedule, otherwise         inbox push, then wakeFor(deadline)
     *    The loop, before it sleeps: computes its wake time (the first heap deadline, or the take
     *    time of the first slot that holds anything, whichever is earlier; scanning the slots only
     *    if the wheel's dirty flag was set, which it clears first), then park(wake time) with
     *    hasWork(d) = inbox not empty, or runState not RUNNING, or (wheel dirty and, after clearing
     *    the flag, a rescan finds a slot to take before d). So pushes into later slots, the bulk of
     *    a burst, neither wake the loop nor keep it from sleeping.
     *
     * 3. Linearization points. execute/schedule: the inbox push CAS or the wheel push CAS (or the
     *    read of runState that rejects). shutdown: the runState CAS. A timer's cancel: its task
     *    exchange (LoopTimer).
     *
     * 4. Invariants.
     *    I1 (no lost wakeup; Parking I1) when the loop sleeps until d, every timer it holds or that
     *       was pushed before its check is due no earlier than d, or its slot's take time is no
     *       earlier than d; the inbox was empty at the check.
     *    I2 (one wakeup per park; Parking I2).
     *    I3 pollDue(now) answers null only when no timer held is due by now: it takes the next slot
     *       (sorted, into the run) whenever the run is empty and the slot's tick starts within a
     *       tick of now, and every timer of a slot not yet taken is due after those of the run
     *       (LoopTimers), so firing from the run and the heap, whichever is earlier, misses none.
     *
     * 5. Memory ordering. The Dekker pairs of the park protocol (Parking, part 5): (inbox push or
     *    wheel push that tells + dirty flag, then read wakeAt) against (write wakeAt, then read the
     *    inbox head, runState and the dirty flag); all volatile. A wheel push behind a told timer
     *    skips the pair: the push that told covers its slot (TimerWheel I4). The wheel's dirty
     *    flag is cleared before each scan of the slots (the one that computes the wake time, and
     *    the rescan of the re-check), so a telling push that a scan misses either sets the flag
     *    after the clear (and then reads the parked value written before it) or is seen by the
     *    re-check. Timer fields are published by the push that hands the timer over.
     *
     * 6. Progress. Submitters: lock-free (an inbox or wheel push and at most a few CASes on
     *    wakeAt, each failing only because the loop moved on). The loop: never blocks on a
     *    submitter.
     *
     * 7. Cancellation. A timer cancelled on the loop thread leaves the loop's structures at once;
     *    from another thread, through a removal node pushed after the exchange that decided the
     *    cancel, which the loop handles when it next wakes (no later than the timer's deadline; the
     *    timer has let go of its task already), so a cancel costs no wakeup. Pending I/O: IoHandle.
     *    At termination every timer still held is dropped: its task exchanged for null, and
     *    cancelled if it is a Cancellable (Scheduler.schedule's contract).
     *
     * 8. Resumption. The loop runs tasks itself; a waiter woken on the loop thread resumes through
     *    the trampoline (Resume.dispatch), so no chain of completions deepens the loop's stack.
     *
     * 9. References. Seed 004 (pump_events: poll, then resume the coroutines that are ready);
     *    Netty's SingleThreadEventExecutor and NioEventLoop (an MPSC task queue beside a selector);
     *    Varghese and Lauck's timing wheels, here only as a lazy sorting stage in front of a heap.
     */

    private static final AtomicInteger IDS = new AtomicInteger();

    /** Timer deadlines and wake times: none (a timer that never fires; a sleep without timeout). */
    static final long FOREVER = Parking.FOREVER;
    /**
     * The shortest sleep of a loop that sleeps on its thread (no channel to watch): finer wakes, one
     * per timer of a dense schedule, cost the threads that schedule more CPU than they save in
     * lateness (1,000,000 timers over a second: p99 lateness 1.86 ms with none, 0.81 to 0.95 ms
     * with this, against 1.28 to 1.44 ms sleeping in the selector's whole milliseconds).
     */
    static final long MIN_PARK_NANOS = 250_000;
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
    /** The last count of pending I/O operations made on the loop ({@link #pendingIoOperations()}). */
    private volatile int publishedIo;
    private final Inbox inbox = new Inbox();
    private final long origin = System.nanoTime();
    private final CountDownLatch terminated = new CountDownLatch(1);
    private final Parking park = new Parking();
    private final Sleeper sleeper = new Sleeper();
    private volatile int runState;
    /** How many timers the loop has taken in (heap and owned lists), published for other threads. */
    private volatile int publishedTimers;
    /** How many times a submitter called selector.wakeup() (tests check the burst property). */
    final AtomicLong wakeups = new AtomicLong();
    /** How many times the loop announced a park (wrote a parked wakeAt); written by the loop only. */
    volatile long parks;
    /** How many of those parks slept on the thread instead of the selector (tests); written by the loop only. */
    volatile long threadParks;

    // ---- loop-confined (apart from LoopTimers.offer and isDirty)
    private final LoopTimers timers = new LoopTimers();
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
     * never early. Costs O(1) for a delay within the wheel's span (about two seconds), O(log n)
     * beyond; from another thread it wakes the loop only if the loop must act on the timer before it
     * would wake anyway. If the loop shuts down first, the timer is dropped: the task never runs,
     * and a task that is also a {@link Cancellable} is cancelled, on the loop thread
     * ({@link Scheduler#schedule}).
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
        return scheduleNanos(task, Durations.toNanos(delay));
    }

    /**
     * Runs {@code task} on the loop thread once {@code delay} {@code unit}s have passed; never early.
     * As {@link #schedule(Runnable, Duration)}, without allocating a {@link Duration}.
     *
     * {@snippet :
     * Cancellable tick = loop.schedule(() -> System.out.println("tick"), 100, TimeUnit.MILLISECONDS);
     * }
     *
     * @param task what to run
     * @param delay how long to wait, in {@code unit}s; zero or negative means as soon as possible
     * @param unit the unit of {@code delay}
     * @return a handle whose {@code cancel()} prevents the run if it has not started and removes
     *     the timer from the loop
     * @throws NullPointerException if {@code task} or {@code unit} is null
     * @throws RejectedExecutionException if the loop is shut down
     */
    @Override
    public Cancellable schedule(Runnable task, long delay, TimeUnit unit) {
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(unit, "unit");
        return scheduleNanos(task, Math.max(0, unit.toNanos(delay))); // toNanos saturates
    }

    /** Both {@code schedule} forms: {@code delayNanos} is between 0 and {@link Long#MAX_VALUE}. */
    private Cancellable scheduleNanos(Runnable task, long delayNanos) {
        if (runState != RUNNING) {
            throw rejected();
        }
        long now = relativeNanos();
        long deadline = now + delayNanos;
        if (deadline < now) {
            deadline = FOREVER; // overflow: saturate
        }
        LoopTimer timer = new LoopTimer(this, task, deadline);
        if (Thread.currentThread() == thread) {
            timers.add(timer);
            timersChanged();
            return timer;
        }
        int pushed = timers.offer(timer, now); // into its tick's slot: the loop must take the slot by then
        if (pushed != TimerWheel.REFUSED) {
            if (pushed == TimerWheel.TELL) { // else it joined a timer whose push told the loop already
                wakeFor(timers.takeTime(deadline));
                timer.told();
            }
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
     * Returns the number of timers the loop holds: scheduled and neither fired nor removed. Called on
     * the loop thread, it is exact: it counts every timer whose {@code schedule} call returned and
     * whose removal (after a {@code cancel}) the loop has not yet processed; the loop processes a
     * removal before it runs anything submitted after the {@code cancel} call returned. So this is
     * exact from within such a runnable, and the answer may be handed to other threads. Called from
     * another thread, it returns the count the loop last published: after each change to the timers
     * it has taken in, and after each count on its own thread; timers pushed into the wheel from other
     * threads are taken in only when their tick comes (or at such a count), so this may leave them out.
     * It takes O(1), or on the loop thread O(wheel slots + timers pushed since the last count).
     *
     * @return the number of pending timers
     */
    public int pendingTimers() {
        if (Thread.currentThread() != thread) {
            return publishedTimers;
        }
        int n = timers.size();
        timersChanged();
        return n;
    }

    /**
     * Returns the asynchronous I/O operations (reads, writes, accepts, connects) waiting for their
     * channel to be ready. Called on the loop thread it counts them (O(registered channels)) and
     * publishes the count; called from another thread it returns the count last published, so a
     * monitor that wants it fresh counts on the loop (as {@code coro-micrometer}'s probe does).
     *
     * @return the pending I/O operations
     */
    public int pendingIoOperations() {
        if (Thread.currentThread() != thread) {
            return publishedIo;
        }
        int n = 0;
        for (SelectionKey k : selector.keys()) {
            if (k.isValid() && k.attachment() instanceof IoHandle h) {
                n += h.pendingCount();
            }
        }
        publishedIo = n;
        return n;
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
        return terminated.await(Durations.toNanos(timeout), TimeUnit.NANOSECONDS);
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
                thread.join(); // the latch opens just before the thread ends: join it, as promised
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
        return park.isParked();
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
            // no hurry: the loop wakes by the timer's own deadline (or its slot's take time) anyway,
            // and the cancelled timer no longer holds its task
            wakeFor(t.deadline);
        } // else: the loop is terminating and drops all its timers
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

    /** Wakes the loop if it is parked past {@code due} (I1, I2). */
    private void wakeFor(long due) {
        park.wakeFor(due, sleeper);
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
        Blocking.mark(this); // blocking doors refuse on the loop thread (Blocking): it runs what they would wait for
        try {
            while (runState == RUNNING) {
                CoroEvents.LoopIteration event = CoroEvents.OFF ? null : new CoroEvents.LoopIteration(); // JFR
                long selectStart = event != null && event.isEnabled() ? System.nanoTime() : 0;
                select();
                if (selectStart != 0) {
                    event.selectNanos = System.nanoTime() - selectStart;
                }
                if (event != null) {
                    event.begin();
                }
                processReady();
                runInbox();
                fireDueTimers();
                if (event != null && event.shouldCommit()) {
                    event.loop = thread.getName();
                    event.commit();
                }
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
        long wake = timers.nextWake(); // clears the wheel's dirty flag, then scans (part 5)
        long now = relativeNanos();
        if (!inbox.isEmpty() || wake <= now) {
            selector.selectNow(collectReady);
            return;
        }
        Thread.interrupted(); // an interrupt would make every select return at once
        parks++; // the only writer
        if (!park.park(wake, sleeper)) {
            selector.selectNow(collectReady);
            return;
        }
        try {
            if (wake == FOREVER) {
                selector.select(collectReady);
            } else if (selector.keys().isEmpty()) { // keys are registered by this thread only
                threadParks++; // the only writer
                LockSupport.parkNanos(this, Math.max(wake - now, MIN_PARK_NANOS)); // never early: wake - now at least
            } else {
                long nanos = wake - now;
                long millis = nanos / 1_000_000 + (nanos % 1_000_000 == 0 ? 0 : 1); // round up: never early
                selector.select(collectReady, millis);
            }
        } finally {
            park.awake();
        }
    }

    /** The selector, as the park protocol sees it. */
    private final class Sleeper implements Parking.Sleeper {
        @Override
        public boolean hasWork(long deadline) {
            // a push into the wheel matters only if its slot must be taken before the deadline
            return !inbox.isEmpty() || runState != RUNNING || (timers.isDirty() && timers.nextWake() < deadline);
        }

        @Override
        public void wakeup() {
            wakeups.incrementAndGet();
            selector.wakeup();
            LockSupport.unpark(thread);
        }
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
        long now = relativeNanos();
        LoopTimer t; // pollDue takes the next slot whenever its run is empty and the slot's time has come (I3)
        while ((t = timers.pollDue(now)) != null) {
            timersChanged();
            Runnable task = t.take();
            if (task != null) {
                CoroEvents.timerFired(thread.getName(), now - t.deadline); // JFR, if it was late
                runTask(task);
            }
        }
        timersChanged();
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
                drop(t); // shutting down
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
        PUBLISHED_TIMERS.setRelease(this, timers.heldKnown());
    }

    /**
     * Drops a timer the terminating loop still holds: it will never run; a task that is also a
     * {@link Cancellable} is told (Scheduler.schedule's contract), on the loop thread.
     */
    private void drop(LoopTimer t) {
        Runnable task = t.take();
        if (task instanceof Cancellable c) {
            try {
                c.cancel();
            } catch (Throwable e) {
                report(e);
            }
        }
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
        timers.close(this::drop); // the wheel refuses pushes from now on
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
        assert timers.heldKnown() == 0 : "a timer was added while terminating";
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

    private static final VarHandle RUN_STATE;
    private static final VarHandle PUBLISHED_TIMERS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            RUN_STATE = l.findVarHandle(EventLoop.class, "runState", int.class);
            PUBLISHED_TIMERS = l.findVarHandle(EventLoop.class, "publishedTimers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
