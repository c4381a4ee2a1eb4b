/**
 * Coro's Reactor interop: {@link dev.coro.reactor.CoroReactor} turns a {@code Mono} into a
 * {@code Task} and a {@code Task} into a {@code Mono}, a {@code Flux} into a {@code Generator} and a
 * {@code Generator} or a {@code Channel} into a {@code Flux}, cancellation crossing in both
 * directions and the contexts bridged.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // reactor-core is an automatic module (no module-info); its Mono and Flux are in our API
module dev.coro.reactor {
    requires transitive dev.coro;
    requires transitive reactor.core;
    requires org.reactivestreams; // JdkFlowAdapter takes Reactive Streams' Publisher

    exports dev.coro.reactor;
}
