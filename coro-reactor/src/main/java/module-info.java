/**
 * Coro's Reactor interop: {@link dev.coro.reactor.CoroReactor} turns a {@code Mono} into a
 * {@code Task} and a {@code Task} into a {@code Mono}, cancellation crossing in both directions and
 * the contexts bridged.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // reactor-core is an automatic module (no module-info); its Mono is in our API
module dev.coro.reactor {
    requires transitive dev.coro;
    requires transitive reactor.core;

    exports dev.coro.reactor;
}
