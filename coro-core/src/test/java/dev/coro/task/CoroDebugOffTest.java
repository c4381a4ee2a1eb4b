package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.sync.Event;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Issue 14, diagnostics: with debug mode off (the default test JVM), nothing is recorded. */
class CoroDebugOffTest {

    @Test
    void debugModeIsOffUnlessThePropertySaysOtherwise() {
        assertFalse(CoroDebug.isEnabled());
    }

    @Test
    void theDumpSaysDebugModeIsOffAndHowToTurnItOn() {
        TaskHandle<String> waiter = new Event<String>().await().start();
        try {
            String text = CoroDebug.dump();
            assertTrue(text.contains("debug mode is off"), text);
            assertTrue(text.contains("-Dcoro.debug=true"), text);
            assertEquals(1, text.lines().count(), text);
        } finally {
            waiter.cancel();
        }
    }

    @Test
    void theStructuredDumpRefusesWithTheSwitchInTheMessage() {
        IllegalStateException e = assertThrows(IllegalStateException.class, CoroDebug::suspendedTasks);
        assertTrue(e.getMessage().contains("-Dcoro.debug=true"), e.getMessage());
    }

    @Test
    void anErrorGetsNoAssemblyTrace() {
        IllegalStateException boom = new IllegalStateException("boom");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Task.value(1).map(x -> x + 1).<Integer>map(x -> {
                    throw boom;
                }).flatMap(Task::value).join());
        assertTrue(e == boom);
        assertFalse(Arrays.stream(e.getSuppressed()).anyMatch(AssemblyTrace.class::isInstance),
                Arrays.toString(e.getSuppressed()));
    }
}
