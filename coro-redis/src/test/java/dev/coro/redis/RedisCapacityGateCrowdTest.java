package dev.coro.redis;

import static dev.coro.redis.RedisServer.awaitCondition;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * 10,000 waiters across three JVMs ({@link CrowdMember}), half of them cancelled while they wait: the
 * cancelled ones leave nothing in Redis and never run, every other one is admitted once, the capacity
 * holds across the fleet, and the gate's queue and lease keys are gone once it is idle.
 */
@ExtendWith(RedisServerExtension.class)
class RedisCapacityGateCrowdTest {
    private static final Pattern DONE = Pattern.compile("done ran=(\\d+) cancelledRan=(\\d+) outcomes=(\\d+)/(\\d+)/(\\d+) most=(\\d+)");

    @Test
    void tenThousandWaitersAcrossThreeJvmsHalfCancelledLeaveNothing(RedisServer redis) throws Exception {
        String name = "crowd-" + System.nanoTime();
        int capacity = 4;
        int[] counts = {3334, 3334, 3332}; // every second waiter of each is cancelled: 5,000 in all
        List<ChildJvm> crowd = new ArrayList<>();
        try (RedisCapacityGate holder = RedisCapacityGate.builder(redis.client(), name, capacity)
                .leaseTime(Duration.ofSeconds(5)).open()) {
            CountDownLatch holding = new CountDownLatch(capacity);
            Promise<Void> release = new Promise<>();
            List<CompletableFuture<Void>> held = new ArrayList<>();
            for (int i = 0; i < capacity; i++) {
                held.add(holder.within(Task.fromRunnable(holding::countDown).then(release.task())).toCompletableFuture());
            }
            assertTrue(holding.await(30, SECONDS), "the test holds every slot");

            for (int count : counts) {
                crowd.add(ChildJvm.start(CrowdMember.class, redis.port(), name, capacity, count));
            }
            for (ChildJvm member : crowd) {
                member.next("waiting");
            }
            assertEquals(10_000, queued(redis, name), "every waiter has its place in the Redis queue");

            int cancelled = 0;
            for (ChildJvm member : crowd) {
                member.send("cancel");
            }
            for (ChildJvm member : crowd) {
                cancelled += Integer.parseInt(member.next("cancelled ").substring("cancelled ".length()));
            }
            assertEquals(5_000, cancelled, "every cancel took effect: each one waited");
            awaitCondition("the cancelled waiters' places gone", Duration.ofSeconds(30), () -> queued(redis, name) == 5_000);

            release.complete(null);
            for (CompletableFuture<Void> h : held) {
                h.get(30, SECONDS);
            }
            long ran = 0;
            long values = 0;
            long cancels = 0;
            for (ChildJvm member : crowd) {
                Matcher m = DONE.matcher(member.next("done "));
                assertTrue(m.matches());
                ran += Long.parseLong(m.group(1));
                assertEquals("0", m.group(2), "no cancelled waiter ran");
                values += Long.parseLong(m.group(3));
                cancels += Long.parseLong(m.group(4));
                assertEquals("0", m.group(5), "no operation failed: " + m.group());
                assertTrue(Long.parseLong(m.group(6)) <= capacity, "at most " + capacity + " inside at once: " + m.group());
            }
            assertEquals(5_000, ran, "every waiter that was not cancelled ran once");
            assertEquals(5_000, values);
            assertEquals(5_000, cancels);
            for (ChildJvm member : crowd) {
                assertEquals(0, member.process().waitFor(), "the member's exit status");
            }
        } finally {
            for (ChildJvm member : crowd) {
                member.close();
            }
        }
        assertEquals("0", redis.admin().get(FleetMember.insideKey(name)));
        redis.admin().del(FleetMember.insideKey(name));
        String fence = "coro:gate:{" + name + "}:fence"; // the fencing counter: it expires with the lease time
        awaitCondition("no key of the gate left but its fencing counter", Duration.ofSeconds(30),
                () -> redis.keysOf(name).stream().allMatch(fence::equals));
    }

    private static long queued(RedisServer redis, String name) {
        return redis.admin().zcard("coro:gate:{" + name + "}:queue");
    }
}
