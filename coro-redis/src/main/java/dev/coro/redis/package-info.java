/**
 * Gates whose state lives in Redis, so that one limit holds across every JVM that shares a gate's
 * name: {@link dev.coro.redis.RedisCapacityGate} (at most k at once), {@link dev.coro.redis.RedisSerialGate}
 * (one at a time), {@link dev.coro.redis.RedisKeyedSerialGate} (one at a time per key) and
 * {@link dev.coro.redis.RedisRateGate} (a token bucket). Each implements the interface of its local
 * twin ({@link dev.coro.gate.Gate} or {@link dev.coro.gate.KeyedGate}), so moving a limit from one
 * JVM to many is a constructor change.
 *
 * <p>The capacity, serial and keyed gates admit with leases that the holder's JVM renews; a dead
 * holder's slot returns when its lease expires, and each admission carries a fencing token. The rate
 * gate decides on Redis's clock: one round trip reserves a request's slot, and the waiter sleeps on
 * its own timer until then.
 */
package dev.coro.redis;
