package dev.coro.redis;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A child JVM of {@link RedisRateGateFleetTest}: one member of a fleet sharing a rate gate.
 * Arguments: port, gate name, permits per second, burst, count. Runs {@code count} admissions at once
 * and prints {@code slot S start T} for each (S the slot Redis gave, T the server time when the work
 * started, both in microseconds), then {@code done}.
 */
final class RateFleetMember {
    private RateFleetMember() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String name = args[1];
        double rate = Double.parseDouble(args[2]);
        int burst = Integer.parseInt(args[3]);
        int count = Integer.parseInt(args[4]);
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        RedisRateGate gate = RedisRateGate.builder(client, name, rate).burst(burst).open();
        RedisAsyncCommands<String, String> clock = client.connect().async();
        List<String> lines = new ArrayList<>();
        List<Task<Void>> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ops.add(gate.withinSlot(slot -> Task.fromCompletionStage(clock::time).map(time -> {
                synchronized (lines) {
                    lines.add("slot " + slot + " start " + RedisRateGateTest.micros(time));
                }
                return null;
            })));
        }
        System.out.println("ready");
        try (WorkStealingPool pool = WorkStealingPool.create(1)) {
            Task.whenAll(ops).startOn(pool).join();
        }
        lines.forEach(System.out::println);
        System.out.println("done");
        gate.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        System.exit(0);
    }
}
