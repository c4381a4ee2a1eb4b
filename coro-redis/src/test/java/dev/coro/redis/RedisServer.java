package dev.coro.redis;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A private {@code redis-server} for tests: started on a free loopback port with no persistence,
 * stopped by {@link #close()} (and by a shutdown hook if the JVM ends first). Never a mock.
 */
final class RedisServer implements AutoCloseable {
    /** Where the binary is; {@code -Dcoro.redis.server=PATH} points elsewhere. */
    static final Path BINARY = Path.of(System.getProperty("coro.redis.server", "/usr/bin/redis-server"));

    private Process process;
    private final int port;
    private Thread hook;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> admin;

    private RedisServer(Process process, int port) {
        this.process = process;
        this.port = port;
        this.hook = new Thread(process::destroyForcibly, "redis-server-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        this.client = RedisClient.create(uri());
        this.admin = client.connect();
    }

    /** Whether the binary is there to start. */
    static boolean available() {
        return Files.isExecutable(BINARY);
    }

    /**
     * Starts a server on a free loopback port and waits (bounded) until it answers PING. A port
     * taken between choosing and binding is retried with another.
     */
    static RedisServer start() throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            int port = freePort();
            Process p = launch(port);
            if (awaitPong(p, port)) {
                return new RedisServer(p, port);
            }
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            last = new IOException("redis-server did not answer PING on port " + port);
        }
        throw last;
    }

    private static Process launch(int port) throws IOException {
        return new ProcessBuilder(BINARY.toString(), "--port", Integer.toString(port),
                "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    /**
     * Kills the server (SIGKILL) and starts a new, empty one on the same port: a restart without
     * persistence, as after a crash. Clients reconnect by themselves.
     */
    void restart() throws IOException, InterruptedException {
        kill();
        Process p = launch(port);
        if (!awaitPong(p, port)) {
            p.destroyForcibly();
            throw new IOException("redis-server did not come back on port " + port);
        }
        Runtime.getRuntime().removeShutdownHook(hook);
        process = p;
        hook = new Thread(p::destroyForcibly, "redis-server-stop");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Polls PING every 20 ms for at most 10 s, while the process lives. */
    private static boolean awaitPong(Process p, int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (p.isAlive() && System.nanoTime() < deadline) {
            if (pong(port)) {
                return true;
            }
            Thread.sleep(20); // waiting for another process to bind: nothing to be told by
        }
        return false;
    }

    private static boolean pong(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            s.setSoTimeout(500);
            OutputStream out = s.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[7];
            int n = in.readNBytes(buf, 0, 7);
            return n == 7 && new String(buf, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    int port() {
        return port;
    }

    RedisURI uri() {
        return RedisURI.create("127.0.0.1", port);
    }

    /** A Lettuce client of this server, shared by the tests (each gate opens its own connections). */
    RedisClient client() {
        return client;
    }

    /** Synchronous commands on an administrative connection, for looking at what the gates left. */
    RedisCommands<String, String> admin() {
        return admin.sync();
    }

    /** The keys of gate {@code name}. */
    List<String> keysOf(String name) {
        return admin().keys("coro:gate:{" + name + "}:*");
    }

    /**
     * Waits until {@code condition} holds, checking every 10 ms, for at most {@code limit}; fails
     * with {@code what} if it never does. For conditions that live in Redis, where nothing tells us.
     */
    static void awaitCondition(String what, Duration limit, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + limit + ": " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Stops the server at once (SIGKILL), as an outage. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        admin.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // the hook runs anyway
        }
    }
}
