package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.coro.task.Task;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** {@link CoroTests#runTest} and {@link CoroTest}: time advances by itself; deadlocks and leaks fail. */
class CoroTestsTest {
    @Test
    void anHourOfWaitingTakesNoTime() {
        assertEquals(42, CoroTests.runTest(Task.delay(Duration.ofHours(1)).then(Task.value(42))));
        long[] at = new long[1];
        int value = CoroTests.runTest(scheduler -> Task.whenAll(List.of(
                        Task.delay(Duration.ofMinutes(1)), Task.delay(Duration.ofMinutes(2))))
                .map(ignored -> {
                    at[0] = scheduler.nanoTime();
                    return 7;
                }));
        assertEquals(7, value);
        assertEquals(Duration.ofMinutes(2).toNanos(), at[0], "two concurrent delays end at the later one");
    }

    @Test
    void aTaskThatCanNeverFinishFailsTheTestWithThePendingWork() {
        AssertionError e = assertThrows(AssertionError.class, () -> CoroTests.runTest(Task.never()));
        assertTrue(e.getMessage().contains("can never finish"), e.getMessage());
        assertTrue(e.getMessage().contains("0 queued, 0 timers"), e.getMessage());
        assertTrue(e.getMessage().endsWith("(run with -Dcoro.debug=true to list the suspended tasks and what each"
                + " waits on)"), e.getMessage());
    }

    @Test
    void workLeftPendingAfterTheTaskFailsTheTest() {
        AssertionError e = assertThrows(AssertionError.class, () -> CoroTests.runTest(scheduler -> {
            scheduler.schedule(() -> {}, Duration.ofMinutes(5)); // a timer nobody cancels
            return Task.value(1);
        }));
        assertTrue(e.getMessage().contains("leaked past the test"), e.getMessage());
        assertTrue(e.getMessage().contains("timer due at 300000000000 ns"), e.getMessage());
    }

    @Test
    void theTasksFailureOrCancellationIsWhatRunTestThrows() {
        IllegalStateException failure = assertThrows(IllegalStateException.class,
                () -> CoroTests.runTest(Task.delay(Duration.ofSeconds(1)).then(Task.failure(new IllegalStateException("boom")))));
        assertEquals("boom", failure.getMessage());
        assertThrows(CancellationException.class, () -> CoroTests.runTest(Task.cancelled()));
        assertThrows(NullPointerException.class, () -> CoroTests.runTest((Task<Object>) null));
        assertThrows(NullPointerException.class, () -> CoroTests.runTest(scheduler -> null));
    }

    @CoroTest
    void aCoroTestGetsAFreshSchedulerAndPassesWhenNothingIsLeft(VirtualTimeScheduler scheduler) {
        assertEquals(0, scheduler.nanoTime());
        scheduler.schedule(() -> {}, Duration.ofSeconds(1));
        scheduler.advanceBy(Duration.ofSeconds(1));
    }

    @Test
    void aCoroTestThatLeavesATimerFails() {
        TestExecutionSummary summary = launch(Leaky.class);
        assertEquals(1, summary.getTestsFailedCount(), "the leaky test must fail");
        Throwable why = summary.getFailures().get(0).getException();
        assertTrue(why.getMessage().contains("leaked past the test"), why.getMessage());
    }

    /** Run only through {@link #launch} (surefire does not pick nested classes). */
    static class Leaky {
        @CoroTest
        void leavesATimer(VirtualTimeScheduler scheduler) {
            scheduler.schedule(() -> {}, Duration.ofMinutes(1));
        }
    }

    private static TestExecutionSummary launch(Class<?> testClass) {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass)).build(), listener);
        return listener.getSummary();
    }
}
