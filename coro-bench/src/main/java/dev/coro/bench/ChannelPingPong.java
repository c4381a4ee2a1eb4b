package dev.coro.bench;

import dev.coro.bench.peers.KotlinxEventLoopPeers;
import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.channel.Channel;
import dev.coro.io.EventLoop;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * channel-ping-pong: two tasks pass a counter back and forth {@link #rounds} times through two
 * rendezvous channels, as a user writes it ({@code ping.send(v + 1)} then {@code pong.receive()}),
 * on the two-worker pool and on one {@link EventLoop}. Peers: kotlinx's same program over
 * {@code Channel(RENDEZVOUS)} on the two-thread {@code Dispatchers.Default} and on
 * {@code runBlocking}'s own event loop (one thread), and two virtual threads over
 * {@code SynchronousQueue}s. The pinger's last value must be {@code 2 * rounds}.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class ChannelPingPong {
    /** Round trips per operation: the item count the comparison table divides by. */
    @Param({"500000"})
    public int rounds;

    /** The one-thread scheduler of {@link #coroLoop}. */
    EventLoop loop;

    /** Starts the event loop. */
    @Setup(Level.Trial)
    public void start() {
        loop = EventLoop.start("bench-channel-loop");
    }

    /** Closes the event loop. */
    @TearDown(Level.Trial)
    public void stop() {
        loop.close();
    }

    /**
     * Coro on the two-worker pool.
     *
     * @param coro the pool
     * @return the pinger's final value
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        return play(coro.pool, "ChannelPingPong.coro");
    }

    /**
     * Coro, both tasks on one event loop.
     *
     * @return the pinger's final value
     */
    @Benchmark
    public long coroLoop() {
        return play(loop, "ChannelPingPong.coroLoop");
    }

    private long play(Scheduler scheduler, String name) {
        long last = 2L * rounds;
        Channel<Long> ping = Channel.rendezvous();
        Channel<Long> pong = Channel.rendezvous();
        Task<Long> ponger = Task.loop(0L, v -> v < last - 1, v -> ping.receive()
                .flatMap(x -> pong.send(x + 1).map(sent -> x + 1)));
        Task<Long> pinger = Task.loop(0L, v -> v < last, v -> ping.send(v + 1).then(pong.receive()));
        long result;
        Watchdog.begin(name);
        try {
            CompletableFuture<Long> answering = ponger.startOn(scheduler).toCompletableFuture();
            result = pinger.startOn(scheduler).join();
            answering.join();
        } finally {
            Watchdog.end();
        }
        return check(result);
    }

    /**
     * kotlinx on the two-thread {@code Dispatchers.Default}.
     *
     * @param kx the dispatcher
     * @return the pinger's final value
     */
    @Benchmark
    public long kotlinxDefault(Pools.Kotlinx kx) {
        Watchdog.begin("ChannelPingPong.kotlinxDefault");
        try {
            return check(KotlinxPeers.kotlinxPingPong(rounds, kx.dispatcher));
        } finally {
            Watchdog.end();
        }
    }

    /**
     * kotlinx on {@code runBlocking}'s own event loop, one thread.
     *
     * @return the pinger's final value
     */
    @Benchmark
    public long kotlinxRunBlocking() {
        Watchdog.begin("ChannelPingPong.kotlinxRunBlocking");
        try {
            return check(KotlinxEventLoopPeers.kotlinxPingPongOnEventLoop(rounds));
        } finally {
            Watchdog.end();
        }
    }

    /**
     * Two virtual threads over {@code SynchronousQueue}s, two carriers.
     *
     * @param vt checks the carrier count
     * @return the pinger's final value
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long virtualThreads(Pools.Virtual vt) throws InterruptedException {
        return check(PingPong.virtualThreadPingPong(rounds, "ChannelPingPong.virtualThreads"));
    }

    private long check(long finalValue) {
        if (finalValue != 2L * rounds) {
            throw new IllegalStateException("channel ping-pong ended at " + finalValue + ", expected " + 2L * rounds);
        }
        return finalValue;
    }
}
