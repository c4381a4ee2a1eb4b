package dev.coro.bench;

import dev.coro.gate.CapacityGate;
import dev.coro.gate.DeadlineGate;
import dev.coro.gate.PriorityGate;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * gate-priority: {@link #tasks} tasks on two workers, each entering a gate of capacity
 * {@link #permits}, doing about a microsecond of work and leaving: the cost of a priority or
 * deadline rule over plain FIFO. {@code coro} is a {@code PriorityGate} (priorities 0 to 9, seeded),
 * {@code coroDeadline} a {@code DeadlineGate} (deadlines an hour away, so none expires: the order and
 * the clock readings cost, not the expiry), {@code coroCapacity} the {@code CapacityGate} of the same
 * size, and {@code queueVt} what Java offers for it today: a {@code PriorityBlockingQueue} feeding
 * {@link #permits} virtual threads. One benchmark operation is the whole batch; the table divides by
 * {@link #tasks}.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX,
    Pools.PRE_TOUCH, Pools.QUIET_COMMANDS, Pools.WORK_APART})
public class GatePriority {
    /** Tasks per benchmark operation: the item count the table divides by. */
    @Param({"100000"})
    public int tasks;

    /** The gates' capacity, and the queue's consumers. */
    @Param({"2"})
    public int permits;

    /** {@link Blackhole#consumeCPU} tokens of work per task; 500 is about 1 us. */
    @Param({"500"})
    public long tokens;

    private CountedWork counted;
    private Runnable work;
    private int[] priorityOf;
    private PriorityGate priorityGate;
    private DeadlineGate deadlineGate;
    private CapacityGate capacityGate;
    private Task<Void> priorityRoot;
    private Task<Void> deadlineRoot;
    private Task<Void> capacityRoot;

    /** Draws the priorities and builds the work and the Coro root tasks. */
    @Setup(Level.Trial)
    public void setup() {
        counted = new CountedWork(tokens, tasks, "tasks", permits);
        work = counted.work;
        SplittableRandom random = new SplittableRandom(9);
        priorityOf = new int[tasks];
        for (int i = 0; i < tasks; i++) {
            priorityOf[i] = random.nextInt(10);
        }
        priorityGate = new PriorityGate(permits);
        deadlineGate = new DeadlineGate(permits);
        capacityGate = new CapacityGate(permits);
        Task<Void> w = Task.fromRunnable(work);
        int[] p = priorityOf;
        PriorityGate pg = priorityGate;
        DeadlineGate dg = deadlineGate;
        CapacityGate cg = capacityGate;
        Duration hour = Duration.ofHours(1);
        priorityRoot = Pools.Coro.spawnEach(tasks, i -> pg.within(p[i % p.length], w));
        deadlineRoot = Pools.Coro.spawnEach(tasks, i -> dg.within(hour, w));
        capacityRoot = Pools.Coro.spawnEach(tasks, i -> cg.within(w));
    }

    /**
     * Coro: {@code priorityGate.within(priority, work)} per task on one {@code PriorityGate(permits)}.
     *
     * @param coro the pool
     * @return the tasks that ran
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        return counted.join(coro, priorityRoot, "GatePriority.coro",
                priorityGate::available, "PriorityGate.available()");
    }

    /**
     * Coro: {@code deadlineGate.within(Duration.ofHours(1), work)} per task on one
     * {@code DeadlineGate(permits)} on the system clock.
     *
     * @param coro the pool
     * @return the tasks that ran
     */
    @Benchmark
    public long coroDeadline(Pools.Coro coro) {
        return counted.join(coro, deadlineRoot, "GatePriority.coroDeadline",
                deadlineGate::available, "DeadlineGate.available()");
    }

    /**
     * Coro, plain FIFO: {@code capacityGate.within(work)} per task on one {@code CapacityGate(permits)}.
     *
     * @param coro the pool
     * @return the tasks that ran
     */
    @Benchmark
    public long coroCapacity(Pools.Coro coro) {
        return counted.join(coro, capacityRoot, "GatePriority.coroCapacity",
                capacityGate::available, "CapacityGate.available()");
    }

    /**
     * The JDK: the benchmark thread puts one entry per task (its priority, its work) on a
     * {@code PriorityBlockingQueue}, which {@link #permits} virtual threads drain (highest priority
     * first), each running the work; done when every task has run. Two carriers.
     *
     * @param vt checks the carrier count
     * @return the tasks that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long queueVt(Pools.Virtual vt) throws InterruptedException {
        counted.reset();
        record Job(int priority, long seq, Runnable work) {}
        PriorityBlockingQueue<Job> queue = new PriorityBlockingQueue<>(1024,
                (a, b) -> a.priority != b.priority ? Integer.compare(b.priority, a.priority) : Long.compare(a.seq, b.seq));
        CountDownLatch done = new CountDownLatch(tasks);
        Runnable r = work;
        Thread[] consumers = new Thread[permits];
        for (int i = 0; i < permits; i++) {
            consumers[i] = Thread.ofVirtual().start(() -> {
                try {
                    for (;;) {
                        Job job = queue.take();
                        if (job.work == null) {
                            return;
                        }
                        job.work.run();
                        done.countDown();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        Watchdog.begin("GatePriority.queueVt");
        try {
            for (int i = 0; i < tasks; i++) {
                queue.put(new Job(priorityOf[i], i, r));
            }
            done.await();
            for (int i = 0; i < permits; i++) {
                queue.put(new Job(Integer.MIN_VALUE, Long.MAX_VALUE, null));
            }
            for (Thread c : consumers) {
                c.join();
            }
        } finally {
            Watchdog.end();
        }
        return counted.check(permits, "(queue)");
    }
}
