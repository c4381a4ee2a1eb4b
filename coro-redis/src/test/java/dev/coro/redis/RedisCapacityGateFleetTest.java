package dev.coro.redis;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link RedisCapacityGate} across real JVMs: child processes ({@link FleetMember}) share one gate. */
@ExtendWith(RedisServerExtension.class)
class RedisCapacityGateFleetTest {
    private final List<Process> children = new ArrayList<>();

    @AfterEach
    void killChildren() throws InterruptedException {
        for (Process p : children) {
            p.destroyForcibly().waitFor(10, SECONDS);
        }
    }

    /** A child JVM on this test's class path; its output lines arrive in the returned queue. */
    private BlockingQueue<String> child(RedisServer redis, String name, int capacity, long leaseMillis,
            String mode, int count) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"),
                "-Djava.util.logging.config.file=" + System.getProperty("java.util.logging.config.file", ""),
                FleetMember.class.getName(), Integer.toString(redis.port()), name, Integer.toString(capacity),
                Long.toString(leaseMillis), mode, Integer.toString(count))
                .redirectErrorStream(true)
                .start();
        children.add(p);
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("read failed: " + e);
            }
            lines.add("exit");
        });
        return lines;
    }

    /** The next line starting with {@code prefix} (others, such as log lines, skipped), within 30 s. */
    private static String next(BlockingQueue<String> lines, String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + SECONDS.toNanos(30);
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
            assertNotNull(line, "no line starting with '" + prefix + "' within 30 s");
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.equals("exit")) {
                throw new AssertionError("the child exited before printing '" + prefix + "'");
            }
        }
    }

    @Test
    void threeJvmsNeverExceedTheCapacityTogether(RedisServer redis) throws Exception {
        String name = "fleet-" + System.nanoTime();
        List<BlockingQueue<String>> fleet = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            fleet.add(child(redis, name, 4, 2000, "run", 60));
        }
        long most = 0;
        for (BlockingQueue<String> member : fleet) {
            long seen = Long.parseLong(next(member, "done most=").substring("done most=".length()));
            assertTrue(seen <= 4, "a member saw " + seen + " operations inside a gate of 4");
            most = Math.max(most, seen);
        }
        assertTrue(most >= 2, "the members did run at once: " + most);
        assertEquals("0", redis.admin().get(FleetMember.insideKey(name)));
        redis.admin().del(FleetMember.insideKey(name));
        for (Process p : children) {
            assertEquals(0, p.waitFor(), "the child's exit status");
        }
    }

    @Test
    void aKilledJvmsSlotsComeBackAfterTheLeaseWithHigherTokens(RedisServer redis) throws Exception {
        String name = "fleet-kill-" + System.nanoTime();
        long lease = 300;
        BlockingQueue<String> holder = child(redis, name, 2, lease, "hold", 2);
        long highest = Math.max(Long.parseLong(next(holder, "held ").substring(5)),
                Long.parseLong(next(holder, "held ").substring(5)));
        try (RedisCapacityGate gate = RedisCapacityGate.builder(redis.client(), name, 2)
                .leaseTime(Duration.ofMillis(lease)).recheckInterval(Duration.ofMillis(100)).open()) {
            assertInstanceOf(Outcome.Cancelled.class,
                    gate.tryWithin(Task.value(1)).outcome().toCompletableFuture().get(10, SECONDS),
                    "the child holds both slots");

            children.get(0).destroyForcibly().waitFor(10, SECONDS); // kill -9: no release, no renewal

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
        BlockingQueue<String> holder = child(redis, name, 1, lease, "hold", 1);
        long held = Long.parseLong(next(holder, "held ").substring(5));
        long pid = children.get(0).pid();
        try (RedisCapacityGate gate = RedisCapacityGate.builder(redis.client(), name, 1)
                .leaseTime(Duration.ofMillis(lease)).recheckInterval(Duration.ofMillis(100)).open()) {
            signal("STOP", pid); // a long pause: no renewal reaches Redis

            long token = gate.withinFenced(Task::value).toCompletableFuture().get(10, SECONDS);
            assertTrue(token > held, "admitted past the paused holder with a higher token: " + held + ", then " + token);

            signal("CONT", pid);
            assertEquals("ended Cancelled", next(holder, "ended "), "its next renewal finds the lease gone");
        } finally {
            signal("CONT", pid);
        }
    }

    private static void signal(String name, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, SECONDS), "kill -" + name + " ended");
    }
}
