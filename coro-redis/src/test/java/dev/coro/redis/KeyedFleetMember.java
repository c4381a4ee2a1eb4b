package dev.coro.redis;

import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A child JVM of {@link RedisKeyedSerialGateFleetTest}: one member of a fleet sharing a keyed gate,
 * whose admitted work uses a fenced resource in Redis ({@link #RESOURCE}). Arguments: port, gate
 * name, lease in ms, mode, count, keys (comma-separated). Modes: {@code run} (runs {@code count}
 * operations, key {@code i} of them on the {@code i % keys}-th key, and prints {@code ready} once
 * they are started, then {@code done most-key=N most-all=M}: the most operations it saw inside one
 * key at once, and inside the gate at once, across the fleet); {@code hold} (takes the first key with
 * work that never ends, presents its token to the resource, prints {@code held TOKEN}, and waits to
 * be killed).
 */
final class KeyedFleetMember {
    private KeyedFleetMember() {}

    /**
     * The resource the gate protects: it refuses nothing, but counts every token that is not higher
     * than the last one it saw for the key (a fenced store would refuse it). KEYS: the key's last
     * token, the count of such violations, the key's inside counter, the gate's inside counter.
     * ARGV: the token, and {@code enter} to count the operation in.
     */
    static final String RESOURCE = """
            local token = tonumber(ARGV[1])
            local last = tonumber(redis.call('GET', KEYS[1]) or '0')
            if token <= last then redis.call('INCR', KEYS[2]) end
            redis.call('SET', KEYS[1], ARGV[1])
            if ARGV[2] == 'enter' then
              return {redis.call('INCR', KEYS[3]), redis.call('INCR', KEYS[4])}
            end
            return {0, 0}
            """;

    private static final String LEAVE = "redis.call('DECR', KEYS[1]) redis.call('DECR', KEYS[2]) return 0";

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String name = args[1];
        Duration lease = Duration.ofMillis(Long.parseLong(args[2]));
        String mode = args[3];
        int count = Integer.parseInt(args[4]);
        String[] keys = args[5].split(",");
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        RedisAsyncCommands<String, String> redis = client.connect().async();
        RedisKeyedSerialGate<String> gate = RedisKeyedSerialGate.<String>builder(client, name)
                .leaseTime(lease)
                .recheckInterval(Duration.ofMillis(100))
                .open();
        if (mode.equals("hold")) {
            gate.withinFenced(keys[0], token -> Task.<List<Object>>fromCompletionStage(() -> redis.eval(RESOURCE,
                            ScriptOutputType.MULTI, resourceKeys(name, keys[0]), Long.toString(token), "hold"))
                    .flatMap(ignored -> {
                        System.out.println("held " + token);
                        return Task.never();
                    })).start();
            new CountDownLatch(1).await(); // until killed
            return;
        }
        AtomicLong mostKey = new AtomicLong();
        AtomicLong mostAll = new AtomicLong();
        List<Task<Object>> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key = keys[i % keys.length];
            String[] resource = resourceKeys(name, key);
            ops.add(gate.withinFenced(key, token -> Task.<List<Object>>fromCompletionStage(() -> redis.eval(RESOURCE,
                            ScriptOutputType.MULTI, resource, Long.toString(token), "enter"))
                    .flatMap(inside -> {
                        mostKey.accumulateAndGet((Long) inside.get(0), Math::max);
                        mostAll.accumulateAndGet((Long) inside.get(1), Math::max);
                        return Task.delay(Duration.ofMillis(2));
                    })
                    .then(Task.<Object>fromCompletionStage(() -> redis.eval(LEAVE, ScriptOutputType.INTEGER,
                            resource[2], resource[3])))));
        }
        Task<List<Object>> all = Task.whenAll(ops);
        var done = all.toCompletableFuture();
        System.out.println("ready");
        done.join();
        System.out.println("done most-key=" + mostKey.get() + " most-all=" + mostAll.get());
        gate.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        System.exit(0);
    }

    /** The resource's keys for {@code key}: last token, violations, inside the key, inside the gate. */
    static String[] resourceKeys(String name, String key) {
        String prefix = "fleet-keyed:{" + name + "}:";
        return new String[] {prefix + "last:" + key, prefix + "violations", prefix + "inside:" + key, prefix + "inside"};
    }
}
