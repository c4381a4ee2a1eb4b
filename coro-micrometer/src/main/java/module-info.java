/**
 * Coro's Micrometer binders: {@link dev.coro.micrometer.PoolMetrics} for a work-stealing pool,
 * {@link dev.coro.micrometer.EventLoopMetrics} for an event loop, and
 * {@link dev.coro.micrometer.WaitMetrics} for any gate or the mutex.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // micrometer-core is an automatic module; its MeterBinder is in our API
module dev.coro.micrometer {
    requires transitive dev.coro;
    requires transitive micrometer.core;

    exports dev.coro.micrometer;
}
