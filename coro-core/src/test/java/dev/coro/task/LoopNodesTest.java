package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.Scheduler;
import dev.coro.sync.Event;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The node kinds the run loop runs natively: {@link Task#loop} (a {@code Loop} node, its own frame),
 * {@link Task#repeat} (a {@code Repeat} node and one {@code Repeating} frame per run),
 * {@link Task#forRange} (a {@code ForRange} node and one {@code Counting} frame per run),
 * {@link Task#then} (a {@code Then} frame, no function) and {@link Task#fromRunnable} (a {@code Run}
 * node), on every channel, across scheduler hops and context regions, in constant stack and memory.
 */
class LoopNodesTest {
    private static final Context.Key<String> WHO = Context.Key.named("who", String.class, "outside");

    private final ExecutorService other = Executors.newSingleThreadExecutor(r -> new Thread(r, "other"));

    @AfterEach
    void stop() throws InterruptedException {
        other.shutdownNow();
        assertTrue(other.awaitTermination(10, TimeUnit.SECONDS));
    }

    // ---------------------------------------------------------------- loop

    @Test
    void aLoopFeedsEachStateToTheConditionAndTheBodyInOrder() {
        List<String> log = new ArrayList<>();
        Task<Integer> loop = Task.loop(0, i -> {
            log.add("test " + i);
            return i < 3;
        }, i -> {
            log.add("body " + i);
            return Task.value(i + 1);
        });
        assertEquals(3, loop.join());
        assertEquals(List.of("test 0", "body 0", "test 1", "body 1", "test 2", "body 2", "test 3"), log);
    }

    @Test
    void aLoopWhoseConditionFailsAtOnceEndsWithTheInitialStateAndNeverRunsTheBody() {
        AtomicInteger bodies = new AtomicInteger();
        assertEquals("start", Task.loop("start", s -> false, s -> {
            bodies.incrementAndGet();
            return Task.value(s);
        }).join());
        assertEquals(0, bodies.get());
        assertNull(Task.<String>loop(null, s -> s != null, Task::value).join(), "a null state is a state");
    }

    @Test
    void aLoopIsADescriptionRunAnewByEachStartAndSafeToRunConcurrently() throws Exception {
        AtomicReference<Completer<Integer>> first = new AtomicReference<>();
        AtomicReference<Completer<Integer>> second = new AtomicReference<>();
        AtomicInteger starts = new AtomicInteger();
        // each run suspends once, at state 2; the two runs share the node (their frame) and interleave
        Task<Integer> loop = Task.loop(0, i -> i < 5, i -> i != 2 || starts.get() >= 2 ? Task.value(i + 1)
                : Task.<Integer>create(c -> (starts.getAndIncrement() == 0 ? first : second).set(c)));
        TaskHandle<Integer> a = loop.start(Scheduler.inline());
        TaskHandle<Integer> b = loop.start(Scheduler.inline());
        second.get().complete(10); // b goes on from 10: ends at once with 10
        assertEquals(10, b.join());
        first.get().complete(3);
        assertEquals(5, a.join());
        assertEquals(5, loop.join());
    }

    @Test
    void anErrorFromTheBodyItsTaskOrTheConditionEndsTheLoopThroughTheFramesAround() {
        IllegalStateException boom = new IllegalStateException("boom");
        List<String> cleanups = new ArrayList<>();
        Task<Integer> thrownByBody = Task.loop(0, i -> true, i -> {
            if (i == 2) {
                throw boom;
            }
            return Task.value(i + 1);
        });
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> thrownByBody.andFinally(() -> cleanups.add("body")).join()));
        Task<Integer> failedTask = Task.loop(0, i -> true, i -> i == 2 ? Task.failure(boom) : Task.value(i + 1));
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> failedTask.andFinally(() -> cleanups.add("task")).join()));
        Task<Integer> thrownByCondition = Task.loop(0, i -> {
            if (i == 2) {
                throw boom;
            }
            return true;
        }, i -> Task.value(i + 1));
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> thrownByCondition.andFinally(() -> cleanups.add("condition")).join()));
        assertEquals(List.of("body", "task", "condition"), cleanups);
        assertEquals(-1, failedTask.recover(e -> -1).join(), "recoverable like any error");
    }

    @Test
    void aBodyThatReturnsANullTaskFailsTheLoopNamingTheRule() {
        Task<Integer> loop = Task.loop(0, i -> true, i -> i == 1 ? null : Task.value(i + 1));
        assertEquals("loop: the body returned null", assertThrows(NullPointerException.class, loop::join).getMessage());
    }

    @Test
    void aCancelledIterationEndsTheLoopCancelledAndTheStepsAfterItDoNotRun() {
        AtomicInteger after = new AtomicInteger();
        Task<Integer> loop = Task.loop(0, i -> i < 10, i -> i == 3 ? Task.<Integer>cancelled() : Task.value(i + 1));
        assertThrows(CancellationException.class, () -> loop.map(x -> after.incrementAndGet()).join());
        assertEquals(0, after.get());
        assertInstanceOf(Outcome.Cancelled.class, loop.outcome().join());
    }

    @Test
    void aLoopStopsAtTheBodysNextWaitOnceItsTokenIsCancelled() {
        AtomicInteger iterations = new AtomicInteger();
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Integer> loop = Task.loop(0, i -> i < 1_000, i -> {
            iterations.incrementAndGet();
            return i == 3 ? Task.create(parked::set) : Task.value(i + 1);
        });
        TaskHandle<Integer> h = loop.start(Scheduler.inline());
        assertEquals(4, iterations.get(), "synchronous iterations ran up to the wait");
        h.cancel(); // the token completes the waiting step cancelled
        assertThrows(CancellationException.class, h::join);
        assertEquals(4, iterations.get(), "no iteration after the cancelled wait");
        assertTrue(parked.get().context().token().isCancelled());
    }

    @Test
    void aLoopRunUnderACancelledTokenEndsAtItsFirstWait() {
        AtomicInteger iterations = new AtomicInteger();
        Task<Integer> loop = Task.loop(0, i -> i < 5, i -> {
            iterations.incrementAndGet();
            return i < 2 ? Task.value(i + 1) : Task.<Integer>never();
        });
        dev.coro.cancel.CancellationSource cancelled = new dev.coro.cancel.CancellationSource();
        cancelled.cancel();
        TaskHandle<Integer> h = loop.start(Scheduler.inline(), cancelled.token());
        assertThrows(CancellationException.class, h::join);
        assertEquals(3, iterations.get(), "the synchronous iterations ran; the first wait saw the token");
    }

    @Test
    void aBodyThatHopsToAnotherSchedulerComesBackForTheNextIteration() {
        Scheduler elsewhere = Scheduler.from(other);
        List<String> threads = new ArrayList<>();
        Task<Integer> loop = Task.loop(0, i -> {
            threads.add("test " + Thread.currentThread().getName());
            return i < 2;
        }, i -> Task.fromCallable(() -> {
            threads.add("body " + Thread.currentThread().getName());
            return i + 1;
        }).startOn(elsewhere));
        String me = Thread.currentThread().getName();
        assertEquals(2, loop.map(x -> {
            threads.add("after " + Thread.currentThread().getName());
            return x;
        }).join());
        assertEquals(List.of("test " + me, "body other", "test " + me, "body other", "test " + me, "after " + me),
                threads);
    }

    @Test
    void aLoopInsideAStartOnRegionRunsThereAndAResumeOnInItsBodyMovesTheRestOfTheRegion() {
        Scheduler elsewhere = Scheduler.from(other);
        List<String> threads = new ArrayList<>();
        Task<Integer> moved = Task.loop(0, i -> {
            threads.add(Thread.currentThread().getName());
            return i < 2;
        }, i -> Task.value(i + 1)).startOn(elsewhere);
        assertEquals(2, moved.join());
        assertEquals(List.of("other", "other", "other"), threads);

        threads.clear();
        String me = Thread.currentThread().getName();
        Task<Integer> shifting = Task.loop(0, i -> {
            threads.add(Thread.currentThread().getName());
            return i < 2;
        }, i -> Task.value(i + 1).resumeOn(elsewhere));
        assertEquals(2, shifting.map(x -> {
            threads.add("after " + Thread.currentThread().getName());
            return x;
        }).join());
        assertEquals(List.of(me, "other", "other", "after other"), threads, "resumeOn moves the rest of the run");
    }

    @Test
    void aContextRegionInTheBodyEndsWithItsIterationAndTheLoopSeesItsOwnRegion() {
        List<String> seen = new ArrayList<>();
        Task<Integer> loop = Task.loop(0, i -> i < 4, i -> Task.context()
                .map(ctx -> {
                    seen.add(ctx.get(WHO));
                    return i + 1;
                })
                .flatMap(next -> next % 2 == 0 ? Task.value(next)
                        : Task.context().map(ctx -> {
                            seen.add("inner " + ctx.get(WHO));
                            return next;
                        }).withValue(WHO, "iteration " + next)));
        assertEquals(4, loop.withValue(WHO, "loop").join());
        assertEquals(List.of("loop", "inner iteration 1", "loop", "loop", "inner iteration 3", "loop"), seen);
    }

    @Test
    void tenMillionIterationsKeepConstantStackAndFrames() throws Exception {
        int n = 10_000_000;
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Integer> loop = Task.loop(0, i -> i < n, i -> (i == n - 1 ? Task.<Integer>create(parked::set)
                : Task.value(i)).map(x -> x + 1));
        TaskHandle<Integer> h = loop.start(Scheduler.inline());
        assertEquals(2, framesOf(parked.get()), "the loop frame and the iteration's map: no growth");
        parked.get().complete(n - 1);
        assertEquals(n, h.join());
    }

    // ---------------------------------------------------------------- repeat

    @Test
    void iterationsThatEndAtOnceAndIterationsThatWaitCarryTheStateInOrder() {
        Event<Integer> set = new Event<>();
        set.set(0);
        TaskHandle<Integer> ended = Task.value(0).start(Scheduler.inline());
        List<String> log = new ArrayList<>();
        List<Integer> states = new ArrayList<>();
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Integer> loop = Task.loop(0, i -> states.add(i) && i < 16, i -> switch (i % 8) { // each kind twice, a wait among them
            case 0 -> Task.value(i).map(x -> x + 1);
            case 1 -> Task.value(i + 1); // a plain value after a map: nothing of the map stays
            case 2 -> Task.fromCallable(() -> log.add("call " + i)).map(x -> i + 1);
            case 3 -> Task.defer(() -> Task.value(i)).map(x -> x + 1);
            case 4 -> set.await().map(x -> i + 1 + x);
            case 5 -> ended.task().map(x -> i + 1 + x);
            case 6 -> Task.fromRunnable(() -> log.add("action " + i)).map(x -> i + 1);
            default -> Task.<Integer>create(parked::set).map(x -> i + x);
        });
        TaskHandle<Integer> h = loop.start(Scheduler.inline());
        assertEquals(List.of("call 2", "action 6"), log, "the iterations before the first wait ran at once");
        parked.get().complete(1);
        assertEquals(List.of("call 2", "action 6", "call 10", "action 14"), log, "then up to the second wait");
        parked.get().complete(1);
        assertEquals(16, h.join());
        assertEquals(IntStream.rangeClosed(0, 16).boxed().toList(), states);
    }

    @Test
    void anIterationThatFailsAtOnceInsideAMapEndsTheLoopWithItsErrorAndNoLaterIterationRuns() {
        IllegalStateException boom = new IllegalStateException("boom");
        List<String> ran = new ArrayList<>();
        List<Task<Integer>> failing = List.of(
                Task.<Integer>value(0).map(x -> { // the map's function throws
                    throw boom;
                }),
                Task.<Integer>fromCallable(() -> {
                    throw boom;
                }).map(x -> x + 1), // the map's source throws
                Task.<Integer>defer(() -> {
                    throw boom;
                }).map(x -> x + 1), // the map's source fails while built
                Task.<Integer>failure(boom).map(x -> x + 1)); // the map's source is a failure
        for (int which = 0; which < failing.size(); which++) {
            Task<Integer> fails = failing.get(which);
            String name = "loop " + which;
            Task<Integer> loop = Task.loop(0, i -> i < 10, i -> {
                ran.add(name + " " + i);
                return i == 2 ? fails : Task.value(i).map(x -> x + 1);
            });
            assertSame(boom, assertThrows(IllegalStateException.class, loop::join), name);
            assertEquals(List.of(name + " 0", name + " 1", name + " 2"), ran, "no iteration after the failing one");
            ran.clear();
            assertEquals(-1, loop.recover(e -> -1).join(), name);
            ran.clear();
        }
    }

    @Test
    void repeatRunsTheTaskTimesTimesAndEndsWithTheLastValue() {
        AtomicInteger runs = new AtomicInteger();
        Task<Integer> counted = Task.fromCallable(runs::incrementAndGet);
        assertEquals(3, counted.repeat(3).join());
        assertEquals(6, counted.repeat(3).join(), "a new run counts anew from the description");
        assertEquals(7, counted.repeat(1).join());
        assertEquals(9, counted.repeat(2).join());
        assertEquals(9, runs.get());
    }

    @Test
    void repeatStopsAtTheFirstErrorOrCancellation() {
        IllegalStateException boom = new IllegalStateException("boom");
        AtomicInteger runs = new AtomicInteger();
        Task<Integer> failsThird = Task.defer(() -> runs.incrementAndGet() == 3 ? Task.failure(boom) : Task.value(runs.get()));
        assertSame(boom, assertThrows(IllegalStateException.class, () -> failsThird.repeat(10).join()));
        assertEquals(3, runs.get());
        runs.set(0);
        Task<Integer> cancelsSecond = Task.defer(() -> runs.incrementAndGet() == 2 ? Task.cancelled() : Task.value(0));
        assertInstanceOf(Outcome.Cancelled.class, cancelsSecond.repeat(10).outcome().join());
        assertEquals(2, runs.get());
    }

    @Test
    void repeatRunsThatEndAtOnceAndRunsThatWaitAlternateInOrderAndTheLastValueWins() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Integer> mixed = Task.defer(() -> switch (runs.incrementAndGet() % 4) { // a wait every fourth run
            case 1 -> Task.value(runs.get());
            case 2 -> Task.fromCallable(runs::get);
            case 3 -> Task.<Integer>create(parked::set);
            default -> Task.defer(() -> Task.value(runs.get()));
        });
        TaskHandle<Integer> h = mixed.repeat(9).start(Scheduler.inline());
        assertEquals(3, runs.get(), "the runs before the first wait ran at once");
        parked.get().complete(-3);
        assertEquals(7, runs.get(), "then up to the second wait");
        Completer<Integer> second = parked.get();
        second.complete(-7);
        assertEquals(9, runs.get());
        assertEquals(9, h.join(), "the last run's value");

        runs.set(0);
        IllegalStateException boom = new IllegalStateException("boom");
        Task<Integer> callThrowsThird = Task.fromCallable(() -> {
            if (runs.incrementAndGet() == 3) {
                throw boom;
            }
            return runs.get();
        });
        assertSame(boom, assertThrows(IllegalStateException.class, () -> callThrowsThird.repeat(10).join()));
        assertEquals(3, runs.get(), "no run after the failing one");
        runs.set(0);
        Task<Integer> failsWhileBuilt = Task.defer(() -> {
            if (runs.incrementAndGet() == 2) {
                throw boom;
            }
            return Task.value(0);
        });
        assertSame(boom, assertThrows(IllegalStateException.class, () -> failsWhileBuilt.repeat(10).join()));
        assertEquals(2, runs.get());
        runs.set(0);
        Task<Integer> lastWaits = Task.defer(() -> runs.incrementAndGet() == 4 ? Task.<Integer>create(parked::set)
                : Task.value(runs.get()));
        TaskHandle<Integer> l = lastWaits.repeat(4).start(Scheduler.inline());
        assertEquals(4, runs.get());
        assertEquals(0, framesOf(parked.get()), "the last run has no repeat frame under it");
        parked.get().complete(44);
        assertEquals(44, l.join());
    }

    @Test
    void concurrentRunsOfOneRepeatCountTheirRunsApart() {
        List<Completer<Integer>> waiting = new ArrayList<>();
        Task<Integer> thrice = Task.<Integer>create(waiting::add).repeat(3);
        TaskHandle<Integer> a = thrice.withValue(WHO, "a").start(Scheduler.inline());
        TaskHandle<Integer> b = thrice.withValue(WHO, "b").start(Scheduler.inline());
        int value = 0;
        for (String run : List.of("a", "b", "b", "a", "b", "a")) { // interleaved: each run counts its own
            Completer<Integer> c = waiting.stream().filter(w -> w.context().get(WHO).equals(run)).findFirst()
                    .orElseThrow(() -> new AssertionError("run " + run + " is not waiting: " + waiting));
            waiting.remove(c);
            assertTrue(c.complete(value++));
        }
        assertEquals(4, b.join(), "b ended at its third completion");
        assertEquals(5, a.join(), "a ended at its third completion");
        assertTrue(waiting.isEmpty(), "no run asked for a fourth");
    }

    @Test
    void aRepeatAcrossHopsAndWaitsKeepsItsCountAndComesBack() {
        Scheduler elsewhere = Scheduler.from(other);
        List<String> threads = new ArrayList<>();
        Task<String> hop = Task.fromCallable(() -> {
            threads.add(Thread.currentThread().getName());
            return "hopped";
        }).startOn(elsewhere).then(Task.yieldNow()).then(Task.fromCallable(() -> {
            threads.add(Thread.currentThread().getName());
            return "back";
        }));
        String me = Thread.currentThread().getName();
        assertEquals("back", hop.repeat(3).join());
        assertEquals(List.of("other", me, "other", me, "other", me), threads);
    }

    @Test
    void tenMillionRepeatsKeepConstantStackAndFrames() throws Exception {
        int n = 10_000_000;
        AtomicInteger runs = new AtomicInteger();
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Integer> step = Task.defer(() -> runs.incrementAndGet() == n ? Task.create(parked::set) : Task.value(0));
        TaskHandle<Integer> h = step.repeat(n).start(Scheduler.inline());
        assertEquals(0, framesOf(parked.get()), "the last run is the repeat's tail: no frame left");
        parked.get().complete(42);
        assertEquals(42, h.join());
        assertEquals(n, runs.get());

        runs.set(0);
        Task<Integer> mid = Task.defer(() -> runs.incrementAndGet() == n / 2 ? Task.create(parked::set) : Task.value(0));
        TaskHandle<Integer> m = mid.repeat(n).start(Scheduler.inline());
        assertEquals(1, framesOf(parked.get()), "one counting frame, whatever the count");
        parked.get().complete(0);
        assertEquals(0, m.join());
        assertEquals(n, runs.get());
    }

    // ---------------------------------------------------------------- forRange

    @Test
    void forRangeRunsTheBodyForEachIndexInOrderEachAfterThePreviousAndEndsWithNull() {
        Scheduler elsewhere = Scheduler.from(other);
        List<String> log = new ArrayList<>();
        String me = Thread.currentThread().getName();
        Task<Void> range = Task.forRange(-2, 2, i -> {
            log.add("body " + i + " " + Thread.currentThread().getName());
            Task<String> step = Task.fromCallable(() -> "step " + i + " " + Thread.currentThread().getName());
            return (i == 0 ? step.startOn(elsewhere) : step).map(log::add); // index 0 hops and comes back
        });
        assertNull(range.join());
        assertEquals(List.of("body -2 " + me, "step -2 " + me, "body -1 " + me, "step -1 " + me,
                "body 0 " + me, "step 0 other", "body 1 " + me, "step 1 " + me), log);
    }

    @Test
    void anEmptyOrReversedRangeEndsAtOnceWithNullAndNeverCallsTheBody() {
        AtomicInteger bodies = new AtomicInteger();
        for (int[] r : new int[][] {{3, 3}, {5, 2}, {Integer.MAX_VALUE, Integer.MIN_VALUE}}) {
            assertNull(Task.forRange(r[0], r[1], i -> Task.fromRunnable(bodies::incrementAndGet)).join());
        }
        assertEquals(0, bodies.get());
    }

    @Test
    void aRangeAtTheEdgesOfIntRunsEveryIndexOnceWithoutOverflow() {
        List<Integer> seen = new ArrayList<>();
        Task.forRange(Integer.MAX_VALUE - 3, Integer.MAX_VALUE, i -> Task.fromRunnable(() -> seen.add(i))).join();
        Task.forRange(Integer.MIN_VALUE, Integer.MIN_VALUE + 2, i -> Task.fromRunnable(() -> seen.add(i))).join();
        assertEquals(List.of(Integer.MAX_VALUE - 3, Integer.MAX_VALUE - 2, Integer.MAX_VALUE - 1,
                Integer.MIN_VALUE, Integer.MIN_VALUE + 1), seen);
    }

    @Test
    void anErrorFromTheBodyOrItsTaskEndsTheRangeThroughTheFramesAroundAndNoLaterIndexRuns() {
        IllegalStateException boom = new IllegalStateException("boom");
        List<String> log = new ArrayList<>();
        Task<Void> thrownByBody = Task.forRange(0, 10, i -> {
            log.add("body " + i);
            if (i == 2) {
                throw boom;
            }
            return Task.value(i);
        });
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> thrownByBody.andFinally(() -> log.add("cleanup")).join()));
        Task<Void> failedTask = Task.forRange(0, 10, i -> {
            log.add("task " + i);
            return i == 1 ? Task.failure(boom) : Task.value(i);
        });
        assertSame(boom, assertThrows(IllegalStateException.class,
                () -> failedTask.andFinally(() -> log.add("cleanup")).join()));
        assertEquals(List.of("body 0", "body 1", "body 2", "cleanup", "task 0", "task 1", "cleanup"), log);
        assertEquals("recovered", failedTask.map(v -> "value").recover(e -> "recovered").join());
    }

    @Test
    void aBodyThatReturnsANullTaskFailsTheRangeNamingTheRuleAndANullBodyIsRefusedAtOnce() {
        Task<Void> range = Task.forRange(0, 3, i -> i == 1 ? null : Task.value(i));
        assertEquals("forRange: the body returned null",
                assertThrows(NullPointerException.class, range::join).getMessage());
        assertEquals("body", assertThrows(NullPointerException.class, () -> Task.forRange(0, 1, null)).getMessage());
    }

    @Test
    void aCancelledIterationEndsTheRangeCancelledAndACancelledTokenStopsItAtTheNextWait() {
        AtomicInteger after = new AtomicInteger();
        Task<Void> cancelsThird = Task.forRange(0, 10, i -> i == 2 ? Task.cancelled() : Task.value(i));
        assertThrows(CancellationException.class, () -> cancelsThird.map(x -> after.incrementAndGet()).join());
        assertEquals(0, after.get());
        assertInstanceOf(Outcome.Cancelled.class, cancelsThird.outcome().join());

        AtomicInteger iterations = new AtomicInteger();
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Void> waitsAtThree = Task.forRange(0, 1_000, i -> {
            iterations.incrementAndGet();
            return i == 3 ? Task.create(parked::set) : Task.value(i);
        });
        TaskHandle<Void> h = waitsAtThree.start(Scheduler.inline());
        assertEquals(4, iterations.get(), "synchronous iterations ran up to the wait");
        h.cancel();
        assertThrows(CancellationException.class, h::join);
        assertEquals(4, iterations.get(), "no iteration after the cancelled wait");
        assertTrue(parked.get().context().token().isCancelled());
    }

    @Test
    void concurrentRunsOfOneRangeCountTheirIndicesApartEachFromTheStart() {
        List<Completer<Integer>> waiting = new ArrayList<>();
        List<String> seen = new ArrayList<>();
        Task<Void> range = Task.forRange(10, 13, i -> Task.context().flatMap(ctx -> {
            seen.add(ctx.get(WHO) + i);
            return Task.<Integer>create(waiting::add);
        }));
        TaskHandle<Void> a = range.withValue(WHO, "a").start(Scheduler.inline());
        TaskHandle<Void> b = range.withValue(WHO, "b").start(Scheduler.inline());
        for (String run : List.of("a", "b", "b", "a", "b", "a")) {
            Completer<Integer> c = waiting.stream().filter(w -> w.context().get(WHO).equals(run)).findFirst()
                    .orElseThrow(() -> new AssertionError("run " + run + " is not waiting: " + waiting));
            waiting.remove(c);
            assertTrue(c.complete(0));
        }
        assertNull(a.join());
        assertNull(b.join());
        assertEquals(List.of("a10", "b10", "a11", "b11", "b12", "a12"), seen);
        assertTrue(waiting.isEmpty(), "no run asked for a fourth index");
    }

    @Test
    void iterationsThatEndAtOnceAndIterationsThatWaitRunInOrderInOneRange() {
        Event<String> set = new Event<>();
        set.set("event");
        TaskHandle<String> ended = Task.value("handle").start(Scheduler.inline());
        List<String> log = new ArrayList<>();
        AtomicReference<Completer<String>> parked = new AtomicReference<>();
        Task<Void> range = Task.forRange(0, 14, i -> switch (i % 7) { // each kind twice, a wait among them
            case 0 -> Task.value("value").map(x -> log.add(i + " " + x));
            case 1 -> Task.fromRunnable(() -> log.add(i + " action"));
            case 2 -> Task.fromCallable(() -> log.add(i + " call"));
            case 3 -> Task.defer(() -> Task.fromRunnable(() -> log.add(i + " deferred")));
            case 4 -> set.await().map(x -> log.add(i + " " + x));
            case 5 -> ended.task().map(x -> log.add(i + " " + x));
            default -> Task.<String>create(parked::set).map(x -> log.add(i + " " + x));
        });
        TaskHandle<Void> h = range.start(Scheduler.inline());
        assertEquals(6, log.size(), "the iterations before the first wait ran at once: " + log);
        parked.get().complete("resumed");
        assertEquals(13, log.size(), "then up to the second wait: " + log);
        parked.get().complete("resumed");
        assertNull(h.join());
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 14; i++) {
            expected.add(i + " " + List.of("value", "action", "call", "deferred", "event", "handle", "resumed").get(i % 7));
        }
        assertEquals(expected, log);
    }

    @Test
    void aDeferredBodyThatFailsWhileBuiltOrACallThatThrowsEndsTheRangeWithItsError() {
        IllegalStateException boom = new IllegalStateException("boom");
        List<Integer> ran = new ArrayList<>();
        Task<Void> failsWhileBuilt = Task.forRange(0, 10, i -> Task.defer(() -> {
            ran.add(i);
            if (i == 2) {
                throw boom;
            }
            return Task.value(i);
        }));
        assertSame(boom, assertThrows(IllegalStateException.class, failsWhileBuilt::join));
        Task<Void> buildsNull = Task.forRange(0, 10, i -> Task.defer(() -> i == 1 ? null : Task.value(i)));
        assertEquals("defer: the supplier returned null",
                assertThrows(NullPointerException.class, buildsNull::join).getMessage());
        Task<Void> callThrows = Task.forRange(0, 10, i -> Task.fromCallable(() -> {
            ran.add(10 + i);
            if (i == 3) {
                throw boom;
            }
            return i;
        }));
        assertSame(boom, assertThrows(IllegalStateException.class, callThrows::join));
        assertEquals(List.of(0, 1, 2, 10, 11, 12, 13), ran, "no index after the failing one ran");
        assertEquals("recovered", callThrows.map(v -> "value").recover(e -> "recovered").join());
    }

    @Test
    void tenMillionIndicesKeepConstantStackAndOneFrame() throws Exception {
        int n = 10_000_000;
        AtomicInteger runs = new AtomicInteger();
        AtomicReference<Completer<Integer>> parked = new AtomicReference<>();
        Task<Void> range = Task.forRange(0, n, i -> {
            runs.incrementAndGet();
            return i == n - 1 || i == n / 2 ? Task.create(parked::set) : Task.value(i);
        });
        TaskHandle<Void> h = range.start(Scheduler.inline());
        assertEquals(1, framesOf(parked.get()), "one counting frame, whatever the index");
        parked.get().complete(0);
        assertEquals(1, framesOf(parked.get()), "the last index still has its frame: the range ends with null");
        parked.get().complete(42);
        assertNull(h.join());
        assertEquals(n, runs.get());
    }

    // ---------------------------------------------------------------- then, fromRunnable

    @Test
    void thenRunsItsTaskOnlyAfterAValue() {
        AtomicInteger nexts = new AtomicInteger();
        Task<Integer> next = Task.fromCallable(nexts::incrementAndGet);
        assertEquals(1, Task.value("x").then(next).join());
        IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> Task.failure(boom).then(next).join()));
        assertThrows(CancellationException.class, () -> Task.cancelled().then(next).join());
        assertEquals(1, nexts.get(), "neither an error nor a cancellation runs next");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> Task.value(1).then(Task.failure(boom)).join()));
    }

    @Test
    void fromRunnableEndsWithNullOrWithWhatTheActionThrows() {
        AtomicInteger runs = new AtomicInteger();
        assertNull(Task.fromRunnable(runs::incrementAndGet).join());
        assertEquals(1, runs.get());
        IllegalStateException boom = new IllegalStateException("boom");
        Task<Void> failing = Task.fromRunnable(() -> {
            throw boom;
        });
        assertSame(boom, assertThrows(IllegalStateException.class, failing::join));
        assertEquals("fallback", failing.map(v -> "value").recover(e -> "fallback").join());
    }

    /** The frames on the stack of the fiber that waits in {@code step}'s completer. */
    private static int framesOf(Completer<?> step) throws ReflectiveOperationException {
        Field fiber = AsyncStep.class.getDeclaredField("fiber");
        fiber.setAccessible(true);
        Field sp = Fiber.class.getDeclaredField("sp");
        sp.setAccessible(true);
        return (int) sp.get(fiber.get(step));
    }
}
