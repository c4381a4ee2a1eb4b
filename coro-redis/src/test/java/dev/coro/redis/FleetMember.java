package dev.coro.redis;

import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A child JVM of {@link RedisCapacityGateFleetTest}: one member of a fleet sharing a gate. Arguments:
 * port, gate name, capacity, lease in ms, mode, count. Modes: {@code run} (runs {@code count}
 * operations under the gate, each counting itself in and out of a Redis counter, and prints
 * {@code done most=N}, the most operations it saw inside at once across the fleet); {@code hold}
 * (takes {@code count} admissions whose work never ends by itself, prints {@code held TOKEN} for each,
 * and {@code ended Cancelled} (or another outcome) when a work ends; waits to be killed).
 */
final class FleetMember {
    private FleetMember() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String name = args[1];
        int capacity = Integer.parseInt(args[2]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
        String mode = args[4];
        int count = Integer.parseInt(args[5]);
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        RedisCapacityGate gate = RedisCapacityGate.builder(client, name, capacity)
                .leaseTime(lease)
                .recheckInterval(Duration.ofMillis(100))
                .open();
        if (mode.equals("hold")) {
            for (int i = 0; i < count; i++) {
                gate.withinFenced(token -> {
                    System.out.println("held " + token);
                    return Task.never();
                }).outcome().map(o -> {
                    System.out.println("ended " + o.getClass().getSimpleName());
                    return o;
                }).start();
            }
            new CountDownLatch(1).await(); // until killed
            return;
        }
        RedisAsyncCommands<String, String> redis = client.connect().async();
        String inside = insideKey(name);
        AtomicLong most = new AtomicLong();
        List<Task<Void>> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ops.add(gate.within(Task.<Long>fromCompletionStage(() -> redis.incr(inside))
                    .flatMap(n -> {
                        most.accumulateAndGet(n, Math::max);
                        return Task.delay(Duration.ofMillis(2));
                    })
                    .then(Task.<Long>fromCompletionStage(() -> redis.decr(inside)))
                    .map(n -> null)));
        }
        System.out.println("ready");
        Task.whenAll(ops).join();
        System.out.println("done most=" + most.get());
        gate.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        System.exit(0);
    }

    /** The fleet's counter of operations inside the gate: incremented after admission, decremented before release. */
    static String insideKey(String name) {
        return "fleet-test:{" + name + "}:inside";
    }
}
