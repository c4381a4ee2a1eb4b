package dev.coro.examples.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Every fact of {@code ./coro demo fleet} that does not depend on timing. */
class FleetDemoTest {
    @Test
    void threeJvmsKeepBothLimitsAndAKilledHoldersSlotsComeBackWithHigherTokens() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        FleetDemo.Run run = new FleetDemo(new PrintStream(bytes, true, StandardCharsets.UTF_8)).run();
        String printed = bytes.toString(StandardCharsets.UTF_8);
        Assumptions.assumeTrue(run.skipped() == null, "fleet demo skipped: " + run.skipped());

        assertEquals(100, run.operations());
        assertTrue(run.mostInside() >= 1 && run.mostInside() <= FleetDemo.CAPACITY,
                "never more than the capacity inside at once, across the JVMs: " + run.mostInside());
        assertTrue(run.mostInOneSecond() <= (int) FleetDemo.RATE + FleetDemo.BURST,
                "never more admissions within 1 s of Redis time than rate + burst: " + run.mostInOneSecond());
        assertEquals(0, run.startedBeforeSlot(), "no work starts before its slot");
        assertTrue(run.fullBeforeKill(), "a try is refused while the 4 slots are held");
        assertEquals(2, run.tokensAfter().size(), "both slots of the killed JVM came back");
        long highestKilled = Collections.max(run.killedTokens());
        for (long token : run.tokensAfter()) {
            assertTrue(token > highestKilled, "token " + token + " above the killed holder's " + highestKilled);
        }
        assertTrue(printed.contains("the most inside the capacity gate at once: " + run.mostInside() + " (capacity 4)"),
                printed);
        assertTrue(printed.contains("the most within any 1 s: " + run.mostInOneSecond() + " (the bucket allows 51)"),
                printed);
        assertTrue(printed.contains("a try for a fifth: refused, the gate is full"), printed);
        assertTrue(printed.contains("the 2 slots came back " + run.backAfterMillis() + " ms after the kill"), printed);
    }

    @Test
    void withoutARedisServerItSaysSoInOneLineAndReturns() {
        String before = System.getProperty("coro.redis.server");
        System.setProperty("coro.redis.server", "/nonexistent/redis-server");
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            FleetDemo.Run run = new FleetDemo(new PrintStream(bytes, true, StandardCharsets.UTF_8)).run();
            assertEquals("fleet: skipped: " + run.skipped() + System.lineSeparator(), bytes.toString(StandardCharsets.UTF_8));
            assertTrue(run.skipped().contains("install the redis-server package"), run.skipped());
            assertEquals(0, run.operations());
        } finally {
            if (before == null) {
                System.clearProperty("coro.redis.server");
            } else {
                System.setProperty("coro.redis.server", before);
            }
        }
    }
}
