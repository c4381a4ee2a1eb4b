package dev.coro.bench;

import dev.coro.bench.peers.KotlinxGatePeers;
import dev.coro.gate.LatestOnlyGate;
import dev.coro.task.Task;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * gate-latest: {@link #submissions} submissions, emitted one after another as fast as the source
 * can, each of whose work hops once to the workers (it is asynchronous, so that newer submissions
 * arrive while it runs) and increments a counter; only the latest matters, and a newer submission
 * cancels the running one. Two workers. One benchmark operation is the whole stream; the table
 * divides by {@link #submissions}. How many works ran depends on the timing and is not compared;
 * each run checks that at least one did and no more than were submitted.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX})
public class GateLatest {
    /** Submissions per benchmark operation: the item count the table divides by. */
    @Param({"1000000"})
    public int submissions;

    private final LongAdder ran = new LongAdder();

    /**
     * Coro: a root task on the pool spawns {@code gate.within(Task.yieldNow().then(work))} per
     * submission on one {@link LatestOnlyGate#cancellingRunning()} gate, and joins the scope.
     *
     * @param coro the pool
     * @return the works that ran
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        ran.reset();
        LatestOnlyGate gate = LatestOnlyGate.cancellingRunning();
        coro.join(Pools.Coro.spawnAll(submissions, gate.within(Task.yieldNow().then(Task.fromRunnable(ran::increment)))),
                "GateLatest.coro");
        return check();
    }

    /**
     * Coro, letting the running work finish ({@code new LatestOnlyGate()}): only the waiting
     * submission is replaced.
     *
     * @param coro the pool
     * @return the works that ran
     */
    @Benchmark
    public long coroLetRunning(Pools.Coro coro) {
        ran.reset();
        LatestOnlyGate gate = new LatestOnlyGate();
        coro.join(Pools.Coro.spawnAll(submissions, gate.within(Task.yieldNow().then(Task.fromRunnable(ran::increment)))),
                "GateLatest.coroLetRunning");
        return check();
    }

    /**
     * Reactor: {@code Flux.range(0, n).switchMap(i -> Mono.fromRunnable(work).subscribeOn(s)).blockLast()}
     * on {@code Schedulers.newParallel(2)}.
     *
     * @param reactor the scheduler
     * @return the works that ran
     */
    @Benchmark
    public long reactorSwitchMap(Pools.Reactor reactor) {
        ran.reset();
        Watchdog.begin("GateLatest.reactorSwitchMap");
        try {
            Flux.range(0, submissions)
                    .switchMap(i -> Mono.fromRunnable(ran::increment).subscribeOn(reactor.scheduler))
                    .blockLast();
        } finally {
            Watchdog.end();
        }
        return check();
    }

    /**
     * kotlinx: {@code flow { repeat(n) { emit(it) } }.collectLatest { yield(); work() }} in
     * {@code runBlocking} on the two-thread Default dispatcher.
     *
     * @param kotlinx the dispatcher
     * @return the works that ran
     */
    @Benchmark
    public long kotlinxCollectLatest(Pools.Kotlinx kotlinx) {
        ran.reset();
        Watchdog.begin("GateLatest.kotlinxCollectLatest");
        try {
            KotlinxGatePeers.kotlinxCollectLatest(submissions, ran::increment, kotlinx.dispatcher);
        } finally {
            Watchdog.end();
        }
        return check();
    }

    private long check() {
        long count = ran.sum();
        if (count < 1 || count > submissions) {
            throw new IllegalStateException("ran " + count + " works of " + submissions + " submissions");
        }
        return count;
    }
}
