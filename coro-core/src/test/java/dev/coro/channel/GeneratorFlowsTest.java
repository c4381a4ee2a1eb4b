package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A generator as a publisher and back: values, errors and cancellation cross both ways. */
class GeneratorFlowsTest {

    @Test
    void aGeneratorRoundTripsThroughAPublisher() {
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            expected.add(i);
        }
        Generator<Integer> back = Flows.generator(Flows.publisher(Generator.range(0, 1000)), 8);
        assertEquals(expected, back.toList().join());
        assertEquals(expected, back.toList().join(), "each consumption subscribes anew");
    }

    @Test
    void aProducerErrorReachesTheConsumerAfterTheValues() {
        IllegalStateException boom = new IllegalStateException("boom");
        Generator<Integer> failing = Generator.<Integer>create(out -> out.emit(1).then(out.emit(2))
                .then(Task.failure(boom)));
        List<Integer> seen = new ArrayList<>();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Flows.generator(Flows.publisher(failing), 4).forEach(seen::add).join());
        assertEquals("boom", e.getMessage());
        assertEquals(List.of(1, 2), seen);
    }

    @Test
    void takingFewerEndsTheProducerThroughTheSubscription() {
        AtomicBoolean finished = new AtomicBoolean();
        AtomicInteger produced = new AtomicInteger();
        Generator<Integer> endless = Generator.<Integer>create(out -> Task.loop(0, i -> true,
                i -> out.emit(i).map(e -> produced.incrementAndGet())).andFinally(() -> finished.set(true)));
        List<Integer> three = Flows.generator(Flows.publisher(endless), 2).take(3).toList().join();
        assertEquals(List.of(0, 1, 2), three);
        assertTrue(finished.get(), "the producer's finally ran");
        assertTrue(produced.get() < 20, "the producer ran only as far as the demand: " + produced.get());
    }

    @Test
    void closingTheConsumerCancelsTheSubscriptionOfASilentPublisherAtOnce() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        AtomicLong requested = new AtomicLong();
        Flow.Publisher<Integer> silent = subscriber -> subscriber.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
                requested.addAndGet(n);
            }

            @Override
            public void cancel() {
                cancelled.countDown();
            }
        });
        Cursor<Integer> cursor = Flows.generator(silent, 4).open();
        CompletableFuture<Integer> next = cursor.next().toCompletableFuture(); // waits: nothing comes
        assertEquals(4, requested.get(), "the first request is the buffer");
        cursor.close();
        assertTrue(cancelled.await(10, TimeUnit.SECONDS), "the subscription was cancelled without another element");
        assertTrue(next.isDone(), "the waiting next() ended");
    }

    @Test
    void badInputIsRefused() {
        assertEquals("bufferSize must be at least 1, got 0", assertThrows(IllegalArgumentException.class,
                () -> Flows.generator(Flows.publisher(Generator.range(0, 1)), 0)).getMessage());
        assertEquals("generator", assertThrows(NullPointerException.class,
                () -> Flows.publisher((Generator<Integer>) null)).getMessage());
        assertEquals("publisher", assertThrows(NullPointerException.class,
                () -> Flows.generator(null, 1)).getMessage());
    }
}
