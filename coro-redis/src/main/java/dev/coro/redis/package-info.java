/**
 * Gates whose state lives in Redis, so that one limit holds across every JVM that shares a gate's
 * name: {@link dev.coro.redis.RedisCapacityGate}. Admissions are leases that the holder's JVM renews;
 * a dead holder's slot returns when its lease expires, and each admission carries a fencing token.
 */
package dev.coro.redis;
