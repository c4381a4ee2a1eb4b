package dev.coro.task;

import static dev.coro.Latches.opens;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Latches;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A pool worker holds back a scope's count-downs while it runs the scope's next child (Scope part
 * 11, WorkerThread): joins still end once the last child has ended, and nothing else runs on the
 * worker while it holds any. On a one-worker pool, so that every child, waiter and task named here
 * runs on the same thread.
 */
class ScopeHeldCountTest {
    private final WorkStealingPool pool = WorkStealingPool.create(1, "held-count-test");

    @AfterEach
    void closePool() {
        pool.close();
    }

    /** A child of a scope that waits until its completer is completed, then ends with that value. */
    private record WaitingChild(Task<Integer> handle, Completer<Integer> completer) {
        /** Spawns one into {@code scope} and returns once it waits (it registered its completer). */
        static WaitingChild spawnIn(Scope scope) throws InterruptedException {
            AtomicReference<Completer<Integer>> completer = new AtomicReference<>();
            CountDownLatch waits = new CountDownLatch(1);
            Task<Integer> handle = scope.spawn(Task.<Integer>create(c -> {
                completer.set(c);
                waits.countDown();
            }));
            assertTrue(opens(waits));
            return new WaitingChild(handle, completer.get());
        }
    }

    @Test
    void childrenEndingOneAfterAnotherOnAWorkerAreJoinedAndCountedToZero() {
        AtomicInteger ran = new AtomicInteger();
        Scope outside = Scope.on(pool); // spawned from this thread: the worker takes them a batch at a time
        for (int i = 0; i < 10_000; i++) {
            outside.spawn(Task.fromRunnable(ran::incrementAndGet));
        }
        outside.joinBlocking();
        assertEquals(10_000, ran.get());
        assertEquals(0, outside.activeCount());

        Task<Integer> root = Task.context().flatMap(ctx -> { // spawned from the worker: into its own queue
            Scope inside = Scope.childOf(ctx);
            for (int i = 0; i < 10_000; i++) {
                inside.spawn(Task.fromRunnable(ran::incrementAndGet));
            }
            return inside.join().map(v -> inside.activeCount());
        });
        assertEquals(0, root.startOn(pool).join(), "the join saw every child counted down");
        assertEquals(20_000, ran.get());
    }

    @Test
    void childrenOfTwoScopesInterleavedOnAWorkerAreEachJoinedOnce() {
        AtomicInteger ranFirst = new AtomicInteger();
        AtomicInteger ranSecond = new AtomicInteger();
        Task<List<Integer>> root = Task.context().flatMap(ctx -> {
            Scope first = Scope.childOf(ctx);
            Scope second = Scope.childOf(ctx);
            for (int i = 0; i < 5_000; i++) { // alternating: each child's end is held for the other scope's next
                first.spawn(Task.fromRunnable(ranFirst::incrementAndGet));
                second.spawn(Task.fromRunnable(ranSecond::incrementAndGet));
                if (i % 7 == 0) {
                    first.spawn(Task.fromRunnable(ranFirst::incrementAndGet));
                }
            }
            return first.join().then(second.join()).map(v -> List.of(ranFirst.get(), ranSecond.get(),
                    first.activeCount() + second.activeCount()));
        });
        assertEquals(List.of(5_715, 5_000, 0), root.startOn(pool).join());
    }

    /**
     * The child's end holds its count-down; the child's completion resumes a waiter inline (through
     * the worker's trampoline), and that waiter blocks the worker until the scope's join has
     * returned. It returns because the resumption applies what is held before it runs the waiter
     * (WorkerThread H4); without that, the join would wait for the worker and the worker for the
     * join.
     */
    @Test
    void aWaiterResumedInlineByAChildsEndRunsOnlyAfterTheChildIsCountedDown() throws Exception {
        Scope scope = Scope.on(pool);
        Scope other = Scope.on(pool);
        WaitingChild child = WaitingChild.spawnIn(scope);
        CountDownLatch waiterWaits = new CountDownLatch(1);
        CountDownLatch joined = new CountDownLatch(1);
        Task<Integer> waiter = other.spawn(Task.fromRunnable(waiterWaits::countDown).then(child.handle())
                .map(v -> {
                    Latches.await(joined); // blocks the one worker, inside the child's completion
                    return v;
                }));
        assertTrue(opens(waiterWaits)); // the one worker registers the wait in this same run
        child.completer().complete(7); // the child's resumption goes to the worker, after the waiter's run
        scope.joinBlocking();
        assertEquals(0, scope.activeCount());
        joined.countDown();
        assertEquals(7, waiter.join());
        other.joinBlocking();
    }

    /** As above, for a waiter whose own scheduler runs it inline from {@code execute}. */
    @Test
    void aWaiterThatItsOwnSchedulerRunsInlineRunsOnlyAfterTheChildIsCountedDown() throws Exception {
        Scope scope = Scope.on(pool);
        WaitingChild child = WaitingChild.spawnIn(scope);
        CountDownLatch joined = new CountDownLatch(1);
        List<Integer> seen = new ArrayList<>();
        TaskHandle<Integer> waiter = child.handle().map(v -> { // runs on a direct executor: inline, on the worker
            Latches.await(joined);
            seen.add(v);
            return v;
        }).start(Scheduler.from(Runnable::run));
        child.completer().complete(7);
        scope.joinBlocking();
        joined.countDown();
        assertEquals(7, waiter.join());
        assertEquals(List.of(7), seen);
    }

    /**
     * A child that ends inside a task that is not one of the scope's children (here, a plain task
     * that completes the child's wait, and so resumes it inline) is counted down at once: that task
     * goes on afterwards and blocks until the join has returned.
     */
    @Test
    void aChildThatEndsInsideATaskNotOfItsScopeIsCountedDownAtOnce() throws Exception {
        Scope scope = Scope.on(pool);
        WaitingChild child = WaitingChild.spawnIn(scope);
        CountDownLatch joined = new CountDownLatch(1);
        CountDownLatch plainEnded = new CountDownLatch(1);
        pool.execute(() -> {
            child.completer().complete(7); // the child resumes and ends here, inside this task
            Latches.await(joined);
            plainEnded.countDown();
        });
        scope.joinBlocking();
        joined.countDown();
        assertTrue(opens(plainEnded));
        assertEquals(7, child.handle().join());
    }
}
