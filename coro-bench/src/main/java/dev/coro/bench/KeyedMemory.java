package dev.coro.bench;

import com.google.common.util.concurrent.Striped;
import dev.coro.gate.KeyedSerialGate;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.lang.ref.Reference;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * keyed-memory: retained heap per idle key after {@code --keys} (100,000) keys were each used once
 * (every 10th twice at once), for Coro's {@link KeyedSerialGate}, a {@code ConcurrentHashMap} of
 * futures chained per key, a {@code ConcurrentHashMap} of {@code ReentrantLock}s per key (the
 * lock-per-key idiom, the shape of a kotlinx {@code Mutex} per key) and Guava's
 * {@code Striped.lock(1024)}. A plain main, not a JMH benchmark: it measures bytes. Per
 * implementation: full GCs and the used heap, the structure built, the keys run through it (Coro on
 * a two-worker pool in batches of 1,000; the future chain on a fixed pool of two threads; the lock
 * per key and the striped locks on one virtual thread per use), full GCs and the used heap again while the
 * structure is still referenced. Retained per key = (after - before) / keys. Run it with
 * {@code ./coro bench --keyed-memory}.
 */
public final class KeyedMemory {
    private KeyedMemory() {}

    /** The options ({@link Arguments} reads them). */
    @Command(name = "keyed-memory",
            description = "Retained heap per idle key: Coro's KeyedSerialGate and its peers.")
    static final class Settings {
        @Option(names = "--keys", paramLabel = "N", description = "keys run through each structure (default ${DEFAULT-VALUE})")
        int keys = 100_000;

        @Mixin
        Arguments.Help help;
    }

    /**
     * Runs the measurement.
     *
     * @param args {@code --keys N}, {@code --help}
     * @throws Exception if a run fails
     */
    public static void main(String[] args) throws Exception {
        Settings settings = new Settings();
        if (!Arguments.parse(settings, args)) {
            return;
        }
        int keys = settings.keys;
        System.out.printf(Locale.ROOT, "keyed-memory: retained heap after %,d keys used once (every 10th twice at once),"
                + " with the structure still referenced%n", keys);
        measure("coro KeyedSerialGate", keys, KeyedMemory::coro);
        measure("ConcurrentHashMap<K, CompletableFuture> chain", keys, KeyedMemory::futureChain);
        measure("ConcurrentHashMap<K, ReentrantLock>", keys, KeyedMemory::lockPerKey);
        measure("Guava Striped.lock(1024)", keys, KeyedMemory::striped);
    }

    /** Runs {@code keys} keys through a new structure and returns it (to keep it referenced). */
    interface Run {
        Object run(int keys) throws Exception;
    }

    private static void measure(String name, int keys, Run run) throws Exception {
        run.run(keys / 10); // warm-up: classes loaded, pools grown
        long before = WaiterMemory.usedAfterGc();
        Object structure = run.run(keys);
        long after = WaiterMemory.usedAfterGc();
        Reference.reachabilityFence(structure);
        System.out.printf(Locale.ROOT, "%-48s %,12d bytes retained, %8.1f bytes per key%n", name, after - before,
                (after - before) / (double) keys);
    }

    private static Object coro(int keys) {
        KeyedSerialGate<Long> gate = new KeyedSerialGate<>();
        LongAdder ran = new LongAdder();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<CompletableFuture<Void>> batch = new ArrayList<>();
            for (long k = 0; k < keys; k++) {
                Task<Void> op = gate.within(k, Task.fromRunnable(ran::increment));
                batch.add(op.startOn(pool).toCompletableFuture());
                if (k % 10 == 0) {
                    batch.add(op.startOn(pool).toCompletableFuture());
                }
                if (batch.size() >= 1_000) {
                    batch.forEach(CompletableFuture::join);
                    batch.clear();
                }
            }
            batch.forEach(CompletableFuture::join);
        }
        checkRan(ran, keys);
        if (gate.activeKeys() != 0) {
            throw new IllegalStateException(gate.activeKeys() + " entries left");
        }
        return gate;
    }

    private static Object futureChain(int keys) {
        ConcurrentHashMap<Long, CompletableFuture<Void>> tails = new ConcurrentHashMap<>();
        LongAdder ran = new LongAdder();
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            for (long k = 0; k < keys; k++) {
                int times = k % 10 == 0 ? 2 : 1;
                for (int t = 0; t < times; t++) {
                    tails.compute(k, (key, prev) -> (prev == null ? done : prev).thenRunAsync(ran::increment, pool));
                }
            }
            CompletableFuture.allOf(tails.values().toArray(CompletableFuture[]::new)).join();
        }
        checkRan(ran, keys);
        return tails;
    }

    private static Object lockPerKey(int keys) throws InterruptedException {
        ConcurrentHashMap<Long, Lock> locks = new ConcurrentHashMap<>();
        runOnVirtualThreads(keys, k -> locks.computeIfAbsent(k, key -> new ReentrantLock()));
        return locks;
    }

    private static Object striped(int keys) throws InterruptedException {
        Striped<Lock> striped = Striped.lock(1024);
        runOnVirtualThreads(keys, striped::get);
        return striped;
    }

    private static void runOnVirtualThreads(int keys, java.util.function.LongFunction<Lock> lockOf)
            throws InterruptedException {
        LongAdder ran = new LongAdder();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            for (long k = 0; k < keys; k++) {
                long key = k;
                int times = k % 10 == 0 ? 2 : 1;
                for (int t = 0; t < times; t++) {
                    threads.execute(() -> {
                        Lock lock = lockOf.apply(key);
                        lock.lock();
                        try {
                            ran.increment();
                        } finally {
                            lock.unlock();
                        }
                    });
                }
            }
        }
        checkRan(ran, keys);
    }

    /** Every key ran once, and every 10th once more. */
    private static void checkRan(LongAdder ran, int keys) {
        long expected = keys + (keys + 9L) / 10;
        if (ran.sum() != expected) {
            throw new IllegalStateException("ran " + ran.sum() + " uses, expected " + expected);
        }
    }
}
