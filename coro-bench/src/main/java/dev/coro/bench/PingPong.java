package dev.coro.bench;

import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.task.Promise;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
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
 * ping-pong: two tasks on a two-worker pool pass a counter back and forth {@link #rounds} times
 * (a round trip is two hand-offs). Every hand-off is a completion that the other side awaits; no user
 * code spins or polls.
 *
 * <p>The pinger sends {@code v + 1} and waits for the answer, the ponger answers {@code v + 1}; the
 * pinger's last value must be {@code 2 * rounds}, checked after every operation.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class PingPong {
    /** Round trips per operation: the item count the comparison table divides by. */
    @Param({"500000"})
    public int rounds;

    /**
     * Where each Coro side waits: the promise it awaits now, replaced by a fresh one before every
     * send. A side writes only its own slot and completes the other's. (A message that carried its
     * reply promise would chain every promise to the next, keeping the whole game reachable.)
     */
    static final class Court {
        volatile Promise<Long> pinger = new Promise<>();
        volatile Promise<Long> ponger = new Promise<>();
    }

    /**
     * Coro: a root task on the pool spawns a ponger and a pinger into {@code Scope.childOf(ctx)}.
     * Each side is a {@link Task#loop} whose body installs a fresh {@link Promise} as its own slot,
     * completes the peer's promise with {@code v + 1}, and returns its own promise's task: one
     * promise per hand-off, constant memory.
     *
     * @param coro the pool
     * @return the pinger's final value
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        long last = 2L * rounds;
        Task<Long> root = Task.context().flatMap(ctx -> {
            Scope scope = Scope.childOf(ctx);
            Court court = new Court();
            scope.spawn(ponger(last, court));
            Task<Long> pinger = scope.spawn(pinger(last, court));
            return pinger.flatMap(v -> scope.join().map(ignored -> v));
        });
        long result;
        Watchdog.begin("PingPong.coro");
        try {
            result = root.startOn(coro.pool).join();
        } finally {
            Watchdog.end();
        }
        return check(result);
    }

    /** Sends 1, 3, 5, ... and receives 2, 4, ... up to {@code last}. */
    private static Task<Long> pinger(long last, Court court) {
        return Task.loop(0L, v -> v < last, v -> {
            Promise<Long> mine = new Promise<>();
            Promise<Long> peer = court.ponger;
            court.pinger = mine; // before the send: the ponger answers on it
            peer.complete(v + 1);
            return mine.task();
        });
    }

    /** Receives 1, 3, ... and answers each with the next value; the last answer awaits nothing. */
    private static Task<Long> ponger(long last, Court court) {
        return court.ponger.task()
                .flatMap(first -> Task.loop(first, v -> v < last - 1, v -> {
                    Promise<Long> mine = new Promise<>();
                    Promise<Long> peer = court.pinger;
                    court.ponger = mine;
                    peer.complete(v + 1);
                    return mine.task();
                }))
                .map(v -> {
                    court.pinger.complete(v + 1);
                    return v;
                });
    }

    /**
     * kotlinx.coroutines: two coroutines over two rendezvous {@code Channel}s, under
     * {@code runBlocking(dispatcher)} on the two-thread Default scheduler.
     *
     * @param kx the dispatcher
     * @return the pinger's final value
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        long result;
        Watchdog.begin("PingPong.kotlinx");
        try {
            result = KotlinxPeers.kotlinxPingPong(rounds, kx.dispatcher);
        } finally {
            Watchdog.end();
        }
        return check(result);
    }

    /**
     * Virtual threads: two virtual threads over two {@link SynchronousQueue}s (blocking
     * {@code put}/{@code take}), two carrier threads; the benchmark thread joins both.
     *
     * @param vt checks the carrier count
     * @return the pinger's final value
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long virtualThreads(Pools.Virtual vt) throws InterruptedException {
        return check(virtualThreadPingPong(rounds, "PingPong.virtualThreads"));
    }

    /**
     * Two virtual threads pass a counter back and forth over two {@link SynchronousQueue}s
     * ({@code rounds} round trips); returns the pinger's last value, {@code 2 * rounds}.
     *
     * @param rounds round trips
     * @param name the watchdog's name for the run
     * @return the pinger's final value
     * @throws InterruptedException if interrupted
     */
    static long virtualThreadPingPong(int rounds, String name) throws InterruptedException {
        int n = rounds;
        SynchronousQueue<Long> ping = new SynchronousQueue<>();
        SynchronousQueue<Long> pong = new SynchronousQueue<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] result = new long[1];
        Thread[] sides = new Thread[2];
        sides[0] = Thread.ofVirtual().unstarted(() -> {
            try {
                for (int i = 0; i < n; i++) {
                    pong.put(ping.take() + 1);
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
                sides[1].interrupt(); // the pinger would wait forever
            }
        });
        sides[1] = Thread.ofVirtual().unstarted(() -> {
            try {
                long v = 0;
                for (int i = 0; i < n; i++) {
                    ping.put(v + 1);
                    v = pong.take();
                }
                result[0] = v;
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
                sides[0].interrupt();
            }
        });
        Thread ponger = sides[0];
        Thread pinger = sides[1];
        Watchdog.begin(name);
        try {
            ponger.start();
            pinger.start();
            pinger.join();
            ponger.join();
        } finally {
            Watchdog.end();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("virtual-thread ping-pong failed", failure.get());
        }
        return result[0];
    }

    private long check(long finalValue) {
        if (finalValue != 2L * rounds) {
            throw new IllegalStateException("ping-pong ended at " + finalValue + ", expected " + 2L * rounds);
        }
        return finalValue;
    }
}
