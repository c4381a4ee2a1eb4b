package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.sync.Event;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Generators on a work-stealing pool, where producer and consumer resume on whichever worker wakes
 * them: many consumptions at once, values in order, and close and cancellation racing the hand-off
 * from other tasks, with every producer's cleanup run exactly once and no consumer left hanging.
 * Scaled by {@code -Dcoro.stress.scale}; the seed of the random choices is printed on failure.
 */
@Tag("stress")
class GeneratorConcurrencyTest {

    /** 0..n-1, yielding to the pool before each emit (so that the hand-off crosses workers). */
    private static Generator<Integer> yielding(int n, AtomicInteger cleanups, Promise<Void> cleaned) {
        return Generator.create(e -> Task.loop(0, i -> i < n,
                i -> Task.yieldNow().then(e.emit(i)).map(ignored -> i + 1))
                .andFinally(() -> {
                    cleanups.incrementAndGet();
                    cleaned.complete(null);
                }));
    }

    @Test
    void manyConsumptionsAtOnceEachGetTheirValuesInOrder() {
        int consumers = 32;
        int n = 2_000;
        AtomicInteger cleanups = new AtomicInteger();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<Task<Long>> runs = new ArrayList<>();
            for (int k = 0; k < consumers; k++) {
                Generator<Integer> g = yielding(n, cleanups, new Promise<>());
                Task<Long> pulled = Task.defer(() -> {
                    Cursor<Integer> c = g.open();
                    long[] expect = {0};
                    return Task.loop(Boolean.TRUE, more -> more, ignored -> c.next().map(v -> {
                        if (v == null) {
                            return false;
                        }
                        assertEquals(expect[0]++, (long) v, "in order, none lost or repeated");
                        return true;
                    })).andFinally(c::close).map(ignored -> expect[0]);
                });
                Task<Long> pushed = g.map(v -> 1L).toList().map(list -> (long) list.size());
                runs.add(k % 2 == 0 ? pulled : pushed);
            }
            List<Long> counts = Task.whenAll(runs).startOn(pool).join();
            for (long c : counts) {
                assertEquals(n, c);
            }
        }
        assertEquals(consumers, cleanups.get());
    }

    @Test
    void closeAndCancelRacingTheHandOffEndEveryProducerOnce() {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        int trials = Stress.scaled(300);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            for (int t = 0; t < trials; t++) {
                int after = random.nextInt(5);
                boolean byCancel = random.nextBoolean();
                AtomicInteger cleanups = new AtomicInteger();
                Promise<Void> cleaned = new Promise<>();
                AtomicInteger starts = new AtomicInteger();
                Cursor<Integer> cursor = Generator.<Integer>create(e -> {
                    starts.incrementAndGet();
                    return yielding(1_000, cleanups, cleaned).forEachTask(e::emit);
                }).open();
                Event<Void> reached = new Event<>();
                List<Integer> got = new ArrayList<>();
                Task<Void> consumer = Task.loop(0, i -> i >= 0, i -> {
                    if (i == after) {
                        reached.set();
                    }
                    return cursor.next().map(v -> {
                        if (v == null) {
                            return -1; // the end (only if the race came too late)
                        }
                        got.add(v);
                        return i + 1;
                    });
                }).then(Task.<Void>value(null));
                Scope scope = Scope.on(pool);
                Task<Void> consuming = scope.spawn(consumer);
                if (byCancel) { // the consumer's own cancellation, racing its pending next()
                    scope.spawn(reached.await().then(Task.fromRunnable(scope::cancel)));
                } else { // close from another task, racing the consumer's next()
                    scope.spawn(reached.await().then(Task.fromRunnable(cursor::close)));
                }
                Task<Outcome<Void>> racing = consuming.outcome();
                Outcome<Void> outcome = racing.join();
                cursor.close();
                String where = "seed " + seed + ", trial " + t + ", after " + after + ", byCancel " + byCancel;
                if (starts.get() == 1) {
                    cleaned.task().join(); // the producer's cleanup ran (a hang here is a leak)
                    assertEquals(1, cleanups.get(), where);
                } else { // closed before the first next(): the producer never started
                    assertEquals(0, starts.get(), where);
                    assertEquals(0, cleanups.get(), where);
                    assertTrue(got.isEmpty(), where);
                }
                if (outcome instanceof Outcome.Failure<Void> f) { // closed between two next() calls
                    assertTrue(!byCancel && f.error() instanceof IllegalStateException
                            && f.error().getMessage().equals("next: the cursor is closed"), where + ": " + f.error());
                } else if (outcome instanceof Outcome.Value<Void>) { // the race came after the end
                    assertEquals(1_000, got.size(), where);
                } else {
                    assertTrue(outcome instanceof Outcome.Cancelled<Void>, where + ": " + outcome);
                }
                for (int i = 0; i < got.size(); i++) {
                    assertEquals(i, got.get(i), where + ": a prefix, in order");
                }
                assertTrue(got.size() >= after, where);
            }
        }
    }
}
