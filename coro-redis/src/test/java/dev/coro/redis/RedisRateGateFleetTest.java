package dev.coro.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RedisRateGate} across real JVMs: three child processes ({@link RateFleetMember}) share one bucket. */
@ExtendWith(RedisServerExtension.class)
class RedisRateGateFleetTest {
    @RegisterExtension
    final ChildJvm.Fleet children = new ChildJvm.Fleet();

    @Test
    void threeJvmsTogetherNeverExceedTheBucket(RedisServer redis) throws Exception {
        String name = "rate-fleet-" + System.nanoTime();
        int burst = 3;
        for (int i = 0; i < 3; i++) {
            children.start(RateFleetMember.class, redis.port(), name, 150, burst, 30);
        }
        List<Long> slots = new ArrayList<>();
        List<String> early = new ArrayList<>();
        for (ChildJvm member : children.members()) {
            for (String line = member.nextLine(); !line.equals("done"); line = member.nextLine()) {
                if (line.startsWith("slot ")) {
                    String[] f = line.split(" ");
                    long slot = Long.parseLong(f[1]);
                    slots.add(slot);
                    if (Long.parseLong(f[3]) < slot) {
                        early.add(line);
                    }
                }
            }
        }
        assertEquals(90, slots.size());
        RedisRateGateTest.assertWithinBucket(slots, 6_667, burst); // 1 s / 150, rounded up to the microsecond
        assertEquals(List.of(), early, "no work starts before its slot on the server's clock");
        children.assertExitedCleanly();
    }
}
