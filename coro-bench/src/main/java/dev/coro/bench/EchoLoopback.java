package dev.coro.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * tcp-echo: an echo server and a client over loopback TCP, {@code --connections} (50) connections
 * each making {@code --round-trips} (20,000) sequential round trips of a {@code --size} (64) byte
 * message: write it, read the echo in full, check every byte, write the next. The connections run
 * concurrently; the figure is round trips per second over all of them. A plain main (like
 * {@link WaiterMemory}).
 *
 * <p><b>Thread split, the same for every implementation:</b> one thread runs the whole server
 * (accepting and echoing), one thread runs all the clients. Netty: two
 * {@code MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory())}, one for the server (its only
 * loop is both the acceptor and the child loop), one for the clients. Coro: two {@code EventLoop}s.
 * Virtual threads cannot be split so (the JDK has one carrier pool), so their server and clients
 * share two carriers ({@code -Djdk.virtualThreadScheduler.parallelism=2}): the same two threads of
 * work, plus the JDK's poller. The main thread only sets up, starts and waits.
 *
 * <p>Every server echoes whatever it reads as soon as it reads it (read, then write all of it), so
 * a message may come back in pieces; the clients read until they have the whole message. Payload
 * byte {@code j} of round trip {@code k} on connection {@code c} is {@code c * 131 + k * 7 + j}
 * (mod 256), so a stale, reordered or crossed message fails the check. TCP_NODELAY is set on every
 * socket.
 *
 * <p>Per implementation: one unmeasured warm-up round, then {@code --rounds} (3) measured rounds;
 * every round builds fresh servers, loops and connections, connects all clients, then times from
 * the start signal until the last client has checked its last echo, and tears everything down.
 * The median round is reported. A round that fails a check, or does not end within
 * {@code -Dbench.hangSeconds} (60 s), fails; {@link Watchdog} halts the JVM if teardown hangs.
 *
 * <p>Options: {@code --connections C}, {@code --round-trips K}, {@code --size B}, {@code --rounds R},
 * {@code --quick} (50 x 2,000, one measured round), and implementation names to run a subset
 * ({@link #IMPLS}). Run it with {@code ./coro bench --echo [options]}.
 */
public final class EchoLoopback {
    /** Implementations in table order; the first is the baseline. */
    static final List<String> IMPLS = List.of("coro", "coroPrebuilt", "netty", "virtualThreads");

    static final long HANG_SECONDS = Long.getLong("bench.hangSeconds", 60);

    private EchoLoopback() {}

    /** The sizes of one round. */
    record Load(int connections, int roundTrips, int size) {
        long total() {
            return (long) connections * roundTrips;
        }
    }

    /** One implementation: a round on fresh resources; returns the timed nanoseconds. */
    interface Impl {
        long run(Load load) throws Exception;
    }

    /** Byte {@code j} of round trip {@code k} on connection {@code c}. */
    static byte payload(int c, int k, int j) {
        return (byte) (c * 131 + k * 7 + j);
    }

    /** Fills {@code out[0..size)} with the message of round trip {@code k} on connection {@code c}. */
    static void fill(byte[] out, int c, int k, int size) {
        for (int j = 0; j < size; j++) {
            out[j] = payload(c, k, j);
        }
    }

    /** Throws unless {@code in[0..size)} is that message. */
    static void check(byte[] in, int c, int k, int size) {
        for (int j = 0; j < size; j++) {
            if (in[j] != payload(c, k, j)) {
                throw mismatch(c, k, j, in[j]);
            }
        }
    }

    static IllegalStateException mismatch(int c, int k, int j, byte got) {
        return new IllegalStateException("connection " + c + ", round trip " + k + ", byte " + j + ": expected "
                + payload(c, k, j) + ", got " + got);
    }

    /**
     * Measures and prints the table.
     *
     * Exits with status 1 after printing the error if a round fails (a wrong echo byte, a
     * connection that ends early, a round that hangs), 0 otherwise.
     *
     * @param args options, see the class comment
     */
    public static void main(String[] args) {
        try {
            measure(args);
        } catch (Throwable e) {
            // exit even if a failed round left a structure's non-daemon thread running
            System.out.flush();
            System.err.println("tcp-echo: FAILED");
            e.printStackTrace();
            System.err.flush();
            System.exit(1);
        }
    }

    /** The options ({@link Arguments} reads them). */
    @Command(name = "tcp-echo", sortOptions = false,
            description = "TCP echo over loopback: Coro's EventLoop against Netty and virtual threads.")
    static final class Settings {
        @Option(names = "--connections", paramLabel = "C", description = "connections (default ${DEFAULT-VALUE})")
        int connections = 50;

        @Option(names = "--round-trips", paramLabel = "K",
                description = "round trips per connection (default 20,000; --quick: 2,000)")
        Integer roundTrips;

        @Option(names = "--size", paramLabel = "B", description = "message bytes (default ${DEFAULT-VALUE})")
        int size = 64;

        @Option(names = "--rounds", paramLabel = "R", description = "measured rounds (default 3; --quick: 1)")
        Integer rounds;

        @Option(names = "--quick", description = "fewer round trips and one round (also -Dbench.quick=true)")
        boolean quick = Boolean.getBoolean("bench.quick");

        @Mixin
        FreshJvms.Options run = new FreshJvms.Options();

        @Mixin
        Arguments.Help help;

        @Mixin
        Arguments.Implementations impls = new Arguments.Implementations(IMPLS);
    }

    private static void measure(String[] args) throws Exception {
        Settings settings = new Settings();
        if (!Arguments.parse(settings, args)) {
            return;
        }
        boolean quick = settings.quick;
        int connections = settings.connections;
        int roundTrips = settings.roundTrips != null ? settings.roundTrips : quick ? 2_000 : 20_000;
        int size = settings.size;
        int rounds = settings.rounds != null ? settings.rounds : quick ? 1 : 3;
        List<String> impls = new ArrayList<>(settings.impls.names);
        if (connections < 1 || roundTrips < 1 || size < 1 || rounds < 1 || settings.run.warmup < 0) {
            throw new IllegalArgumentException("--connections, --round-trips, --size and --rounds must be >= 1, "
                    + "--warmup >= 0");
        }
        if (impls.isEmpty()) {
            impls.addAll(IMPLS);
        }
        if (System.getProperty("jdk.virtualThreadScheduler.parallelism") == null) {
            System.setProperty("jdk.virtualThreadScheduler.parallelism", String.valueOf(Pools.WORKERS));
        }
        Load load = new Load(connections, roundTrips, size);
        if (settings.run.freshJvms && !settings.run.child) {
            measureInFreshJvms(settings, impls, load, rounds);
            return;
        }
        if (settings.run.child) {
            rounds = 1;
        }
        int warmup = settings.run.warmup;
        System.out.printf(Locale.ROOT, "tcp-echo: %d connections x %,d round trips of %d bytes over loopback, "
                + "%d warm-up and %d measured rounds, JDK %s, %d cores, load average %s%n", connections, roundTrips,
                size, warmup, rounds, Runtime.version(), Runtime.getRuntime().availableProcessors(),
                Timers.loadAverage());
        List<long[]> results = new ArrayList<>();
        for (String impl : impls) {
            Impl run = impl(impl);
            long[] measured = new long[rounds];
            for (int r = 1 - warmup; r <= rounds; r++) {
                System.gc();
                long nanos;
                Watchdog.begin("EchoLoopback." + impl);
                try {
                    nanos = run.run(load);
                } finally {
                    Watchdog.end();
                }
                System.out.printf(Locale.ROOT, "%s: %s: %,d round trips in %.1f ms: %,.0f round trips/s%n", impl,
                        r <= 0 ? "warm-up" : "round " + r, load.total(), nanos / 1e6, load.total() / (nanos / 1e9));
                if (r > 0) {
                    measured[r - 1] = nanos;
                }
            }
            results.add(measured);
        }
        if (settings.run.child) {
            FreshJvms.printResult(impls.get(0), results.get(0)[0]);
            System.exit(0);
        }
        System.out.print(table(load, impls, results));
        System.out.println("load average at the end: " + Timers.loadAverage());
        System.out.flush();
        System.exit(0);
    }

    /**
     * {@code --fresh-jvms}: every measured round of every implementation in a JVM of its own (each with
     * its {@code --warmup} rounds first), the implementations interleaved round by round.
     */
    private static void measureInFreshJvms(Settings settings, List<String> impls, Load load, int rounds)
            throws Exception {
        System.out.printf(Locale.ROOT, "tcp-echo: %d connections x %,d round trips of %d bytes over loopback, %d rounds, "
                + "each in a fresh JVM (%d warm-up rounds in it first), implementations interleaved, JDK %s, %d cores, "
                + "load average %s%n", load.connections(), load.roundTrips(), load.size(), rounds, settings.run.warmup,
                Runtime.version(), Runtime.getRuntime().availableProcessors(), Timers.loadAverage());
        List<long[]> results = new ArrayList<>();
        for (int i = 0; i < impls.size(); i++) {
            results.add(new long[rounds]);
        }
        for (int r = 1; r <= rounds; r++) {
            for (String impl : FreshJvms.order(impls, r)) {
                System.out.printf(Locale.ROOT, "%s: round %d in a fresh JVM%n", impl, r);
                List<String> args = List.of("--child", "--connections", String.valueOf(load.connections()),
                        "--round-trips", String.valueOf(load.roundTrips()), "--size", String.valueOf(load.size()),
                        "--warmup", String.valueOf(settings.run.warmup), impl);
                results.get(impls.indexOf(impl))[r - 1] = FreshJvms.runChild(EchoLoopback.class, settings.run.jvmArgs, args)[0];
            }
        }
        System.out.print(table(load, impls, results));
        System.out.println("(each round in a fresh JVM with " + settings.run.warmup + " warm-up rounds before it, flags "
                + Pools.HEAP_MIN + " " + Pools.HEAP_MAX + " " + String.join(" ", settings.run.jvmArgs) + ")");
        System.out.println("load average at the end: " + Timers.loadAverage());
        System.out.flush();
        System.exit(0);
    }

    private static Impl impl(String name) {
        return switch (name) {
            case "coro" -> load -> CoroEcho.run(load, true);
            case "coroPrebuilt" -> load -> CoroEcho.run(load, false);
            case "netty" -> EchoLoopback::netty;
            case "virtualThreads" -> EchoLoopback::virtualThreads;
            default -> throw new IllegalArgumentException(name);
        };
    }

    static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /** Waits for {@code done}; throws with {@code what} and the first failure if any. */
    static void await(CountDownLatch done, AtomicReference<Throwable> failure, String what) throws InterruptedException {
        if (!done.await(HANG_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException(what + ": " + done.getCount() + " connections still running after "
                    + HANG_SECONDS + " s", failure.get());
        }
        if (failure.get() != null) {
            throw new IllegalStateException(what + " failed", failure.get());
        }
    }

    // ---------------------------------------------------------------- Netty

    /** The server's handler: writes back what it reads, flushes once per read burst. */
    @ChannelHandler.Sharable
    static final class NettyEchoServer extends ChannelInboundHandlerAdapter {
        static final NettyEchoServer INSTANCE = new NettyEchoServer();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** One client connection: sends a message, checks its echo byte by byte, sends the next. */
    static final class NettyEchoClient extends ChannelInboundHandlerAdapter {
        final int c;
        final Load load;
        final CountDownLatch done;
        final AtomicReference<Throwable> failure;
        final byte[] out;
        int k; // round trips completed
        int pos; // bytes of the current echo checked
        boolean finished;

        NettyEchoClient(int c, Load load, CountDownLatch done, AtomicReference<Throwable> failure) {
            this.c = c;
            this.load = load;
            this.done = done;
            this.failure = failure;
            this.out = new byte[load.size()];
        }

        /** Sends the first message; runs on the channel's loop. */
        void start(ChannelHandlerContext ctx) {
            send(ctx);
        }

        private void send(ChannelHandlerContext ctx) {
            fill(out, c, k, load.size());
            ByteBuf buf = ctx.alloc().directBuffer(load.size());
            buf.writeBytes(out);
            ctx.writeAndFlush(buf, ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                int size = load.size();
                while (in.isReadable()) {
                    if (finished) {
                        throw new IllegalStateException("connection " + c + ": bytes after the last echo");
                    }
                    byte b = in.readByte();
                    if (b != payload(c, k, pos)) {
                        throw mismatch(c, k, pos, b);
                    }
                    if (++pos == size) {
                        pos = 0;
                        if (++k == load.roundTrips()) {
                            finished = true;
                            done.countDown();
                        } else {
                            send(ctx);
                        }
                    }
                }
            } catch (RuntimeException e) {
                fail(ctx, e);
            } finally {
                in.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (!finished) {
                fail(ctx, new IllegalStateException("connection " + c + " closed after " + k + " round trips"));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(ctx, cause);
        }

        private void fail(ChannelHandlerContext ctx, Throwable e) {
            if (!finished) {
                finished = true;
                failure.compareAndSet(null, e);
                done.countDown();
            }
            ctx.close();
        }
    }

    /** Netty NIO: one single-loop group for the server, one for the clients. */
    static long netty(Load load) throws Exception {
        EventLoopGroup serverGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("echo-netty-server"),
                NioIoHandler.newFactory());
        EventLoopGroup clientGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("echo-netty-client"),
                NioIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap()
                    .group(serverGroup)
                    .channel(NioServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(NettyEchoServer.INSTANCE);
                        }
                    })
                    .bind(loopback(0)).sync().channel();
            CountDownLatch done = new CountDownLatch(load.connections());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Channel> channels = new ArrayList<>();
            List<NettyEchoClient> clients = new ArrayList<>();
            for (int c = 0; c < load.connections(); c++) {
                NettyEchoClient client = new NettyEchoClient(c, load, done, failure);
                ChannelFuture f = new Bootstrap()
                        .group(clientGroup)
                        .channel(NioSocketChannel.class)
                        .option(ChannelOption.TCP_NODELAY, true)
                        .handler(client)
                        .connect(server.localAddress());
                channels.add(f.sync().channel());
                clients.add(client);
            }
            long t0 = System.nanoTime();
            for (int c = 0; c < channels.size(); c++) {
                Channel ch = channels.get(c);
                NettyEchoClient client = clients.get(c);
                ch.eventLoop().execute(() -> client.start(ch.pipeline().context(client)));
            }
            await(done, failure, "netty");
            long t1 = System.nanoTime();
            for (Channel ch : channels) {
                ch.close().sync();
            }
            server.close().sync();
            return t1 - t0;
        } finally {
            clientGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
            serverGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS).sync();
        }
    }

    // ---------------------------------------------------------------- virtual threads

    /**
     * Virtual threads with blocking {@link Socket}s: an acceptor virtual thread starts one virtual
     * thread per accepted connection, which reads into a buffer and writes back what it read; one
     * client virtual thread per connection writes a message and {@code readNBytes} its echo.
     */
    static long virtualThreads(Load load) throws Exception {
        String p = System.getProperty("jdk.virtualThreadScheduler.parallelism");
        if (!String.valueOf(Pools.WORKERS).equals(p)) {
            throw new IllegalStateException("virtual threads need " + Pools.WORKERS + " carriers: run with "
                    + Pools.VT_PARALLELISM + " (found " + p + ")");
        }
        AtomicReference<Throwable> failure = new AtomicReference<>();
        ConcurrentLinkedQueue<Thread> serverThreads = new ConcurrentLinkedQueue<>();
        ServerSocket server = new ServerSocket(); // closed in the finally below, before the joins
        try {
            server.bind(loopback(0));
            Thread acceptor = Thread.ofVirtual().name("echo-vt-acceptor").start(() -> {
                try {
                    while (true) {
                        Socket s = server.accept();
                        s.setTcpNoDelay(true);
                        serverThreads.add(Thread.ofVirtual().start(() -> echo(s, failure)));
                    }
                } catch (IOException e) {
                    if (!server.isClosed()) {
                        failure.compareAndSet(null, e);
                    }
                }
            });
            List<Socket> sockets = new ArrayList<>();
            try {
                for (int c = 0; c < load.connections(); c++) {
                    Socket s = new Socket();
                    sockets.add(s);
                    s.setTcpNoDelay(true);
                    s.connect(loopback(server.getLocalPort()));
                }
                CountDownLatch start = new CountDownLatch(1);
                CountDownLatch done = new CountDownLatch(load.connections());
                for (int c = 0; c < load.connections(); c++) {
                    int conn = c;
                    Socket s = sockets.get(c);
                    Thread.ofVirtual().start(() -> {
                        try {
                            start.await();
                            client(s, conn, load);
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        } finally {
                            done.countDown();
                        }
                    });
                }
                long t0 = System.nanoTime();
                start.countDown();
                await(done, failure, "virtualThreads");
                long t1 = System.nanoTime();
                return t1 - t0;
            } finally {
                for (Socket s : sockets) {
                    s.close(); // the server threads then read end of stream and end
                }
                server.close();
                acceptor.join(TimeUnit.SECONDS.toMillis(HANG_SECONDS));
                for (Thread t : serverThreads) {
                    t.join(TimeUnit.SECONDS.toMillis(HANG_SECONDS));
                }
            }
        } finally {
            server.close(); // idempotent
        }
    }

    private static void echo(Socket s, AtomicReference<Throwable> failure) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            byte[] buf = new byte[4096];
            int n;
            while ((n = in.read(buf)) > 0) {
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            // a reset by the closing client at teardown is not a failure; a wrong echo shows at the client
        } catch (Throwable e) {
            failure.compareAndSet(null, e);
        }
    }

    private static void client(Socket s, int c, Load load) throws IOException {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        int size = load.size();
        byte[] msg = new byte[size];
        byte[] echo = new byte[size];
        for (int k = 0; k < load.roundTrips(); k++) {
            fill(msg, c, k, size);
            out.write(msg);
            if (in.readNBytes(echo, 0, size) != size) {
                throw new IllegalStateException("connection " + c + ": end of stream after " + k + " round trips");
            }
            check(echo, c, k, size);
        }
    }

    // ---------------------------------------------------------------- the table

    static String table(Load load, List<String> impls, List<long[]> results) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "%nTCP echo over loopback: %d connections x %,d sequential round trips of "
                + "%d bytes; server on one thread, clients on one thread. JDK %s, %d cores. Median of the measured "
                + "rounds; coro/x = Coro's time over the peer's, below 1 means Coro is faster.%n",
                load.connections(), load.roundTrips(), load.size(), Runtime.version(),
                Runtime.getRuntime().availableProcessors()));
        String header = String.format(Locale.ROOT, "%-9s %-16s %11s %10s %12s %16s %22s   %s%n", "workload",
                "implementation", "round trips", "ms", "ns/trip", "round trips/s", "min..max trips/s", "ratio");
        out.append(header).append("-".repeat(header.length() - 1)).append('\n');
        double base = impls.get(0).equals(IMPLS.get(0)) ? median(results.get(0)) : Double.NaN;
        for (int i = 0; i < impls.size(); i++) {
            long[] r = results.get(i);
            double m = median(r);
            long total = load.total();
            String ratio = impls.get(i).equals(IMPLS.get(0)) ? "baseline"
                    : Double.isNaN(base) ? "coro/" + impls.get(i) + " = n/a (no coro result)"
                    : String.format(Locale.ROOT, "coro/%s = %.2fx", impls.get(i), base / m);
            long min = Arrays.stream(r).min().orElse(0);
            long max = Arrays.stream(r).max().orElse(0);
            out.append(String.format(Locale.ROOT, "%-9s %-16s %11d %10.1f %12.0f %16s %22s   %s%n", "tcp-echo",
                    impls.get(i), total, m / 1e6, m / total, String.format(Locale.ROOT, "%,.0f", total / (m / 1e9)),
                    String.format(Locale.ROOT, "%,.0f..%,.0f", total / (max / 1e9), total / (min / 1e9)), ratio));
        }
        return out.toString();
    }

    static double median(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2.0;
    }
}
