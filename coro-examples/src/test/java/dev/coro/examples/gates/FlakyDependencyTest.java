package dev.coro.examples.gates;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Checks every fact {@link FlakyDependency} prints: counts, refusals at once, and each transition's time. */
class FlakyDependencyTest {
    @Test
    void theBreakerShieldsTheServiceWhileItIsDownAndClosesOnceItRecovers() {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        FlakyDependency.Run run = new FlakyDependency(new PrintStream(printed, true, StandardCharsets.UTF_8)).run();
        String text = printed.toString(StandardCharsets.UTF_8);

        // Calls at 0 to 1.9 s succeed (20); at 2.0 to 2.4 s fail (5); the fifth failure, at 2.45 s, opens
        // the breaker with 5 of the last 10 failed. Trials at 5.5, 8.6 and 11.7 s fail (down until 12 s);
        // trials at 14.8 and 14.9 s succeed; from 15.0 s on, 50 calls succeed.
        assertEquals(List.of(
                "CLOSED -> OPEN at 2450 ms",
                "OPEN -> HALF_OPEN at 5450 ms",
                "HALF_OPEN -> OPEN at 5550 ms",
                "OPEN -> HALF_OPEN at 8550 ms",
                "HALF_OPEN -> OPEN at 8650 ms",
                "OPEN -> HALF_OPEN at 11650 ms",
                "HALF_OPEN -> OPEN at 11750 ms",
                "OPEN -> HALF_OPEN at 14750 ms",
                "HALF_OPEN -> CLOSED at 14950 ms"), run.transitions());
        for (String t : run.transitions()) {
            assertTrue(text.contains("  " + t + "\n"), "not printed: " + t);
        }
        assertEquals(200, run.calls());
        assertEquals(80, run.reached(), "25 before it opened, 5 trials, 50 after it closed");
        assertEquals(8, run.failed(), "5 that opened it and 3 failed trials");
        assertEquals(120, run.refused(), "every other call");
        assertEquals(run.calls(), run.reached() + run.refused());
        assertEquals(0, run.refusedAfterWaiting(), "a refusal is immediate");
        assertTrue(text.contains("calls that reached the service: 80 (8 failed); refused at once while open: 120 (0 waited)"), text);
        assertEquals(100, run.callsWhileDown());
        assertEquals(8, run.reachedWhileDown(), "5 failures to open it, then one trial per open period");
        assertTrue(text.contains("while the service was down: 8 of 100 calls reached it"), text);
        assertTrue(run.firstRefusal().startsWith("CircuitBreakerGate 'inventory' is OPEN: call not permitted;"
                + " a trial call may pass in 2.950 s"), run.firstRefusal());
        assertTrue(text.contains("first refusal: " + run.firstRefusal()), text);
    }
}
