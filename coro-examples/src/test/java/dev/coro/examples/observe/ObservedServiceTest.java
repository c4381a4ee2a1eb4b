package dev.coro.examples.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every fact of {@code ./coro demo observe} that does not depend on timing. */
class ObservedServiceTest {
    @Test
    void theServiceIsWatchedByJfrAndMicrometer() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ObservedService.Run run = new ObservedService(new PrintStream(bytes, true, StandardCharsets.UTF_8)).run(400);
        String printed = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(400, run.requests());
        assertEquals(40, run.failed(), "every tenth query fails");
        assertEquals(360, run.succeeded());
        assertTrue(run.mostInQuery() <= 4, "more queries at once than connections: " + run.mostInQuery());
        assertEquals(400, run.admissions(), "the gate's meters count one admission per request");
        // 400 requests of 2 ms through 4 connections: most wait well over the 1 ms threshold
        assertTrue(run.recordedWaits() > 0 && run.recordedWaits() <= 400, "waits recorded: " + run.recordedWaits());
        assertEquals(List.of("dev.coro.gate.CapacityGate"), run.recordedPrimitives());
        assertEquals(List.of("admitted"), run.recordedOutcomes());
        assertTrue(printed.contains("results: 360 succeeded, 40 failed"), printed);
        assertTrue(printed.contains("Micrometer coro.wait.duration{primitive=db}: 400 admissions"), printed);
        assertTrue(printed.contains("JFR dev.coro.Wait (threshold 1 ms): " + run.recordedWaits() + " waits recorded"), printed);
    }
}
