/**
 * Gates whose state lives in Redis, so that one limit holds across every JVM that shares a gate's
 * name: {@link dev.coro.redis.RedisCapacityGate} (at most k at once), {@link dev.coro.redis.RedisSerialGate}
 * (one at a time) and {@link dev.coro.redis.RedisKeyedSerialGate} (one at a time per key). Each
 * implements the interface of its local twin ({@link dev.coro.gate.Gate} or
 * {@link dev.coro.gate.KeyedGate}), so moving a limit from one JVM to many is a constructor change.
 * Admissions are leases that the holder's JVM renews; a dead holder's slot returns when its lease
 * expires, and each admission carries a fencing token.
 */
package dev.coro.redis;
