package dev.coro.examples.fleet;

import dev.coro.redis.RedisCapacityGate;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code ./coro demo fleet}: one limit across a fleet of JVMs, with the gates' state in Redis. It
 * starts a private {@code redis-server} on a free loopback port (no persistence) and three JVMs
 * ({@link FleetMember}) that share one {@code RedisCapacityGate(4)} and one {@code RedisRateGate(50/s)}.
 * Together they run 100 operations; it prints the most operations inside the capacity gate at once
 * across the three, and the rate of the rate gate's admissions on Redis's clock. Then one member takes
 * two slots and is killed ({@code kill -9}) while it holds them: this JVM, which holds the other two,
 * shows the two slots coming back after the lease, with higher fencing tokens. If there is no
 * {@code redis-server} binary, it says so in one line and returns. {@code FleetDemoTest} checks every
 * printed fact that does not depend on timing.
 */
public final class FleetDemo {
    /** The capacity gate's capacity. */
    static final int CAPACITY = 4;
    /** The rate gate's permits per second (burst 1). */
    static final double RATE = 50;
    /** The rate gate's burst. */
    static final int BURST = 1;
    private static final long LEASE_MS = 1000;
    private static final int MEMBERS = 3;
    private static final int OPERATIONS = 100;
    private static final Duration BOUND = Duration.ofSeconds(60);

    /** Lettuce logs through java.util.logging here: only its errors are worth a line in a demo. */
    static final Logger LETTUCE_LOG = Logger.getLogger("io.lettuce");

    private final PrintStream out;

    /**
     * Creates the demo.
     *
     * @param out where it prints
     */
    public FleetDemo(PrintStream out) {
        this.out = out;
    }

    /**
     * What {@link #run()} saw.
     *
     * @param skipped why it did not run (no binary), or null if it ran
     * @param operations the operations the three members ran together
     * @param mostInside the most operations inside the capacity gate at once, across the fleet
     * @param mostInOneSecond the most rate admissions whose slots lie within one second
     * @param ratePerSecond the rate admissions per second of Redis time, first slot to last
     * @param startedBeforeSlot the operations whose work started before their slot (none)
     * @param fullBeforeKill whether a try was refused while the killed member and this JVM held all 4 slots
     * @param killedTokens the fencing tokens of the killed member's two slots
     * @param tokensAfter the fencing tokens of the two slots that came back
     * @param backAfterMillis how long after the kill the second slot came back
     */
    public record Run(String skipped, int operations, long mostInside, int mostInOneSecond, double ratePerSecond,
            int startedBeforeSlot, boolean fullBeforeKill, List<Long> killedTokens, List<Long> tokensAfter,
            long backAfterMillis) {}

    /** Runs the demo from the launcher. */
    public static void demo() {
        new FleetDemo(System.out).run();
    }

    /**
     * Runs the demo and prints what it saw.
     *
     * @return what it saw
     */
    public Run run() {
        Path binary = findRedisServer();
        if (binary == null) {
            String why = "no redis-server binary (looked at " + (System.getProperty("coro.redis.server") != null
                    ? "-Dcoro.redis.server" : "/usr/bin/redis-server and on PATH") + "; install the redis-server package)";
            out.println("fleet: skipped: " + why);
            return new Run(why, 0, 0, 0, 0, 0, false, List.of(), List.of(), 0);
        }
        try (Server server = Server.start(binary)) {
            return run(server.port);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private Run run(int port) throws IOException, InterruptedException {
        LETTUCE_LOG.setLevel(Level.SEVERE);
        String capacityName = "fleet-db";
        String rateName = "fleet-api";
        out.printf(Locale.ROOT, "a private redis-server on 127.0.0.1:%d; three JVMs share RedisCapacityGate \"%s\""
                + " (capacity %d, lease %d ms) and RedisRateGate \"%s\" (%.0f/s, burst %d)%n", port, capacityName,
                CAPACITY, LEASE_MS, rateName, RATE, BURST);
        List<Member> members = new ArrayList<>();
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        try (RedisCapacityGate db = RedisCapacityGate.builder(client, capacityName, CAPACITY)
                .leaseTime(Duration.ofMillis(LEASE_MS)).recheckInterval(Duration.ofMillis(100)).open()) {
            for (int i = 0; i < MEMBERS; i++) {
                int ops = OPERATIONS / MEMBERS + (i < OPERATIONS % MEMBERS ? 1 : 0);
                members.add(Member.start(i + 1, port, capacityName, rateName, ops));
            }
            for (Member m : members) {
                m.expect("ready");
            }
            for (Member m : members) {
                m.say("go");
            }
            List<long[]> ops = new ArrayList<>(); // slot, start, inside
            for (Member m : members) {
                for (String line = m.next(); !line.equals("done"); line = m.next()) {
                    if (line.startsWith("op ")) {
                        String[] f = line.split(" ");
                        ops.add(new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])});
                    } else {
                        m.other(line);
                    }
                }
            }
            long mostInside = 0;
            int early = 0;
            List<Long> slots = new ArrayList<>();
            for (long[] op : ops) {
                mostInside = Math.max(mostInside, op[2]);
                early += op[1] < op[0] ? 1 : 0;
                slots.add(op[0]);
            }
            Collections.sort(slots);
            int mostInOneSecond = 0;
            for (int i = 0, from = 0; i < slots.size(); i++) {
                while (slots.get(i) - slots.get(from) > 1_000_000) {
                    from++;
                }
                mostInOneSecond = Math.max(mostInOneSecond, i - from + 1);
            }
            double seconds = (slots.getLast() - slots.getFirst()) / 1e6;
            double rate = seconds > 0 ? (slots.size() - 1) / seconds : 0;
            out.printf(Locale.ROOT, "%d operations across the three JVMs; the most inside the capacity gate at once: %d"
                    + " (capacity %d)%n", ops.size(), mostInside, CAPACITY);
            out.printf(Locale.ROOT, "rate gate admissions on Redis's clock: %.1f/s from the first to the last; the most"
                    + " within any 1 s: %d (the bucket allows %d); work started before its slot: %d%n", rate,
                    mostInOneSecond, (int) RATE + BURST, early);

            // a member holds 2 slots, this JVM the other 2; then the member is killed
            Member doomed = members.get(MEMBERS - 1);
            for (Member m : members) {
                m.say(m == doomed ? "hold" : "exit");
            }
            List<Long> killedTokens = List.of(doomed.held(), doomed.held());
            {
                Promise<Void> release = new Promise<>();
                CountDownLatch holding = new CountDownLatch(2);
                List<CompletableFuture<Void>> mine = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    mine.add(db.within(Task.fromRunnable(holding::countDown).then(release.task())).toCompletableFuture());
                }
                if (!holding.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("this JVM did not get the 2 free slots");
                }
                boolean full = get(db.tryWithin(Task.value(0)).outcome()) instanceof Outcome.Cancelled;
                out.printf(Locale.ROOT, "JVM %d holds 2 slots (fencing tokens %d, %d) and this JVM the other 2; a try"
                        + " for a fifth: %s%n", doomed.number, killedTokens.get(0), killedTokens.get(1),
                        full ? "refused, the gate is full" : "ADMITTED (unexpected)");

                doomed.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // kill -9: no release, no renewal
                long killed = System.nanoTime();
                out.printf(Locale.ROOT, "kill -9 JVM %d (pid %d) while it holds 2 slots; its leases (%d ms, renewed"
                        + " every %d ms) run out on Redis's clock%n", doomed.number, doomed.process.pid(), LEASE_MS,
                        LEASE_MS / 3);
                List<CompletableFuture<Long>> back = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    back.add(db.withinFenced(Task::value).toCompletableFuture());
                }
                List<Long> tokensAfter = new ArrayList<>();
                for (CompletableFuture<Long> f : back) {
                    tokensAfter.add(get(f));
                }
                long backAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                out.printf(Locale.ROOT, "the 2 slots came back %d ms after the kill (the lease ran %d ms from the"
                        + " dead JVM's last renewal), with fencing tokens %d, %d, above the dead holder's%n",
                        backAfter, LEASE_MS, tokensAfter.get(0), tokensAfter.get(1));
                release.complete(null);
                for (CompletableFuture<Void> f : mine) {
                    get(f);
                }
                return new Run(null, ops.size(), mostInside, mostInOneSecond, rate, early, full, killedTokens,
                        tokensAfter, backAfter);
            }
        } finally {
            for (Member m : members) {
                m.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static <T> T get(CompletableFuture<T> f) {
        try {
            return f.get(BOUND.toSeconds(), TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the fleet demo did not finish within " + BOUND + ": " + e, e);
        }
    }

    private static <T> T get(Task<T> t) {
        return get(t.toCompletableFuture());
    }

    /** The key of the fleet's counter of operations inside the capacity gate. */
    static String insideKey(String capacityName) {
        return "fleet-demo:{" + capacityName + "}:inside";
    }

    private static Path findRedisServer() {
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

    /** A member JVM: its process and its output lines. */
    private static final class Member {
        final int number;
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> others = new ArrayList<>();

        private Member(int number, Process process) {
            this.number = number;
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

        static Member start(int number, int port, String capacityName, String rateName, int ops) throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                    "-cp", System.getProperty("java.class.path"), FleetMember.class.getName(),
                    Integer.toString(port), capacityName, rateName, Integer.toString(ops), Long.toString(LEASE_MS))
                    .redirectErrorStream(true)
                    .start();
            return new Member(number, p);
        }

        String next() throws InterruptedException {
            String line = lines.poll(BOUND.toSeconds(), TimeUnit.SECONDS);
            if (line == null || line.equals("exit")) {
                throw new IllegalStateException("JVM " + number + " " + (line == null ? "said nothing for " + BOUND
                        : "exited") + "; its other output: " + others);
            }
            return line;
        }

        void expect(String wanted) throws InterruptedException {
            for (String line = next(); !line.equals(wanted); line = next()) {
                other(line);
            }
        }

        long held() throws InterruptedException {
            for (String line = next(); ; line = next()) {
                if (line.startsWith("held ")) {
                    return Long.parseLong(line.substring(5));
                }
                other(line);
            }
        }

        void other(String line) {
            others.add(line);
        }

        void say(String line) throws IOException {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }
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
