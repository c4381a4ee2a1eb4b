package dev.coro.bench;

import com.google.common.util.concurrent.Striped;
import dev.coro.bench.peers.KotlinxGatePeers;
import dev.coro.gate.KeyedSerialGate;
import dev.coro.internal.KeyTable;
import dev.coro.task.Task;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
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
 * gate-keyed: {@link #ops} operations over {@link #keys} keys drawn from a Zipf distribution (a few hot
 * keys, a long tail), each serialized with the other operations of its key and doing about a
 * microsecond of work ({@link Blackhole#consumeCPU} of {@link #tokens} tokens, then one increment of a
 * shared {@link LongAdder}), on two workers. One operation of the benchmark is the whole batch; the
 * table divides by {@link #ops}.
 *
 * <p>What each implementation keeps per key afterwards: Coro's {@code KeyedSerialGate} nothing (its
 * entries leave with their last operation); Guava's {@code Striped<Lock>} its 1,024 locks whatever
 * the keys (and unequal keys that share a stripe wait for each other); the future chain one completed
 * future per key ever used; kotlinx one {@code Mutex} per key ever used. After every operation each
 * of these counts is checked (Guava's is fixed). {@link #tableAlone} is a floor, not an
 * implementation: the gate's key table and nothing else.
 */
@State(org.openjdk.jmh.annotations.Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE, Pools.HEAP_MIN, Pools.HEAP_MAX,
    Pools.PRE_TOUCH, Pools.QUIET_COMMANDS, Pools.WORK_APART})
public class GateKeyed {
    /** Operations per benchmark operation: the item count the table divides by. */
    @Param({"200000"})
    public int ops;

    /** Distinct keys. */
    @Param({"1000"})
    public int keys;

    /** {@link Blackhole#consumeCPU} tokens of work per operation; 500 is about 1 us. */
    @Param({"500"})
    public long tokens;

    private final LongAdder ran = new LongAdder();
    private Runnable work;
    private int[] keyOf;
    /** The distinct keys in {@link #keyOf}: what the future chain and kotlinx keep afterwards. */
    private int keysDrawn;
    private KeyedSerialGate<Integer> gate;
    private Task<Void> coroRoot;
    private Task<Void> workAloneRoot;
    private KeyTable<TableNode> table;
    private Task<Void> tableAloneRoot;

    /** Draws the keys (Zipf, exponent 1, seeded) and builds the work and the Coro root tasks. */
    @Setup(Level.Trial)
    public void setup() {
        long t = tokens;
        work = () -> {
            Blackhole.consumeCPU(t);
            ran.increment();
        };
        keyOf = zipf(ops, keys, 42);
        keysDrawn = (int) Arrays.stream(keyOf).distinct().count();
        gate = new KeyedSerialGate<>();
        Task<Void> w = Task.fromRunnable(work);
        int[] k = keyOf;
        KeyedSerialGate<Integer> g = gate;
        coroRoot = Pools.Coro.spawnEach(ops, i -> g.within(k[i], w)); // k.length == ops
        workAloneRoot = Pools.Coro.spawnAll(ops, w);
        table = new KeyTable<>(256); // the size a KeyedSerialGate starts with
        KeyTable<TableNode> kt = table;
        Runnable r = work;
        tableAloneRoot = Pools.Coro.spawnEach(ops, i -> Task.fromRunnable(() -> {
            TableNode node = new TableNode(k[i]);
            boolean placed = kt.putIfAbsent(node) == null;
            r.run();
            if (placed) {
                kt.remove(node);
            }
        }));
    }

    /** A key's node in {@link #tableAlone}'s table. */
    private static final class TableNode extends KeyTable.Node<Integer> {
        TableNode(Integer key) {
            super(key);
        }
    }

    /** {@code n} keys in {@code [0, keys)}, Zipf-distributed with exponent 1. */
    static int[] zipf(int n, int keys, long seed) {
        double[] cdf = new double[keys];
        double sum = 0;
        for (int i = 0; i < keys; i++) {
            sum += 1.0 / (i + 1);
            cdf[i] = sum;
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            double u = random.nextDouble() * sum;
            int lo = 0;
            int hi = keys - 1;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (cdf[mid] < u) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            out[i] = lo;
        }
        return out;
    }

    /**
     * Coro: a root task on the pool spawns {@code gate.within(key, work)} per operation on one
     * {@code KeyedSerialGate<Integer>} and joins the scope.
     *
     * @param coro the pool
     * @return the operations that ran
     */
    @Benchmark
    public long coro(Pools.Coro coro) {
        ran.reset();
        coro.join(coroRoot, "GateKeyed.coro");
        return check(gate.activeKeys(), 0, "KeyedSerialGate entries left");
    }

    /**
     * The work alone: the same spawns without the gate, on the same pool.
     *
     * @param coro the pool
     * @return the operations that ran
     */
    @Benchmark
    public long workAlone(Pools.Coro coro) {
        ran.reset();
        coro.join(workAloneRoot, "GateKeyed.workAlone");
        return check(0, 0, "(no gate)");
    }

    /**
     * A floor, not a gate: each operation places a node for its key in the key table
     * {@code KeyedSerialGate} keeps its keys in ({@code KeyTable}, 256 bins), runs the work and
     * removes the node; an operation that finds its key in use runs at once, without waiting (no
     * exclusion), and removes nothing. It measures the table alone, two CASes per operation whose key
     * is free: what any design pays that keeps each key's state where both workers write it.
     *
     * @param coro the pool
     * @return the operations that ran
     */
    @Benchmark
    public long tableAlone(Pools.Coro coro) {
        ran.reset();
        coro.join(tableAloneRoot, "GateKeyed.tableAlone");
        return check(table.size(), 0, "KeyTable nodes left");
    }

    /**
     * Guava: one virtual thread per operation runs {@code lock = striped.get(key); lock.lock(); try
     * { work } finally { lock.unlock(); }} on {@code Striped.lock(1024)}. Two carriers.
     *
     * @param vt checks the carrier count
     * @return the operations that ran
     * @throws InterruptedException if interrupted
     */
    @Benchmark
    public long stripedVt(Pools.Virtual vt) throws InterruptedException {
        ran.reset();
        Striped<Lock> striped = Striped.lock(1024);
        int[] k = keyOf;
        Runnable r = work;
        Pools.Virtual.runEach(ops, i -> () -> {
            Lock lock = striped.get(k[i]);
            lock.lock();
            try {
                r.run();
            } finally {
                lock.unlock();
            }
        }, "GateKeyed.stripedVt");
        return check(0, 0, "(striped)");
    }

    /**
     * The hand-written idiom: a {@code ConcurrentHashMap<Integer, CompletableFuture<Void>>} whose
     * {@code compute} chains each operation after the previous one of its key
     * ({@code prev.thenRunAsync(work, pool)}), on a two-worker {@code ForkJoinPool}; then waits for
     * every key's last future. Keeps one future per key ever used.
     *
     * @param fj the pool
     * @return the operations that ran
     */
    @Benchmark
    public long futureChain(Pools.ForkJoin fj) {
        ran.reset();
        ConcurrentHashMap<Integer, CompletableFuture<Void>> tails = new ConcurrentHashMap<>();
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
        Runnable r = work;
        Watchdog.begin("GateKeyed.futureChain");
        try {
            for (int key : keyOf) {
                tails.compute(key, (k, prev) -> (prev == null ? done : prev).thenRunAsync(r, fj.pool));
            }
            CompletableFuture.allOf(tails.values().toArray(CompletableFuture[]::new)).join();
        } finally {
            Watchdog.end();
        }
        return check(tails.size(), keysDrawn, "futures in the chain's map (one per key used)");
    }

    /**
     * kotlinx.coroutines: a {@code Mutex} per key in a {@code ConcurrentHashMap}
     * ({@code computeIfAbsent}), one coroutine per operation, on the two-thread Default scheduler.
     * Keeps one mutex per key ever used.
     *
     * @param kx the dispatcher
     * @return the operations that ran
     */
    @Benchmark
    public long kotlinx(Pools.Kotlinx kx) {
        ran.reset();
        int mutexes;
        Watchdog.begin("GateKeyed.kotlinx");
        try {
            mutexes = KotlinxGatePeers.kotlinxMutexPerKey(keyOf, work, kx.dispatcher);
        } finally {
            Watchdog.end();
        }
        return check(mutexes, keysDrawn, "kotlinx mutexes (one per key used)");
    }

    private long check(int left, int expected, String what) {
        long count = ran.sum();
        if (count != ops) {
            throw new IllegalStateException("ran " + count + " operations, expected " + ops);
        }
        if (left != expected) {
            throw new IllegalStateException(what + ": " + left + ", expected " + expected);
        }
        return count;
    }
}
