package dev.coro.bench;

import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.channel.Channel;
import dev.coro.channel.Select;
import dev.coro.task.Task;
import java.util.concurrent.TimeUnit;
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
 * select: two tasks send {@link #selects} / 2 numbers each into their own rendezvous channel, a
 * third selects {@link #selects} times over both receive clauses, on two workers: Coro's
 * {@code Select.select(a.onReceive(..), b.onReceive(..))} in a {@code Task.loop} against kotlinx's
 * {@code select { a.onReceive {..}; b.onReceive {..} }} on the two-thread Default dispatcher. Every
 * run checks the sum.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class ChannelSelect {
    /** Selects per operation. */
    @Param({"200000"})
    public int selects;

    /**
     * Coro on the two-worker pool.
     *
     * @param coro the pool
     * @return the sum received
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        int half = selects / 2;
        Channel<Integer> a = Channel.rendezvous();
        Channel<Integer> b = Channel.rendezvous();
        Task<Integer> sendA = Task.loop(0, i -> i < half, i -> a.send(i).map(sent -> i + 1));
        Task<Integer> sendB = Task.loop(0, i -> i < half, i -> b.send(i).map(sent -> i + 1));
        long[] sum = {0};
        Task<Integer> select = Task.loop(0, k -> k < selects, k -> Select.select(a.onReceive(v -> v), b.onReceive(v -> v))
                .map(v -> {
                    sum[0] += v;
                    return k + 1;
                }));
        Watchdog.begin("ChannelSelect.coro");
        try {
            Task.whenAll(java.util.List.of(sendA, sendB, select)).startOn(coro.pool).join();
        } finally {
            Watchdog.end();
        }
        return check(sum[0]);
    }

    /**
     * kotlinx on the two-thread Default dispatcher.
     *
     * @param kx the dispatcher
     * @return the sum received
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        Watchdog.begin("ChannelSelect.kotlinx");
        try {
            return check(KotlinxPeers.kotlinxSelect(selects, kx.dispatcher));
        } finally {
            Watchdog.end();
        }
    }

    private long check(long sum) {
        long half = selects / 2;
        long expected = 2 * (half * (half - 1) / 2);
        if (sum != expected) {
            throw new IllegalStateException("select summed " + sum + ", expected " + expected);
        }
        return sum;
    }
}
