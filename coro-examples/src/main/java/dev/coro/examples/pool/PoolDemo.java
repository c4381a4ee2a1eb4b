package dev.coro.examples.pool;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.PrintStream;
import java.time.Duration;

/**
 * Seed 001's three programs on Coro: a coroutine chain on a 4-worker pool that prints which thread
 * each step runs on ({@code coroasync1}), four chains at once ({@code coroasync2}), and the blocking
 * {@code syncWait}.
 *
 * <p>The seed's {@code co_await print(...)} starts the lazy callee, which schedules itself in the
 * pool, and suspends the caller; when the callee ends, the caller resumes on the thread that ran it.
 * Here too the callee is a lazy task that the caller awaits: it first waits a few milliseconds on a
 * timer, and the timer hands it back to whichever pool worker is free (the seed slept 100 ms after
 * each resumption "to force another thread to be used next"); that worker prints, and the caller's
 * continuation runs right after on the same worker. (An earlier version spawned the callee and
 * awaited its handle; under load the callee could finish before the caller began to wait, and the
 * caller then went on on its own thread: PoolDemoTest caught it.)
 */
public final class PoolDemo {
    private final PrintStream out;
    private final Duration pause;

    /**
     * Creates the demo.
     *
     * @param out where it prints (lines are printed whole, so concurrent steps do not interleave)
     * @param pause how long each callee waits before it runs
     */
    public PoolDemo(PrintStream out, Duration pause) {
        this.out = out;
        this.pause = pause;
    }

    /** Runs the three programs. */
    public static void main(String[] args) {
        new PoolDemo(System.out, Duration.ofMillis(20)).runAll();
    }

    /** Runs the three programs one after the other. */
    public void runAll() {
        oneChain();
        fourChains();
        syncWait();
    }

    private void line(String text) {
        synchronized (out) { // the seed's std::osyncstream: one line at a time
            out.println(text);
        }
    }

    private static String thread() {
        return Thread.currentThread().getName();
    }

    /** The callee: {@code print(id, msg)}. */
    Task<Void> print(String id, String msg) {
        return Task.delay(pause)
                .then(Task.fromRunnable(() -> line("       > " + id + " print: " + msg + "   on thread: " + thread())));
    }

    /** The caller: {@code runAsync(id)}, which co_awaits print twice. */
    Task<Void> runAsync(String id) {
        return Task.fromRunnable(() -> line("===== " + id + " start    on thread: " + thread()))
                .then(print(id + "a", "start"))
                .then(Task.fromRunnable(() -> line("===== " + id + " resume   on thread: " + thread())))
                .then(print(id + "b", "end  "))
                .then(Task.fromRunnable(() -> line("===== " + id + " resume   on thread: " + thread())))
                .then(Task.fromRunnable(() -> line("===== " + id + " done")));
    }

    /** coroasync1: one chain, then waitUntilNoCoros. */
    public void oneChain() {
        line("**** coroasync1: main() on thread " + thread());
        try (WorkStealingPool pool = WorkStealingPool.create(4, "pool")) {
            Scope scope = Scope.on(pool);
            line("runTask(runAsync(1))");
            scope.spawn(runAsync("1"));
            line("");
            line("**** waitUntilNoCoros()");
            scope.joinBlocking();
            line("");
            line("**** main() done");
        }
        line("");
    }

    /** coroasync2: four chains at once, then waitUntilNoCoros. */
    public void fourChains() {
        line("**** coroasync2: main() on thread " + thread());
        try (WorkStealingPool pool = WorkStealingPool.create(4, "pool")) {
            Scope scope = Scope.on(pool);
            for (int i = 1; i <= 4; i++) {
                line("runTask(runAsync(" + i + "))");
                scope.spawn(runAsync(String.valueOf(i)));
            }
            line("");
            line("**** waitUntilNoCoros()");
            scope.joinBlocking();
            line("");
            line("**** main() done");
        }
        line("");
    }

    /** syncWait: a plain thread blocks until a task on the pool is done. */
    public void syncWait() {
        line("**** syncWait: main() on thread " + thread());
        try (WorkStealingPool pool = WorkStealingPool.create(4, "pool")) {
            line("syncWait(runAsync(1))");
            runAsync("1").startOn(pool).join(); // blocks main; the chain runs on the pool
            line("**** syncWait returned on thread " + thread() + ": the task is done");
        }
        line("");
    }
}
