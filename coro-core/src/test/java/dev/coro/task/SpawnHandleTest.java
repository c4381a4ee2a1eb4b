package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.CancellationSource;
import dev.coro.scheduler.Scheduler;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A spawn handle ({@link Scope#spawn}) lets go of its child's fiber once the child has ended, keeping
 * only the child's result; and a task that waits on it, before or after that, sees what the plain
 * wait on the child shows: the value, the error or the cancellation, or its own cancellation first.
 * (The collecting join and the blocking join over handles: {@link HandleJoinTest}; the race of the
 * child's end against waits: {@link SpawnHandleLincheckTest}.)
 */
class SpawnHandleTest {
    @Test
    void aHandleHoldsItsChildsFiberUntilAReadFindsItEndedThenOnlyTheResult() throws Exception {
        Scope scope = Scope.on(Scheduler.inline());
        Promise<Integer> p = new Promise<>();
        Task<Integer> running = scope.spawn(p.task());
        assertInstanceOf(Fiber.class, cellOf(running), "running: the fiber");
        p.complete(5);
        assertInstanceOf(Fiber.class, cellOf(running), "ended, not read yet: still the fiber");
        assertEquals(5, running.join());
        assertEquals(5, cellOf(running), "ended and read: the value, and nothing that leads to the fiber");
        assertTrue(Completion.isCancelled(readThenCellOf(scope.spawn(Task.cancelled()))));
        assertSame(Completion.encodeValue(null), readThenCellOf(scope.spawn(Task.value(null))), "null as the encoded null");
        Task<Integer> collected = scope.spawn(Task.value(6));
        assertEquals(java.util.List.of(6), Task.whenAll(java.util.List.of(collected)).join());
        assertEquals(6, cellOf(collected), "a collecting join lets go of the fiber too");
        Task<Integer> mapped = scope.spawn(Task.value(7));
        assertEquals(8, mapped.map(x -> x + 1).join());
        assertEquals(7, cellOf(mapped), "and so does a fused step over the handle");
        scope.joinBlocking();
        Scope failing = Scope.on(Scheduler.inline()); // the failure cancels this fail-fast scope
        assertInstanceOf(Completion.Failed.class,
                readThenCellOf(failing.spawn(Task.failure(new RuntimeException("boom")))));
    }

    @Test
    void aHandleIsOneObjectOfOneReference() {
        long fields = Arrays.stream(Nodes.Spawned.class.getDeclaredFields())
                .filter(f -> !Modifier.isStatic(f.getModifiers())).count();
        assertEquals(1, fields, "the child's fiber, or its result: 24 bytes with the tag");
    }

    @Test
    void aWaitingChildDoesNotKeepItsHandle() throws Exception {
        Scope scope = Scope.on(Scheduler.inline());
        Promise<Integer> p = new Promise<>();
        Object first = cellOf(scope.spawn(p.task()));
        Object second = cellOf(scope.spawn(p.task()));
        Field listener = Fiber.class.getDeclaredField("listener");
        listener.setAccessible(true);
        assertSame(listener.get(first), listener.get(second),
                "both fibers tell the scope's one listener, not a handle each: a dropped handle is garbage");
        assertFalse(listener.get(first) instanceof Nodes.Spawned<?>);
        p.complete(1);
        scope.joinBlocking();
    }

    @Test
    void aTaskOverAnEndedHandleGivesTheValueTheErrorOrTheCancellation() {
        Scope scope = Scope.on(Scheduler.inline());
        Task<Integer> five = scope.spawn(Task.value(5));
        assertEquals(6, five.map(x -> x + 1).join(), "fused: the value at once");
        assertEquals(10, five.flatMap(x -> Task.value(x * 2)).join());
        assertEquals(5, Task.value(0).then(five).join(), "evaluated as a step of its own");
        AtomicInteger mapped = new AtomicInteger();
        Task<Integer> cancelled = scope.spawn(Task.cancelled());
        assertInstanceOf(Outcome.Cancelled.class, cancelled.map(x -> mapped.incrementAndGet()).outcome().join());
        RuntimeException boom = new RuntimeException("boom");
        Task<Integer> failed = Scope.on(Scheduler.inline()).spawn(Task.failure(boom)); // a scope of its own: it fails
        assertEquals(-1, failed.map(x -> mapped.incrementAndGet()).recover(e -> e == boom ? -1 : -2).join());
        assertEquals(0, mapped.get(), "no function ran for an error or a cancellation");
        scope.joinBlocking();
    }

    @Test
    void aWaitOnAnEndedHandleUnderACancelledTokenEndsCancelledAsThePlainWaitDoes() {
        Scope scope = Scope.on(Scheduler.inline());
        Task<Integer> five = scope.spawn(Task.value(5));
        CancellationSource cancelled = new CancellationSource();
        cancelled.cancel();
        assertInstanceOf(Outcome.Cancelled.class, five.start(Scheduler.inline(), cancelled.token()).outcome().join());
        assertInstanceOf(Outcome.Cancelled.class,
                five.map(x -> x + 1).start(Scheduler.inline(), cancelled.token()).outcome().join(),
                "the fused form too");
        assertEquals(5, five.join(), "the handle itself still holds the value");
        scope.joinBlocking();
    }

    @Test
    void aTaskWaitingOnARunningHandleResumesWithTheChildsOutcome() {
        Scope scope = Scope.on(Scheduler.inline());
        Promise<Integer> p = new Promise<>();
        Task<Integer> handle = scope.spawn(p.task());
        TaskHandle<Integer> waiting = handle.map(x -> x + 1).start(Scheduler.inline());
        assertFalse(waiting.isDone());
        p.complete(1);
        assertEquals(2, waiting.join());
        assertEquals(1, handle.join());
        Promise<Integer> q = new Promise<>();
        Task<Integer> other = scope.spawn(q.task());
        TaskHandle<Integer> cancelledWait = other.start(Scheduler.inline());
        cancelledWait.cancel();
        assertInstanceOf(Outcome.Cancelled.class, cancelledWait.outcome().join(), "the wait's own cancellation");
        q.complete(3);
        assertEquals(3, other.join(), "the child ran on: only the wait was cancelled");
        scope.joinBlocking();
    }

    /** The handle's {@code cell} after a wait on the handle has read it. */
    private static Object readThenCellOf(Task<?> handle) throws ReflectiveOperationException {
        handle.outcome().join();
        return cellOf(handle);
    }

    /** The handle's {@code cell}: the child's fiber, or its encoded result. */
    private static Object cellOf(Task<?> handle) throws ReflectiveOperationException {
        Field cell = Nodes.Spawned.class.getDeclaredField("cell");
        cell.setAccessible(true);
        return cell.get(handle);
    }
}
