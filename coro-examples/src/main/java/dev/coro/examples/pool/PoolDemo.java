package dev.coro.examples.pool;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.PrintStream;
import java.time.Duration;

/**
 * Three small programs on a pool of four worker threads, each printing which thread runs each step:
 * one task spawned into a {@link Scope} and joined, four tasks at once, and a plain thread that
 * blocks in {@code join()} until a task on the pool is done. (They follow the C++ programs
 * {@code coroasync1}, {@code coroasync2} and {@code syncWait} of the design notes.)
 *
 * <p>The C++ program's {@code co_await print(...)} starts the lazy callee, which schedules itself in the
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

    /** One task spawned into a scope, then the scope joined. */
    public void oneChain() {
        line("**** One task on a pool of 4 workers. main() runs on thread " + thread() + ".");
        line("**** Each step prints its thread; after each 20 ms timer the task may resume on another worker.");
        try (WorkStealingPool pool = WorkStealingPool.create(4, "pool")) {
            Scope scope = Scope.on(pool);
            line("scope.spawn(task 1)");
            scope.spawn(runAsync("1"));
            line("");
            line("**** scope.joinBlocking(): main waits until every spawned task is done");
            scope.joinBlocking();
            line("");
            line("**** main() done");
        }
        line("");
    }

    /** Four tasks at once in one scope, then the scope joined. */
    public void fourChains() {
        line("**** Four tasks at once on a pool of 4 workers. main() runs on thread " + thread() + ".");
        try (WorkStealingPool pool = WorkStealingPool.create(4, "pool")) {
            Scope scope = Scope.on(pool);
            for (int i = 1; i <= 4; i++) {
                line("scope.spawn(task " + i + ")");
                scope.spawn(runAsync(String.valueOf(i)));
            }
            line("");
            line("**** scope.joinBlocking(): main waits until every spawned task is done");
            scope.joinBlocking();
            line("");
            line("**** main() done");
        }
        line("");
    }

    /** A plain thread blocks in {@code join()} until a task on the pool is done. */
    public void syncWait() {
        line("**** A blocking join: main() on thread " + thread() + " waits for one task on the pool.");
        try (WorkStealingPool pool = WorkStealingPool.create(4, "pool")) {
            line("task.startOn(pool).join()");
            runAsync("1").startOn(pool).join(); // blocks main; the chain runs on the pool
            line("**** join() returned on thread " + thread() + ": the task is done");
        }
        line("");
    }
}
