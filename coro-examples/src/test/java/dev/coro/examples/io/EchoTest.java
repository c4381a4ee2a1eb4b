package dev.coro.examples.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.io.EventLoop;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** The echo server and the bounded load client, on loopback. */
class EchoTest {

    @Test
    void loadRunCompletesEveryRoundTrip() throws Exception {
        try (EventLoop serverLoop = EventLoop.start(); EventLoop clientLoop = EventLoop.start();
                EchoServer server = EchoServer.start(serverLoop, 0)) {
            assertTrue(server.address().getAddress().isLoopbackAddress());
            EchoClient.Result r = EchoClient.run(clientLoop, server.address(), 8, 500, 64);
            assertEquals(8, r.connections());
            assertEquals(500, r.roundTrips());
            assertTrue(r.roundTripsPerSecond() > 0);
        }
    }

    @Test
    void serverAndClientMayShareOneLoop() throws Exception {
        try (EventLoop loop = EventLoop.start(); EchoServer server = EchoServer.start(loop, 0)) {
            EchoClient.Result r = EchoClient.run(loop, server.address(), 4, 200, 1000);
            assertEquals(4 * 200, r.connections() * r.roundTrips());
        }
    }

    @Test
    void badInput() {
        try (EventLoop loop = EventLoop.start()) {
            InetSocketAddress a = new InetSocketAddress("127.0.0.1", 1);
            assertThrows(IllegalArgumentException.class, () -> EchoClient.run(loop, a, 0, 1, 1));
            assertThrows(IllegalArgumentException.class, () -> EchoClient.run(loop, a, 1, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> EchoClient.run(loop, a, 1, 1, 0));
            assertThrows(NullPointerException.class, () -> EchoClient.run(null, a, 1, 1, 1));
        }
    }
}
