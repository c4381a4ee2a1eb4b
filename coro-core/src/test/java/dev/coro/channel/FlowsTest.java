package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The semantics of {@link Flows}: demand, the end of the stream, cancellation, competing
 * subscribers and threads of {@code publisher(channel)}; demand, order, the end, cancellation and a
 * publisher that breaks rule 1.1 for {@code channel(publisher, n)}. The Reactive Streams TCK runs in
 * {@link ChannelFlowPublisherVerificationTest} and {@link ChannelFlowSubscriberVerificationTest}.
 * On {@code Scheduler.inline()} every step here runs on the test thread, in the order written.
 */
class FlowsTest {

    /** Records every signal, in order, as text, and the elements. */
    static class Recorder<T> implements Flow.Subscriber<T> {
        final List<String> signals = Collections.synchronizedList(new ArrayList<>());
        final List<T> elements = Collections.synchronizedList(new ArrayList<>());
        final CompletableFuture<Throwable> error = new CompletableFuture<>();
        final CompletableFuture<Void> done = new CompletableFuture<>();
        volatile Flow.Subscription subscription;
        Consumer<T> onNextAction = e -> {};

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            signals.add("subscribe");
        }

        @Override
        public void onNext(T item) {
            elements.add(item);
            signals.add("next " + item);
            onNextAction.accept(item);
        }

        @Override
        public void onError(Throwable throwable) {
            signals.add("error " + throwable.getClass().getSimpleName());
            error.complete(throwable);
            done.complete(null);
        }

        @Override
        public void onComplete() {
            signals.add("complete");
            done.complete(null);
        }
    }

    private static Channel<Integer> filled(int capacity, int... elements) {
        Channel<Integer> ch = Channel.buffered(capacity);
        for (int e : elements) {
            assertTrue(ch.trySend(e));
        }
        return ch;
    }

    // ---------------------------------------------------------------- publisher(channel)

    @Test
    void aSubscriberReceivesOnlyAsItsDemandAllows() {
        Channel<Integer> ch = filled(5, 1, 2, 3, 4, 5);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        assertEquals(List.of("subscribe"), r.signals, "no demand, no element");
        r.subscription.request(2);
        assertEquals(List.of(1, 2), r.elements);
        r.subscription.request(1);
        assertEquals(List.of(1, 2, 3), r.elements);
        assertEquals(4, ch.tryReceive(), "what the subscriber did not ask for stays in the channel");
    }

    @Test
    void aWaitingReceiveDeliversOnTheSendersThread() {
        Channel<Integer> ch = Channel.buffered(2);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        assertEquals(List.of("subscribe"), r.signals, "the receive waits");
        assertTrue(ch.trySend(7));
        assertEquals(List.of("subscribe", "next 7"), r.signals, "delivered inline, by the send");
    }

    @Test
    void aClosedDrainedChannelCompletes() {
        Channel<Integer> ch = filled(2, 1, 2);
        ch.close();
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(10);
        assertEquals(List.of("subscribe", "next 1", "next 2", "complete"), r.signals);
    }

    @Test
    void anEndedChannelCompletesWithoutDemand() {
        Channel<Integer> ch = Channel.buffered(1);
        ch.close();
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        assertEquals(List.of("subscribe", "complete"), r.signals, "rules 1.4 and 1.5: the end needs no demand");
    }

    @Test
    void aCloseAfterTheDemandIsMetCompletesTheSubscriber() {
        Channel<Integer> ch = filled(1, 1);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        assertEquals(List.of("subscribe", "next 1"), r.signals);
        ch.close();
        assertEquals(List.of("subscribe", "next 1", "complete"), r.signals,
                "rule 1.5: the end needs no demand (it used to wait for the next request: a silent hang)");
        r.subscription.request(1);
        assertEquals(List.of("subscribe", "next 1", "complete"), r.signals, "nothing after the end");
    }

    @Test
    void aCloseWithElementsLeftWaitsForTheDemandToDeliverThemThenCompletes() {
        Channel<Integer> ch = filled(2, 1, 2);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        ch.close();
        assertEquals(List.of("subscribe", "next 1"), r.signals, "element 2 waits for demand; no end before it");
        r.subscription.request(1);
        assertEquals(List.of("subscribe", "next 1", "next 2", "complete"), r.signals);
    }

    @Test
    void aCancelWhileDemandIsZeroEndsTheSubscriberWithTheCancellation() {
        Channel<Integer> ch = filled(1, 1);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        ch.cancel();
        assertEquals(List.of("subscribe", "next 1", "error CancellationException"), r.signals);
    }

    @Test
    void aGeneratorOnAPoolCompletesASubscriberThatAskedForExactlyItsElements() throws Exception {
        // regression: the producer's close raced the subscription's wait for demand after the last
        // element; the subscriber then never got onComplete (CoroReactorFluxTest hung under load)
        try (WorkStealingPool pool = WorkStealingPool.create(2, "flow-exact")) {
            for (int round = 0; round < 300; round++) {
                Generator<Integer> gen = Generator.create(out -> Task.loop(0, n -> n < 20, n -> out.emit(n).map(e -> n + 1)));
                Recorder<Integer> r = new Recorder<>() {
                    @Override
                    public void onSubscribe(Flow.Subscription s) {
                        super.onSubscribe(s);
                        s.request(1);
                    }
                };
                r.onNextAction = e -> {
                    if (e == 0) {
                        r.subscription.request(19); // in all, exactly the 20 elements
                    }
                };
                Flows.publisher(gen, pool).subscribe(r);
                r.done.get(30, TimeUnit.SECONDS); // a hang fails here
                assertEquals(20, r.elements.size(), "round " + round);
                assertEquals("complete", r.signals.get(r.signals.size() - 1), "round " + round);
            }
        }
    }

    @Test
    void aChannelClosedWithACauseSignalsThatCauseAfterItsElements() {
        Channel<Integer> ch = filled(2, 1);
        IllegalStateException cause = new IllegalStateException("producer failed");
        ch.close(cause);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(5);
        assertEquals(List.of("subscribe", "next 1", "error IllegalStateException"), r.signals);
        assertSame(cause, r.error.join());
    }

    @Test
    void aCancelledChannelSignalsCancellationException() {
        Channel<Integer> ch = filled(2, 1, 2);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        ch.cancel();
        r.subscription.request(1);
        assertEquals(List.of("subscribe", "next 1", "error CancellationException"), r.signals);
        assertInstanceOf(CancellationException.class, r.error.join());
    }

    @Test
    void cancellingTheSubscriptionCancelsItsWaitingReceiveWhichTakesNoElement() {
        Channel<Integer> ch = Channel.rendezvous();
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1); // a receive waits in the channel
        r.subscription.cancel();
        assertFalse(ch.trySend(1), "no receiver waits any more: the cancelled receive left");
        CompletableFuture<Void> send = ch.send(2).toCompletableFuture();
        assertEquals(2, ch.tryReceive(), "the element goes to the channel's other receivers");
        assertTrue(send.isDone());
        r.subscription.request(5); // rule 3.6: a no-op
        r.subscription.cancel(); // rule 3.7: a no-op
        assertEquals(List.of("subscribe"), r.signals, "nothing, not even a terminal signal, after cancel");
    }

    @Test
    void requestOfZeroOrLessSignalsIllegalArgumentExceptionNamingRule39() {
        for (long n : new long[] {0, -1, Long.MIN_VALUE}) {
            Recorder<Integer> r = new Recorder<>();
            Flows.publisher(filled(1, 1)).subscribe(r);
            r.subscription.request(n);
            assertEquals(List.of("subscribe", "error IllegalArgumentException"), r.signals, "n = " + n);
            assertTrue(r.error.join().getMessage().contains("3.9"), r.error.join().getMessage());
            r.subscription.request(1);
            assertEquals(2, r.signals.size(), "nothing after the error");
        }
    }

    @Test
    void aBadRequestCancelsAWaitingReceive() {
        Channel<Integer> ch = Channel.rendezvous();
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        r.subscription.request(0);
        assertEquals(List.of("subscribe", "error IllegalArgumentException"), r.signals);
        assertFalse(ch.trySend(1), "the receive left the channel");
    }

    @Test
    void demandAddsUpToLongMaxValue() {
        Channel<Integer> ch = filled(3, 1, 2, 3);
        ch.close();
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(Long.MAX_VALUE);
        r.subscription.request(Long.MAX_VALUE);
        assertEquals(List.of("subscribe", "next 1", "next 2", "next 3", "complete"), r.signals);
    }

    @Test
    void subscribersCompeteForElements() {
        Channel<Integer> ch = Channel.unlimited();
        Recorder<Integer> a = new Recorder<>();
        Recorder<Integer> b = new Recorder<>();
        Flow.Publisher<Integer> p = Flows.publisher(ch);
        p.subscribe(a);
        p.subscribe(b);
        a.subscription.request(Long.MAX_VALUE);
        b.subscription.request(Long.MAX_VALUE);
        for (int i = 0; i < 6; i++) {
            assertTrue(ch.trySend(i));
        }
        ch.close();
        List<Integer> all = new ArrayList<>(a.elements);
        all.addAll(b.elements);
        all.sort(null);
        assertEquals(List.of(0, 1, 2, 3, 4, 5), all, "each element to exactly one subscriber");
        assertEquals(List.of(0, 2, 4), a.elements, "waiting receivers are served in arrival order");
        assertEquals(List.of(1, 3, 5), b.elements);
        assertTrue(a.signals.contains("complete") && b.signals.contains("complete"));
    }

    @Test
    void requestInOnNextDoesNotDeepenTheStack() {
        int n = 100_000;
        Channel<Integer> ch = Channel.buffered(n);
        for (int i = 0; i < n; i++) {
            ch.trySend(i);
        }
        ch.close();
        int[] depth = {-1, 0};
        Recorder<Integer> r = new Recorder<>();
        r.onNextAction = e -> {
            if (e % 1000 == 0) { // sampled: walking the stack is slow
                int d = (int) (long) StackWalker.getInstance().walk(frames -> frames.count());
                if (depth[0] < 0) {
                    depth[0] = d;
                }
                depth[1] = Math.max(depth[1], d);
            }
            r.subscription.request(1);
        };
        Flows.publisher(ch).subscribe(r);
        r.subscription.request(1);
        assertEquals(n, r.elements.size());
        assertEquals("complete", r.signals.get(r.signals.size() - 1));
        assertTrue(depth[1] <= depth[0] + 2, "rule 3.3: depth " + depth[0] + " then " + depth[1]);
    }

    @Test
    void aThrowingOnNextCancelsTheSubscriptionAndReportsTheException() {
        Channel<Integer> ch = filled(3, 1, 2, 3);
        Recorder<Integer> r = new Recorder<>();
        RuntimeException boom = new RuntimeException("boom");
        r.onNextAction = e -> {
            throw boom;
        };
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        Thread thread = Thread.currentThread();
        Thread.UncaughtExceptionHandler old = thread.getUncaughtExceptionHandler();
        thread.setUncaughtExceptionHandler((t, e) -> reported.add(e));
        try {
            Flows.publisher(ch).subscribe(r);
            r.subscription.request(3);
        } finally {
            thread.setUncaughtExceptionHandler(old);
        }
        assertEquals(List.of(1), r.elements, "rule 2.13: the subscription is cancelled");
        assertEquals(List.of(boom), reported);
        assertEquals(2, ch.tryReceive());
    }

    @Test
    void signalsRunOnTheGivenScheduler() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(1, "flow-test")) {
            Channel<Integer> ch = filled(2, 1, 2);
            ch.close();
            Set<String> threads = new HashSet<>();
            Recorder<Integer> r = new Recorder<>() {
                @Override
                public void onSubscribe(Flow.Subscription s) {
                    threads.add(Thread.currentThread().getName());
                    super.onSubscribe(s);
                    s.request(Long.MAX_VALUE);
                }

                @Override
                public void onNext(Integer item) {
                    threads.add(Thread.currentThread().getName());
                    super.onNext(item);
                }
            };
            Flows.publisher(ch, pool).subscribe(r);
            r.done.get(10, TimeUnit.SECONDS);
            assertEquals(List.of("subscribe", "next 1", "next 2", "complete"), r.signals);
            assertEquals(1, threads.size(), threads.toString());
            assertTrue(threads.iterator().next().startsWith("flow-test"), threads.toString());
        }
    }

    @Test
    void competingSubscribersOnAPoolGetEveryElementExactlyOnceEvenWhenOneCancels() throws Exception {
        int n = 20_000;
        long seed = System.nanoTime();
        java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
        try (WorkStealingPool pool = WorkStealingPool.create(2, "flow-compete")) {
            Channel<Integer> ch = Channel.buffered(8);
            Flow.Publisher<Integer> p = Flows.publisher(ch, pool);
            List<Recorder<Integer>> subscribers = new ArrayList<>();
            int[] batches = new int[4];
            for (int i = 0; i < 4; i++) {
                int batch = batches[i] = 1 + random.nextInt(8);
                boolean cancels = i == 0;
                Recorder<Integer> r = new Recorder<>();
                int[] left = {batch};
                r.onNextAction = e -> {
                    if (cancels && r.elements.size() == 500) {
                        r.subscription.cancel();
                    } else if (--left[0] == 0) {
                        left[0] = batch;
                        r.subscription.request(batch);
                    }
                };
                subscribers.add(r);
                p.subscribe(r);
            }
            for (Recorder<Integer> r : subscribers) {
                while (r.subscription == null) {
                    Thread.onSpinWait();
                }
            }
            for (int i = 0; i < 4; i++) { // from the test thread, racing the pool; each subscriber asks
                // for a batch again when it has received one, so its demand is never 0 at the end
                subscribers.get(i).subscription.request(batches[i]);
            }
            for (int i = 0; i < n; i++) {
                ch.sendBlocking(i);
            }
            ch.close();
            for (int i = 1; i < 4; i++) {
                subscribers.get(i).done.get(30, TimeUnit.SECONDS);
            }
            List<Integer> all = new ArrayList<>();
            for (Recorder<Integer> r : subscribers) {
                List<Integer> got = new ArrayList<>(r.elements);
                for (int k = 1; k < got.size(); k++) {
                    assertTrue(got.get(k - 1) < got.get(k), "FIFO per subscriber, seed " + seed);
                }
                all.addAll(got);
            }
            assertTrue(subscribers.get(0).elements.size() >= 500, "seed " + seed);
            assertFalse(subscribers.get(0).signals.contains("complete"), "no end after cancel, seed " + seed);
            all.sort(null);
            assertEquals(n, all.size(), "each element exactly once (a cancelled receive took none), seed " + seed);
            for (int i = 0; i < n; i++) {
                assertEquals(i, all.get(i), "seed " + seed);
            }
        }
    }

    @Test
    void aShutDownSchedulerGivesOnSubscribeThenOnError() {
        WorkStealingPool pool = WorkStealingPool.create(1, "flow-down");
        pool.close();
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(filled(1, 1), pool).subscribe(r);
        assertEquals(List.of("subscribe", "error RejectedExecutionException"), r.signals);
    }

    @Test
    void publisherRejectsBadInput() {
        Channel<Integer> ch = Channel.buffered(1);
        assertEquals("channel", assertThrows(NullPointerException.class, () -> Flows.publisher((Channel<Integer>) null)).getMessage());
        assertEquals("scheduler",
                assertThrows(NullPointerException.class, () -> Flows.publisher(ch, null)).getMessage());
        Throwable e = assertThrows(NullPointerException.class, () -> Flows.publisher(ch).subscribe(null));
        assertTrue(e.getMessage().contains("1.9"), e.getMessage());
    }

    // ---------------------------------------------------------------- channel(publisher, n)

    /** A publisher driven by the test: it records requests and cancels, and signals when told. */
    static final class ManualPublisher<T> implements Flow.Publisher<T> {
        Flow.Subscriber<? super T> subscriber;
        long requested;
        boolean cancelled;

        @Override
        public void subscribe(Flow.Subscriber<? super T> s) {
            subscriber = s;
            s.onSubscribe(new Flow.Subscription() {
                @Override
                public void request(long n) {
                    requested += n;
                }

                @Override
                public void cancel() {
                    cancelled = true;
                }
            });
        }

        @SafeVarargs
        final void emit(T... elements) {
            for (T e : elements) {
                subscriber.onNext(e);
            }
        }
    }

    @Test
    void theChannelSubscribesAtOnceAndRequestsItsBufferSize() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 4);
        assertEquals(4, p.requested);
        assertEquals(4, ch.capacity());
    }

    @Test
    void eachElementThatGoesIntoTheChannelAsksForOneMore() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 4);
        p.emit(1, 2, 3, 4);
        assertEquals(8, p.requested, "four went into the channel: four more asked for");
        p.emit(5, 6, 7, 8);
        assertEquals(8, p.requested, "the channel is full: these wait in front of it");
        assertEquals(1, ch.tryReceive());
        assertEquals(9, p.requested, "one taken: the waiting one went in, and one more is asked for");
        List<Integer> rest = new ArrayList<>();
        Integer e;
        while ((e = ch.tryReceive()) != null) {
            rest.add(e);
        }
        assertEquals(List.of(2, 3, 4, 5, 6, 7, 8), rest, "in the publisher's order");
        assertEquals(4 + 8, p.requested, "the buffer, plus one for each element that went in");
    }

    @Test
    void onCompleteClosesTheChannelAfterItsElements() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 2);
        p.emit(1, 2);
        p.emit(3);
        p.subscriber.onComplete();
        assertFalse(ch.isClosedForReceive());
        List<Integer> got = new ArrayList<>();
        ch.forEach(got::add).join();
        assertEquals(List.of(1, 2, 3), got);
        assertTrue(ch.isClosedForSend());
    }

    @Test
    void onErrorClosesTheChannelWithTheCause() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 2);
        p.emit(1);
        IllegalStateException cause = new IllegalStateException("upstream failed");
        p.subscriber.onError(cause);
        assertEquals(1, ch.receive().join());
        Outcome<Integer> end = ch.receive().outcome().join();
        assertSame(cause, assertInstanceOf(Outcome.Failure.class, end).error());
        assertEquals(3, p.requested, "2 at first, 1 for the element; nothing after onError (rule 2.3)");
    }

    @Test
    void cancellingTheChannelCancelsTheSubscription() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 1);
        p.emit(1, 2); // 1 in the channel, 2 waits in a send
        assertFalse(p.cancelled);
        ch.cancel();
        assertTrue(p.cancelled, "the waiting send was cancelled: so is the subscription");
    }

    @Test
    void cancellingAnIdleChannelCancelsTheSubscriptionAtTheNextElement() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 2);
        ch.cancel();
        assertFalse(p.cancelled, "a channel has no cancel callback: nothing waits in it now");
        p.emit(1);
        assertTrue(p.cancelled);
        long requested = p.requested;
        p.emit(2); // rule 2.8: ignored
        p.subscriber.onComplete();
        assertEquals(requested, p.requested);
    }

    @Test
    void aChannelClosedBeforeTheSubscriptionCancelsIt() {
        Flow.Publisher<Integer> late = s -> { };
        FlowChannelSubscriber<Integer> sub = new FlowChannelSubscriber<Integer>(2).start();
        late.subscribe(sub);
        sub.channel().close();
        ManualPublisher<Integer> p = new ManualPublisher<>();
        p.subscribe(sub);
        assertTrue(p.cancelled);
        assertEquals(0, p.requested);
    }

    @Test
    void aPublisherThatSendsMoreThanRequestedIsCancelledAndTheChannelFailsNamingRule11() {
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(p, 2);
        p.emit(1, 2); // into the channel; 2 more requested
        p.emit(3, 4); // wait in front of it; nothing more requested
        assertEquals(4, p.requested);
        p.emit(5); // not requested
        assertTrue(p.cancelled);
        assertEquals(List.of(1, 2, 3, 4), List.of(ch.receive().join(), ch.receive().join(),
                ch.receive().join(), ch.receive().join()), "the elements accepted before are kept");
        Outcome<Integer> end = ch.receive().outcome().join();
        Throwable error = assertInstanceOf(Outcome.Failure.class, end).error();
        assertInstanceOf(IllegalStateException.class, error);
        assertTrue(error.getMessage().contains("1.1"), error.getMessage());
    }

    @Test
    void aPublisherWhoseSubscribeThrowsGivesAFailedChannel() {
        IllegalStateException boom = new IllegalStateException("cannot subscribe");
        Channel<Integer> ch = Flows.channel(s -> {
            throw boom;
        }, 1);
        Outcome<Integer> end = ch.receive().outcome().join();
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, end).error());
    }

    @Test
    void aSubscriptionWhoseRequestThrowsFailsTheChannel() {
        IllegalStateException boom = new IllegalStateException("request broke rule 3.16");
        List<String> calls = new ArrayList<>();
        Channel<Integer> ch = Flows.channel(s -> s.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
                calls.add("request " + n);
                throw boom;
            }

            @Override
            public void cancel() {
                calls.add("cancel");
            }
        }), 2);
        Outcome<Integer> end = ch.receive().outcome().join();
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, end).error());
        assertEquals(List.of("request 2", "cancel"), calls);
    }

    @Test
    void aPublisherWhoseSubscribeThrowsAfterOnSubscribeIsCancelled() {
        IllegalStateException boom = new IllegalStateException("subscribe broke rule 1.9");
        ManualPublisher<Integer> p = new ManualPublisher<>();
        Channel<Integer> ch = Flows.channel(s -> {
            p.subscribe(s);
            throw boom;
        }, 1);
        assertTrue(p.cancelled);
        Outcome<Integer> end = ch.receive().outcome().join();
        assertSame(boom, assertInstanceOf(Outcome.Failure.class, end).error());
    }

    @Test
    void channelRejectsBadInput() {
        assertEquals("publisher",
                assertThrows(NullPointerException.class, () -> Flows.channel(null, 1)).getMessage());
        Throwable e = assertThrows(IllegalArgumentException.class, () -> Flows.channel(new ManualPublisher<>(), 0));
        assertEquals("bufferSize must be at least 1, got 0", e.getMessage());
        FlowChannelSubscriber<Integer> sub = new FlowChannelSubscriber<Integer>(1).start();
        assertThrows(NullPointerException.class, () -> sub.onSubscribe(null));
        assertThrows(NullPointerException.class, () -> sub.onNext(null));
        assertThrows(NullPointerException.class, () -> sub.onError(null));
    }

    // ---------------------------------------------------------------- both ways

    @Test
    void aRoundTripKeepsEveryElementInOrder() {
        int n = 10_000;
        Channel<Integer> source = Channel.buffered(16);
        CompletableFuture<Void> producer = Task.loop(0, i -> i < n, i -> source.send(i).map(ignored -> i + 1))
                .andFinally(source::close).map(ignored -> (Void) null).toCompletableFuture();
        Channel<Integer> copy = Flows.channel(Flows.publisher(source), 3);
        List<Integer> got = new ArrayList<>();
        copy.forEach(got::add).join();
        producer.join();
        assertEquals(n, got.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, got.get(i));
        }
    }

    @Test
    void aJdkPublisherOnOtherThreadsFeedsTheChannel() throws Exception {
        int n = 1_000;
        try (WorkStealingPool pool = WorkStealingPool.create(2, "flow-jdk")) {
            SubmissionPublisher<Integer> p = new SubmissionPublisher<>(pool, 4);
            Channel<Integer> ch = Flows.channel(p, 8);
            CompletableFuture<List<Integer>> got = CompletableFuture.supplyAsync(() -> {
                List<Integer> list = new ArrayList<>();
                Integer e;
                while ((e = ch.receiveBlocking()) != null) {
                    list.add(e);
                }
                return list;
            });
            for (int i = 0; i < n; i++) {
                p.submit(i);
            }
            p.close(); // onComplete, after the elements
            List<Integer> list = got.get(30, TimeUnit.SECONDS);
            assertEquals(n, list.size());
            for (int i = 0; i < n; i++) {
                assertEquals(i, list.get(i));
            }
        }
    }

    @Test
    void theInlineSchedulerIsTheDefault() {
        Channel<Integer> ch = filled(1, 1);
        Recorder<Integer> r = new Recorder<>();
        Flows.publisher(ch, Scheduler.inline()).subscribe(r);
        r.subscription.request(1);
        assertEquals(List.of(1), r.elements);
    }
}
