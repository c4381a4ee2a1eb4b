package dev.coro.bench;

import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.channel.Channel;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jctools.queues.MpmcArrayQueue;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * channel-throughput: {@link #pairs} producers send {@link #perProducer} numbers each through one
 * channel of 64 elements, {@link #pairs} consumers receive until it closes, on two workers. Coro's
 * {@code Channel.buffered(64)} as a user writes it (a {@code Task.loop} of sends, {@code forEach}
 * receivers) against kotlinx's {@code Channel(64)} on the two-thread Default dispatcher, and virtual
 * threads over {@code ArrayBlockingQueue(64)} and an unbounded {@code LinkedTransferQueue} (two
 * carriers), and the floor of this shape: platform threads spinning on JCTools' {@code MpmcArrayQueue}. Every run checks the sum received.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class ChannelThroughput {
    /** Producers, and as many consumers: 1P1C and 4P4C. */
    @Param({"1", "4"})
    public int pairs;

    /** Elements per producer (the comparison divides by pairs * perProducer). */
    @Param({"250000"})
    public int perProducer;

    private static final int CAPACITY = 64;

    /**
     * Coro: {@code Channel.buffered(64)} on the two-worker pool.
     *
     * @param coro the pool
     * @return the sum received
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        Channel<Integer> ch = Channel.buffered(CAPACITY);
        int n = perProducer;
        AtomicLong total = new AtomicLong();
        List<Task<?>> producers = new ArrayList<>();
        for (int p = 0; p < pairs; p++) {
            producers.add(Task.loop(0, i -> i < n, i -> ch.send(i).map(sent -> i + 1)));
        }
        List<Task<?>> consumers = new ArrayList<>();
        for (int c = 0; c < pairs; c++) {
            long[] sum = {0};
            consumers.add(ch.forEach(v -> sum[0] += v).andFinally(() -> total.addAndGet(sum[0])));
        }
        Task<?> all = Task.whenAll(Task.whenAll(producers).andFinally(ch::close), Task.whenAll(consumers),
                (a, b) -> null);
        Watchdog.begin("ChannelThroughput.coro");
        try {
            all.startOn(coro.pool).join();
        } finally {
            Watchdog.end();
        }
        return check(total.get());
    }

    /**
     * kotlinx: {@code Channel(64)} on the two-thread Default dispatcher.
     *
     * @param kx the dispatcher
     * @return the sum received
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        Watchdog.begin("ChannelThroughput.kotlinx");
        try {
            return check(KotlinxPeers.kotlinxProducerConsumer(pairs, pairs, perProducer, CAPACITY, kx.dispatcher));
        } finally {
            Watchdog.end();
        }
    }

    /**
     * Virtual threads over {@code ArrayBlockingQueue(64)}.
     *
     * @param vt checks the carrier count
     * @return the sum received
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long virtualThreadsArrayBlockingQueue(Pools.Virtual vt) throws InterruptedException {
        return check(threads(new ArrayBlockingQueue<>(CAPACITY), "ChannelThroughput.virtualThreadsArrayBlockingQueue"));
    }

    /**
     * Virtual threads over an unbounded {@code LinkedTransferQueue}.
     *
     * @param vt checks the carrier count
     * @return the sum received
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long virtualThreadsLinkedTransferQueue(Pools.Virtual vt) throws InterruptedException {
        return check(threads(new LinkedTransferQueue<>(), "ChannelThroughput.virtualThreadsLinkedTransferQueue"));
    }

    /**
     * The floor: JCTools' {@code MpmcArrayQueue(64)}, a queue that never waits, between platform
     * threads that spin ({@link Thread#onSpinWait}, then {@link Thread#yield} after 64 misses) instead of
     * suspending. No waiting structure of this shape can beat it by much: it is the hardware's price for
     * moving an element between cores (issue 13's target is within 2x of it).
     *
     * @return the sum received
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long jctoolsSpinFloor() throws InterruptedException {
        MpmcArrayQueue<Integer> queue = new MpmcArrayQueue<>(CAPACITY);
        int n = perProducer;
        AtomicLong total = new AtomicLong();
        List<Thread> all = new ArrayList<>();
        for (int p = 0; p < pairs; p++) {
            all.add(Thread.ofPlatform().unstarted(() -> {
                for (int i = 0; i < n; i++) {
                    Integer v = i;
                    for (int misses = 0; !queue.offer(v); misses++) {
                        spin(misses);
                    }
                }
                for (int misses = 0; !queue.offer(-1); misses++) { // one end marker per producer
                    spin(misses);
                }
            }));
            all.add(Thread.ofPlatform().unstarted(() -> {
                long sum = 0;
                for (int misses = 0; ; ) {
                    Integer v = queue.poll();
                    if (v == null) {
                        spin(misses++);
                        continue;
                    }
                    if (v < 0) {
                        break;
                    }
                    sum += v;
                    misses = 0;
                }
                total.addAndGet(sum);
            }));
        }
        Watchdog.begin("ChannelThroughput.jctoolsSpinFloor");
        try {
            all.forEach(Thread::start);
            for (Thread t : all) {
                t.join();
            }
        } finally {
            Watchdog.end();
        }
        return check(total.get());
    }

    private static void spin(int misses) {
        if (misses < 64) {
            Thread.onSpinWait();
        } else {
            Thread.yield(); // more threads than cores (4P4C on two): let the other side run
        }
    }

    /** Producers put, consumers take until each has seen its share of the end markers (-1). */
    private long threads(BlockingQueue<Integer> queue, String name) throws InterruptedException {
        int n = perProducer;
        AtomicLong total = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int p = 0; p < pairs; p++) {
            all.add(Thread.ofVirtual().unstarted(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        queue.put(i);
                    }
                    queue.put(-1); // one end marker per producer: each consumer stops at one
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
            all.add(Thread.ofVirtual().unstarted(() -> {
                try {
                    long sum = 0;
                    for (int v; (v = queue.take()) >= 0; ) {
                        sum += v;
                    }
                    total.addAndGet(sum);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        Watchdog.begin(name);
        try {
            all.forEach(Thread::start);
            for (Thread t : all) {
                t.join();
            }
        } finally {
            Watchdog.end();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(name + " failed", failure.get());
        }
        return total.get();
    }

    private long check(long sum) {
        long expected = (long) pairs * perProducer * (perProducer - 1) / 2;
        if (sum != expected) {
            throw new IllegalStateException("channel throughput received " + sum + ", expected " + expected);
        }
        return sum;
    }
}
