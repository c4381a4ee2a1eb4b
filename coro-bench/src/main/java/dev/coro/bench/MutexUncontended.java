package dev.coro.bench;

import dev.coro.bench.peers.KotlinxMutexPeers;
import dev.coro.sync.AsyncMutex;
import dev.coro.task.Task;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import kotlinx.coroutines.sync.Mutex;
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

/**
 * mutex-uncontended: the cost of one uncontended lock/increment/unlock, on the benchmark thread with
 * no pool and no other thread touching the lock.
 *
 * <p>One operation is {@link #ops} critical sections in one run (one Coro {@code join()}, one kotlinx
 * {@code runBlocking}), so the fixed cost of starting and joining a task is spread over them and the
 * table's {@code ns/item} is the cost per lock. {@code coroNoLock} runs the same repeated task without
 * the mutex: the difference between {@code coro} and it is what {@code withLock} itself costs. Each
 * critical section increments a plain {@code long}; every operation checks that it went up by exactly
 * {@link #ops} and that the lock is free again.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class MutexUncontended {
    /** Critical sections per operation: the item count the comparison table divides by. */
    @Param({"1000"})
    public int ops;

    /** The counter incremented inside every critical section. */
    private long counter;

    private final AsyncMutex mutex = new AsyncMutex();
    private final AsyncMutex bargingMutex = AsyncMutex.barging();
    private final ReentrantLock reentrantLock = new ReentrantLock();
    private Mutex kotlinxMutex;
    private Task<Void> coroLocked;
    private Task<Void> coroBargingLocked;
    private Task<Void> coroUnlocked;

    /** Builds the tasks once (tasks are reusable descriptions; each join runs them anew). */
    @Setup(Level.Trial)
    public void setup() {
        Task<Void> increment = Task.fromRunnable(() -> counter++);
        coroLocked = mutex.withLock(increment).repeat(ops);
        coroBargingLocked = bargingMutex.withLock(increment).repeat(ops);
        coroUnlocked = increment.repeat(ops);
        kotlinxMutex = KotlinxMutexPeers.newKotlinxMutex();
    }

    /**
     * Coro: one {@code join()} of {@code mutex.withLock(Task.fromRunnable(() -> counter++)).repeat(ops)}.
     *
     * @return the counter
     */
    @Benchmark
    public long coro() {
        long before = counter;
        coroLocked.join();
        if (mutex.isLocked()) {
            throw new IllegalStateException("withLock left the mutex locked");
        }
        return check(before, counter);
    }

    /**
     * Coro's barging mutex: one {@code join()} of
     * {@code AsyncMutex.barging().withLock(Task.fromRunnable(() -> counter++)).repeat(ops)}; its lock
     * task adds a {@code flatMap} step to the FIFO one's (the woken waiter's competition).
     *
     * @return the counter
     */
    @Benchmark
    public long coroBarging() {
        long before = counter;
        coroBargingLocked.join();
        if (bargingMutex.isLocked()) {
            throw new IllegalStateException("withLock left the barging mutex locked");
        }
        return check(before, counter);
    }

    /**
     * Coro without the lock: one {@code join()} of {@code Task.fromRunnable(() -> counter++).repeat(ops)},
     * the interpreter and {@code repeat} cost that {@link #coro} also pays.
     *
     * @return the counter
     */
    @Benchmark
    public long coroNoLock() {
        long before = counter;
        coroUnlocked.join();
        return check(before, counter);
    }

    /**
     * {@code ops} x {@code lock(); counter++; unlock()} on one {@link ReentrantLock} (unfair; with no
     * contention fair and unfair take the same path: one CAS to lock, one release).
     *
     * @return the counter
     */
    @Benchmark
    public long reentrantLock() {
        long before = counter;
        ReentrantLock lock = reentrantLock;
        for (int i = 0; i < ops; i++) {
            lock.lock();
            try {
                counter++;
            } finally {
                lock.unlock();
            }
        }
        if (lock.isLocked()) {
            throw new IllegalStateException("the ReentrantLock is still locked");
        }
        return check(before, counter);
    }

    /**
     * kotlinx.coroutines: one {@code runBlocking} (no dispatcher: its event loop on the benchmark
     * thread, as Coro's {@code join()} runs its task on the calling thread) whose single coroutine does
     * {@code repeat(ops) { mutex.withLock { counter++ } }}.
     *
     * @return the counter
     */
    @Benchmark
    public long kotlinx() {
        long before = counter;
        long after = KotlinxMutexPeers.kotlinxMutexUncontended(ops, kotlinxMutex, before);
        counter = after;
        if (kotlinxMutex.isLocked()) {
            throw new IllegalStateException("withLock left the kotlinx mutex locked");
        }
        return check(before, after);
    }

    private long check(long before, long after) {
        if (after - before != ops) {
            throw new IllegalStateException("counter went up by " + (after - before) + ", expected " + ops);
        }
        return after;
    }
}
