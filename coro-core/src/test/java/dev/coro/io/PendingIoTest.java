package dev.coro.io;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.coro.task.Task;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** {@link EventLoop#pendingIoOperations()}: an accept that waits counts until it is cancelled. */
class PendingIoTest {
    @Test
    void aWaitingAcceptIsCountedOnTheLoopAndPublished() throws Exception {
        try (EventLoop loop = EventLoop.start("io-count");
                AsyncServerSocket server = AsyncServerSocket.bind(loop, new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))) {
            assertEquals(0, onLoop(loop));
            CompletableFuture<AsyncSocket> accept = server.accept().toCompletableFuture(); // no client: it waits
            assertEquals(1, onLoop(loop));
            assertEquals(1, loop.pendingIoOperations(), "the count last published on the loop");
            accept.cancel(false);
            assertEquals(0, onLoop(loop));
        }
    }

    /** Counts on the loop thread, after everything submitted before has run. */
    private static int onLoop(EventLoop loop) {
        return Task.fromCallable(loop::pendingIoOperations).startOn(loop).join();
    }
}
