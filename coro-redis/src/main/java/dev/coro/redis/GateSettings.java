package dev.coro.redis;

import dev.coro.scheduler.Scheduler;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.Objects;

/**
 * The settings every Redis gate's builder collects, checked as they are set: the public builders'
 * setters delegate here, so that each check and its message is written once. Not thread-safe (a
 * builder's).
 */
final class GateSettings {
    final RedisClient client;
    final String name;
    Duration leaseTime = Duration.ofSeconds(10);
    Duration recheckInterval = Duration.ofSeconds(1);
    Duration redisTimeout = Duration.ofSeconds(5);
    Scheduler timers = Scheduler.inline();

    /**
     * @throws NullPointerException if {@code client} or {@code name} is null
     * @throws IllegalArgumentException if {@code name} is empty or has a brace (the gate's name is
     *     its keys' hash tag)
     */
    GateSettings(RedisClient client, String name) {
        this.client = Objects.requireNonNull(client, "client");
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.indexOf('{') >= 0 || name.indexOf('}') >= 0) {
            throw new IllegalArgumentException("name must be non-empty and without braces, got '" + name + "'");
        }
        this.name = name;
    }

    void leaseTime(Duration leaseTime) {
        Objects.requireNonNull(leaseTime, "leaseTime");
        if (leaseTime.compareTo(Duration.ofMillis(30)) < 0) {
            throw new IllegalArgumentException("leaseTime must be at least 30 ms, got " + leaseTime);
        }
        this.leaseTime = leaseTime;
    }

    void recheckInterval(Duration recheckInterval) {
        this.recheckInterval = positive(recheckInterval, "recheckInterval");
    }

    void redisTimeout(Duration redisTimeout) {
        this.redisTimeout = positive(redisTimeout, "redisTimeout");
    }

    void timers(Scheduler timers) {
        this.timers = Objects.requireNonNull(timers, "timers");
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }
}
