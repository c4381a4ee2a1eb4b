package dev.coro.redis;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A child JVM of {@link RedisCapacityGateCrowdTest}: one member of a crowd of waiters. Arguments: port,
 * gate name, capacity, count. It starts {@code count} waiting operations on the gate (each counts itself
 * in and out of a fleet-wide Redis counter and remembers the most it saw inside), prints
 * {@code waiting} once all of them wait, then on the line {@code cancel} from its standard input
 * cancels every second one and prints {@code cancelled N} (the cancels that took effect); it prints
 * {@code done ran=R cancelledRan=C outcomes=V/X/F most=M} when all have ended: R operations ran, C of
 * them cancelled ones (must be 0), V ended with a value, X cancelled and F failed, M the most inside
 * at once.
 */
final class CrowdMember {
    private CrowdMember() {}

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String name = args[1];
        int capacity = Integer.parseInt(args[2]);
        int count = Integer.parseInt(args[3]);
        RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
        WorkStealingPool pool = WorkStealingPool.create(2);
        RedisCapacityGate gate = RedisCapacityGate.builder(client, name, capacity)
                .leaseTime(Duration.ofSeconds(5))
                .recheckInterval(Duration.ofMillis(200))
                .redisTimeout(Duration.ofSeconds(30)) // 10,000 waiters arrive at once on a small machine
                .open();
        RedisAsyncCommands<String, String> redis = client.connect().async();
        String inside = FleetMember.insideKey(name);
        AtomicLong most = new AtomicLong();
        AtomicInteger ran = new AtomicInteger();
        AtomicInteger cancelledRan = new AtomicInteger();
        boolean[] toCancel = new boolean[count];
        List<TaskHandle<Integer>> ops = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int index = i;
            toCancel[i] = i % 2 == 1;
            Task<Integer> work = Task.<Long>fromCompletionStage(() -> redis.incr(inside))
                    .flatMap(n -> {
                        most.accumulateAndGet(n, Math::max);
                        ran.incrementAndGet();
                        if (toCancel[index]) {
                            cancelledRan.incrementAndGet();
                        }
                        return Task.<Long>fromCompletionStage(() -> redis.decr(inside));
                    })
                    .map(n -> index);
            ops.add(gate.within(work).start(pool));
        }
        // the test holds every slot: all of them end up queued in Redis (or ended, which the test sees)
        for (int polls = 1; gate.queueLength() + ended(ops) < count; polls++) {
            if (polls % 500 == 0) {
                System.out.println("progress queued=" + gate.queueLength() + " ended=" + ended(ops));
            }
            Thread.sleep(10);
        }
        System.out.println("waiting");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; !"cancel".equals(line = in.readLine()); ) {
            if (line == null) {
                System.exit(2);
            }
        }
        int cancelled = 0;
        for (int i = 0; i < count; i++) {
            if (toCancel[i] && ops.get(i).cancel()) {
                cancelled++;
            }
        }
        System.out.println("cancelled " + cancelled);
        int values = 0;
        int cancels = 0;
        int failures = 0;
        for (TaskHandle<Integer> op : ops) {
            Outcome<Integer> o = op.outcome().join();
            if (o instanceof Outcome.Value<Integer>) {
                values++;
            } else if (o instanceof Outcome.Cancelled<Integer>) {
                cancels++;
            } else {
                failures++;
                if (failures == 1) {
                    System.out.println("failure " + o);
                }
            }
        }
        System.out.println("done ran=" + ran.get() + " cancelledRan=" + cancelledRan.get()
                + " outcomes=" + values + "/" + cancels + "/" + failures + " most=" + most.get());
        gate.close();
        pool.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        System.exit(0);
    }

    private static int ended(List<TaskHandle<Integer>> ops) {
        int n = 0;
        for (TaskHandle<Integer> op : ops) {
            if (op.isDone()) {
                n++;
            }
        }
        return n;
    }
}
