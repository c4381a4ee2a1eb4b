package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * WorkerThread's rule for holding a count's count-downs (its overview, part 2), driven step by step
 * on a worker of its own: when a hold is taken, what keeps it, and that it is applied in one step.
 */
class WorkerThreadTest {

    /** A count whose members are the given runnables; records each count-down it is given. */
    static final class Count implements WorkerThread.Counted {
        final Set<Runnable> members;
        final List<Integer> countDowns = new ArrayList<>();

        Count(Runnable... members) {
            this.members = Set.of(members);
        }

        @Override
        public boolean isMemberRun(Runnable task) {
            return members.contains(task);
        }

        @Override
        public void countDown(int n) {
            countDowns.add(n);
        }
    }

    /** A worker whose loop is the test's body; its queue is only a tail index the body sets. */
    static final class Loop extends WorkerThread {
        int tail;
        private final Runnable body;
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Loop(Runnable body) {
            super("worker-thread-test");
            this.body = body;
        }

        @Override
        protected int queueTail() {
            return tail;
        }

        @Override
        public void run() {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        }

        /** Runs {@code steps} on a fresh worker and rethrows what failed there. */
        static void on(java.util.function.Consumer<Loop> steps) throws Throwable {
            Loop[] self = new Loop[1];
            Loop loop = new Loop(() -> steps.accept(self[0]));
            self[0] = loop;
            loop.start();
            loop.join();
            if (loop.failure.get() != null) {
                throw loop.failure.get();
            }
        }
    }

    private static final Runnable A = () -> {};
    private static final Runnable B = () -> {};
    private static final Runnable C = () -> {};
    private static final Runnable OTHER = () -> {};

    @Test
    void aCountDownIsHeldOnlyOnAWorkerWhileItRunsAMemberOfTheCount() throws Throwable {
        Count count = new Count(A, B);
        assertFalse(WorkerThread.hold(count), "not a worker thread");
        WorkerThread.releaseHeld(); // does nothing off a worker
        Loop.on(w -> {
            assertFalse(WorkerThread.hold(count), "the loop runs nothing");
            w.running(OTHER);
            assertFalse(WorkerThread.hold(count), "the loop runs a task that is not a member");
            w.running(A);
            assertTrue(WorkerThread.hold(count), "the loop runs a member");
            assertTrue(w.holds());
            assertEquals(List.of(), count.countDowns);
        });
        assertEquals(List.of(), count.countDowns, "the test's loop never moved on, so nothing was applied");
    }

    @Test
    void aMemberQueuedBeforeTheHoldKeepsItAndEverythingHeldIsAppliedInOneStep() throws Throwable {
        Count count = new Count(A, B, C);
        Loop.on(w -> {
            w.tail = 10; // the member run next sits at index 9
            w.running(A);
            assertTrue(WorkerThread.hold(count));
            w.running(null);
            w.beforeNext(B, true, 9);
            w.running(B);
            w.tail = 12;
            assertTrue(WorkerThread.hold(count));
            w.running(null);
            w.beforeNext(C, true, 11);
            w.running(C);
            assertTrue(WorkerThread.hold(count));
            w.running(null);
            assertEquals(List.of(), count.countDowns, "every next task kept the count above zero");
            w.beforeNext(null, false, 0); // the queue is empty: the worker moves on
            assertEquals(List.of(3), count.countDowns);
            assertFalse(w.holds());
        });
    }

    @Test
    void aMemberPushedAfterTheHoldDoesNotKeepIt() throws Throwable {
        Count count = new Count(A, B);
        Loop.on(w -> {
            w.tail = 5;
            w.running(A);
            assertTrue(WorkerThread.hold(count));
            w.running(null);
            w.beforeNext(B, true, 5); // pushed at the hold's tail: after it (the ended child's completion pushed it)
            assertEquals(List.of(1), count.countDowns);
        });
    }

    @Test
    void aTaskFromElsewhereOrNotAMemberReleasesTheHold() throws Throwable {
        Count count = new Count(A, B);
        Loop.on(w -> {
            w.tail = 5;
            w.running(A);
            assertTrue(WorkerThread.hold(count));
            w.beforeNext(B, false, 0); // a member, but injected or stolen: not known to be queued before
            assertEquals(List.of(1), count.countDowns);
            assertTrue(WorkerThread.hold(count));
            w.beforeNext(OTHER, true, 0);
            assertEquals(List.of(1, 1), count.countDowns);
        });
    }

    @Test
    void holdingForAnotherCountAppliesTheFirstAndReleaseHeldAppliesTheSecond() throws Throwable {
        Count first = new Count(A);
        Count second = new Count(B);
        Loop.on(w -> {
            w.running(A);
            assertTrue(WorkerThread.hold(first));
            assertTrue(WorkerThread.hold(first));
            w.running(B);
            assertTrue(WorkerThread.hold(second));
            assertEquals(List.of(2), first.countDowns);
            assertEquals(List.of(), second.countDowns);
            WorkerThread.releaseHeld(); // a resumption is about to run on this thread
            assertEquals(List.of(1), second.countDowns);
            assertFalse(w.holds());
            w.release(); // nothing held: nothing applied
            assertEquals(List.of(2), first.countDowns);
            assertEquals(List.of(1), second.countDowns);
        });
    }
}
