package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The generator's contract on one thread: laziness, demand, the end marker, errors and cancellation
 * reaching the right side, cleanup on every path, the operators, and bad input. Timers run on a
 * manual clock ({@link Manual}), so every wait is deterministic.
 */
class GeneratorTest {
    private static final RuntimeException BOOM = new IllegalStateException("boom");

    /** A producer that logs each step, emits 1..n, and logs its cleanup. */
    private static Generator<Integer> logged(List<String> log, int n) {
        return Generator.create(emitter -> Task.loop(1, i -> i <= n, i -> {
            log.add("produce " + i);
            return emitter.emit(i).map(ignored -> i + 1);
        }).andFinally(() -> log.add("cleanup")));
    }

    // ---------------------------------------------------------------- basics

    @Test
    void factoriesProduceTheirValuesInOrder() {
        assertEquals(List.of(1, 2, 3), Generator.of(1, 2, 3).toList().join());
        assertEquals(List.of("a", "b"), Generator.fromIterable(List.of("a", "b")).toList().join());
        assertEquals(List.of(3, 4, 5), Generator.range(3, 6).toList().join());
        assertEquals(List.of(), Generator.range(6, 3).toList().join());
        assertEquals(List.of(), Generator.empty().toList().join());
        assertEquals(List.of(0, 1, 2), Generator.<Integer>create(e -> e.emit(0).then(e.emit(1)).then(e.emit(2)))
                .toList().join());
    }

    @Test
    void iterateComputesEachValueOnlyWhenAskedFor() {
        assertEquals(List.of(1, 2, 4, 8, 16, 32, 64), Generator.iterate(1, x -> x < 100, x -> x * 2).toList().join());
        List<Integer> computed = new ArrayList<>();
        Cursor<Integer> cursor = Generator.iterate(1, x -> true, x -> {
            computed.add(x + 1);
            return x + 1;
        }).open();
        assertEquals(1, cursor.next().join());
        assertEquals(List.of(), computed, "the second value is not computed ahead");
        assertEquals(2, cursor.next().join());
        assertEquals(List.of(2), computed);
        cursor.close();
        NullPointerException npe = assertThrows(NullPointerException.class,
                () -> Generator.iterate(1, x -> true, x -> x < 3 ? x + 1 : null).toList().join());
        assertTrue(npe.getMessage().startsWith("iterate: next returned null for 3"), npe.getMessage());
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> Generator.iterate(1, x -> {
            throw BOOM;
        }, x -> x).toList().join()));
        assertEquals("seed", assertThrows(NullPointerException.class,
                () -> Generator.iterate(null, x -> true, x -> x)).getMessage());
        assertEquals("hasNext", assertThrows(NullPointerException.class,
                () -> Generator.iterate(1, null, x -> x)).getMessage());
        assertEquals("next", assertThrows(NullPointerException.class,
                () -> Generator.iterate(1, x -> true, null)).getMessage());
    }

    @Test
    void aGeneratorIsLazyAndEachConsumptionRunsTheProducerAnew() {
        AtomicInteger bodies = new AtomicInteger();
        Generator<Integer> g = Generator.create(e -> {
            bodies.incrementAndGet();
            return e.emit(1).then(e.emit(2));
        });
        Generator<Integer> composed = g.map(x -> x * 10).filter(x -> x > 10);
        Task<List<Integer>> all = composed.toList();
        assertEquals(0, bodies.get(), "building and composing runs nothing");
        assertEquals(List.of(20), all.join());
        assertEquals(List.of(20), all.join());
        assertEquals(List.of(1, 2), g.toList().join());
        assertEquals(3, bodies.get(), "one producer run per consumption");
    }

    @Test
    void theCursorPullsOnDemandAndMarksTheEndWithNull() {
        List<String> log = new ArrayList<>();
        Cursor<Integer> cursor = logged(log, 2).open();
        assertEquals(List.of(), log, "open runs nothing");
        assertEquals(1, cursor.next().join());
        assertEquals(List.of("produce 1"), log, "nothing computed ahead of demand");
        log.add("consumer");
        assertEquals(2, cursor.next().join());
        assertEquals(List.of("produce 1", "consumer", "produce 2"), log);
        assertNull(cursor.next().join(), "end");
        assertEquals("cleanup", log.getLast());
        assertNull(cursor.next().join(), "the end is sticky");
        cursor.close();
        assertEquals(1, Collections.frequency(log, "cleanup"));
    }

    @Test
    void forEachRunsTheActionBeforeTheProducerGoesOn() {
        List<String> log = new ArrayList<>();
        logged(log, 3).forEach(v -> log.add("got " + v)).join();
        assertEquals(List.of("produce 1", "got 1", "produce 2", "got 2", "produce 3", "got 3", "cleanup"), log);
    }

    @Test
    void forEachTaskWaitsForEachActionTask() {
        Manual clock = new Manual();
        List<String> log = new ArrayList<>();
        CompletableFuture<Void> done = logged(log, 2)
                .forEachTask(v -> Task.delay(Duration.ofSeconds(1)).map(ignored -> log.add("handled " + v)))
                .startOn(clock).toCompletableFuture();
        assertEquals(List.of("produce 1"), log);
        clock.advance(Duration.ofSeconds(1));
        assertEquals(List.of("produce 1", "handled 1", "produce 2"), log);
        clock.advance(Duration.ofSeconds(1));
        assertTrue(done.isDone());
        assertEquals(List.of("produce 1", "handled 1", "produce 2", "handled 2", "cleanup"), log);
    }

    // a producer that waits for time between values: coro-test's GeneratorTimingTest (virtual time)

    // ---------------------------------------------------------------- errors

    @Test
    void aProducerErrorReachesTheConsumerWhereTheNextValueWouldHave() {
        Generator<Integer> g = Generator.create(e -> e.emit(1).then(Task.failure(BOOM)));
        Cursor<Integer> cursor = g.open();
        assertEquals(1, cursor.next().join(), "the value before the error arrives first");
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> cursor.next().join());
        assertSame(BOOM, thrown);
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> cursor.next().join()), "sticky");
        cursor.close();

        List<Integer> seen = new ArrayList<>();
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> g.forEach(seen::add).join()));
        assertEquals(List.of(1), seen);
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> g.map(x -> x).toList().join()));
    }

    @Test
    void aFailingBodyOrANullTaskFailsTheConsumption() {
        Generator<Integer> throwing = Generator.create(e -> {
            throw BOOM;
        });
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> throwing.toList().join()));
        Generator<Integer> nulled = Generator.create(e -> null);
        NullPointerException npe = assertThrows(NullPointerException.class, () -> nulled.toList().join());
        assertTrue(npe.getMessage().contains("create: the body returned a null task"), npe.getMessage());
        assertThrows(NullPointerException.class, () -> nulled.open().next().join());
    }

    @Test
    void aConsumerFailureEndsTheProducerThroughItsCleanupNotAsAnErrorAtItsEmit() {
        List<String> log = new ArrayList<>();
        Generator<Integer> g = Generator.create(e -> Task.loop(1, i -> true,
                i -> e.emit(i).transform(o -> {
                    log.add("emit " + i + " " + o.getClass().getSimpleName());
                    return o instanceof Outcome.Value<?> ? Task.value(i + 1) : Task.<Integer>cancelled();
                })).andFinally(() -> log.add("cleanup")));
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> g.forEach(v -> {
            if (v == 2) {
                throw BOOM;
            }
        }).join());
        assertSame(BOOM, thrown);
        assertEquals(List.of("emit 1 Value", "emit 2 Cancelled", "cleanup"), log);

        log.clear();
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> g.map(v -> {
            if (v == 3) {
                throw BOOM;
            }
            return v;
        }).toList().join()));
        assertEquals(List.of("emit 1 Value", "emit 2 Value", "emit 3 Cancelled", "cleanup"), log);
    }

    @Test
    void aProducerThatSwallowsTheStopOnlyGetsMoreStops() {
        AtomicInteger emits = new AtomicInteger();
        Generator<Integer> stubborn = Generator.create(e -> Task.loop(0, i -> i < 5,
                i -> e.emit(i).outcome().map(o -> {
                    emits.incrementAndGet();
                    return i + 1;
                })));
        assertEquals(List.of(0, 1), stubborn.take(2).toList().join());
        assertEquals(5, emits.get(), "the producer ran on, each later emit cancelled at once");
        assertEquals(List.of(0, 1), stubborn.take(2).open().next().flatMap(a -> Task.value(List.of(a, 1))).join());
    }

    @Test
    void operatorFunctionsThatFailOrReturnNullFailTheConsumption() {
        Generator<Integer> g = Generator.range(0, 10);
        NullPointerException npe = assertThrows(NullPointerException.class, () -> g.map(x -> x == 3 ? null : x).toList().join());
        assertTrue(npe.getMessage().startsWith("map: the function returned null for 3"), npe.getMessage());
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> g.filter(x -> {
            throw BOOM;
        }).toList().join()));
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> g.flatMap(x -> {
            throw BOOM;
        }).toList().join()));
        npe = assertThrows(NullPointerException.class, () -> g.flatMap(x -> null).toList().join());
        assertTrue(npe.getMessage().startsWith("flatMap: the function returned null for 0"), npe.getMessage());
        npe = assertThrows(NullPointerException.class, () -> g.zip(g, (a, b) -> null).toList().join());
        assertTrue(npe.getMessage().startsWith("zip: the function returned null"), npe.getMessage());
        npe = assertThrows(NullPointerException.class,
                () -> Generator.fromIterable(java.util.Arrays.asList(1, null)).toList().join());
        assertTrue(npe.getMessage().startsWith("fromIterable: element 1 is null"), npe.getMessage());
        assertSame(BOOM, assertThrows(RuntimeException.class,
                () -> g.forEachTask(x -> Task.failure(BOOM)).join()));
        assertThrows(NullPointerException.class, () -> g.forEachTask(x -> null).join());
        assertThrows(CancellationException.class, () -> g.forEachTask(x -> Task.cancelled()).join());
    }

    // ---------------------------------------------------------------- cancellation and close

    @Test
    void closingTheCursorEndsTheProducerThroughItsCleanup() {
        List<String> log = new ArrayList<>();
        Cursor<Integer> cursor = logged(log, 100).open();
        assertEquals(1, cursor.next().join());
        cursor.close();
        assertEquals(List.of("produce 1", "cleanup"), log, "the parked producer was cancelled at its emit");
        IllegalStateException closed = assertThrows(IllegalStateException.class, () -> cursor.next().join());
        assertEquals("next: the cursor is closed", closed.getMessage());
        cursor.close(); // idempotent

        Cursor<Integer> unused = logged(log, 1).open();
        unused.close();
        assertThrows(IllegalStateException.class, () -> unused.next().join());
    }

    @Test
    void cancellingAPendingNextClosesTheCursorAndEndsTheProducer() {
        Manual clock = new Manual();
        List<String> log = new ArrayList<>();
        Generator<Integer> slow = Generator.create(e -> Task.delay(Duration.ofSeconds(1))
                .then(e.emit(1)).andFinally(() -> log.add("cleanup")));
        Cursor<Integer> cursor = slow.open();
        CompletableFuture<Integer> next = cursor.next().startOn(clock).toCompletableFuture();
        assertEquals(1, clock.pending(), "the producer waits on its timer");
        next.cancel(false);
        assertEquals(List.of("cleanup"), log);
        assertEquals(0, clock.pending(), "the producer's timer was cancelled");
        assertThrows(IllegalStateException.class, () -> cursor.next().join(), "cancel safety: the cursor is closed");
    }

    @Test
    void closingWhileANextWaitsCancelsThatNext() {
        Manual clock = new Manual();
        List<String> log = new ArrayList<>();
        Generator<Integer> slow = Generator.create(e -> Task.delay(Duration.ofSeconds(1))
                .then(e.emit(1)).andFinally(() -> log.add("cleanup")));
        Cursor<Integer> cursor = slow.open();
        CompletableFuture<Integer> next = cursor.next().startOn(clock).toCompletableFuture();
        cursor.close();
        assertTrue(next.isCancelled() || assertThrows(CompletionException.class, next::join)
                .getCause() instanceof CancellationException);
        assertEquals(List.of("cleanup"), log);
        assertEquals(0, clock.pending());
    }

    @Test
    void cancellingTheConsumingTaskEndsTheProducer() {
        Manual clock = new Manual();
        List<String> log = new ArrayList<>();
        Generator<Integer> ticks = Generator.create(e -> Task.loop(1, i -> true,
                i -> Task.delay(Duration.ofSeconds(1)).then(e.emit(i)).map(ignored -> i + 1))
                .andFinally(() -> log.add("cleanup")));
        CompletableFuture<Void> each = ticks.forEach(v -> log.add("got " + v)).startOn(clock).toCompletableFuture();
        clock.advance(Duration.ofSeconds(1));
        each.cancel(false);
        assertEquals(List.of("got 1", "cleanup"), log);
        assertEquals(0, clock.pending());

        // the cursor's producer is cancelled with the task that started it
        log.clear();
        CompletableFuture<Integer> twoNexts = Task.defer(() -> {
            Cursor<Integer> c = ticks.open();
            return c.next().then(c.next());
        }).startOn(clock).toCompletableFuture();
        clock.advance(Duration.ofSeconds(1));
        twoNexts.cancel(false);
        assertEquals(List.of("cleanup"), log);
        assertEquals(0, clock.pending());
    }

    @Test
    void aSynchronousProducerStopsAtItsNextEmitWhenTheForEachIsCancelled() {
        List<Integer> seen = new ArrayList<>();
        Scope scope = Scope.on(Scheduler.inline());
        Task<Void> handle = scope.spawn(Generator.range(0, Integer.MAX_VALUE).forEach(v -> {
            seen.add(v);
            if (v == 2) {
                scope.cancel();
            }
        }));
        assertThrows(CancellationException.class, handle::join);
        assertEquals(List.of(0, 1, 2), seen, "stopped at the emit after the cancel");
    }

    @Test
    void aProducerWhoseEmitTimesOutGoesOnAndItsNextValueWaitsForTheNextRequest() {
        Manual clock = new Manual();
        List<String> log = new ArrayList<>();
        Generator<Integer> impatient = Generator.create(e -> e.emit(1).timeout(Duration.ofSeconds(1)).outcome()
                .flatMap(o -> {
                    log.add("emit 1: " + o.getClass().getSimpleName());
                    return e.emit(2);
                })
                .andFinally(() -> log.add("cleanup")));
        Cursor<Integer> cursor = impatient.open();
        assertEquals(1, cursor.next().startOn(clock).join());
        clock.advance(Duration.ofSeconds(1)); // nobody asked again: the producer's own timeout ends its wait
        assertEquals(List.of("emit 1: Failure"), log);
        assertEquals(2, cursor.next().startOn(clock).join(), "the value emitted meanwhile waited for this request");
        assertEquals(List.of("emit 1: Failure"), log, "and the producer waits for the next one");
        assertNull(cursor.next().startOn(clock).join());
        assertEquals(List.of("emit 1: Failure", "cleanup"), log);
        cursor.close();
    }

    // ---------------------------------------------------------------- operators

    @Test
    void takeEndsTheProducerRightAfterItsLastValue() {
        List<String> log = new ArrayList<>();
        Cursor<Integer> cursor = logged(log, 100).take(2).open();
        assertEquals(1, cursor.next().join());
        assertEquals(2, cursor.next().join());
        assertEquals(List.of("produce 1", "produce 2", "cleanup"), log, "ended without waiting for a request");
        assertNull(cursor.next().join());
        cursor.close();

        log.clear();
        assertEquals(List.of(1, 2, 3), logged(log, 100).take(3).toList().join());
        assertEquals("cleanup", log.getLast());
        log.clear();
        assertEquals(List.of(), logged(log, 100).take(0).toList().join());
        assertEquals(List.of(), log, "take(0) never starts the producer");
        assertEquals(List.of(1, 2), logged(log, 2).take(5).toList().join());
    }

    @Test
    void takeInsideFlatMapEndsOnlyTheInnerProducer() {
        List<Integer> values = Generator.range(0, 3)
                .flatMap(x -> Generator.range(x * 10, x * 10 + 100).take(2))
                .toList().join();
        assertEquals(List.of(0, 1, 10, 11, 20, 21), values);
        assertEquals(List.of(0, 1, 10), Generator.range(0, 3)
                .flatMap(x -> Generator.range(x * 10, x * 10 + 100).take(2)).take(3).toList().join());
        List<String> log = new ArrayList<>();
        assertEquals(List.of(1, 2, 1, 2), Generator.of("a", "b").flatMap(s -> logged(log, 2)).toList().join());
        assertEquals(2, Collections.frequency(log, "cleanup"));
    }

    @Test
    void mapFilterAndFlatMapCompose() {
        assertEquals(List.of(0, 4, 16, 36, 64), Generator.range(0, 10).filter(x -> x % 2 == 0).map(x -> x * x)
                .toList().join());
        assertEquals(List.of("a1", "a2", "b1", "b2"), Generator.of("a", "b")
                .flatMap(s -> Generator.of(1, 2).map(n -> s + n)).toList().join());
        assertEquals(List.of(), Generator.range(0, 5).flatMap(x -> Generator.empty()).toList().join());
    }

    @Test
    void zipPairsValuesAndEndsWithTheShorterClosingTheOther() {
        List<String> log = new ArrayList<>();
        assertEquals(List.of("a1", "b2"), Generator.of("a", "b")
                .zip(logged(log, 100), (s, n) -> s + n).toList().join());
        assertEquals(List.of("produce 1", "produce 2", "cleanup"), log, "the longer one was closed");
        log.clear();
        assertEquals(List.of(2, 4, 6), logged(log, 3).zip(Generator.range(1, 100), Integer::sum).toList().join());
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> Generator.range(0, 5)
                .zip(Generator.<Integer>create(e -> e.emit(1).then(Task.failure(BOOM))), (a, b) -> a + b).toList().join());
        assertSame(BOOM, thrown);
    }

    // ---------------------------------------------------------------- blocking doors

    @Test
    void theBlockingIteratorWaitsValueByValue() {
        List<String> log = new ArrayList<>();
        Iterator<Integer> it = logged(log, 2).iterator();
        assertEquals(List.of(), log);
        assertTrue(it.hasNext());
        assertEquals(List.of("produce 1"), log);
        assertEquals(1, it.next());
        assertEquals(2, it.next());
        assertFalse(it.hasNext());
        assertEquals("cleanup", log.getLast());
        assertThrows(NoSuchElementException.class, it::next);
        Iterator<Integer> failing = Generator.<Integer>create(e -> e.emit(1).then(Task.failure(BOOM))).iterator();
        assertEquals(1, failing.next());
        assertSame(BOOM, assertThrows(RuntimeException.class, failing::hasNext));
    }

    @Test
    void closingTheStreamEndsTheProducer() {
        List<String> log = new ArrayList<>();
        try (Stream<Integer> s = logged(log, 100).stream()) {
            assertEquals(List.of(1, 2, 3), s.limit(3).collect(Collectors.toList()));
        }
        assertEquals("cleanup", log.getLast());
        assertEquals(1, Collections.frequency(log, "cleanup"));
        log.clear();
        assertEquals(List.of(2, 4), logged(log, 2).stream().map(x -> x * 2).collect(Collectors.toList()));
        assertEquals("cleanup", log.getLast());
        try (Stream<Integer> s = logged(log, 5).stream()) {
            assertEquals(1, s.findFirst().orElseThrow());
        }
    }

    @Test
    void aStreamConsumedWholeRunsThePushPathAndPassesErrorsOn() {
        List<String> log = new ArrayList<>();
        List<Integer> seen = new ArrayList<>();
        logged(log, 3).stream().forEach(seen::add);
        assertEquals(List.of(1, 2, 3), seen);
        assertEquals(List.of("produce 1", "produce 2", "produce 3", "cleanup"), log, "no value computed ahead");

        log.clear();
        RuntimeException thrown = assertThrows(RuntimeException.class, () -> logged(log, 100).stream().forEach(v -> {
            if (v == 2) {
                throw BOOM;
            }
        }));
        assertSame(BOOM, thrown);
        assertEquals(List.of("produce 1", "produce 2", "cleanup"), log, "the action's failure ended the producer");

        Generator<Integer> failing = Generator.create(e -> e.emit(1).then(Task.failure(BOOM)));
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> failing.stream().forEach(v -> {})));
        try (Stream<Integer> s = failing.stream()) {
            Iterator<Integer> it = s.iterator();
            assertEquals(1, it.next());
            assertSame(BOOM, assertThrows(RuntimeException.class, it::hasNext));
        }
    }

    // ---------------------------------------------------------------- bad input

    @Test
    void badInputGetsAClearException() {
        assertEquals("body", assertThrows(NullPointerException.class, () -> Generator.create(null)).getMessage());
        assertEquals("values", assertThrows(NullPointerException.class, () -> Generator.of((Object[]) null)).getMessage());
        assertTrue(assertThrows(NullPointerException.class, () -> Generator.of(1, null)).getMessage()
                .startsWith("values[1] is null"));
        assertEquals("values", assertThrows(NullPointerException.class, () -> Generator.fromIterable(null)).getMessage());
        Generator<Integer> g = Generator.range(0, 3);
        assertEquals("fn", assertThrows(NullPointerException.class, () -> g.map(null)).getMessage());
        assertEquals("predicate", assertThrows(NullPointerException.class, () -> g.filter(null)).getMessage());
        assertEquals("fn", assertThrows(NullPointerException.class, () -> g.flatMap(null)).getMessage());
        assertEquals("other", assertThrows(NullPointerException.class, () -> g.zip(null, Integer::sum)).getMessage());
        assertEquals("fn", assertThrows(NullPointerException.class, () -> g.zip(g, null)).getMessage());
        assertEquals("action", assertThrows(NullPointerException.class, () -> g.forEach(null)).getMessage());
        assertEquals("action", assertThrows(NullPointerException.class, () -> g.forEachTask(null)).getMessage());
        assertEquals("count must be >= 0, was -1",
                assertThrows(IllegalArgumentException.class, () -> g.take(-1)).getMessage());

        Generator<Integer> nullEmit = Generator.create(e -> e.emit(null));
        assertEquals("value", assertThrows(NullPointerException.class, () -> nullEmit.toList().join()).getMessage());
    }

    @Test
    void overlappingEmitsAndEmitsAfterTheRunAreRefused() {
        Manual clock = new Manual();
        Generator<Integer> overlapping = Generator.create(e -> Task.whenAll(List.of(e.emit(1), e.emit(2))));
        Cursor<Integer> cursor = overlapping.open();
        CompletableFuture<Integer> first = cursor.next().startOn(clock).toCompletableFuture();
        assertEquals(1, first.join());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> cursor.next().join());
        assertTrue(e.getMessage().startsWith("emit: another emit of this generator run is still pending"), e.getMessage());

        List<Emitter<Integer>> escaped = new ArrayList<>();
        Generator<Integer> escaping = Generator.create(em -> {
            escaped.add(em);
            return Task.value(null);
        });
        escaping.toList().join();
        IllegalStateException late = assertThrows(IllegalStateException.class, () -> escaped.get(0).emit(1).join());
        assertTrue(late.getMessage().startsWith("emit: this generator run has ended"), late.getMessage());
        IllegalStateException again = assertThrows(IllegalStateException.class, () -> escaped.get(0).emit(2).join());
        assertTrue(again.getMessage().startsWith("emit: this generator run has ended"),
                "a refused late emit leaves the guard free: " + again.getMessage());
    }

    @Test
    void aSecondNextWhileOneIsPendingIsRefused() {
        Manual clock = new Manual();
        Generator<Integer> slow = Generator.create(e -> Task.delay(Duration.ofSeconds(1)).then(e.emit(1)));
        Cursor<Integer> cursor = slow.open();
        CompletableFuture<Integer> first = cursor.next().startOn(clock).toCompletableFuture();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> cursor.next().startOn(clock).join());
        assertTrue(e.getMessage().startsWith("next: the previous next() of this cursor has not completed"), e.getMessage());
        clock.advance(Duration.ofSeconds(1));
        assertEquals(1, first.join(), "the misuse did not disturb the pending next");
        assertNull(cursor.next().join());
    }

    /**
     * A scheduler on a manual clock: work runs inline (as on {@link Scheduler#inline()}), timers only
     * when {@link #advance} moves the clock past them, on the calling thread.
     */
    static final class Manual implements Scheduler {
        private final PriorityQueue<long[]> order = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]) != 0
                ? Long.compare(a[0], b[0]) : Long.compare(a[1], b[1]));
        private final java.util.Map<Long, Runnable> timers = new java.util.HashMap<>();
        private long now;
        private long seq;

        @Override
        public void execute(Runnable task) {
            Scheduler.inline().execute(task);
        }

        @Override
        public synchronized Cancellable schedule(Runnable task, Duration delay) {
            long id = seq++;
            order.add(new long[] {now + Math.max(0, delay.toNanos()), id});
            timers.put(id, task);
            return () -> {
                synchronized (Manual.this) {
                    return timers.remove(id) != null;
                }
            };
        }

        @Override
        public synchronized long nanoTime() {
            return now;
        }

        @Override
        public boolean isCurrent() {
            return true;
        }

        /** Moves the clock and runs the timers that came due, in order. */
        void advance(Duration d) {
            List<Runnable> due = new ArrayList<>();
            synchronized (this) {
                now += d.toNanos();
                while (!order.isEmpty() && order.peek()[0] <= now) {
                    Runnable r = timers.remove(order.poll()[1]);
                    if (r != null) {
                        due.add(r);
                    }
                }
            }
            due.forEach(Runnable::run);
        }

        /** Timers neither run nor cancelled. */
        synchronized int pending() {
            return timers.size();
        }
    }
}
