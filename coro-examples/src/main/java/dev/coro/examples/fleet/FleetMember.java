package dev.coro.examples.fleet;

import dev.coro.redis.RedisCapacityGate;
import dev.coro.redis.RedisRateGate;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One JVM of {@code ./coro demo fleet} ({@link FleetDemo} starts three). Arguments: port, the
 * capacity gate's name, the rate gate's name, operations, lease in ms. Opens a
 * {@code RedisCapacityGate(4)} and a {@code RedisRateGate(50/s)}, prints {@code ready}, and on
 * {@code go} (a line on standard input) runs its operations: each takes a token of the rate gate,
 * then a slot of the capacity gate, counts itself in a Redis counter shared by the fleet, works for
 * 60 to 100 ms and counts itself out. It prints {@code op SLOT START INSIDE} per operation (the
 * rate's slot and the work's start on Redis's clock, in microseconds, and the operations inside at
 * once as the counter said) and {@code done}. Then, on {@code hold}, it takes two slots of the
 * capacity gate for ever (printing {@code held TOKEN} for each) and waits to be killed; on anything
 * else, it exits.
 */
public final class FleetMember {
    /** Counts an operation in and reads the server's clock: {@code {inside, time in microseconds}}. */
    private static final String ENTER = """
            local n = redis.call('INCR', KEYS[1])
            local t = redis.call('TIME')
            return {n, tonumber(t[1]) * 1000000 + tonumber(t[2])}
            """;

    private FleetMember() {}

    /**
     * Runs the member.
     *
     * @param args port, capacity gate name, rate gate name, operations, lease in ms
     * @throws Exception if Redis cannot be reached
     */
    public static void main(String[] args) throws Exception {
        FleetDemo.LETTUCE_LOG.setLevel(java.util.logging.Level.SEVERE);
        int port = Integer.parseInt(args[0]);
        String capacityName = args[1];
        String rateName = args[2];
        int ops = Integer.parseInt(args[3]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        RedisCapacityGate db = RedisCapacityGate.builder(client, capacityName, FleetDemo.CAPACITY)
                .leaseTime(lease).recheckInterval(Duration.ofMillis(100)).open();
        RedisRateGate api = RedisRateGate.open(client, rateName, FleetDemo.RATE);
        RedisAsyncCommands<String, String> redis = client.connect().async();
        String inside = FleetDemo.insideKey(capacityName);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.println("ready");
        if (!"go".equals(in.readLine())) {
            System.exit(1);
        }
        AtomicLong most = new AtomicLong();
        List<String> lines = new ArrayList<>();
        List<Task<Void>> all = new ArrayList<>();
        for (int i = 0; i < ops; i++) {
            Duration work = Duration.ofMillis(60 + (i * 37L) % 41);
            all.add(api.withinSlot(slot -> db.within(
                    Task.<List<Long>>fromCompletionStage(() -> redis.eval(ENTER, ScriptOutputType.MULTI, inside))
                            .flatMap(entered -> {
                                most.accumulateAndGet(entered.get(0), Math::max);
                                synchronized (lines) {
                                    lines.add("op " + slot + " " + entered.get(1) + " " + entered.get(0));
                                }
                                return Task.delay(work);
                            })
                            .then(Task.<Long>fromCompletionStage(() -> redis.decr(inside)))
                            .map(n -> (Void) null))));
        }
        try (WorkStealingPool pool = WorkStealingPool.create(2, "member")) {
            Task.whenAll(all).startOn(pool).join();
        }
        synchronized (lines) {
            lines.forEach(System.out::println);
        }
        System.out.println("done");
        if ("hold".equals(in.readLine())) {
            for (int i = 0; i < 2; i++) {
                db.withinFenced(token -> {
                    System.out.println("held " + token);
                    return Task.<Void>never();
                }).start();
            }
            new CountDownLatch(1).await(); // until killed
        }
        api.close();
        db.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        System.exit(0);
    }
}
