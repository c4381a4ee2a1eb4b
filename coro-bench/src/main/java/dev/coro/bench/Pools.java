package dev.coro.bench;

import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import kotlinx.coroutines.CoroutineDispatcher;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The thread pools the benchmarks run on, one JMH state per implementation, every one with
 * {@link #WORKERS} threads. Each is created once per trial (a fork runs one benchmark method, so
 * only the pool that method uses exists) and shut down, waiting for its threads, after it.
 *
 * <p>Two of the pools are sized by JVM properties read when the runtime first uses them, so the
 * benchmark classes pass {@link #VT_PARALLELISM} and {@link #KOTLINX_POOL_SIZE} to the forked JVM;
 * the states check that they took effect and fail the trial otherwise.
 */
public final class Pools {
    /** Worker threads of every pool: Coro, ForkJoinPool, virtual-thread carriers, kotlinx, Reactor. */
    public static final int WORKERS = 2;

    /** Fork argument: two carrier threads for virtual threads. */
    public static final String VT_PARALLELISM = "-Djdk.virtualThreadScheduler.parallelism=2";

    /** Fork argument: kotlinx's Dispatchers.Default with two threads. */
    public static final String KOTLINX_POOL_SIZE = "-Dkotlinx.coroutines.scheduler.core.pool.size=2";

    /** Fork argument: a fixed 2 GB heap, so that heap resizing does not land in some measurements only. */
    public static final String HEAP_MIN = "-Xms2g";

    /** Fork argument: see {@link #HEAP_MIN}. */
    public static final String HEAP_MAX = "-Xmx2g";

    /**
     * Fork argument: the heap's pages are touched when the JVM starts, so that the first pass of
     * allocation over them (which a fork's few iterations are) does not pay a page fault per page, a
     * cost that lands on whoever allocates most and came and went in runs of iterations (up to 1.5x
     * the gate-keyed time on this VM).
     */
    public static final String PRE_TOUCH = "-XX:+AlwaysPreTouch";

    /**
     * Fork argument: {@link org.openjdk.jmh.infra.Blackhole#consumeCPU}, the work of the gate
     * benchmarks, is compiled on its own, never inlined into its caller, so that it runs the same
     * machine code for every implementation and every fork. Inlined, its loop took 10 to 15% more
     * or less time from fork to fork (and after a recompilation within one), more than the gates'
     * overheads being compared.
     */
    public static final String WORK_APART = "-XX:CompileCommand=dontinline,org.openjdk.jmh.infra.Blackhole::consumeCPU";

    /** Fork argument: no line printed for each {@code -XX:CompileCommand}. */
    public static final String QUIET_COMMANDS = "-XX:CompileCommand=quiet";

    private Pools() {}

    /** Coro's {@link WorkStealingPool}. */
    @State(Scope.Benchmark)
    public static class Coro {
        /** The pool. */
        public WorkStealingPool pool;

        /** Starts the pool. */
        @Setup(Level.Trial)
        public void start() {
            pool = WorkStealingPool.create(WORKERS, "bench-coro");
        }

        /** Shuts the pool down and waits for its workers. */
        @TearDown(Level.Trial)
        public void stop() {
            pool.close();
        }

        /**
         * Starts {@code root} on the pool and joins it from the benchmark thread, under the
         * {@link Watchdog} as {@code name}.
         *
         * @param root the root task
         * @param name the benchmark's name for the watchdog
         */
        public void join(Task<?> root, String name) {
            Watchdog.begin(name);
            try {
                root.startOn(pool).join();
            } finally {
                Watchdog.end();
            }
        }

        /**
         * A root task that opens {@code Scope.childOf(ctx)}, spawns {@code n} runs of {@code child}
         * into it and returns {@code scope.join()}. Built once per trial: a task is a reusable
         * description, and each join runs it anew.
         *
         * @param n how many children
         * @param child what each child runs
         * @return the root task
         */
        public static Task<Void> spawnAll(int n, Task<?> child) {
            return spawnEach(n, i -> child);
        }

        /**
         * As {@link #spawnAll}, with a task made for each child when the root runs (a caller that
         * builds each request's task, such as {@code gate.within(work)}, pays that per child).
         *
         * @param n how many children
         * @param child makes the task of child {@code i}, {@code 0 <= i < n}
         * @return the root task
         */
        public static Task<Void> spawnEach(int n, IntFunction<? extends Task<?>> child) {
            return Task.context().flatMap(ctx -> {
                dev.coro.task.Scope scope = dev.coro.task.Scope.childOf(ctx);
                for (int i = 0; i < n; i++) {
                    scope.spawn(child.apply(i));
                }
                return scope.join();
            });
        }
    }

    /** A {@link ForkJoinPool} of two workers (LIFO local queues, as CompletableFuture uses it). */
    @State(Scope.Benchmark)
    public static class ForkJoin {
        /** The pool. */
        public ForkJoinPool pool;

        /** Starts the pool. */
        @Setup(Level.Trial)
        public void start() {
            pool = new ForkJoinPool(WORKERS);
        }

        /**
         * Shuts the pool down and waits for its workers.
         *
         * @throws InterruptedException if interrupted while waiting
         */
        @TearDown(Level.Trial)
        public void stop() throws InterruptedException {
            pool.shutdown();
            if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("ForkJoinPool did not terminate within 10 s");
            }
        }
    }

    /** Reactor's {@code Schedulers.newParallel("bench-reactor", 2)}. */
    @State(Scope.Benchmark)
    public static class Reactor {
        /** The scheduler. */
        public Scheduler scheduler;

        /** Starts the scheduler. */
        @Setup(Level.Trial)
        public void start() {
            scheduler = Schedulers.newParallel("bench-reactor", WORKERS);
        }

        /** Disposes of the scheduler and waits for its threads. */
        @TearDown(Level.Trial)
        public void stop() {
            scheduler.disposeGracefully().block(java.time.Duration.ofSeconds(10));
        }
    }

    /** kotlinx's {@code Dispatchers.Default.limitedParallelism(2)}; see {@link KotlinxPeers#kotlinxDispatcher}. */
    @State(Scope.Benchmark)
    public static class Kotlinx {
        /** The dispatcher. */
        public CoroutineDispatcher dispatcher;

        /** Picks the dispatcher and checks that it is the plain two-thread Default scheduler. */
        @Setup(Level.Trial)
        public void start() {
            dispatcher = KotlinxPeers.kotlinxDispatcher(WORKERS);
            if (!KotlinxPeers.isPlainDefault(dispatcher)) {
                throw new IllegalStateException("Dispatchers.Default has more than " + WORKERS
                        + " threads: run the fork with " + KOTLINX_POOL_SIZE);
            }
        }
        // Dispatchers.Default cannot be closed; its threads idle between benchmarks.
    }

    /** Virtual threads on the JDK's default scheduler, checked to have two carriers. */
    @State(Scope.Benchmark)
    public static class Virtual {
        /** Checks the carrier-pool size property. */
        @Setup(Level.Trial)
        public void start() {
            String p = System.getProperty("jdk.virtualThreadScheduler.parallelism");
            if (!String.valueOf(WORKERS).equals(p)) {
                throw new IllegalStateException("virtual threads need " + WORKERS
                        + " carriers: run the fork with " + VT_PARALLELISM + " (found " + p + ")");
            }
        }

        /**
         * A root virtual thread opens {@code Executors.newVirtualThreadPerTaskExecutor()}, starts one
         * virtual thread per run of {@code task} ({@code n} of them) and closes the executor, which
         * waits for them; the benchmark thread joins the root, under the {@link Watchdog} as
         * {@code name}.
         *
         * @param n how many virtual threads
         * @param task what each runs
         * @param name the benchmark's name for the watchdog
         * @throws InterruptedException if interrupted
         * @throws IllegalStateException if the root failed
         */
        public static void runAll(int n, Runnable task, String name) throws InterruptedException {
            runEach(n, i -> task, name);
        }

        /**
         * As {@link #runAll}, with a runnable made for each virtual thread: {@code task.apply(i)} for
         * thread {@code i}, {@code 0 <= i < n}, made by the root as it starts them (the way a loop
         * over requests hands each thread its own).
         *
         * @param n how many virtual threads
         * @param task makes the runnable of thread {@code i}
         * @param name the benchmark's name for the watchdog
         * @throws InterruptedException if interrupted
         * @throws IllegalStateException if the root failed
         */
        public static void runEach(int n, IntFunction<? extends Runnable> task, String name) throws InterruptedException {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Watchdog.begin(name);
            Thread root = Thread.ofVirtual().start(() -> {
                try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
                    for (int i = 0; i < n; i++) {
                        threads.execute(task.apply(i));
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            try {
                root.join();
            } finally {
                Watchdog.end();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("virtual-thread root failed", failure.get());
            }
        }
    }
}
