package dev.coro.redis;

import static dev.coro.redis.RedisServer.awaitCondition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link RedisKeyedSerialGate} across real JVMs: child processes ({@link KeyedFleetMember}) share one
 * keyed gate, and their admitted work presents its fencing token to a resource in Redis that counts
 * every token not higher than the last one it saw for the key.
 */
@ExtendWith(RedisServerExtension.class)
class RedisKeyedSerialGateFleetTest {
    /** Only makes a hang fail: generous, for child JVMs on a loaded machine. */
    private static final Duration BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final ChildJvm.Fleet children = new ChildJvm.Fleet();

    /** A child JVM on this test's class path, a member of the fleet. */
    private ChildJvm child(RedisServer redis, String name, long leaseMillis, String mode, int count, String keys)
            throws IOException {
        return children.start(KeyedFleetMember.class, redis.port(), name, leaseMillis, mode, count, keys);
    }

    /** {@code most-key} and {@code most-all} of a child's {@code done} line. */
    private static long[] done(ChildJvm member) throws InterruptedException {
        String[] fields = member.next("done ").substring("done ".length()).split(" ");
        return new long[] {Long.parseLong(fields[0].substring("most-key=".length())),
                Long.parseLong(fields[1].substring("most-all=".length()))};
    }

    private static List<String> perKeyState(RedisServer redis, String name) {
        return redis.admin().keys("coro:gate:{" + name + "}:*:*");
    }

    @Test
    void threeJvmsRunEachKeyOneAtATimeAndDifferentKeysTogether(RedisServer redis) throws Exception {
        String name = "keyed-fleet-" + System.nanoTime();
        List<ChildJvm> fleet = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            fleet.add(child(redis, name, 2000, "run", 60, "k0,k1,k2,k3"));
        }
        long mostAll = 0;
        for (ChildJvm member : fleet) {
            long[] most = done(member);
            assertEquals(1, most[0], "a member saw " + most[0] + " operations of one key inside at once");
            mostAll = Math.max(mostAll, most[1]);
        }
        assertTrue(mostAll >= 2, "operations of different keys did run at once: " + mostAll);
        String[] resource = KeyedFleetMember.resourceKeys(name, "k0");
        assertNull(redis.admin().get(resource[1]), "every admission's token was above the key's last one");
        assertEquals("0", redis.admin().get(resource[3]));
        children.assertExitedCleanly();
        awaitCondition("no per-key state left", BOUND, () -> perKeyState(redis, name).isEmpty());
        redis.admin().del(redis.admin().keys("fleet-keyed:{" + name + "}:*").toArray(String[]::new));
    }

    @Test
    void aKilledHoldersKeyPassesOnAndTokensKeepRisingAcrossJvms(RedisServer redis) throws Exception {
        String name = "keyed-fleet-kill-" + System.nanoTime();
        ChildJvm holder = child(redis, name, 1000, "hold", 1, "acct");
        long held = Long.parseLong(holder.next("held ").substring("held ".length()));
        List<ChildJvm> waiting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            waiting.add(child(redis, name, 2000, "run", 20, "acct"));
        }
        for (ChildJvm member : waiting) {
            member.next("ready"); // its 20 operations are on their way to the key's queue
        }

        children.members().get(0).close(); // kill -9: no release, no renewal

        for (ChildJvm member : waiting) {
            assertEquals(1, done(member)[0], "one at a time on the key");
        }
        String[] resource = KeyedFleetMember.resourceKeys(name, "acct");
        assertNull(redis.admin().get(resource[1]), "every token was above the one before it, the dead holder's too");
        long last = Long.parseLong(redis.admin().get(resource[0]));
        assertTrue(last > held, "the last token " + last + " is above the killed holder's " + held);
        awaitCondition("no per-key state left", BOUND, () -> perKeyState(redis, name).isEmpty());
        redis.admin().del(redis.admin().keys("fleet-keyed:{" + name + "}:*").toArray(String[]::new));
    }
}
