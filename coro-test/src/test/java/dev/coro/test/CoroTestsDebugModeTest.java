package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.sync.Event;
import dev.coro.task.CoroDebug;
import dev.coro.task.Task;
import org.junit.jupiter.api.Test;

/**
 * In debug mode (this class runs in coro-test's {@code debug} execution, with
 * {@code -Dcoro.debug=true}), a test that can never finish fails with the task dump: every suspended
 * task, what it waits on and where it was started.
 */
class CoroTestsDebugModeTest {

    @Test
    void aDeadlockFailsWithTheTaskDump() {
        assertTrue(CoroDebug.isEnabled(), "this class runs with -Dcoro.debug=true");
        Event<String> neverSet = new Event<>();
        AssertionError e = assertThrows(AssertionError.class, () -> CoroTests.runTest(waitsForEver(neverSet)));
        String m = e.getMessage();
        assertTrue(m.contains("can never finish"), m);
        assertTrue(m.contains("suspended tasks in this JVM: 1"), m);
        assertTrue(m.contains("EVENT"), "what it waits on: " + m);
        assertTrue(m.contains("waitsForEver") || m.contains("aDeadlockFailsWithTheTaskDump"), "where it was started: " + m);
    }

    private static Task<String> waitsForEver(Event<String> event) {
        return event.await();
    }
}
