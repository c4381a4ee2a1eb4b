package dev.coro.examples.gates;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Checks every fact {@link CacheMissStorm} prints, on virtual time. */
class CacheMissStormTest {
    @Test
    void tenThousandRequestsForAHundredKeysAreServedByAHundredLoads() {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        CacheMissStorm.Storm s = new CacheMissStorm(new PrintStream(printed, true, StandardCharsets.UTF_8)).storm(10_000, 100);
        String text = printed.toString(StandardCharsets.UTF_8);

        assertEquals(100, s.loads(), "one load per key: " + s);
        assertEquals(100, s.minCallersPerLoad(), "each load answered all 100 callers of its key: " + s);
        assertEquals(100, s.maxCallersPerLoad(), s.toString());
        assertTrue(s.everyCallerGotItsKey(), "a caller got another key's value");
        assertEquals(50, s.answeredAtMs(), "everyone answered after one load time");
        assertTrue(text.contains("10000 requests for 100 keys at once, served by 100 loads; callers per load: min 100, max 100;"
                + " every caller got its own key's value: true; all answered at 50 ms (one load time)"), text);

        assertEquals(100, s.secondStormLoads(), "the gate cached: " + s);
        assertTrue(text.contains("the same storm after those loads ended: 100 new loads"), text);

        assertEquals(100, s.impatientCallers(), "not every impatient caller timed out: " + s);
        assertEquals(10, s.impatientLoadCancelled(), "the load was not cancelled when its last caller left: " + s);
        assertTrue(text.contains("100 callers of one key all give up after 10 ms (100 timed out): their load was cancelled at 10 ms,"
                + " when the last one left"), text);
    }
}
