package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.gate.CapacityGate;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A task run by a {@link VirtualTimeScheduler} must not block the test's thread: its work runs only
 * inside the test's run calls, on that thread, so a join there would wait for ever. The run methods
 * mark the thread, and Coro's blocking doors refuse on it, naming the scheduler.
 */
class VirtualTimeNoBlockingTest {
    private final VirtualTimeScheduler vt = VirtualTimeScheduler.create();

    @Test
    void aJoinInsideATaskItRunsIsRefusedNamingTheScheduler() {
        vt.execute(() -> Task.value(1).join());
        IllegalStateException e = assertThrows(IllegalStateException.class, vt::runUntilIdle);
        assertTrue(e.getMessage().startsWith("Task.join would block"), e.getMessage());
        assertTrue(e.getMessage().contains("VirtualTimeScheduler["), "names the scheduler: " + e.getMessage());
    }

    @Test
    void runTestFailsAtOnceInsteadOfHangingOnABlockingDoor() {
        CapacityGate gate = new CapacityGate(1);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> CoroTests.runTest(
                Task.delay(Duration.ofHours(1)).then(Task.fromCallable(() -> gate.call(() -> 1)))));
        assertTrue(e.getMessage().startsWith("CapacityGate.call would block"), e.getMessage());
        assertTrue(e.getMessage().contains("VirtualTimeScheduler["), e.getMessage());
        assertEquals(1, gate.available(), "nothing entered the gate");
        assertEquals(0, gate.queueLength());
    }

    @Test
    void theMarkLastsOnlyAsLongAsTheRunCall() {
        AtomicReference<Scheduler> inside = new AtomicReference<>();
        vt.execute(() -> inside.set(Scheduler.nonBlockingOwner()));
        vt.advanceBy(Duration.ofMillis(1));
        assertSame(vt, inside.get());
        assertNull(Scheduler.nonBlockingOwner());
        assertEquals(2, Task.value(2).join(), "the test's thread may block again");
    }

    @Test
    void aRunCallRestoresTheMarkItFound() {
        VirtualTimeScheduler outer = VirtualTimeScheduler.create();
        AtomicReference<Scheduler> afterInner = new AtomicReference<>();
        outer.execute(() -> {
            vt.runUntilIdle(); // another scheduler's run, inside this one's: its own mark, then ours again
            afterInner.set(Scheduler.nonBlockingOwner());
        });
        outer.runUntilIdle();
        assertSame(outer, afterInner.get());
        assertNull(Scheduler.nonBlockingOwner());
    }

    @Test
    void theMarkIsRemovedWhenATaskFails() {
        vt.execute(() -> {
            throw new IllegalArgumentException("boom");
        });
        assertThrows(IllegalArgumentException.class, vt::runUntilIdle);
        assertNull(Scheduler.nonBlockingOwner());
    }
}
