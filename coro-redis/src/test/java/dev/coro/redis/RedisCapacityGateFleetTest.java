package dev.coro.redis;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RedisCapacityGate} across real JVMs: child processes ({@link FleetMember}) share one gate. */
@ExtendWith(RedisServerExtension.class)
class RedisCapacityGateFleetTest {
    @RegisterExtension
    final ChildJvm.Fleet children = new ChildJvm.Fleet();

    /** A child JVM on this test's class path, a member of the fleet. */
    private ChildJvm child(RedisServer redis, String name, int capacity, long leaseMillis, String mode, int count)
            throws IOException {
        return children.start(FleetMember.class, redis.port(), name, capacity, leaseMillis, mode, count);
    }

    @Test
    void threeJvmsNeverExceedTheCapacityTogether(RedisServer redis) throws Exception {
        String name = "fleet-" + System.nanoTime();
        List<ChildJvm> fleet = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            fleet.add(child(redis, name, 4, 2000, "run", 60));
        }
        long most = 0;
        for (ChildJvm member : fleet) {
            long seen = Long.parseLong(member.next("done most=").substring("done most=".length()));
            assertTrue(seen <= 4, "a member saw " + seen + " operations inside a gate of 4");
            most = Math.max(most, seen);
        }
        assertTrue(most >= 2, "the members did run at once: " + most);
        assertEquals("0", redis.admin().get(FleetMember.insideKey(name)));
        redis.admin().del(FleetMember.insideKey(name));
        children.assertExitedCleanly();
    }

    @Test
    void aKilledJvmsSlotsComeBackAfterTheLeaseWithHigherTokens(RedisServer redis) throws Exception {
        String name = "fleet-kill-" + System.nanoTime();
        long lease = 300;
        ChildJvm holder = child(redis, name, 2, lease, "hold", 2);
        long highest = Math.max(Long.parseLong(holder.next("held ").substring(5)),
                Long.parseLong(holder.next("held ").substring(5)));
        try (RedisCapacityGate gate = RedisCapacityGate.builder(redis.client(), name, 2)
                .leaseTime(Duration.ofMillis(lease)).recheckInterval(Duration.ofMillis(100)).open()) {
            assertInstanceOf(Outcome.Cancelled.class,
                    gate.tryWithin(Task.value(1)).outcome().toCompletableFuture().get(10, SECONDS),
                    "the child holds both slots");

            children.members().get(0).close(); // kill -9: no release, no renewal

            List<java.util.concurrent.CompletableFuture<Long>> next = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                next.add(gate.withinFenced(Task::value).toCompletableFuture());
            }
            for (var f : next) {
                long token = f.get(10, SECONDS);
                assertTrue(token > highest, "token " + token + " above the killed holder's " + highest);
            }
        }
    }

    @Test
    void aPausedJvmsWorkIsCancelledWhenItResumesPastItsLease(RedisServer redis) throws Exception {
        String name = "fleet-pause-" + System.nanoTime();
        long lease = 300;
        ChildJvm holder = child(redis, name, 1, lease, "hold", 1);
        long held = Long.parseLong(holder.next("held ").substring(5));
        long pid = children.members().get(0).process().pid();
        try (RedisCapacityGate gate = RedisCapacityGate.builder(redis.client(), name, 1)
                .leaseTime(Duration.ofMillis(lease)).recheckInterval(Duration.ofMillis(100)).open()) {
            signal("STOP", pid); // a long pause: no renewal reaches Redis

            long token = gate.withinFenced(Task::value).toCompletableFuture().get(10, SECONDS);
            assertTrue(token > held, "admitted past the paused holder with a higher token: " + held + ", then " + token);

            signal("CONT", pid);
            assertEquals("ended Cancelled", holder.next("ended "), "its next renewal finds the lease gone");
        } finally {
            signal("CONT", pid);
        }
    }

    private static void signal(String name, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, SECONDS), "kill -" + name + " ended");
    }
}
