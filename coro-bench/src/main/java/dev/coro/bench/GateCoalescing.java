package dev.coro.bench;

import com.github.benmanes.caffeine.cache.AsyncLoadingCache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.coro.gate.CoalescingGate;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * gate-coalescing: {@link #requests} requests for {@link #keys} keys (drawn uniformly, seeded), all
 * issued at once by one root on two workers; a request for a key whose load is in flight shares it,
 * otherwise it starts a load of about 10 us of work ({@link Blackhole#consumeCPU} of {@link #tokens}
 * tokens); nothing is cached, so a request after a load ended loads again. One operation of the
 * benchmark is the whole batch; the table divides by {@link #requests}. How many loads a run needs
 * depends on how requests and loads interleave on the two workers (the fewer, the faster): each
 * trial prints its loads per batch, so that the figures can be read with it.
 *
 * <p>What each implementation keeps afterwards (checked after every operation): no load in flight
 * (Caffeine may keep expired entries until its maintenance runs).
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX,
    Pools.PRE_TOUCH, Pools.QUIET_COMMANDS, Pools.WORK_APART})
public class GateCoalescing {
    /** Requests per benchmark operation: the item count the table divides by. */
    @Param({"1000000"})
    public int requests;

    /** Distinct keys. */
    @Param({"1000"})
    public int keys;

    /** {@link Blackhole#consumeCPU} tokens of work per load; 5,000 is about 10 us. */
    @Param({"5000"})
    public long tokens;

    private final LongAdder loads = new LongAdder();
    private long loadsSeen;
    private long batches;
    private int[] keyOf;
    /** The distinct keys among the requests: the fewest loads a batch can need. */
    private long keysDrawn;
    private CoalescingGate<Integer, Integer> gate;
    private Task<Void> coroRoot;

    /** Draws the keys and builds the Coro root task. */
    @Setup(Level.Trial)
    public void setup() {
        keyOf = new int[requests];
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < requests; i++) {
            keyOf[i] = random.nextInt(keys);
        }
        keysDrawn = java.util.Arrays.stream(keyOf).distinct().count();
        gate = new CoalescingGate<>();
        @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
        Task<Integer>[] loadOf = new Task[keys]; // a load per key, built once: a task is a reusable description
        for (int k = 0; k < keys; k++) {
            int key = k;
            loadOf[k] = Task.fromCallable(() -> load(key));
        }
        int[] k = keyOf;
        CoalescingGate<Integer, Integer> g = gate;
        coroRoot = Pools.Coro.spawnEach(requests, i -> {
            int key = k[i % k.length];
            return g.within(key, loadOf[key]).map(v -> checked(v, key));
        });
    }

    /** Prints the loads per batch of the trial. */
    @TearDown(Level.Trial)
    public void report() {
        if (batches > 0) {
            System.out.printf("%n[gate-coalescing] %,d loads per batch of %,d requests (%.1f requests per load)%n",
                    loadsSeen / batches, requests, (double) requests * batches / loadsSeen);
        }
    }

    private int load(int key) {
        Blackhole.consumeCPU(tokens);
        loads.increment();
        return key;
    }

    private static Integer checked(Integer value, int key) {
        if (value != key) {
            throw new IllegalStateException("request for " + key + " got " + value);
        }
        return value;
    }

    /**
     * Coro: a root task on the pool spawns {@code gate.within(key, load).map(check)} per request on
     * one {@code CoalescingGate<Integer, Integer>} and joins the scope.
     *
     * @param coro the pool
     * @return the loads
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        loads.reset();
        coro.join(coroRoot, "GateCoalescing.coro");
        return check(gate.inFlight().size());
    }

    /**
     * The hand-written idiom: a {@code ConcurrentHashMap<Integer, CompletableFuture<Integer>>}; a
     * request puts a new future with {@code computeIfAbsent} and, if it was the one put, runs the
     * load on the pool, removes the entry ({@code remove(key, future)}) and completes the future; every
     * request then continues with {@code thenAccept}. Requests are submitted to a two-worker
     * {@code ForkJoinPool} by one root task; the batch ends when every request has continued.
     *
     * @param fj the pool
     * @return the loads
     */
    @Benchmark
    public long chmFutures(Pools.ForkJoin fj) {
        loads.reset();
        ConcurrentHashMap<Integer, CompletableFuture<Integer>> inFlight = new ConcurrentHashMap<>();
        Batch batch = new Batch(requests);
        int[] k = keyOf;
        Watchdog.begin("GateCoalescing.chmFutures");
        try {
            fj.pool.execute(() -> {
                for (int i = 0; i < k.length; i++) {
                    int key = k[i];
                    fj.pool.execute(() -> {
                        CompletableFuture<Integer> mine = new CompletableFuture<>();
                        CompletableFuture<Integer> shared = inFlight.computeIfAbsent(key, ignored -> mine);
                        if (shared == mine) {
                            fj.pool.execute(() -> {
                                try {
                                    int v = load(key);
                                    inFlight.remove(key, mine);
                                    mine.complete(v);
                                } catch (Throwable e) {
                                    inFlight.remove(key, mine);
                                    mine.completeExceptionally(e);
                                }
                            });
                        }
                        shared.thenAccept(v -> batch.done(checked(v, key)));
                    });
                }
            });
            batch.all.join();
        } finally {
            Watchdog.end();
        }
        return check(inFlight.size());
    }

    /**
     * Caffeine: an {@code AsyncLoadingCache} built with {@code expireAfterWrite(Duration.ZERO)} (an
     * in-flight load is shared, a completed one expires at once: coalescing without caching, as
     * Caffeine's issue #639 describes) and the two-worker {@code ForkJoinPool} as its executor, which
     * runs the loads; requests are submitted as for {@link #chmFutures} and continue with
     * {@code cache.get(key).thenAccept}.
     *
     * @param fj the pool
     * @return the loads
     */
    @Benchmark
    public long caffeine(Pools.ForkJoin fj) {
        loads.reset();
        AsyncLoadingCache<Integer, Integer> cache = Caffeine.newBuilder()
                .expireAfterWrite(Duration.ZERO)
                .executor(fj.pool)
                .buildAsync(this::load);
        Batch batch = new Batch(requests);
        int[] k = keyOf;
        Watchdog.begin("GateCoalescing.caffeine");
        try {
            fj.pool.execute(() -> {
                for (int i = 0; i < k.length; i++) {
                    int key = k[i];
                    fj.pool.execute(() -> cache.get(key).thenAccept(v -> batch.done(checked(v, key))));
                }
            });
            batch.all.join();
        } finally {
            Watchdog.end();
        }
        // expired entries may stay in the map until Caffeine's maintenance runs: count the loads in flight
        int inFlight = 0;
        for (CompletableFuture<Integer> f : cache.asMap().values()) {
            inFlight += f.isDone() ? 0 : 1;
        }
        return check(inFlight);
    }

    /** Counts the requests of a batch down; completes {@link #all} at the last. */
    private static final class Batch {
        final CompletableFuture<Void> all = new CompletableFuture<>();
        private final AtomicInteger left;

        Batch(int requests) {
            left = new AtomicInteger(requests);
        }

        void done(Integer ignored) {
            if (left.decrementAndGet() == 0) {
                all.complete(null);
            }
        }
    }

    private long check(int left) {
        long n = loads.sum();
        if (n < keysDrawn || n > requests) {
            throw new IllegalStateException(n + " loads for " + requests + " requests over " + keysDrawn + " keys");
        }
        if (left != 0) {
            throw new IllegalStateException(left + " entries left in flight");
        }
        loadsSeen += n;
        batches++;
        return n;
    }
}
