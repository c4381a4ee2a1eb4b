/**
 * Coro's gates across a fleet of JVMs, with their state in Redis, on the Lettuce async client:
 * {@link dev.coro.redis.RedisCapacityGate}, {@link dev.coro.redis.RedisSerialGate} and
 * {@link dev.coro.redis.RedisKeyedSerialGate}, with leases, fencing tokens and FIFO order across JVMs.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // lettuce-core is an automatic module; its RedisClient is in our API
module dev.coro.redis {
    requires transitive dev.coro;
    requires transitive lettuce.core;

    exports dev.coro.redis;
}
