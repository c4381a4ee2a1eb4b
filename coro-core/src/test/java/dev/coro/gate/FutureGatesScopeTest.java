package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The future gates with {@link Scope}: gated work spawned into a scope is joined by it, queued or
 * admitted; cancelling the scope cancels the queued work (which never runs) and leaves every gate as
 * it found it.
 */
class FutureGatesScopeTest {

    /** A gate under test: how to hold it, and how to gate a work through it. */
    private record Gate(String name, Task<Admission> hold, Function<Task<Void>, Task<Void>> within,
            java.util.function.BooleanSupplier whole) {}

    private static List<Gate> gates() {
        KeyedSerialGate<String> keyed = new KeyedSerialGate<>();
        BudgetGate budget = new BudgetGate(4);
        PriorityGate priority = new PriorityGate(1);
        DeadlineGate deadline = new DeadlineGate(1);
        return List.of(
                new Gate("keyed", keyed.acquire("k"), w -> keyed.within("k", w), () -> keyed.activeKeys() == 0),
                new Gate("budget", budget.acquire(4), w -> budget.within(3, w), () -> budget.available() == 4),
                new Gate("priority", priority.acquire(0), w -> priority.within(5, w), () -> priority.available() == 1),
                new Gate("deadline", deadline.acquire(Duration.ofHours(1)), w -> deadline.within(Duration.ofHours(1), w),
                        () -> deadline.available() == 1));
    }

    @Test
    void aScopeJoinsQueuedAndAdmittedGatedWork() {
        for (Gate g : gates()) {
            Admission held = g.hold.join();
            AtomicInteger ran = new AtomicInteger();
            Scope scope = Scope.on(Scheduler.inline());
            for (int i = 0; i < 3; i++) {
                scope.spawn(g.within.apply(Task.fromRunnable(ran::incrementAndGet)));
            }
            assertEquals(3, scope.activeCount(), g.name + ": the queued work is the scope's");
            held.exit(); // the queued work is admitted, in turn, and the scope's join ends
            scope.joinBlocking();
            scope.close();
            assertEquals(3, ran.get(), g.name);
            assertTrue(g.whole.getAsBoolean(), g.name + ": left as found");
        }
    }

    @Test
    void cancellingAScopeCancelsItsQueuedGatedWorkWhichNeverRuns() {
        for (Gate g : gates()) {
            Admission held = g.hold.join();
            AtomicInteger ran = new AtomicInteger();
            Scope scope = Scope.on(Scheduler.inline());
            for (int i = 0; i < 3; i++) {
                scope.spawn(g.within.apply(Task.fromRunnable(ran::incrementAndGet)));
            }
            scope.close();
            scope.cancel();
            assertThrows(CancellationException.class, scope::joinBlocking, g.name + ": a cancelled scope");
            held.exit();
            assertEquals(0, ran.get(), g.name + ": cancelled queued work ran");
            assertTrue(g.whole.getAsBoolean(), g.name + ": a cancelled waiter took something");
        }
    }
}
