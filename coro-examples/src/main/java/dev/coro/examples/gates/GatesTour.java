package dev.coro.examples.gates;

import dev.coro.gate.CapacityGate;
import dev.coro.gate.CompletionGate;
import dev.coro.gate.PhaseGate;
import dev.coro.gate.PredicateGate;
import dev.coro.gate.ReadWriteGate;
import dev.coro.gate.ReadinessGate;
import dev.coro.gate.SerialGate;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.Deflater;

/**
 * The examples of paper P4215 (seed 003), one runnable program each, on Coro's gates: {@code ./coro
 * demo gates}. Every example spawns its operations into a {@link Scope} on a work-stealing pool,
 * simulates I/O with {@link Task#delay(Duration)}, joins the scope, and prints what its gate
 * guaranteed (the most operations seen inside at once, the order of phases, what ran and what was
 * skipped). {@code GatesTourTest} checks each printed fact.
 */
public final class GatesTour {
    private static final Duration IO = Duration.ofMillis(1);

    private final PrintStream out;
    private final WorkStealingPool pool;

    /**
     * Creates the tour on {@code pool}.
     *
     * @param out where it prints
     * @param pool where the examples' operations run (the paper's scheduler; more workers than any
     *     gate's limit shows that the gate, not the pool, bounds the work)
     */
    public GatesTour(PrintStream out, WorkStealingPool pool) {
        this.out = out;
        this.pool = pool;
    }

    /** Runs every example on an 8-worker pool and prints what each shows. */
    public static void main(String[] args) {
        try (WorkStealingPool pool = WorkStealingPool.create(8, "gates")) {
            new GatesTour(System.out, pool).runAll();
        }
    }

    /** Runs every example, in the paper's order. */
    public void runAll() {
        serializedCacheUpdates(200);
        serialConnection(50);
        readMostlyCache(200, 5);
        serviceCapacityLimit(64);
        compressionLimit(24);
        opportunisticRefresh(10);
        initializationReadiness(5);
        configurationReadiness(5);
        configurationReadinessWithAPredicate(5);
        startupCompletion();
        batchSummary(12);
        iterationPhases(4, 3);
        pipelineStages(6);
    }

    private void line(String text) {
        synchronized (out) {
            out.println(text);
        }
    }

    /** Spawns every task into a fresh scope on the pool and waits for all of them. */
    private void runAll(List<? extends Task<?>> tasks) {
        Scope scope = Scope.on(pool);
        for (Task<?> task : tasks) {
            scope.spawn(task);
        }
        scope.joinBlocking();
        scope.close();
    }

    // ---- serial_gate ----

    /** What {@link #serializedCacheUpdates(int)} saw. */
    public record CacheUpdates(int updates, int total, int mostInside) {}

    /**
     * Serialized cache updates: each update reads a plain {@code HashMap}, waits (I/O), then writes
     * back; the serial gate makes every read-modify-write whole, so no increment is lost.
     *
     * @param updates how many updates to start at once
     * @return the cache's total and the most updates seen inside at once
     */
    public CacheUpdates serializedCacheUpdates(int updates) {
        SerialGate cacheUpdateGate = new SerialGate();
        Map<String, Integer> cache = new HashMap<>(); // not thread-safe: the gate protects it
        Occupancy inside = new Occupancy();
        List<Task<Void>> work = new ArrayList<>();
        for (int i = 0; i < updates; i++) {
            String key = "k" + (i % 4);
            int[] read = new int[1];
            Task<Void> update = Task.fromRunnable(() -> {
                        inside.enter();
                        read[0] = cache.getOrDefault(key, 0);
                    })
                    .then(Task.yieldNow()) // another worker would interleave here without the gate
                    .then(Task.fromRunnable(() -> {
                        cache.put(key, read[0] + 1);
                        inside.exit();
                    }));
            work.add(cacheUpdateGate.within(update));
        }
        runAll(work);
        int total = cache.values().stream().mapToInt(Integer::intValue).sum();
        line("serialized cache updates: " + updates + " updates, cache total " + total
                + ", at most " + inside.most() + " inside at once");
        cacheUpdateGate.closeAndCheck();
        return new CacheUpdates(updates, total, inside.most());
    }

    /** What {@link #serialConnection(int)} saw. */
    public record SerialConnection(int requests, int answered, int overlaps) {}

    /**
     * A serial connection: a protocol that allows one request in flight. Requests are built and
     * started independently; the gate sends them one at a time.
     *
     * @param requests how many requests to start at once
     * @return how many were answered and how often two were in flight together
     */
    public SerialConnection serialConnection(int requests) {
        SerialGate connectionGate = new SerialGate();
        AtomicBoolean inFlight = new AtomicBoolean();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger answered = new AtomicInteger();
        List<Task<Void>> work = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            Task<Void> roundTrip = Task.fromRunnable(() -> {
                        if (!inFlight.compareAndSet(false, true)) {
                            overlaps.incrementAndGet(); // the protocol would be corrupted here
                        }
                    })
                    .then(Task.delay(IO)) // the reply travels
                    .then(Task.fromRunnable(() -> {
                        answered.incrementAndGet();
                        inFlight.set(false);
                    }));
            work.add(connectionGate.within(roundTrip));
        }
        runAll(work);
        line("serial connection: " + answered.get() + " of " + requests + " requests answered, "
                + overlaps.get() + " sent while another was in flight");
        connectionGate.closeAndCheck();
        return new SerialConnection(requests, answered.get(), overlaps.get());
    }

    // ---- read_write_gate ----

    /** What {@link #readMostlyCache(int, int)} saw. */
    public record ReadMostly(int lookups, int inserts, int mostReaders, int readersDuringWrites,
            int mostWriters) {}

    /**
     * A read-mostly cache: lookups share the cache, inserts are exclusive.
     *
     * @param lookups how many lookups to start
     * @param inserts how many inserts to start among them
     * @return the most concurrent readers, and readers or writers seen during a write
     */
    public ReadMostly readMostlyCache(int lookups, int inserts) {
        ReadWriteGate cacheGate = new ReadWriteGate();
        Map<Integer, String> cache = new HashMap<>();
        Occupancy readers = new Occupancy();
        Occupancy writers = new Occupancy();
        AtomicInteger readersDuringWrites = new AtomicInteger();
        List<Task<?>> work = new ArrayList<>();
        int every = Math.max(1, lookups / Math.max(1, inserts));
        int insertCount = 0;
        for (int i = 0; i < lookups; i++) {
            int key = i % 16;
            Task<String> lookup = Task.fromRunnable(readers::enter)
                    .then(Task.delay(IO))
                    .then(Task.fromCallable(() -> {
                        String found = cache.get(key);
                        readers.exit();
                        return found;
                    }));
            work.add(cacheGate.withinRead(lookup));
            if (i % every == 0 && insertCount < inserts) {
                insertCount++;
                Task<Void> insert = Task.fromRunnable(() -> {
                    writers.enter();
                    readersDuringWrites.addAndGet(readers.now());
                    cache.put(key, "v" + key);
                    writers.exit();
                });
                work.add(cacheGate.withinWrite(insert));
            }
        }
        runAll(work);
        line("read-mostly cache: " + lookups + " lookups and " + insertCount + " inserts; up to "
                + readers.most() + " lookups at once, " + readersDuringWrites.get()
                + " lookups inside during an insert, at most " + writers.most() + " insert at once");
        cacheGate.closeAndCheck();
        return new ReadMostly(lookups, insertCount, readers.most(), readersDuringWrites.get(), writers.most());
    }

    // ---- capacity_gate ----

    /** What a capacity example saw. */
    public record Bounded(int operations, int limit, int mostInside, int poolWorkers) {}

    /**
     * A service capacity limit of 8: fetches from an external service, at most 8 in flight.
     *
     * @param fetches how many fetches to start at once
     * @return the most fetches seen in flight at once
     */
    public Bounded serviceCapacityLimit(int fetches) {
        CapacityGate serviceGate = new CapacityGate(8);
        Occupancy inFlight = new Occupancy();
        List<Task<Void>> work = new ArrayList<>();
        for (int i = 0; i < fetches; i++) {
            Task<Void> fetch = Task.fromRunnable(inFlight::enter)
                    .then(Task.delay(IO))
                    .then(Task.fromRunnable(inFlight::exit));
            work.add(serviceGate.within(fetch));
        }
        runAll(work);
        line("service capacity limit: " + fetches + " fetches, at most " + inFlight.most()
                + " in flight (limit 8)");
        serviceGate.closeAndCheck();
        return new Bounded(fetches, 8, inFlight.most(), pool.workers());
    }

    /**
     * A compression limit of 4: CPU-heavy work bounded by the program, not by the pool, which has
     * more workers.
     *
     * @param files how many compressions to start at once
     * @return the most compressions seen running at once
     */
    public Bounded compressionLimit(int files) {
        CapacityGate compressionGate = new CapacityGate(4);
        Occupancy running = new Occupancy();
        byte[] input = new byte[64 * 1024];
        ThreadLocalRandom.current().nextBytes(input);
        List<Task<Integer>> work = new ArrayList<>();
        for (int i = 0; i < files; i++) {
            Task<Integer> compress = Task.fromCallable(() -> {
                running.enter();
                try {
                    return deflatedSize(input);
                } finally {
                    running.exit();
                }
            });
            work.add(compressionGate.within(compress));
        }
        runAll(work);
        line("compression limit: " + files + " files on a " + pool.workers()
                + "-worker pool, at most " + running.most() + " compressing at once (limit 4)");
        compressionGate.closeAndCheck();
        return new Bounded(files, 4, running.most(), pool.workers());
    }

    private static int deflatedSize(byte[] input) {
        Deflater deflater = new Deflater(Deflater.BEST_COMPRESSION);
        try {
            deflater.setInput(input);
            deflater.finish();
            byte[] buffer = new byte[input.length + 64];
            int size = 0;
            while (!deflater.finished()) {
                size += deflater.deflate(buffer);
            }
            return size;
        } finally {
            deflater.end();
        }
    }

    // ---- try_acquire ----

    /** What {@link #opportunisticRefresh(int)} saw. */
    public record Refresh(int attemptsWhileBusy, int ranWhileBusy, boolean ranWhenFree) {}

    /**
     * Opportunistic refresh with {@code tryWithin}: a refresh is useful only if it can start now; while
     * a cache update holds the gate every attempt is skipped (cancelled, never queued), and once the
     * gate is free an attempt runs.
     *
     * @param attempts how many refreshes to attempt while the gate is busy
     * @return how many ran while busy (none) and whether one ran when free
     */
    @SuppressWarnings("try") // the admission is held for its effect: the gate is busy inside the block
    public Refresh opportunisticRefresh(int attempts) {
        SerialGate cacheUpdateGate = new SerialGate();
        AtomicInteger refreshed = new AtomicInteger();
        Task<Void> refreshCacheSnapshot = Task.fromRunnable(refreshed::incrementAndGet);
        int ranWhileBusy;
        try (var update = cacheUpdateGate.acquire().join()) { // a long cache update is admitted
            for (int i = 0; i < attempts; i++) {
                cacheUpdateGate.tryWithin(refreshCacheSnapshot).outcome().join(); // cancelled: skipped
            }
            ranWhileBusy = refreshed.get();
        }
        cacheUpdateGate.tryWithin(refreshCacheSnapshot).join();
        boolean ranWhenFree = refreshed.get() == ranWhileBusy + 1;
        line("opportunistic refresh: " + attempts + " attempts while an update held the gate, "
                + ranWhileBusy + " ran; " + (ranWhenFree ? "one ran" : "none ran") + " once it was free");
        cacheUpdateGate.closeAndCheck();
        return new Refresh(attempts, ranWhileBusy, ranWhenFree);
    }

    // ---- readiness_gate ----

    /** What a readiness example saw. */
    public record Readiness(int requests, int servedBeforeReady, int served) {}

    /**
     * Initialization readiness: queries created before the service has started are admitted only
     * once {@code start_service} has established readiness.
     *
     * @param queries how many queries to start before the service
     * @return how many were served before readiness (none) and in all
     */
    public Readiness initializationReadiness(int queries) {
        ReadinessGate initialized = new ReadinessGate();
        AtomicBoolean started = new AtomicBoolean();
        AtomicInteger early = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        List<Task<?>> work = new ArrayList<>();
        for (int i = 0; i < queries; i++) {
            work.add(initialized.within(Task.fromRunnable(() -> {
                if (!started.get()) {
                    early.incrementAndGet();
                }
                served.incrementAndGet();
            })));
        }
        Task<Void> startService = Task.delay(IO)
                .then(Task.fromRunnable(() -> started.set(true)))
                .then(Task.fromRunnable(initialized::setReady));
        work.add(startService);
        runAll(work);
        line("initialization readiness: " + served.get() + " of " + queries + " queries served, "
                + early.get() + " before the service had started");
        initialized.closeAndCheck();
        return new Readiness(queries, early.get(), served.get());
    }

    /** The configuration the readiness examples load. */
    private record Configuration(String name, int version) {}

    /**
     * Configuration readiness, explicit design: requests wait until the first configuration has been
     * loaded and {@code setReady()} says so.
     *
     * @param requests how many requests to start before the configuration loads
     * @return how many were served before the configuration (none) and in all
     */
    public Readiness configurationReadiness(int requests) {
        ReadinessGate configLoaded = new ReadinessGate();
        Configuration[] config = new Configuration[1]; // written before setReady, read after admission
        AtomicInteger withoutConfig = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        List<Task<?>> work = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            work.add(configLoaded.within(Task.fromRunnable(() -> {
                if (config[0] == null) {
                    withoutConfig.incrementAndGet();
                }
                served.incrementAndGet();
            })));
        }
        work.add(Task.delay(IO)
                .then(Task.fromRunnable(() -> config[0] = new Configuration("service.conf", 1)))
                .then(Task.fromRunnable(configLoaded::setReady)));
        runAll(work);
        line("configuration readiness (setReady): " + served.get() + " requests served, "
                + withoutConfig.get() + " saw no configuration");
        configLoaded.closeAndCheck();
        return new Readiness(requests, withoutConfig.get(), served.get());
    }

    /**
     * Configuration readiness, predicate-owned design: the gate owns the predicate "both halves of the
     * configuration are loaded"; each loader calls {@code update()} after its half, and only the
     * second update admits the requests (one {@code setReady} after the first half would have been
     * wrong; the predicate cannot be).
     *
     * @param requests how many requests to start before the configuration loads
     * @return how many were served before the whole configuration (none) and in all
     */
    public Readiness configurationReadinessWithAPredicate(int requests) {
        Configuration[] halves = new Configuration[2]; // each written before its update()
        PredicateGate configLoaded = new PredicateGate(() -> halves[0] != null && halves[1] != null);
        AtomicInteger partial = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        List<Task<?>> work = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            work.add(configLoaded.within(Task.fromRunnable(() -> {
                if (halves[0] == null || halves[1] == null) {
                    partial.incrementAndGet();
                }
                served.incrementAndGet();
            })));
        }
        for (int half = 0; half < 2; half++) {
            int h = half;
            work.add(Task.delay(IO.multipliedBy(h + 1))
                    .then(Task.fromRunnable(() -> halves[h] = new Configuration("part" + h, 1)))
                    .then(Task.fromRunnable(configLoaded::update)));
        }
        runAll(work);
        line("configuration readiness (predicate): " + served.get() + " requests served after two "
                + "updates, " + partial.get() + " saw a partial configuration");
        configLoaded.closeAndCheck();
        return new Readiness(requests, partial.get(), served.get());
    }

    // ---- completion_gate ----

    /** What a completion example saw. */
    public record Completion(int contributors, int finishedBeforeDependent, boolean dependentRan) {}

    /**
     * Startup completion of three tasks: loading the index, connecting the database and warming the
     * cache run concurrently; accepting requests is admitted after all three have arrived.
     *
     * @return how many startup tasks had finished when requests were accepted (all three)
     */
    public Completion startupCompletion() {
        CompletionGate startupDone = new CompletionGate(3);
        AtomicInteger finished = new AtomicInteger();
        AtomicInteger seenByAccept = new AtomicInteger(-1);
        List<Task<?>> work = new ArrayList<>();
        work.add(startupDone.within(Task.fromRunnable(() -> seenByAccept.set(finished.get()))));
        for (String step : List.of("load index", "connect database", "warm cache")) {
            Task<String> startup = Task.delay(IO).then(Task.fromCallable(() -> {
                finished.incrementAndGet();
                return step;
            }));
            work.add(startupDone.contribute(startup));
        }
        runAll(work);
        line("startup completion: accepting requests began after " + seenByAccept.get()
                + " of 3 startup tasks had finished");
        startupDone.closeAndCheck();
        return new Completion(3, seenByAccept.get(), seenByAccept.get() >= 0);
    }

    /**
     * A batch summary: one arrival per processed file; the summary is written after the whole batch.
     *
     * @param files how many files the batch has
     * @return how many files were processed when the summary was written (all)
     */
    public Completion batchSummary(int files) {
        CompletionGate batchDone = new CompletionGate(files);
        ConcurrentLinkedQueue<String> processed = new ConcurrentLinkedQueue<>();
        AtomicInteger inSummary = new AtomicInteger(-1);
        List<Task<?>> work = new ArrayList<>();
        work.add(batchDone.within(Task.fromRunnable(() -> inSummary.set(processed.size()))));
        for (int i = 0; i < files; i++) {
            String path = "file-" + i + ".csv";
            work.add(batchDone.contribute(Task.delay(IO).then(Task.fromRunnable(() -> processed.add(path)))));
        }
        runAll(work);
        line("batch summary: written after " + inSummary.get() + " of " + files + " files");
        batchDone.closeAndCheck();
        return new Completion(files, inSummary.get(), inSummary.get() >= 0);
    }

    // ---- phase_gate ----

    /** What a phase example saw: every participant's steps, in the order they ran. */
    public record Phases(int participants, int boundaries, List<String> log, int orderViolations) {}

    /**
     * Iteration phases: each worker computes a step, exchanges boundaries only after every worker has
     * computed, and computes the next step only after every worker has exchanged.
     *
     * @param workers participants
     * @param iterations how many compute/exchange rounds
     * @return the log of steps and how many ran in a phase they should not have (none)
     */
    public Phases iterationPhases(int workers, int iterations) {
        PhaseGate iterationDone = new PhaseGate(workers);
        PhaseLog log = new PhaseLog(workers);
        List<Task<?>> work = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int worker = w;
            Task<Void> participant = log.step(0, "compute", worker);
            for (int i = 0; i < iterations; i++) {
                int base = 1 + 2 * i;
                participant = participant
                        .then(iterationDone.arriveAndWait(log.step(base, "exchange", worker)))
                        .then(iterationDone.arriveAndWait(log.step(base + 1, "compute", worker)));
            }
            work.add(participant);
        }
        runAll(work);
        line("iteration phases: " + workers + " workers, " + (2 * iterations) + " boundaries, "
                + log.violations() + " steps ran ahead of their phase");
        iterationDone.closeAndCheck();
        return new Phases(workers, 2 * iterations, log.entries(), log.violations());
    }

    /**
     * Pipeline stages: every participant parses, then (after all parsed) validates, then (after all
     * validated) publishes; work inside a stage runs concurrently.
     *
     * @param participants participants
     * @return the log of stages and how many ran ahead of their stage (none)
     */
    public Phases pipelineStages(int participants) {
        PhaseGate stageDone = new PhaseGate(participants);
        PhaseLog log = new PhaseLog(participants);
        List<Task<?>> work = new ArrayList<>();
        for (int p = 0; p < participants; p++) {
            work.add(log.step(0, "parse", p)
                    .then(stageDone.arriveAndWait(log.step(1, "validate", p)))
                    .then(stageDone.arriveAndWait(log.step(2, "publish", p))));
        }
        runAll(work);
        line("pipeline stages: " + participants + " participants parsed, validated, published; "
                + log.violations() + " stages ran ahead");
        stageDone.closeAndCheck();
        return new Phases(participants, 2, log.entries(), log.violations());
    }

    /** Records each participant's step and counts steps that started before the previous phase ended. */
    private static final class PhaseLog {
        private final int participants;
        private final AtomicInteger[] ended = new AtomicInteger[64];
        private final ConcurrentLinkedQueue<String> entries = new ConcurrentLinkedQueue<>();
        private final AtomicInteger violations = new AtomicInteger();

        PhaseLog(int participants) {
            this.participants = participants;
            for (int i = 0; i < ended.length; i++) {
                ended[i] = new AtomicInteger();
            }
        }

        Task<Void> step(int phase, String name, int participant) {
            return Task.fromRunnable(() -> {
                        if (phase > 0 && ended[phase - 1].get() != participants) {
                            violations.incrementAndGet(); // a step began before its phase opened
                        }
                        entries.add(phase + ":" + name + "#" + participant);
                    })
                    .then(Task.delay(Duration.ofMillis(ThreadLocalRandom.current().nextInt(2))))
                    .then(Task.fromRunnable(() -> ended[phase].incrementAndGet()));
        }

        List<String> entries() {
            return List.copyOf(entries);
        }

        int violations() {
            return violations.get();
        }
    }
}
