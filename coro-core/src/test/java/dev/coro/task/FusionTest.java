package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The run loop's fusion: a composite node (map, flatMap, then, fold, finally) whose source ends at
 * once takes the source's outcome in place, without a frame. Whatever channel the source ends on,
 * the node must take it exactly as its frame would have: an error that a source throws at once is
 * the node's to handle (a recover's handler runs, a finally's cleanup runs) or to pass on (a map's
 * function is not called).
 */
class FusionTest {
    private static final IllegalStateException BOOM = new IllegalStateException("boom");
    private static final Callable<Integer> THROWING = () -> {
        throw BOOM;
    };

    /** The sources that fail at once: a call, an action, a defer that builds a failing call, a defer that throws. */
    private static List<Task<Integer>> failingAtOnce() {
        return List.of(
                Task.fromCallable(THROWING),
                Task.fromRunnable(() -> {
                    throw BOOM;
                }).map(v -> 0),
                Task.defer(() -> Task.fromCallable(THROWING)),
                Task.defer(() -> {
                    throw BOOM;
                }));
    }

    private static Throwable errorOf(Task<?> task) {
        Outcome<?> o = task.outcome().join();
        return o instanceof Outcome.Failure<?> f ? f.error() : null;
    }

    @Test
    void aFoldOverASourceThatFailsAtOnceRunsItsErrorHandler() {
        for (Task<Integer> source : failingAtOnce()) {
            assertEquals(7, source.recover(e -> e == BOOM ? 7 : -1).join(), "recover");
            assertEquals(8, source.recoverWith(e -> Task.value(e == BOOM ? 8 : -1)).join(), "recoverWith");
            Outcome<Integer> o = source.outcome().join();
            assertSame(BOOM, ((Outcome.Failure<Integer>) o).error(), "outcome");
        }
        List<String> seen = new ArrayList<>();
        Task.fromRunnable(() -> {
            throw BOOM;
        }).recover(e -> {
            seen.add(e == BOOM ? "recovered" : "another error");
            return null;
        }).join();
        assertEquals(List.of("recovered"), seen, "an action that throws, under a recover");
    }

    @Test
    void aFinallyOverASourceThatFailsAtOnceRunsItsCleanupAndPassesTheErrorOn() {
        for (Task<Integer> source : failingAtOnce()) {
            List<String> cleaned = new ArrayList<>();
            assertSame(BOOM, errorOf(source.andFinally(() -> cleaned.add("runnable"))));
            assertSame(BOOM, errorOf(source.andFinally(Task.fromRunnable(() -> cleaned.add("task")))));
            assertEquals(List.of("runnable", "task"), cleaned);
        }
    }

    @Test
    void aMapFlatMapOrThenOverASourceThatFailsAtOnceCallsNothingAndPassesTheErrorOn() {
        for (Task<Integer> source : failingAtOnce()) {
            List<String> called = new ArrayList<>();
            Function<Integer, Integer> fn = v -> {
                called.add("map");
                return v;
            };
            assertSame(BOOM, errorOf(source.map(fn)));
            assertSame(BOOM, errorOf(source.flatMap(v -> {
                called.add("flatMap");
                return Task.value(v);
            })));
            assertSame(BOOM, errorOf(source.then(Task.fromRunnable(() -> called.add("then")))));
            assertEquals(List.of(), called);
        }
    }

    @Test
    void aMapWhoseFunctionThrowsOverASourceThatEndsAtOnceFailsWithThatError() {
        assertSame(BOOM, errorOf(Task.value(1).map(v -> {
            throw BOOM;
        })));
        assertSame(BOOM, errorOf(Task.fromCallable(() -> 1).map(v -> {
            throw BOOM;
        })));
        assertEquals(List.of(2), Task.fromCallable(() -> 1).map(v -> List.of(v + 1)).join());
    }
}
