package dev.coro.reactor;

import dev.coro.channel.Channel;
import dev.coro.channel.Flows;
import dev.coro.channel.Generator;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Context;
import dev.coro.task.Task;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Flow;
import reactor.adapter.JdkFlowAdapter;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.context.ContextView;

/**
 * Reactor interop: a {@link Mono} as a {@link Task} and back, and a {@link Flux} as a
 * {@link Generator} and back (or a {@link Channel} as a {@code Flux}), with cancellation crossing in
 * both directions, errors passed as themselves, backpressure kept, and the two contexts bridged.
 *
 * <p><b>Mono to Task</b> ({@link #fromMono}): each run of the task subscribes to the {@code Mono};
 * its value completes the task (an empty {@code Mono}, {@code null}), its error fails it with that
 * error, unwrapped. Cancelling the task disposes of the subscription. The {@code Mono} sees the
 * task's Coro {@link Context} in its Reactor context under the key {@code dev.coro.task.Context.class},
 * so Reactor code can read the task's values ({@code ctx.get(Context.class).get(KEY)}).
 *
 * <p><b>Task to Mono</b> ({@link #toMono}): each subscription runs the task once, on the subscribing
 * thread until its first wait (start it on a pool with {@code task.startOn(pool)} to run it there);
 * its value is emitted (a {@code null} value completes the {@code Mono} empty), its error is the
 * {@code Mono}'s error, and a task that completes cancelled ends the {@code Mono} with a
 * {@link CancellationException}. Cancelling the subscription cancels the task. Every entry of the
 * subscriber's Reactor context whose key is a Coro {@link Context.Key} becomes that key's value in the
 * task's context ({@code contextWrite(c -> c.put(TENANT, "acme"))} is read in the task with
 * {@code Task.context()}).
 *
 * <p><b>Flux to Generator</b> ({@link #fromFlux}): each consumption of the generator subscribes to
 * the {@code Flux} anew, asks it for a bounded number of elements ahead, and ends as the {@code Flux}
 * does; ending the consumption early cancels the subscription at once. The Reactor context carries the
 * consumption's Coro {@code Context}, as for {@code fromMono}.
 *
 * <p><b>Generator or Channel to Flux</b> ({@link #toFlux(Generator)}, {@link #toFlux(Channel)}): each
 * subscriber runs the generator anew (or competes for the channel's elements), and receives only as
 * many elements as it requested; cancelling the subscription ends the producer (or stops receiving).
 * Coro keys in the subscriber's Reactor context become the generator's context values, as for
 * {@code toMono}.
 *
 * <p>The streaming adapters are {@link Flows} (Coro's {@code java.util.concurrent.Flow} adapters)
 * joined to Reactor's {@link JdkFlowAdapter}; they keep the Reactive Streams rules.
 *
 * {@snippet :
 * Task<User> user = CoroReactor.fromMono(webClient.get().uri("/user/42").retrieve().bodyToMono(User.class));
 * Mono<Report> report = CoroReactor.toMono(buildReport.startOn(pool));
 *
 * Generator<Event> events = CoroReactor.fromFlux(eventFlux, 32);      // pull them with a Cursor, or forEach
 * Flux<Line> lines = CoroReactor.toFlux(Generator.create(emitter -> readLines(file, emitter)));
 * }
 */
public final class CoroReactor {
    private CoroReactor() {}

    /**
     * Returns a task that subscribes to {@code mono} on each run; see the class comment.
     *
     * @param mono the mono
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code mono} is null
     */
    public static <T> Task<T> fromMono(Mono<T> mono) {
        Objects.requireNonNull(mono, "mono");
        return Task.create(completer -> {
            Disposable subscription = mono
                    .contextWrite(c -> c.put(Context.class, completer.context()))
                    .subscribe(completer::complete, completer::fail, () -> completer.complete(null));
            completer.onCancel(subscription::dispose);
        });
    }

    /**
     * Returns a mono that runs {@code task} once per subscription; see the class comment.
     *
     * @param task the task
     * @param <T> the value type
     * @return the mono
     * @throws NullPointerException if {@code task} is null
     */
    public static <T> Mono<T> toMono(Task<T> task) {
        Objects.requireNonNull(task, "task");
        return Mono.deferContextual(view -> {
            Task<T> run = withValues(task, view);
            return Mono.fromFuture(run::toCompletableFuture, false);
        });
    }

    /**
     * Returns a generator of {@code flux}'s elements: each consumption subscribes to {@code flux}
     * anew, when it starts (at the first {@code next()} of a cursor, or when {@code forEach} runs).
     *
     * <p><b>Backpressure.</b> The subscription first requests {@code bufferSize} elements, then one
     * more for each element that moves on towards the consumer, so the {@code Flux} is never asked
     * for more than about twice {@code bufferSize} elements ahead of what the consumer took (up to
     * {@code bufferSize} requested and not yet arrived, up to {@code bufferSize} arrived and waiting,
     * and the one being handed over): see {@link Flows#channel(Flow.Publisher, int)}.
     *
     * <p><b>The end.</b> The consumption ends when the {@code Flux} completes, after its last element;
     * an error of the {@code Flux} fails it with that same error (not wrapped), where the next element
     * would have been. Ending the consumption early (closing its {@link dev.coro.channel.Cursor},
     * cancelling the task that runs {@code forEach}, a {@code take} that is satisfied, a consumer that
     * fails) cancels the subscription at once, even while the {@code Flux} is silent.
     *
     * <p><b>Context.</b> The {@code Flux} sees the consumption's Coro {@link Context} in its Reactor
     * context under the key {@code dev.coro.task.Context.class}, as {@link #fromMono} does.
     *
     * <p><b>Threads.</b> Elements reach the consumer on its own scheduler; the subscription's
     * requests are made on the thread that makes room for them (a receiving thread, or the
     * {@code Flux}'s own). For a {@link Channel} fed by a {@code Flux} (which several consumers share),
     * feed one from this generator ({@code fromFlux(flux, n).forEachTask(channel::send)}) or use
     * {@code Flows.channel(JdkFlowAdapter.publisherToFlowPublisher(flux), n)}; a channel cannot tell its
     * feeder that it was closed, so there the subscription is cancelled when the next element arrives.
     *
     * {@snippet :
     * Generator<Long> ticks = CoroReactor.fromFlux(Flux.interval(Duration.ofSeconds(1)), 16);
     * List<Long> firstThree = ticks.take(3).toList().join(); // [0, 1, 2]; then the interval is cancelled
     * }
     *
     * @param flux the elements
     * @param bufferSize how many elements to request ahead, at least 1
     * @param <T> the element type
     * @return the generator
     * @throws NullPointerException if {@code flux} is null
     * @throws IllegalArgumentException if {@code bufferSize < 1}
     */
    public static <T> Generator<T> fromFlux(Flux<? extends T> flux, int bufferSize) {
        Objects.requireNonNull(flux, "flux");
        if (bufferSize < 1) {
            throw new IllegalArgumentException("bufferSize must be at least 1, got " + bufferSize);
        }
        return Generator.create(out -> Task.context().flatMap(context -> {
            // the channel cannot tell the subscription that the consumer is gone: this signal does,
            // through Reactor's own operator, so the cancel keeps rule 2.7 (one call at a time)
            Sinks.Empty<Void> stop = Sinks.empty();
            Flux<? extends T> run = flux.contextWrite(c -> c.put(Context.class, context)).takeUntilOther(stop.asMono());
            Channel<T> elements = Flows.channel(JdkFlowAdapter.publisherToFlowPublisher(run), bufferSize);
            return elements.forEachAsync(out::emit).andFinally(() -> {
                elements.cancel();
                stop.tryEmitEmpty();
            });
        }));
    }

    /**
     * Returns a cold {@code Flux} of {@code generator}'s values that runs the producer on
     * {@link Scheduler#inline()}: on the thread that subscribes or requests, and after a wait of its
     * own on the thread that wakes it. See {@link #toFlux(Generator, Scheduler)}.
     *
     * @param generator the values
     * @param <T> the value type
     * @return the flux
     * @throws NullPointerException if {@code generator} is null
     */
    public static <T> Flux<T> toFlux(Generator<T> generator) {
        return toFlux(generator, Scheduler.inline());
    }

    /**
     * Returns a cold {@code Flux} of {@code generator}'s values: each subscriber runs the generator
     * anew, on {@code scheduler}, where its signals are delivered too.
     *
     * <p><b>Backpressure.</b> The producer runs only as far as the subscriber's demand: a subscriber
     * that requested {@code n} values receives at most {@code n}, and the producer has emitted at
     * most {@code n + 1} (the one it holds, waiting for the next request).
     *
     * <p><b>The end.</b> The {@code Flux} completes when the producer ends and fails with the
     * producer's error, as itself; a producer that ends cancelled ends it with a
     * {@link CancellationException}. Cancelling the subscription (Reactor's {@code take},
     * {@code dispose()}, a subscriber that fails) cancels the producer at its current wait: its
     * cleanup ({@code andFinally}, {@code finally}) runs.
     *
     * <p><b>Context.</b> Every entry of the subscriber's Reactor context whose key is a Coro
     * {@link Context.Key} becomes that key's value in the producer's context, as for {@link #toMono}
     * (when there is one, the values pass through one more hand-off stage).
     *
     * {@snippet :
     * Generator<Integer> squares = Generator.range(1, 1_000_000).map(n -> n * n);
     * Flux<Integer> firstFive = CoroReactor.toFlux(squares, pool).take(5); // the producer stops after 5
     * }
     *
     * @param generator the values
     * @param scheduler where the producer runs and the subscriber's signals are delivered
     * @param <T> the value type
     * @return the flux
     * @throws NullPointerException if an argument is null
     */
    public static <T> Flux<T> toFlux(Generator<T> generator, Scheduler scheduler) {
        Objects.requireNonNull(generator, "generator");
        Objects.requireNonNull(scheduler, "scheduler");
        return Flux.deferContextual(view ->
                JdkFlowAdapter.flowPublisherToFlux(Flows.publisher(withValues(generator, view), scheduler)));
    }

    /**
     * Returns a hot {@code Flux} of {@code channel}'s elements whose subscriptions receive and
     * signal on {@link Scheduler#inline()}. See {@link #toFlux(Channel, Scheduler)}.
     *
     * @param channel the channel to receive from
     * @param <T> the element type
     * @return the flux
     * @throws NullPointerException if {@code channel} is null
     */
    public static <T> Flux<T> toFlux(Channel<T> channel) {
        return toFlux(channel, Scheduler.inline());
    }

    /**
     * Returns a hot {@code Flux} of {@code channel}'s elements: each subscriber receives from the
     * channel, competing with its other receivers (each element goes to one of them), one element
     * per unit of demand, with its signals on {@code scheduler}
     * (see {@link Flows#publisher(Channel, Scheduler)}).
     *
     * <p><b>The end.</b> The {@code Flux} completes once the channel is closed and drained, fails
     * with the cause given to {@link Channel#close(Throwable)} (as itself), and fails with a
     * {@link CancellationException} if the channel is cancelled. Cancelling the subscription stops
     * receiving: a receive waiting then takes no element, which stays for the channel's other
     * receivers. The channel itself is left open. A channel has no Coro context of its own, so the
     * Reactor context is not bridged.
     *
     * {@snippet :
     * Channel<Order> orders = Channel.buffered(64);
     * Flux<Order> flux = CoroReactor.toFlux(orders, pool);   // orders as they are sent
     * }
     *
     * @param channel the channel to receive from
     * @param scheduler where each subscription's signals run
     * @param <T> the element type
     * @return the flux
     * @throws NullPointerException if an argument is null
     */
    public static <T> Flux<T> toFlux(Channel<T> channel, Scheduler scheduler) {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(scheduler, "scheduler");
        return JdkFlowAdapter.flowPublisherToFlux(Flows.publisher(channel, scheduler));
    }

    /** {@code task} with each Coro key of {@code view} as a context value. */
    private static <T> Task<T> withValues(Task<T> task, ContextView view) {
        Task<T> withValues = task;
        for (Map.Entry<Object, Object> e : view.stream().toList()) {
            if (e.getKey() instanceof Context.Key<?> key) {
                withValues = withValue(withValues, key, e.getValue());
            }
        }
        return withValues;
    }

    /** {@code generator} whose producer sees each Coro key of {@code view} as a context value. */
    private static <T> Generator<T> withValues(Generator<T> generator, ContextView view) {
        if (view.stream().noneMatch(e -> e.getKey() instanceof Context.Key<?>)) {
            return generator; // the common case: no extra stage
        }
        return Generator.create(out -> withValues(generator.forEachTask(out::emit), view));
    }

    @SuppressWarnings("unchecked")
    private static <T, V> Task<T> withValue(Task<T> task, Context.Key<V> key, Object value) {
        return task.withValue(key, (V) value);
    }
}
