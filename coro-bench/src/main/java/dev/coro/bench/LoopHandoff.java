package dev.coro.bench;

import dev.coro.bench.peers.KotlinxEventLoopPeers;
import dev.coro.io.EventLoop;
import dev.coro.sync.Event;
import dev.coro.task.Task;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * loop-ping-pong (the class is not named *PingPong, so that {@code ./coro bench PingPong} still selects
 * only the pool ping-pong): two tasks pass a counter back and forth {@link #rounds} times through two
 * {@link Event}s, on {@link EventLoop}s. In {@code coro} both tasks run on one loop, so every
 * hand-off is an inline resumption on the loop thread (no thread hop, no inbox); in
 * {@code coroTwoLoops} the pinger runs on one loop and the ponger on another, so every hand-off is a
 * submission to the other loop's inbox and (when it sleeps) a selector wake-up. {@code kotlinxOneThread}
 * is the one-thread peer: kotlinx's ping-pong over rendezvous channels on {@code runBlocking}'s own
 * event loop.
 *
 * <p>The protocol, per round trip: the pinger sets {@code ping} to {@code v + 1} and awaits
 * {@code pong}; the ponger, woken with {@code x}, resets {@code ping} and sets {@code pong} to
 * {@code x + 1}; the pinger, woken with {@code y}, resets {@code pong} and goes on. Each side resets
 * the event it has just consumed before it sets the other, so the next {@code set} always finds the
 * event reset. The pinger's last value must be {@code 2 * rounds}, checked after every operation.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {Pools.HEAP_MIN, Pools.HEAP_MAX})
public class LoopHandoff {
    /** Round trips per operation: the item count the comparison table divides by. */
    @Param({"100000"})
    public int rounds;

    /** The loops: both tasks on {@code a}, or the pinger on {@code a} and the ponger on {@code b}. */
    EventLoop a;
    EventLoop b;

    /** Starts the two loops (the one-loop benchmark leaves {@code b} idle, parked in its selector). */
    @Setup(Level.Trial)
    public void start() {
        a = EventLoop.start("bench-loop-a");
        b = EventLoop.start("bench-loop-b");
    }

    /** Closes both loops and waits for their threads. */
    @TearDown(Level.Trial)
    public void stop() {
        a.close();
        b.close();
    }

    /**
     * Both tasks on one loop.
     *
     * @return the pinger's final value
     */
    @Benchmark
    public long coro() {
        return play(a, a, "LoopHandoff.coro");
    }

    /**
     * The pinger on one loop, the ponger on another.
     *
     * @return the pinger's final value
     */
    @Benchmark
    public long coroTwoLoops() {
        return play(a, b, "LoopHandoff.coroTwoLoops");
    }

    /**
     * kotlinx: the same game over two rendezvous channels under {@code runBlocking} on the benchmark
     * thread (its own event loop; no dispatcher, no thread hop).
     *
     * @return the pinger's final value
     */
    @Benchmark
    public long kotlinxOneThread() {
        long result;
        Watchdog.begin("LoopHandoff.kotlinxOneThread");
        try {
            result = KotlinxEventLoopPeers.kotlinxPingPongOnEventLoop(rounds);
        } finally {
            Watchdog.end();
        }
        return check(result);
    }

    private long play(EventLoop pingerLoop, EventLoop pongerLoop, String what) {
        long last = 2L * rounds;
        Event<Long> ping = new Event<>();
        Event<Long> pong = new Event<>();
        Task<Long> ponger = Task.loop(0L, v -> v < last, v -> ping.await().map(x -> {
            ping.reset();
            pong.set(x + 1);
            return x + 1;
        }));
        Task<Long> pinger = Task.loop(0L, v -> v < last, v -> {
            ping.set(v + 1);
            return pong.await().map(y -> {
                pong.reset();
                return y;
            });
        });
        Task<Long> game = Task.whenAll(ponger.startOn(pongerLoop), pinger.startOn(pingerLoop), (x, y) -> {
            if (x != last) {
                throw new IllegalStateException("the ponger ended at " + x + ", expected " + last);
            }
            return y;
        });
        long result;
        Watchdog.begin(what);
        try {
            result = game.join();
        } finally {
            Watchdog.end();
        }
        return check(result);
    }

    private long check(long finalValue) {
        if (finalValue != 2L * rounds) {
            throw new IllegalStateException("ping-pong ended at " + finalValue + ", expected " + 2L * rounds);
        }
        return finalValue;
    }
}
