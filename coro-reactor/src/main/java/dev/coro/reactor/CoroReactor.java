package dev.coro.reactor;

import dev.coro.task.Context;
import dev.coro.task.Task;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Reactor interop: a {@link Mono} as a {@link Task} and a {@code Task} as a {@code Mono}, with
 * cancellation crossing in both directions and the two contexts bridged.
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
 * {@snippet :
 * Task<User> user = CoroReactor.fromMono(webClient.get().uri("/user/42").retrieve().bodyToMono(User.class));
 * Mono<Report> report = CoroReactor.toMono(buildReport.startOn(pool));
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
            Task<T> withValues = task;
            for (Map.Entry<Object, Object> e : view.stream().toList()) {
                if (e.getKey() instanceof Context.Key<?> key) {
                    withValues = withValue(withValues, key, e.getValue());
                }
            }
            Task<T> run = withValues;
            return Mono.fromFuture(run::toCompletableFuture, false);
        });
    }

    @SuppressWarnings("unchecked")
    private static <T, V> Task<T> withValue(Task<T> task, Context.Key<V> key, Object value) {
        return task.withValue(key, (V) value);
    }
}
