package dev.coro.reactor;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.channel.Channel;
import dev.coro.channel.Cursor;
import dev.coro.channel.Generator;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Context;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/** {@link CoroReactor}'s Flux adapters against real Reactor (and its StepVerifier). */
class CoroReactorFluxTest {
    private static final Context.Key<String> TENANT = Context.Key.named("tenant");

    /** Counts to infinity, records how far it got, and counts down {@code cleanedUp} however it ends. */
    private static Generator<Integer> counting(AtomicInteger emitted, CountDownLatch cleanedUp) {
        return Generator.create(emitter -> Task.loop(0, n -> true, n -> {
            emitted.set(n + 1);
            return emitter.emit(n).map(ignored -> n + 1);
        }).andFinally(cleanedUp::countDown));
    }

    // ---------------------------------------------------------------- Generator and Channel to Flux

    @Test
    void aGeneratorAsAFluxEmitsItsValuesThenCompletesAndRunsAnewForEachSubscriber() {
        AtomicInteger runs = new AtomicInteger();
        Flux<Integer> flux = CoroReactor.toFlux(Generator.create(emitter -> {
            runs.incrementAndGet();
            return emitter.emit(1).then(emitter.emit(2)).then(emitter.emit(3));
        }));
        assertEquals(0, runs.get(), "cold: nothing runs before a subscription");
        StepVerifier.create(flux).expectNext(1, 2, 3).verifyComplete();
        StepVerifier.create(flux.map(n -> n * 10)).expectNext(10, 20, 30).verifyComplete();
        assertEquals(2, runs.get());
        StepVerifier.create(CoroReactor.toFlux(Generator.empty())).verifyComplete();
    }

    @Test
    void theProducersErrorReachesTheSubscriberAsItself() {
        IOException boom = new IOException("boom");
        Flux<Integer> flux = CoroReactor.toFlux(Generator.create(emitter -> emitter.emit(1).then(Task.failure(boom))));
        StepVerifier.create(flux).expectNext(1).expectErrorSatisfies(e -> assertSame(boom, e)).verify();
        StepVerifier.create(CoroReactor.toFlux(Generator.create(emitter -> Task.cancelled())))
                .expectError(CancellationException.class).verify();
    }

    @Test
    void aSubscriberThatCancelsEndsTheProducerWhichRunsItsCleanup() throws Exception {
        CountDownLatch cleanedUp = new CountDownLatch(1);
        StepVerifier.create(CoroReactor.toFlux(counting(new AtomicInteger(), cleanedUp)))
                .expectNext(0, 1, 2).thenCancel().verify();
        assertTrue(cleanedUp.await(10, SECONDS), "the producer's finally ran");

        CountDownLatch cleanedUpByTake = new CountDownLatch(1);
        StepVerifier.create(CoroReactor.toFlux(counting(new AtomicInteger(), cleanedUpByTake)).take(2))
                .expectNext(0, 1).verifyComplete();
        assertTrue(cleanedUpByTake.await(10, SECONDS), "Reactor's take cancels the producer");
    }

    @Test
    void cancellingTheSubscriptionCancelsAProducerWaitingOnAPool() throws Exception {
        CountDownLatch cleanedUp = new CountDownLatch(1);
        Generator<String> slow = Generator.create(emitter -> emitter.emit("first")
                .then(Task.delay(Duration.ofHours(1)))
                .then(emitter.emit("an hour later"))
                .andFinally(cleanedUp::countDown));
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            StepVerifier.create(CoroReactor.toFlux(slow, pool)).expectNext("first").thenCancel().verify();
            assertTrue(cleanedUp.await(10, SECONDS), "the hour's wait was cancelled and the cleanup ran");
        }
    }

    @Test
    void aSlowSubscriberReceivesNoMoreThanItRequestedAndTheProducerRunsOneAheadAtMost() {
        AtomicInteger emitted = new AtomicInteger();
        AtomicInteger received = new AtomicInteger();
        CountDownLatch cleanedUp = new CountDownLatch(1);
        Flux<Integer> flux = CoroReactor.toFlux(counting(emitted, cleanedUp)).doOnNext(n -> received.incrementAndGet());
        StepVerifier.create(flux, 0)
                .expectSubscription()
                .then(() -> assertTrue(emitted.get() <= 1, "no demand: at most one value in hand, was " + emitted.get()))
                .then(() -> assertEquals(0, received.get()))
                .thenRequest(2)
                .expectNext(0, 1)
                .then(() -> assertEquals(2, received.get(), "two requested, two received"))
                .then(() -> assertTrue(emitted.get() <= 3, "requested + 1 at most, was " + emitted.get()))
                .thenRequest(1)
                .expectNext(2)
                .then(() -> assertEquals(3, received.get()))
                .then(() -> assertTrue(emitted.get() <= 4, "requested + 1 at most, was " + emitted.get()))
                .thenCancel()
                .verify();
    }

    @Test
    void onAPoolTheProducerNeverRunsMoreThanOneAheadOfTheDemand() {
        AtomicLong requested = new AtomicLong();
        AtomicReference<String> violation = new AtomicReference<>();
        Generator<Integer> checked = Generator.create(emitter -> Task.loop(0, n -> n < 200, n -> {
            if (n > requested.get()) { // value n is the (n+1)th: requested + 1 at most
                violation.compareAndSet(null, "value " + n + " produced with " + requested.get() + " requested");
            }
            return emitter.emit(n).map(ignored -> n + 1);
        }));
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Flux<Integer> flux = CoroReactor.toFlux(checked, pool).doOnRequest(requested::addAndGet);
            StepVerifier.create(flux, 1)
                    .expectNext(0)
                    .thenRequest(9)
                    .expectNextCount(9)
                    .thenRequest(190)
                    .expectNextCount(190)
                    .verifyComplete();
        }
        assertEquals(null, violation.get());
    }

    @Test
    void coroKeysInTheReactorContextBecomeTheProducersValues() {
        Generator<String> tenants = Generator.create(emitter -> Task.context().flatMap(c -> emitter.emit(c.get(TENANT))));
        StepVerifier.create(CoroReactor.toFlux(tenants).contextWrite(c -> c.put(TENANT, "acme").put("not a coro key", 1)))
                .expectNext("acme").verifyComplete();
    }

    @Test
    void aChannelAsAFluxEndsAsTheChannelDoes() {
        Channel<Integer> closed = Channel.buffered(4);
        closed.trySend(1);
        closed.trySend(2);
        closed.close();
        StepVerifier.create(CoroReactor.toFlux(closed)).expectNext(1, 2).verifyComplete();

        IOException boom = new IOException("boom");
        Channel<Integer> failed = Channel.buffered(4);
        failed.trySend(1);
        failed.close(boom);
        StepVerifier.create(CoroReactor.toFlux(failed)).expectNext(1).expectErrorSatisfies(e -> assertSame(boom, e)).verify();

        Channel<Integer> cancelled = Channel.buffered(4);
        cancelled.cancel();
        StepVerifier.create(CoroReactor.toFlux(cancelled)).expectError(CancellationException.class).verify();
    }

    @Test
    void aChannelSubscriberTakesOnlyWhatItRequestedAndCancellingLeavesTheRestInTheChannel() {
        Channel<Integer> channel = Channel.buffered(8);
        for (int i = 1; i <= 5; i++) {
            channel.trySend(i);
        }
        StepVerifier.create(CoroReactor.toFlux(channel), 2).expectNext(1, 2).thenCancel().verify();
        assertEquals(3, channel.tryReceive(), "the third element is still in the channel");
        assertFalse(channel.isClosedForSend(), "the channel stays open");

        Channel<Integer> empty = Channel.rendezvous();
        StepVerifier.create(CoroReactor.toFlux(empty)).expectSubscription().thenCancel().verify();
        assertFalse(empty.trySend(9), "the cancelled subscription's receive no longer waits for an element");
    }

    // ---------------------------------------------------------------- Flux to Generator

    @Test
    void aFluxAsAGeneratorGivesItsElementsAndSubscribesAnewForEachConsumption() {
        AtomicInteger subscriptions = new AtomicInteger();
        Generator<Integer> numbers = CoroReactor.fromFlux(Flux.range(1, 5).doOnSubscribe(s -> subscriptions.incrementAndGet()), 2);
        assertEquals(0, subscriptions.get(), "lazy: nothing subscribes before a consumption");
        assertEquals(List.of(1, 2, 3, 4, 5), numbers.toList().join());
        assertEquals(List.of(2, 4), numbers.filter(n -> n % 2 == 0).toList().join());
        assertEquals(2, subscriptions.get());
        assertEquals(List.of(), CoroReactor.fromFlux(Flux.<Integer>empty(), 1).toList().join());
    }

    @Test
    void aFluxOnAnotherThreadReachesTheConsumerInOrder() {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Flux<Integer> async = Flux.range(0, 500).publishOn(reactor.core.scheduler.Schedulers.parallel());
            Task<List<Integer>> all = CoroReactor.fromFlux(async, 8).toList().startOn(pool);
            List<Integer> values = all.join();
            assertEquals(500, values.size());
            for (int i = 0; i < values.size(); i++) {
                assertEquals(i, values.get(i));
            }
        }
    }

    @Test
    void theFluxsErrorReachesTheConsumerAsItselfAfterTheElementsBeforeIt() {
        IOException boom = new IOException("boom");
        Generator<Integer> failing = CoroReactor.fromFlux(Flux.just(1, 2).concatWith(Flux.error(boom)), 4);
        try (Cursor<Integer> cursor = failing.open()) {
            assertEquals(1, cursor.next().join());
            assertEquals(2, cursor.next().join());
            Outcome<Integer> third = cursor.next().outcome().join();
            assertSame(boom, assertInstanceOf(Outcome.Failure.class, third).error());
        }
    }

    @Test
    void closingTheCursorCancelsTheSubscriptionEvenWhileTheFluxIsSilent() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        Flux<Integer> oneThenSilence = Flux.just(1).concatWith(Flux.never()).doOnCancel(cancelled::countDown);
        Cursor<Integer> cursor = CoroReactor.fromFlux(oneThenSilence, 4).open();
        assertEquals(1, cursor.next().join());
        assertEquals(1, cancelled.getCount(), "still subscribed while the consumer is");
        cursor.close();
        assertTrue(cancelled.await(10, SECONDS), "closing the cursor cancelled the subscription");
    }

    @Test
    void cancellingTheConsumingTaskOrTakingEnoughCancelsTheSubscription() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        CompletableFuture<Void> consuming = CoroReactor.fromFlux(Flux.<Integer>never().doOnCancel(cancelled::countDown), 1)
                .forEach(n -> {}).toCompletableFuture();
        assertFalse(consuming.isDone());
        consuming.cancel(false);
        assertTrue(cancelled.await(10, SECONDS), "cancelling the forEach task cancelled the subscription");

        CountDownLatch cancelledByTake = new CountDownLatch(1);
        Generator<Integer> many = CoroReactor.fromFlux(Flux.range(1, 1_000).doOnCancel(cancelledByTake::countDown), 4);
        assertEquals(List.of(1, 2), many.take(2).toList().join());
        assertTrue(cancelledByTake.await(10, SECONDS), "a satisfied take cancelled the subscription");
    }

    @Test
    void theFluxIsAskedForABoundedNumberOfElementsAheadOfTheConsumer() {
        AtomicLong requested = new AtomicLong();
        int bufferSize = 4;
        Generator<Integer> numbers = CoroReactor.fromFlux(Flux.range(1, 1_000).doOnRequest(requested::addAndGet), bufferSize);
        try (Cursor<Integer> cursor = numbers.open()) {
            for (int taken = 1; taken <= 20; taken++) {
                assertEquals(taken, cursor.next().join());
                long ahead = requested.get() - taken;
                assertTrue(ahead <= 2L * bufferSize + 1, "requested " + requested.get() + " with " + taken + " taken");
            }
        }
    }

    @Test
    void theFluxSeesTheConsumersCoroContext() {
        Flux<String> reads = Flux.deferContextual(view -> Flux.just(view.get(Context.class).get(TENANT)));
        assertEquals(List.of("acme"), CoroReactor.fromFlux(reads, 1).toList().withValue(TENANT, "acme").join());
    }

    @Test
    void aRoundTripKeepsTheElementsAndTheEnd() {
        StepVerifier.create(CoroReactor.toFlux(CoroReactor.fromFlux(Flux.range(1, 100), 3)))
                .expectNextCount(100).verifyComplete();
        assertEquals(List.of(1, 2, 3), CoroReactor.fromFlux(CoroReactor.toFlux(Generator.range(1, 4)), 1).toList().join());
    }

    @Test
    void badInput() {
        assertThrows(NullPointerException.class, () -> CoroReactor.fromFlux(null, 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CoroReactor.fromFlux(Flux.just(1), 0));
        assertTrue(e.getMessage().contains("bufferSize"), e.getMessage());
        assertThrows(NullPointerException.class, () -> CoroReactor.toFlux((Generator<Object>) null));
        assertThrows(NullPointerException.class, () -> CoroReactor.toFlux((Channel<Object>) null));
        assertThrows(NullPointerException.class, () -> CoroReactor.toFlux(Generator.empty(), null));
        assertThrows(NullPointerException.class, () -> CoroReactor.toFlux(Channel.rendezvous(), null));
    }
}
