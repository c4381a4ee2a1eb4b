package dev.coro.bench;

import dev.coro.bench.peers.KotlinxMutexPeers;
import dev.coro.bench.peers.KotlinxMutexWaiters;
import dev.coro.bench.peers.KotlinxPeers;
import dev.coro.channel.Channel;
import dev.coro.gate.Admission;
import dev.coro.gate.CapacityGate;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.sync.AsyncMutex;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import javax.management.ObjectName;
import kotlinx.coroutines.CoroutineDispatcher;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import org.openjdk.jol.info.ClassLayout;
import org.openjdk.jol.vm.VM;
import picocli.CommandLine.Option;

/**
 * waiter-memory: retained heap per task suspended on a held lock, for Coro's {@link AsyncMutex},
 * kotlinx's {@code Mutex} and a virtual thread parked in {@link ReentrantLock#lock()}; and for Coro
 * tasks suspended in {@code CapacityGate(1).within} and on a rendezvous channel (receivers, senders).
 * A plain main, not a JMH benchmark: it measures bytes, not time.
 *
 * <p>Per implementation and round: take the lock on the main thread, force a few full GCs and read
 * the used heap; start {@code --waiters} (200,000) tasks / coroutines / virtual threads that each
 * announce themselves and then call {@code lock()}; wait until all have announced (and, for
 * {@code ReentrantLock}, until its queue length is the full count), let the pool settle, force the
 * GCs again and read the used heap. Bytes per waiter = (after - before) / waiters. Then unlock: every
 * waiter takes the lock in turn, increments a plain counter and unlocks; the round fails unless the
 * counter equals the waiter count and the lock ends free.
 *
 * <p>Nothing outside the library keeps a waiter alive: the task description is shared by all of
 * them, spawn handles, {@code Job}s and {@code Thread}s are not stored, so what remains is each
 * library's own per-waiter state (task/coroutine/thread, its stack or frames, the lock's queue node,
 * the scope's bookkeeping). One unmeasured round with the same number of waiters runs first, so that
 * queues which grow and stay grown (a pool's submission queue, the carrier pool's) are already grown
 * in the "before" reading and do not count as per-waiter memory.
 *
 * <p>Options: {@code --waiters N} (200000), {@code --rounds R} measured rounds per implementation (3;
 * the median is reported, min and max beside it), {@code --histogram} (also print, per
 * implementation, the classes whose live instances grew most, per waiter: the class histogram of
 * {@code jcmd <pid> GC.class_histogram}, taken through the DiagnosticCommand MBean), {@code --layout}
 * (first print the field layout, by JOL, of the objects a suspended Coro task keeps), and
 * implementation names to run a subset ({@link #IMPLS}: {@code coro}, {@code kotlinx},
 * {@code virtualThreads}, {@code coroCapacityGate}, {@code coroChannelReceiver}, {@code coroChannelSender}).
 * Run it with {@code ./coro bench --memory [options]}, which forks a JVM with the benchmarks' flags.
 */
public final class WaiterMemory {
    /** Implementations, in table order; the first is the baseline. */
    static final List<String> IMPLS = List.of("coro", "kotlinx", "virtualThreads", "coroCapacityGate",
            "coroChannelReceiver", "coroChannelSender");

    private static final long SETTLE_MILLIS = 300;
    private static final long ARRIVAL_TIMEOUT_SECONDS = Long.getLong("bench.hangSeconds", 60);

    private WaiterMemory() {}

    /** One round: a held lock, waiters parked on it, then everything released. */
    interface Round {
        /** Starts {@code n} waiters on the held lock. */
        void park(int n);

        /** Whether all {@code n} waiters have reached the lock. */
        boolean parked(int n);

        /** Unlocks, waits for every waiter to acquire and release, returns how many acquired. */
        long release() throws InterruptedException;
    }

    /** An implementation: makes rounds on its long-lived pool or dispatcher. */
    interface Subject extends AutoCloseable {
        Round newRound();

        @Override
        default void close() {}
    }

    /** The result of one implementation. */
    record Measurement(String impl, int waiters, long[] beforeBytes, long[] afterBytes, String histogram) {
        double[] perWaiter() {
            double[] r = new double[beforeBytes.length];
            for (int i = 0; i < r.length; i++) {
                r[i] = (afterBytes[i] - beforeBytes[i]) / (double) waiters;
            }
            return r;
        }

        double median() {
            double[] p = perWaiter();
            Arrays.sort(p);
            return p.length % 2 == 1 ? p[p.length / 2] : (p[p.length / 2 - 1] + p[p.length / 2]) / 2;
        }
    }

    /** The options ({@link Arguments} reads them). */
    @Command(name = "waiter-memory", sortOptions = false,
            description = "Retained heap per waiter parked on a held lock: Coro, kotlinx, virtual threads.")
    static final class Settings {
        @Option(names = "--waiters", paramLabel = "N", description = "waiters per round (default ${DEFAULT-VALUE})")
        int waiters = 200_000;

        @Option(names = "--rounds", paramLabel = "R", description = "measured rounds (default ${DEFAULT-VALUE})")
        int rounds = 3;

        @Option(names = "--histogram", description = "one more round that diffs the class histograms")
        boolean histogram;

        @Option(names = "--layout", description = "first print the field layout (JOL) of a suspended Coro task's objects")
        boolean layout;

        @Mixin
        Arguments.Help help;

        @Mixin
        Arguments.Implementations impls = new Arguments.Implementations(IMPLS);
    }

    /**
     * Measures and prints the table.
     *
     * @param args options, see the class comment
     * @throws Exception if a round fails (wrong count, lock left held, waiters that never arrive)
     */
    public static void main(String[] args) throws Exception {
        Settings settings = new Settings();
        if (!Arguments.parse(settings, args)) {
            return;
        }
        int waiters = settings.waiters;
        int rounds = settings.rounds;
        boolean histogram = settings.histogram;
        List<String> impls = new ArrayList<>(settings.impls.names);
        if (impls.isEmpty()) {
            impls.addAll(IMPLS);
        }
        // the pools are sized by properties read at first use; the forked JVM gets them on its
        // command line (Compare), a direct run gets them here
        defaultProperty("jdk.virtualThreadScheduler.parallelism", String.valueOf(Pools.WORKERS));
        defaultProperty("kotlinx.coroutines.scheduler.core.pool.size", String.valueOf(Pools.WORKERS));

        if (settings.layout) {
            System.out.print(layouts());
        }
        List<Measurement> results = new ArrayList<>();
        for (String impl : impls) {
            try (Subject subject = subject(impl)) {
                results.add(measure(impl, subject, waiters, rounds, histogram));
            }
        }
        System.out.print(table(results));
    }

    private static void defaultProperty(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static Subject subject(String impl) {
        return switch (impl) {
            case "coro" -> new CoroSubject();
            case "coroCapacityGate" -> new GateSubject();
            case "kotlinx" -> kotlinxSubject();
            case "virtualThreads" -> VirtualThreadRound::new;
            case "coroChannelReceiver" -> new ChannelSubject(true);
            case "coroChannelSender" -> new ChannelSubject(false);
            default -> throw new IllegalArgumentException(impl);
        };
    }

    private static Measurement measure(String impl, Subject subject, int n, int rounds, boolean histogram)
            throws Exception {
        System.out.printf(Locale.ROOT, "%s: warm-up round of %,d waiters%n", impl, n);
        System.out.printf(Locale.ROOT, "%s: warm-up: %s%n", impl, runRound(subject.newRound(), n, null));
        long[] before = new long[rounds];
        long[] after = new long[rounds];
        for (int r = 0; r < rounds; r++) {
            long[] reading = new long[2];
            String timing = runRound(subject.newRound(), n, new Probe(reading, null));
            before[r] = reading[0];
            after[r] = reading[1];
            System.out.printf(Locale.ROOT, "%s: round %d: %,d -> %,d bytes used, %.1f bytes per waiter (%s)%n",
                    impl, r + 1, before[r], after[r], (after[r] - before[r]) / (double) n, timing);
        }
        String hist = null;
        if (histogram) { // a round of its own: the first histogram string must not sit in a measured reading
            String[] h = new String[2];
            long[] reading = new long[2];
            runRound(subject.newRound(), n, new Probe(reading, h));
            hist = histogramDiff(h[0], h[1], n);
            System.out.printf(Locale.ROOT, "%s: histogram round: %,d -> %,d bytes used, %.1f bytes per waiter%n",
                    impl, reading[0], reading[1], (reading[1] - reading[0]) / (double) n);
        }
        return new Measurement(impl, n, before, after, hist);
    }

    /** Where a measured round stores its heap readings (and optional histograms). */
    private record Probe(long[] reading, String[] histograms) {}

    /** Runs one round; returns its timings (start, all parked, all released) for the log. */
    private static String runRound(Round round, int n, Probe probe) throws Exception {
        if (probe != null) {
            probe.reading[0] = usedAfterGc();
            if (probe.histograms != null) {
                probe.histograms[0] = classHistogram();
            }
        }
        long t0 = System.nanoTime();
        round.park(n);
        long t1 = System.nanoTime();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(ARRIVAL_TIMEOUT_SECONDS);
        while (!round.parked(n)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("waiters did not all reach the lock within "
                        + ARRIVAL_TIMEOUT_SECONDS + " s");
            }
            Thread.sleep(1);
        }
        long t2 = System.nanoTime();
        Thread.sleep(SETTLE_MILLIS); // the last few announced waiters are at most one step from lock()
        if (probe != null) {
            probe.reading[1] = usedAfterGc();
            if (probe.histograms != null) {
                probe.histograms[1] = classHistogram();
            }
        }
        long t3 = System.nanoTime();
        long acquired = round.release();
        long t4 = System.nanoTime();
        if (acquired != n) {
            throw new IllegalStateException(n + " waiters, but " + acquired + " acquired the lock");
        }
        return String.format(Locale.ROOT, "started in %d ms, all at the lock after %d ms, released and joined in %d ms",
                (t1 - t0) / 1_000_000, (t2 - t0) / 1_000_000, (t4 - t3) / 1_000_000);
    }

    /** Used heap after full collections, once two successive readings agree within 64 KB (at most 5). */
    static long usedAfterGc() throws InterruptedException {
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
            long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            if (Math.abs(used - last) < 64 * 1024) {
                return Math.min(used, last);
            }
            last = used;
        }
        return last;
    }

    /**
     * The field layout, as this JVM lays it out (JOL), of every object a Coro task suspended in a
     * wait keeps alive: its fiber and its step (and the frame array it keeps only from a second frame).
     */
    static String layouts() throws ClassNotFoundException {
        StringBuilder out = new StringBuilder();
        out.append(VM.current().details()).append('\n');
        for (String name : List.of("dev.coro.task.Fiber", "dev.coro.task.AsyncStep")) {
            out.append(ClassLayout.parseClass(Class.forName(name)).toPrintable()).append('\n');
        }
        out.append(ClassLayout.parseInstance(new Object[4]).toPrintable()).append('\n');
        return out.toString();
    }

    /** The live-object class histogram ({@code GC.class_histogram}; it runs a full GC first). */
    static String classHistogram() throws Exception {
        Object out = ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        return (String) out;
    }

    /** The classes whose live bytes grew most between two histograms, per waiter. */
    static String histogramDiff(String before, String after, int n) {
        Map<String, long[]> b = parseHistogram(before);
        Map<String, long[]> a = parseHistogram(after);
        List<Map.Entry<String, long[]>> grown = new ArrayList<>();
        long total = 0;
        for (Map.Entry<String, long[]> e : a.entrySet()) {
            long[] old = b.getOrDefault(e.getKey(), new long[2]);
            long[] d = {e.getValue()[0] - old[0], e.getValue()[1] - old[1]};
            total += d[1];
            grown.add(Map.entry(e.getKey(), d));
        }
        for (Map.Entry<String, long[]> e : b.entrySet()) {
            if (!a.containsKey(e.getKey())) {
                total -= e.getValue()[1];
            }
        }
        grown.sort((x, y) -> Long.compare(y.getValue()[1], x.getValue()[1]));
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "    %12s %14s  %s%n", "instances/w", "bytes/waiter", "class"));
        for (int i = 0; i < Math.min(12, grown.size()); i++) {
            long[] d = grown.get(i).getValue();
            if (d[1] < n / 10) {
                break; // less than 0.1 byte per waiter
            }
            out.append(String.format(Locale.ROOT, "    %12.2f %14.1f  %s%n",
                    d[0] / (double) n, d[1] / (double) n, grown.get(i).getKey()));
        }
        out.append(String.format(Locale.ROOT, "    %12s %14.1f  (all classes)%n", "", total / (double) n));
        return out.toString();
    }

    private static Map<String, long[]> parseHistogram(String histogram) {
        Map<String, long[]> m = new HashMap<>();
        for (String line : histogram.split("\n")) {
            String[] f = line.trim().split("\\s+");
            // " num:  #instances  #bytes  class name (module)"
            if (f.length >= 4 && f[0].endsWith(":") && !f[0].equals("Total")) {
                try {
                    String name = f[3] + (f.length > 4 ? " " + String.join(" ", Arrays.copyOfRange(f, 4, f.length)) : "");
                    m.merge(name, new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])},
                            (x, y) -> new long[] {x[0] + y[0], x[1] + y[1]});
                } catch (NumberFormatException ignored) {
                    // a header line
                }
            }
        }
        return m;
    }

    static String table(List<Measurement> results) {
        StringBuilder out = new StringBuilder();
        List<String> names = ManagementFactory.getGarbageCollectorMXBeans().stream()
                .map(GarbageCollectorMXBean::getName).toList();
        String gcs = names.stream().anyMatch(g -> g.startsWith("G1 ")) ? "G1" : String.join("+", names);
        out.append(String.format(Locale.ROOT, "%nRetained heap per waiter on a held lock, JDK %s, GC %s, max heap %d MB. "
                + "bytes/waiter = (used heap with the waiters parked - used heap before) / waiters, after "
                + "System.gc(); median of the rounds. coro/x below 1 means Coro uses less.%n",
                Runtime.version(), gcs, Runtime.getRuntime().maxMemory() >> 20));
        String header = String.format(Locale.ROOT, "%-17s %-18s %8s %14s %16s   %s%n",
                "workload", "implementation", "waiters", "bytes/waiter", "min..max", "ratio");
        out.append(header).append("-".repeat(header.length() - 1)).append('\n');
        Measurement base = results.stream().filter(m -> m.impl().equals(IMPLS.get(0))).findFirst().orElse(null);
        for (Measurement m : results) {
            double[] p = m.perWaiter();
            String ratio = m == base ? "baseline"
                    : base == null ? "coro/" + m.impl() + " = n/a (no coro result)"
                    : String.format(Locale.ROOT, "coro/%s = %.2fx", m.impl(), base.median() / m.median());
            out.append(String.format(Locale.ROOT, "%-17s %-18s %8d %14.1f %16s   %s%n", "waiter-memory", m.impl(),
                    m.waiters(), m.median(), String.format(Locale.ROOT, "%.1f..%.1f",
                            Arrays.stream(p).min().orElse(Double.NaN), Arrays.stream(p).max().orElse(Double.NaN)),
                    ratio));
        }
        for (Measurement m : results) {
            if (m.histogram() != null) {
                out.append(String.format(Locale.ROOT, "%n%s: live objects added per waiter (class histogram, one extra round)%n",
                        m.impl())).append(m.histogram());
            }
        }
        return out.toString();
    }

    // ---------------------------------------------------------------- Coro

    /** {@code WorkStealingPool.create(2)}; each round spawns the waiters into a new {@code Scope.on(pool)}. */
    private static final class CoroSubject implements Subject {
        final WorkStealingPool pool = WorkStealingPool.create(Pools.WORKERS, "mem-coro");

        @Override
        public Round newRound() {
            return new CoroRound(pool);
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /**
     * Every waiter is the same task, {@code announce.then(mutex.lock()).then(count-and-unlock)},
     * spawned {@code n} times from the main thread; the spawn handles are dropped.
     */
    private static final class CoroRound implements Round {
        final AsyncMutex mutex = new AsyncMutex();
        final Scope scope;
        final AtomicInteger arrived = new AtomicInteger();
        long acquired; // guarded by mutex

        CoroRound(WorkStealingPool pool) {
            scope = Scope.on(pool);
            if (!mutex.tryLock()) {
                throw new IllegalStateException("a new AsyncMutex is locked");
            }
        }

        @Override
        public void park(int n) {
            Task<Void> waiter = Task.fromRunnable(arrived::incrementAndGet)
                    .then(mutex.lock())
                    .then(Task.fromRunnable(() -> {
                        acquired++;
                        mutex.unlock();
                    }));
            for (int i = 0; i < n; i++) {
                scope.spawn(waiter);
            }
        }

        @Override
        public boolean parked(int n) {
            return arrived.get() == n;
        }

        @Override
        public long release() {
            mutex.unlock();
            scope.joinBlocking();
            if (mutex.isLocked()) {
                throw new IllegalStateException("the AsyncMutex is still locked after every waiter ended");
            }
            return acquired;
        }
    }

    /** Waiters suspended in {@code CapacityGate(1).within(...)} instead of on a mutex. */
    private static final class GateSubject implements Subject {
        final WorkStealingPool pool = WorkStealingPool.create(Pools.WORKERS, "mem-gate");

        @Override
        public Round newRound() {
            return new GateRound(pool);
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /**
     * Every waiter is the same task, {@code announce.then(gate.within(count))}, spawned {@code n}
     * times; the main thread holds the gate's one permit (an {@code Admission}) until release.
     */
    private static final class GateRound implements Round {
        final CapacityGate gate = new CapacityGate(1);
        final Scope scope;
        final AtomicInteger arrived = new AtomicInteger();
        final Admission held;
        long acquired; // guarded by the gate

        GateRound(WorkStealingPool pool) {
            scope = Scope.on(pool);
            held = gate.tryAcquire().join();
        }

        @Override
        public void park(int n) {
            Task<Void> waiter = Task.fromRunnable(arrived::incrementAndGet)
                    .then(gate.within(Task.fromRunnable(() -> acquired++)));
            for (int i = 0; i < n; i++) {
                scope.spawn(waiter);
            }
        }

        @Override
        public boolean parked(int n) {
            return arrived.get() == n;
        }

        @Override
        public long release() {
            held.exit();
            scope.joinBlocking();
            if (gate.available() != 1) {
                throw new IllegalStateException("the CapacityGate has " + gate.available() + " free after every waiter ended");
            }
            return acquired;
        }
    }

    /** Waiters suspended on a rendezvous channel instead of a lock: receivers, or senders. */
    private static final class ChannelSubject implements Subject {
        final WorkStealingPool pool = WorkStealingPool.create(Pools.WORKERS, "mem-channel");
        final boolean receivers;

        ChannelSubject(boolean receivers) {
            this.receivers = receivers;
        }

        @Override
        public Round newRound() {
            return new ChannelRound(pool, receivers);
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /**
     * Every waiter is the same task, {@code announce.then(channel.receive())} (or a send of one
     * shared element), spawned {@code n} times; release sends (or receives) {@code n} elements from
     * the main thread, which is what the "acquired" count counts.
     */
    private static final class ChannelRound implements Round {
        final Channel<Integer> channel = Channel.rendezvous();
        final Scope scope;
        final boolean receivers;
        final AtomicInteger arrived = new AtomicInteger();

        ChannelRound(WorkStealingPool pool, boolean receivers) {
            this.scope = Scope.on(pool);
            this.receivers = receivers;
        }

        @Override
        public void park(int n) {
            Task<?> wait = receivers ? channel.receive() : channel.send(1);
            Task<?> waiter = Task.fromRunnable(arrived::incrementAndGet).then(wait);
            for (int i = 0; i < n; i++) {
                scope.spawn(waiter);
            }
        }

        @Override
        public boolean parked(int n) {
            return arrived.get() == n;
        }

        @Override
        public long release() {
            long done = 0;
            for (long i = 0; i < arrived.get(); i++) {
                if (receivers) {
                    channel.sendBlocking(1);
                } else {
                    channel.receiveBlocking();
                }
                done++;
            }
            scope.joinBlocking();
            return done;
        }
    }

    // ---------------------------------------------------------------- kotlinx

    /** kotlinx's two-thread Default dispatcher; the rounds are {@link KotlinxMutexWaiters}. */
    private static Subject kotlinxSubject() {
        CoroutineDispatcher dispatcher = KotlinxPeers.kotlinxDispatcher(Pools.WORKERS);
        if (!KotlinxPeers.isPlainDefault(dispatcher)) {
            System.out.println("note: kotlinx runs on a limitedParallelism(" + Pools.WORKERS
                    + ") view of a larger Default pool");
        }
        KotlinxMutexPeers.newKotlinxMutex(); // loads the classes before the first reading
        Supplier<KotlinxMutexWaiters> rounds = () -> new KotlinxMutexWaiters(dispatcher);
        return () -> {
            KotlinxMutexWaiters w = rounds.get();
            return new Round() {
                @Override
                public void park(int n) {
                    w.park(n);
                }

                @Override
                public boolean parked(int n) {
                    return w.arrived() == n;
                }

                @Override
                public long release() {
                    return w.release();
                }
            };
        };
    }

    // ---------------------------------------------------------------- virtual threads

    /**
     * The main thread holds a {@link ReentrantLock}; every waiter is a virtual thread started from the
     * main thread (the {@code Thread}s are not kept) that blocks in {@code lock()}. Parked means the
     * lock's queue length is the full count.
     */
    private static final class VirtualThreadRound implements Round {
        final ReentrantLock lock = new ReentrantLock();
        final AtomicInteger arrived = new AtomicInteger();
        CountDownLatch done;
        long acquired; // guarded by lock

        VirtualThreadRound() {
            lock.lock();
        }

        @Override
        public void park(int n) {
            done = new CountDownLatch(n);
            Runnable waiter = () -> {
                arrived.incrementAndGet();
                lock.lock();
                try {
                    acquired++;
                } finally {
                    lock.unlock();
                }
                done.countDown();
            };
            Thread.Builder builder = Thread.ofVirtual();
            for (int i = 0; i < n; i++) {
                builder.start(waiter);
            }
        }

        @Override
        public boolean parked(int n) {
            return arrived.get() == n && lock.getQueueLength() == n;
        }

        @Override
        public long release() throws InterruptedException {
            lock.unlock();
            if (!done.await(ARRIVAL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("virtual threads still running " + ARRIVAL_TIMEOUT_SECONDS
                        + " s after the unlock: " + done.getCount() + " left");
            }
            lock.lock();
            try {
                if (lock.getHoldCount() != 1 || lock.hasQueuedThreads()) {
                    throw new IllegalStateException("the ReentrantLock is still held or queued");
                }
                return acquired;
            } finally {
                lock.unlock();
            }
        }
    }
}
