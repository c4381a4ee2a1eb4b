package dev.coro.bench;

import dev.coro.redis.RedisCapacityGate;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.zip.DataFormatException;
import org.HdrHistogram.Histogram;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * redis-fleet: a capacity of 8 shared by 3 JVMs through one private {@code redis-server}, 100,000
 * short operations in all (the work only records when it was admitted): Coro's
 * {@link RedisCapacityGate} against Redisson's {@code RSemaphore} and {@code RPermitExpirableSemaphore}
 * (with a 10 s lease, as Coro's default), one implementation at a time on the same server. Each JVM
 * runs {@code --lanes} virtual threads, each doing its share of operations one after another, so
 * 48 contenders ask for 8 permits; Coro's are joined from the virtual threads too ({@code within(work).join()}).
 *
 * <p>Printed per implementation: operations per second (all operations over the time from the start
 * signal to the last JVM's end), Redis commands per operation from {@code INFO commandstats} deltas
 * (all commands, including those a script runs, and the client's round trips: scripts, pub/sub and
 * pings), and admission latency (from asking to the work's start) at p50, p99 and the largest. Then
 * Coro's ratios to each peer. Each JVM warms up with a tenth of its operations (at most 2,000) before
 * the measured run. A plain main, not JMH: it measures the wall clock of a fleet. Run it with
 * {@code ./coro bench --redis-fleet [--ops N] [--lanes L] [--quick] [IMPL...]}; it needs a
 * {@code redis-server} binary (or {@code -Dcoro.redis.server=PATH}).
 */
public final class RedisFleet {
    private static final List<String> IMPLS = List.of("coro", "rsemaphore", "rexpirable");
    private static final Map<String, String> LABELS = Map.of(
            "coro", "coro RedisCapacityGate",
            "rsemaphore", "redisson RSemaphore",
            "rexpirable", "redisson RPermitExpirableSemaphore");
    private static final int CAPACITY = 8;
    private static final int MEMBERS = 3;
    /** The commands a client sends itself: every other one in commandstats runs inside a script. */
    private static final Set<String> ROUND_TRIPS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall",
            "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping");
    private static final Logger LETTUCE_LOG = Logger.getLogger("io.lettuce");

    private RedisFleet() {}

    /** The options ({@link Arguments} reads them). */
    @Command(name = "redis-fleet", sortOptions = false,
            description = "A capacity of 8 across 3 JVMs on one redis-server: Coro's RedisCapacityGate, Redisson's semaphores.")
    static final class Settings {
        @Option(names = "--ops", paramLabel = "N", description = "operations in all (default 100,000)")
        Integer ops;

        @Option(names = "--lanes", paramLabel = "L", description = "virtual threads per JVM (default ${DEFAULT-VALUE})")
        int lanes = 16;

        @Option(names = "--quick", description = "10,000 operations unless --ops is given")
        boolean quick;

        @Mixin
        Arguments.Help help;

        @Mixin
        Arguments.Implementations impls = new Arguments.Implementations(IMPLS);
    }

    /** One measured run: its throughput, commands and latencies. */
    private record Result(String impl, long ops, double opsPerSecond, double commandsPerOp, double roundTripsPerOp,
            Map<String, Double> perOp, Histogram latency) {}

    /**
     * Runs the measurement, or (with {@code --member}) one JVM of it.
     *
     * @param args {@code --ops N}, {@code --lanes L}, {@code --quick}, implementations, {@code --help}
     * @throws Exception if a run fails
     */
    public static void main(String[] args) throws Exception {
        LETTUCE_LOG.setLevel(Level.SEVERE);
        if (args.length > 0 && args[0].equals("--member")) {
            member(args[1], Integer.parseInt(args[2]), args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            return;
        }
        Settings settings = new Settings();
        if (!Arguments.parse(settings, args)) {
            return;
        }
        int ops = settings.ops != null ? settings.ops : settings.quick ? 10_000 : 100_000;
        List<String> impls = settings.impls.names.isEmpty() ? IMPLS : settings.impls.names;
        Path binary = redisServer();
        if (binary == null) {
            System.out.println("redis-fleet: skipped: no redis-server binary (install the redis-server package,"
                    + " or set -Dcoro.redis.server=PATH)");
            return;
        }
        try (Server server = Server.start(binary)) {
            RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", server.port));
            try (StatefulRedisConnection<String, String> admin = client.connect()) {
                String version = admin.sync().info("server").lines().filter(l -> l.startsWith("redis_version:"))
                        .findFirst().orElse("redis_version:?").substring("redis_version:".length());
                System.out.printf(Locale.ROOT, "redis-fleet: capacity %d across %d JVMs x %d virtual threads, %,d"
                        + " operations (the work only records its admission), one private redis-server %s%n",
                        CAPACITY, MEMBERS, settings.lanes, ops, version);
                List<Result> results = new ArrayList<>();
                for (String impl : impls) {
                    results.add(measure(impl, server.port, admin, ops, settings.lanes));
                }
                print(results);
            } finally {
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        }
    }

    private static Result measure(String impl, int port, StatefulRedisConnection<String, String> admin, int ops,
            int lanes) throws Exception {
        String name = "bench-" + impl + "-" + System.nanoTime();
        List<Child> children = new ArrayList<>();
        try {
            for (int i = 0; i < MEMBERS; i++) {
                int share = ops / MEMBERS + (i < ops % MEMBERS ? 1 : 0);
                children.add(Child.start(impl, port, name, share, lanes));
            }
            for (Child c : children) {
                c.expect("ready");
            }
            Map<String, Long> before = commandStats(admin);
            long start = System.nanoTime();
            for (Child c : children) {
                c.say("go");
            }
            Histogram latency = new Histogram(3);
            for (Child c : children) {
                String done = c.expect("done ");
                latency.add(decode(done.split(" ")[1]));
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            Map<String, Long> after = commandStats(admin);
            Map<String, Double> perOp = new TreeMap<>();
            long commands = 0;
            long roundTrips = 0;
            for (Map.Entry<String, Long> e : after.entrySet()) {
                long delta = e.getValue() - before.getOrDefault(e.getKey(), 0L);
                if (delta <= 0 || e.getKey().equals("info")) {
                    continue; // the measurement's own INFO
                }
                perOp.put(e.getKey(), (double) delta / ops);
                commands += delta;
                if (ROUND_TRIPS.contains(e.getKey())) {
                    roundTrips += delta;
                }
            }
            return new Result(impl, latency.getTotalCount(), ops / seconds, (double) commands / ops,
                    (double) roundTrips / ops, perOp, latency);
        } finally {
            for (Child c : children) {
                c.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void print(List<Result> results) {
        System.out.printf(Locale.ROOT, "%-36s %10s %9s %12s %9s %9s %9s%n", "implementation", "ops/s", "cmds/op",
                "round trips", "p50 us", "p99 us", "max us");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-36s %,10.0f %9.2f %12.2f %9.0f %9.0f %9.0f%n", LABELS.get(r.impl),
                    r.opsPerSecond, r.commandsPerOp, r.roundTripsPerOp, r.latency.getValueAtPercentile(50) / 1e3,
                    r.latency.getValueAtPercentile(99) / 1e3, r.latency.getMaxValue() / 1e3);
        }
        for (Result r : results) {
            StringBuilder s = new StringBuilder();
            r.perOp.forEach((cmd, n) -> s.append(s.isEmpty() ? "" : ", ").append(cmd).append(' ')
                    .append(String.format(Locale.ROOT, "%.2f", n)));
            System.out.printf(Locale.ROOT, "  commands per op, %s: %s%n", LABELS.get(r.impl), s);
        }
        Result coro = results.stream().filter(r -> r.impl.equals("coro")).findFirst().orElse(null);
        if (coro != null) {
            for (Result peer : results) {
                if (peer != coro) {
                    System.out.printf(Locale.ROOT, "coro / %s: ops/s %.2fx, commands/op %.2fx, round trips/op %.2fx,"
                            + " p99 latency %.2fx%n", LABELS.get(peer.impl), coro.opsPerSecond / peer.opsPerSecond,
                            coro.commandsPerOp / peer.commandsPerOp, coro.roundTripsPerOp / peer.roundTripsPerOp,
                            coro.latency.getValueAtPercentile(99) / (double) peer.latency.getValueAtPercentile(99));
                }
            }
        }
        System.out.println("(a shared 2-core VM: every figure is noisy; compare within one run)");
    }

    private static Map<String, Long> commandStats(StatefulRedisConnection<String, String> admin) {
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : admin.sync().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String cmd = line.substring("cmdstat_".length(), line.indexOf(':'));
                int at = line.indexOf("calls=") + "calls=".length();
                calls.put(cmd, Long.parseLong(line.substring(at, line.indexOf(',', at))));
            }
        }
        return calls;
    }

    // ---------------------------------------------------------------- one JVM of the fleet

    /** What an operation is, per implementation: ask, run {@code work} once admitted, leave. */
    private interface Door extends AutoCloseable {
        void pass(Runnable work) throws Exception;
    }

    private static Door open(String impl, int port, String name) {
        if (impl.equals("coro")) {
            RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
            RedisCapacityGate gate = RedisCapacityGate.open(client, name, CAPACITY);
            return new Door() {
                @Override
                public void pass(Runnable work) {
                    gate.within(Task.fromRunnable(work)).join();
                }

                @Override
                public void close() {
                    gate.close();
                    client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                }
            };
        }
        Config config = new Config();
        config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
        RedissonClient redisson = Redisson.create(config);
        if (impl.equals("rsemaphore")) {
            RSemaphore semaphore = redisson.getSemaphore(name);
            semaphore.trySetPermits(CAPACITY);
            return new Door() {
                @Override
                public void pass(Runnable work) throws InterruptedException {
                    semaphore.acquire();
                    try {
                        work.run();
                    } finally {
                        semaphore.release();
                    }
                }

                @Override
                public void close() {
                    redisson.shutdown();
                }
            };
        }
        RPermitExpirableSemaphore semaphore = redisson.getPermitExpirableSemaphore(name);
        semaphore.trySetPermits(CAPACITY);
        return new Door() {
            @Override
            public void pass(Runnable work) throws InterruptedException {
                String permit = semaphore.acquire(10, TimeUnit.SECONDS);
                try {
                    work.run();
                } finally {
                    semaphore.release(permit);
                }
            }

            @Override
            public void close() {
                redisson.shutdown();
            }
        };
    }

    private static void member(String impl, int port, String name, int ops, int lanes) throws Exception {
        try (Door door = open(impl, port, name)) {
            run(door, Math.min(2_000, ops / 10), lanes); // warm-up
            System.out.println("ready");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"go".equals(in.readLine())) {
                System.exit(1);
            }
            Histogram latency = run(door, ops, lanes);
            System.out.println("done " + encode(latency));
        }
        System.exit(0);
    }

    /** Runs {@code ops} operations on {@code lanes} virtual threads; returns their admission latencies. */
    private static Histogram run(Door door, int ops, int lanes) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        List<Histogram> histograms = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        for (int lane = 0; lane < lanes; lane++) {
            int share = ops / lanes + (lane < ops % lanes ? 1 : 0);
            Histogram h = new Histogram(3);
            histograms.add(h);
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    for (int i = 0; i < share; i++) {
                        long asked = System.nanoTime();
                        door.pass(() -> h.recordValue(System.nanoTime() - asked));
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("an operation failed", errors.getFirst());
        }
        Histogram all = new Histogram(3);
        histograms.forEach(all::add);
        return all;
    }

    private static String encode(Histogram h) {
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buffer.array(), length));
    }

    private static Histogram decode(String encoded) throws DataFormatException {
        return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(encoded)), 0);
    }

    /** A member JVM: its process and its output lines. */
    private static final class Child {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> others = new ArrayList<>();

        private Child(Process process) {
            this.process = process;
            Thread.ofVirtual().start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    lines.add("read failed: " + e);
                }
                lines.add("exit");
            });
        }

        static Child start(String impl, int port, String name, int ops, int lanes) throws IOException {
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xms512m", "-Xmx512m"));
            if (Runtime.version().feature() >= 24) {
                command.add("--sun-misc-unsafe-memory-access=allow"); // Netty's, in Lettuce and Redisson
            }
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), RedisFleet.class.getName(),
                    "--member", impl, Integer.toString(port), name, Integer.toString(ops), Integer.toString(lanes)));
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().remove("JDK_JAVA_OPTIONS");
            return new Child(pb.start());
        }

        /** The next line starting with {@code prefix}, others kept to explain a failure; 10 minutes at most. */
        String expect(String prefix) throws InterruptedException {
            while (true) {
                String line = lines.poll(10, TimeUnit.MINUTES);
                if (line == null || line.equals("exit")) {
                    throw new IllegalStateException("a member JVM " + (line == null ? "said nothing for 10 minutes"
                            : "exited") + " before '" + prefix + "'; its output: " + others);
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
                others.add(line);
            }
        }

        void say(String line) throws IOException {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }
    }

    private static Path redisServer() {
        String property = System.getProperty("coro.redis.server");
        if (property != null) { // the one place to look, when given
            return Files.isExecutable(Path.of(property)) ? Path.of(property) : null;
        }
        List<Path> candidates = new ArrayList<>();
        candidates.add(Path.of("/usr/bin/redis-server"));
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty()) {
                candidates.add(Path.of(dir, "redis-server"));
            }
        }
        return candidates.stream().filter(Files::isExecutable).findFirst().orElse(null);
    }

    /** A private redis-server on a free loopback port, without persistence. */
    private static final class Server implements AutoCloseable {
        final Process process;
        final int port;

        private Server(Process process, int port) {
            this.process = process;
            this.port = port;
        }

        static Server start(Path binary) throws IOException, InterruptedException {
            for (int attempt = 0; attempt < 5; attempt++) {
                int port;
                try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                    port = s.getLocalPort();
                }
                Process p = new ProcessBuilder(binary.toString(), "--port", Integer.toString(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no", "--daemonize", "no")
                        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (p.isAlive() && System.nanoTime() < deadline) {
                    if (pong(port)) {
                        return new Server(p, port);
                    }
                    Thread.sleep(20); // waiting for another process to bind: nothing tells us
                }
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            throw new IOException(binary + " did not answer PING on a free port in 5 attempts");
        }

        private static boolean pong(int port) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                s.setSoTimeout(500);
                s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                InputStream in = s.getInputStream();
                return new String(in.readNBytes(7), StandardCharsets.US_ASCII).equals("+PONG\r\n");
            } catch (IOException e) {
                return false;
            }
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
