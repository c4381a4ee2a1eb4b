package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The channel's semantics, one behaviour per test, on every capacity kind where it differs. */
class ChannelTest {

    private static <T> CompletableFuture<T> start(Task<T> task) {
        return task.toCompletableFuture();
    }

    private static <T> Outcome<T> outcomeOf(CompletableFuture<T> f) {
        return Task.fromCompletionStage(() -> f).outcome().join();
    }

    // ---- rendezvous ----

    @Test
    void aRendezvousSendWaitsForItsReceiver() {
        Channel<String> ch = Channel.rendezvous();
        CompletableFuture<Void> send = start(ch.send("a"));
        assertFalse(send.isDone(), "no receiver yet");
        assertEquals("a", ch.receive().join());
        assertTrue(send.isDone(), "the receive took it");
    }

    @Test
    void aRendezvousReceiveWaitsForItsSender() {
        Channel<String> ch = Channel.rendezvous();
        CompletableFuture<String> receive = start(ch.receive());
        assertFalse(receive.isDone());
        assertFalse(ch.tryReceive() != null, "nothing to take");
        assertTrue(ch.trySend("x"), "a waiting receiver takes it at once");
        assertEquals("x", receive.join());
        assertFalse(ch.trySend("y"), "no receiver waits now");
    }

    @Test
    void tryReceiveTakesAWaitingSendersElement() {
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<Void> send = start(ch.send(5));
        assertEquals(5, ch.tryReceive());
        assertTrue(send.isDone());
        assertNull(ch.tryReceive());
    }

    // ---- buffered, unlimited, conflated ----

    @Test
    void aBufferedSendWaitsOnlyWhenFull() {
        Channel<Integer> ch = Channel.buffered(2);
        assertTrue(start(ch.send(1)).isDone());
        assertTrue(ch.trySend(2));
        assertFalse(ch.trySend(3), "full");
        CompletableFuture<Void> third = start(ch.send(3));
        assertFalse(third.isDone());
        assertEquals(1, ch.receive().join());
        assertTrue(third.isDone(), "room made: the waiting sender's element moved in");
        assertEquals(2, ch.receive().join());
        assertEquals(3, ch.receive().join());
    }

    @Test
    void waitingSendersAndReceiversAreServedInArrivalOrder() {
        Channel<Integer> ch = Channel.buffered(1);
        ch.trySend(0);
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            sends.add(start(ch.send(i)));
        }
        for (int i = 0; i <= 5; i++) {
            assertEquals(i, ch.receive().join(), "elements in the order the sends started");
        }
        sends.forEach(s -> assertTrue(s.isDone()));
        List<CompletableFuture<Integer>> receives = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            receives.add(start(ch.receive()));
        }
        for (int i = 0; i < 5; i++) {
            ch.sendBlocking(100 + i);
        }
        for (int i = 0; i < 5; i++) {
            assertEquals(100 + i, receives.get(i).join(), "receivers in the order they started waiting");
        }
    }

    @Test
    void anUnlimitedSendNeverWaits() {
        Channel<Integer> ch = Channel.unlimited();
        for (int i = 0; i < 10_000; i++) {
            assertTrue(start(ch.send(i)).isDone());
        }
        for (int i = 0; i < 10_000; i++) {
            assertEquals(i, ch.tryReceive());
        }
        assertNull(ch.tryReceive());
    }

    @Test
    void aConflatedChannelKeepsTheLatestAndHandsTheReplacedToTheCallback() {
        List<Integer> dropped = new CopyOnWriteArrayList<>();
        Channel<Integer> ch = Channel.create(Channel.CONFLATED, dropped::add);
        assertTrue(ch.trySend(1));
        assertTrue(start(ch.send(2)).isDone(), "a conflated send never waits");
        assertTrue(ch.trySend(3));
        assertEquals(3, ch.receive().join());
        assertEquals(List.of(1, 2), dropped);
        CompletableFuture<Integer> waiting = start(ch.receive());
        ch.trySend(4);
        assertEquals(4, waiting.join(), "a waiting receiver takes it directly");
        assertEquals(List.of(1, 2), dropped);
    }

    // ---- close ----

    @Test
    void closeLetsReceiversDrainThenEndsWithNull() {
        Channel<Integer> ch = Channel.buffered(4);
        ch.trySend(1);
        ch.trySend(2);
        assertTrue(ch.close());
        assertFalse(ch.close(), "idempotent");
        assertTrue(ch.isClosedForSend());
        assertFalse(ch.isClosedForReceive(), "two elements left");
        ChannelClosedException e = assertThrows(ChannelClosedException.class, () -> ch.trySend(3));
        assertEquals("send: the channel is closed", e.getMessage());
        Outcome<Void> late = ch.send(3).outcome().join();
        assertInstanceOf(ChannelClosedException.class, ((Outcome.Failure<Void>) late).error());
        assertEquals(1, ch.receive().join());
        assertEquals(2, ch.receiveBlocking());
        assertNull(ch.receive().join(), "the end");
        assertNull(ch.receive().join(), "and again");
        assertTrue(ch.isClosedForReceive());
    }

    @Test
    void closeEndsEveryWaitingReceiver() {
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<Integer> a = start(ch.receive());
        CompletableFuture<Integer> b = start(ch.receive());
        ch.close();
        assertNull(a.join());
        assertNull(b.join());
    }

    @Test
    void sendersWaitingWhenTheChannelClosesStillDeliver() {
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<Void> send = start(ch.send(9));
        ch.close();
        assertFalse(send.isDone());
        assertEquals(9, ch.receive().join());
        assertTrue(send.isDone());
        assertNull(ch.receive().join());
    }

    @Test
    void closeWithACauseFailsReceiversOnceDrained() {
        Channel<Integer> ch = Channel.buffered(2);
        ch.trySend(1);
        IllegalStateException boom = new IllegalStateException("producer failed");
        ch.close(boom);
        assertEquals(1, ch.receive().join());
        Outcome<Integer> end = ch.receive().outcome().join();
        assertSame(boom, ((Outcome.Failure<Integer>) end).error());
        ChannelClosedException e = assertThrows(ChannelClosedException.class, () -> ch.trySend(2));
        assertSame(boom, e.getCause());
    }

    // ---- cancel ----

    @Test
    void cancelDropsTheBufferToTheCallbackAndCancelsEveryWaiter() {
        List<Integer> dropped = new CopyOnWriteArrayList<>();
        Channel<Integer> full = Channel.create(2, dropped::add);
        full.trySend(1);
        full.trySend(2);
        CompletableFuture<Void> waitingSend = start(full.send(3));
        assertTrue(full.cancel());
        assertFalse(full.cancel());
        assertEquals(List.of(1, 2), dropped, "a cancelled send's element is its caller's, not dropped");
        assertTrue(waitingSend.isCancelled());
        assertInstanceOf(Outcome.Cancelled.class, full.receive().outcome().join());
        ChannelClosedException e = assertThrows(ChannelClosedException.class, () -> full.trySend(4));
        assertEquals("send: the channel is cancelled", e.getMessage());
        assertInstanceOf(CancellationException.class, e.getCause());
        assertTrue(full.isClosedForReceive());

        Channel<Integer> empty = Channel.rendezvous();
        CompletableFuture<Integer> waitingReceive = start(empty.receive());
        empty.cancel();
        assertTrue(waitingReceive.isCancelled());
    }

    // ---- cancellation of waiters ----

    @Test
    void aCancelledSendDeliversNothing() {
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<Void> send = start(ch.send(1));
        send.cancel(true);
        assertTrue(send.isCancelled());
        CompletableFuture<Integer> receive = start(ch.receive());
        assertFalse(receive.isDone(), "the cancelled send's element never entered");
        ch.trySend(2);
        assertEquals(2, receive.join());
        assertEquals(0, coreLinked(ch), "no node left behind");
    }

    @Test
    void aCancelledReceiveTakesNothing() {
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<Integer> first = start(ch.receive());
        CompletableFuture<Integer> second = start(ch.receive());
        first.cancel(true);
        assertTrue(ch.trySend(7));
        assertEquals(7, second.join(), "the element passed to the next receiver");
        assertEquals(0, coreLinked(ch));
    }

    @Test
    void tenThousandReceiversHalfCancelledThenFiveThousandSendsEachLandOnce() {
        Channel<Integer> ch = Channel.rendezvous();
        List<CompletableFuture<Integer>> receivers = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            receivers.add(start(ch.receive()));
        }
        for (int i = 0; i < 10_000; i += 2) {
            receivers.get(i).cancel(true);
        }
        assertTrue(coreLinked(ch) <= 5_000 * 2 + 64, "cancelled receivers do not pile up: " + coreLinked(ch));
        for (int i = 0; i < 5_000; i++) {
            assertTrue(ch.trySend(i), "a live receiver waits for each");
        }
        assertFalse(ch.trySend(-1), "exactly 5,000 live receivers");
        for (int i = 1, k = 0; i < 10_000; i += 2, k++) {
            assertEquals(k, receivers.get(i).join(), "each live receiver got exactly one, in order");
        }
        assertEquals(0, coreLinked(ch));
    }

    // ---- stack safety, threads ----

    @Test
    void aMillionRendezvousHandOffsOnOneWorkerDoNotGrowTheStack() {
        int n = 1_000_000;
        Channel<Integer> ch = Channel.rendezvous();
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            Task<Integer> producer = Task.loop(0, i -> i < n, i -> ch.send(i).map(ignored -> i + 1));
            Task<Long> consumer = Task.loop(new long[] {0, 0}, s -> s[0] < n, s -> ch.receive().map(v -> {
                s[1] += v;
                s[0]++;
                return s;
            })).map(s -> s[1]);
            CompletableFuture<Long> sum = consumer.startOn(pool).toCompletableFuture();
            producer.startOn(pool).join();
            assertEquals((long) n * (n - 1) / 2, sum.join());
        }
    }

    @Test
    void blockingDoorsWorkFromPlainAndVirtualThreads() throws Exception {
        Channel<Integer> ch = Channel.rendezvous();
        Thread producer = Thread.ofVirtual().start(() -> {
            for (int i = 0; i < 1000; i++) {
                ch.sendBlocking(i);
            }
            ch.close();
        });
        long sum = 0;
        for (Integer v; (v = ch.receiveBlocking()) != null; ) {
            sum += v;
        }
        producer.join();
        assertEquals(999 * 1000 / 2, sum);
    }

    /**
     * forEach hands what is there in batches (ChannelCore part 10's lane): an action that throws
     * fails the forEach at that element, and the elements after it stay in the channel, in order;
     * then a waiting step gets the next element. Rules out a batch that takes elements it does not
     * hand to the action.
     */
    @Test
    void aForEachWhoseActionThrowsLeavesTheLaterElementsInTheChannel() {
        Channel<Integer> ch = Channel.buffered(8);
        for (int i = 1; i <= 5; i++) {
            assertTrue(ch.trySend(i));
        }
        List<Integer> seen = new ArrayList<>();
        IllegalStateException boom = new IllegalStateException("boom");
        CompletableFuture<Void> each = start(ch.forEach(v -> {
            seen.add(v);
            if (v == 3) {
                throw boom;
            }
        }));
        assertSame(boom, assertThrows(CompletionException.class, each::join).getCause());
        assertEquals(List.of(1, 2, 3), seen);
        assertEquals(4, ch.tryReceive());
        List<Integer> later = new ArrayList<>();
        CompletableFuture<Void> rest = start(ch.forEach(later::add));
        assertFalse(rest.isDone(), "it took 5 and waits for more");
        assertTrue(ch.trySend(6));
        ch.close();
        assertNull(rest.join());
        assertEquals(List.of(5, 6), later);
    }

    @Test
    void forEachReceivesUntilTheEnd() {
        Channel<Integer> ch = Channel.unlimited();
        for (int i = 0; i < 100_000; i++) {
            ch.trySend(i);
        }
        ch.close();
        long[] sum = {0};
        ch.forEach(v -> sum[0] += v).join();
        assertEquals(100_000L * 99_999 / 2, sum[0]);
        Channel<Integer> failed = Channel.buffered(1);
        failed.close(new IllegalStateException("x"));
        CompletionException e = assertThrows(CompletionException.class,
                () -> failed.forEachAsync(v -> Task.value(v)).toCompletableFuture().join());
        assertEquals("x", e.getCause().getMessage());
    }

    // ---- bad input ----

    @Test
    void badInputIsRefusedWithAClearMessage() {
        assertEquals("capacity must be at least 1, got 0 (use rendezvous() for 0)",
                assertThrows(IllegalArgumentException.class, () -> Channel.buffered(0)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Channel.create(-2, x -> {}));
        assertEquals("onUndelivered",
                assertThrows(NullPointerException.class, () -> Channel.create(1, null)).getMessage());
        Channel<String> ch = Channel.unlimited();
        assertEquals("element", assertThrows(NullPointerException.class, () -> ch.send(null)).getMessage());
        assertEquals("element", assertThrows(NullPointerException.class, () -> ch.trySend(null)).getMessage());
        assertEquals("cause", assertThrows(NullPointerException.class, () -> ch.close(null)).getMessage());
        assertEquals("Channel[unlimited]", ch.toString());
    }

    static int coreLinked(Channel<?> ch) {
        return ch.core().linkedWaiters();
    }
}
