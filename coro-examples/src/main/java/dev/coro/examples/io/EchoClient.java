package dev.coro.examples.io;

import dev.coro.io.AsyncSocket;
import dev.coro.io.EventLoop;
import dev.coro.task.Task;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A TCP echo client on an {@link EventLoop} with a bounded load mode: {@code connections} sockets,
 * each making {@code roundTrips} sequential round trips of {@code size} bytes (write the message,
 * read the echo back in full, check it), all connections at once. Reports round trips per second,
 * timed from when every connection is open to when the last round trip ends.
 *
 * {@snippet :
 * try (EventLoop serverLoop = EventLoop.start(); EventLoop clientLoop = EventLoop.start();
 *         EchoServer server = EchoServer.start(serverLoop, 0)) {
 *     EchoClient.Result r = EchoClient.run(clientLoop, server.address(), 50, 20_000, 64);
 *     System.out.println(r);
 * }
 * }
 */
public final class EchoClient {
    private EchoClient() {}

    /**
     * What a load run did.
     *
     * @param connections how many connections
     * @param roundTrips round trips per connection
     * @param size bytes per message
     * @param nanos how long the round trips took
     */
    public record Result(int connections, int roundTrips, int size, long nanos) {
        /**
         * Returns the round trips per second over all connections.
         *
         * @return round trips per second
         */
        public double roundTripsPerSecond() {
            return (double) connections * roundTrips * 1e9 / nanos;
        }

        @Override
        public String toString() {
            return String.format("%d connections x %d round trips of %d bytes: %.0f round trips/s", connections,
                    roundTrips, size, roundTripsPerSecond());
        }
    }

    /**
     * Runs the load against an echo server at {@code server}, on {@code loop}, and waits for it.
     *
     * @param loop the loop the client sockets run on
     * @param server the echo server's address
     * @param connections how many connections, at least 1
     * @param roundTrips round trips per connection, at least 1
     * @param size bytes per message, at least 1
     * @return what it did
     * @throws IllegalArgumentException if a count is below 1
     * @throws NullPointerException if {@code loop} or {@code server} is null
     * @throws IllegalStateException if an echo does not match what was sent
     */
    public static Result run(EventLoop loop, InetSocketAddress server, int connections, int roundTrips, int size) {
        Objects.requireNonNull(loop, "loop");
        Objects.requireNonNull(server, "server");
        positive("connections", connections);
        positive("roundTrips", roundTrips);
        positive("size", size);
        List<Task<AsyncSocket>> opening = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            opening.add(AsyncSocket.connect(loop, server));
        }
        List<AsyncSocket> sockets = Task.whenAll(opening).join();
        try {
            List<Task<Integer>> load = new ArrayList<>();
            for (int c = 0; c < connections; c++) {
                load.add(roundTrips(sockets.get(c), roundTrips, size, c));
            }
            long start = System.nanoTime();
            Task.whenAll(load).startOn(loop).join();
            return new Result(connections, roundTrips, size, System.nanoTime() - start);
        } finally {
            sockets.forEach(AsyncSocket::close);
        }
    }

    /** One connection's sequential round trips. */
    static Task<Integer> roundTrips(AsyncSocket socket, int count, int size, int seed) {
        ByteBuffer request = ByteBuffer.allocateDirect(size);
        for (int i = 0; i < size; i++) {
            request.put(i, (byte) (seed * 31 + i));
        }
        ByteBuffer reply = ByteBuffer.allocateDirect(size);
        return Task.loop(0, i -> i < count, i -> Task.defer(() -> {
            request.clear();
            return socket.writeFully(request);
        }).then(Task.defer(() -> {
            reply.clear();
            return socket.readFully(reply);
        })).map(x -> {
            request.clear();
            reply.flip();
            if (!reply.equals(request)) {
                throw new IllegalStateException("echo mismatch on round trip " + i);
            }
            return i + 1;
        }));
    }

    private static void positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be >= 1, was " + value);
        }
    }

    /**
     * Runs a server and the load on loopback, each on its own loop, and prints the result:
     * {@code EchoClient [connections [roundTrips [size]]]} (defaults 50, 20000, 64).
     *
     * @param args connections, round trips, size
     */
    public static void main(String[] args) {
        int connections = args.length > 0 ? Integer.parseInt(args[0]) : 50;
        int roundTrips = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        int size = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        System.out.println(runOnLoopback(connections, roundTrips, size));
    }

    /**
     * Starts a server loop and a client loop, runs the load, and shuts both down.
     *
     * @param connections how many connections
     * @param roundTrips round trips per connection
     * @param size bytes per message
     * @return what it did
     */
    public static Result runOnLoopback(int connections, int roundTrips, int size) {
        try (EventLoop serverLoop = EventLoop.start("echo-server-loop");
                EventLoop clientLoop = EventLoop.start("echo-client-loop");
                EchoServer server = EchoServer.start(serverLoop, 0)) {
            return run(clientLoop, server.address(), connections, roundTrips, size);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Prints a short run's result to {@code out} (the {@code echo} demo).
     *
     * @param out where to print
     */
    public static void demo(PrintStream out) {
        out.println("An echo server and its clients over loopback TCP, each side on one EventLoop thread;");
        out.println("every round trip writes 64 bytes, waits for the server to echo them, and checks the reply.");
        Result r = runOnLoopback(4, 5_000, 64);
        out.println(r);
        out.printf("= %.1f microseconds per request and reply on one connection, %d connections interleaved on one thread%n",
                r.connections() * 1e6 / r.roundTripsPerSecond(), r.connections());
    }
}
