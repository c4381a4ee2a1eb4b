package dev.coro.task;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.channel.Channel;
import dev.coro.channel.Generator;
import dev.coro.gate.BudgetGate;
import dev.coro.gate.CapacityGate;
import dev.coro.gate.PriorityGate;
import dev.coro.gate.RateGate;
import dev.coro.gate.ReadWriteGate;
import dev.coro.gate.SerialGate;
import dev.coro.io.EventLoop;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.sync.AsyncMutex;
import dev.coro.sync.Event;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The rule of the blocking doors: on a thread that runs a Coro scheduler's work (a pool worker, an
 * event loop's thread) every blocking door throws {@link IllegalStateException} at once, naming the
 * door and the scheduler, and leaves nothing behind; on plain threads, virtual threads, inside a join
 * and on an executor's threads it blocks as before.
 */
class NonBlockingThreadTest {
    private static WorkStealingPool pool;
    private static EventLoop loop;

    @BeforeAll
    static void start() {
        pool = WorkStealingPool.create(2);
        loop = EventLoop.start("non-blocking-test-loop");
    }

    @AfterAll
    static void stop() {
        pool.close();
        loop.close();
    }

    /**
     * One blocking door: {@code call} runs it (on the scheduler's thread, where it must be refused);
     * {@code untouched} then checks, on the test's thread, that the refusal left no trace.
     */
    record Door(String name, Runnable call, Runnable untouched) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** Every blocking door, each over its own fresh primitive. */
    static List<Supplier<Door>> doors() {
        return List.of(
                () -> {
                    AtomicInteger ran = new AtomicInteger();
                    return new Door("Task.join", () -> Task.fromCallable(ran::incrementAndGet).join(),
                            () -> assertEquals(0, ran.get(), "the task did not start"));
                },
                () -> {
                    Promise<String> never = new Promise<>();
                    TaskHandle<String> handle = never.task().start();
                    return new Door("TaskHandle.join", handle::join, () -> {
                        assertFalse(handle.isDone(), "the run goes on");
                        handle.cancel();
                    });
                },
                () -> {
                    Scope scope = Scope.on(Scheduler.inline());
                    Promise<String> child = new Promise<>();
                    scope.spawn(child.task());
                    return new Door("Scope.joinBlocking", scope::joinBlocking, () -> {
                        assertFalse(scope.join().start().isDone(), "the child still runs");
                        scope.cancel();
                    });
                },
                () -> {
                    Event<String> event = new Event<>();
                    return new Door("Event.awaitBlocking", event::awaitBlocking,
                            () -> assertEquals(0, event.queueLength(), "no waiter queued"));
                },
                () -> {
                    AsyncMutex mutex = new AsyncMutex();
                    return new Door("AsyncMutex.lockBlocking", mutex::lockBlocking, () -> {
                        assertFalse(mutex.isLocked(), "the lock was not taken");
                        assertEquals(0, mutex.queueLength(), "no waiter queued");
                    });
                },
                () -> {
                    Channel<String> ch = Channel.buffered(1);
                    return new Door("Channel.sendBlocking", () -> ch.sendBlocking("x"),
                            () -> assertNull(ch.tryReceive(), "nothing was sent"));
                },
                () -> {
                    Channel<String> ch = Channel.buffered(1);
                    ch.trySend("kept");
                    return new Door("Channel.receiveBlocking", ch::receiveBlocking,
                            () -> assertEquals("kept", ch.tryReceive(), "nothing was received"));
                },
                () -> {
                    AtomicInteger pulled = new AtomicInteger();
                    Iterator<Integer> it = Generator.of(1, 2).map(x -> {
                        pulled.incrementAndGet();
                        return x;
                    }).iterator();
                    return new Door("Generator.iterator().hasNext", it::hasNext, () -> {
                        assertEquals(0, pulled.get(), "nothing was pulled");
                        assertTrue(it.hasNext(), "the iterator still works where blocking is allowed");
                        assertEquals(1, it.next());
                    });
                },
                () -> {
                    CapacityGate gate = new CapacityGate(2);
                    AtomicInteger ran = new AtomicInteger();
                    return new Door("CapacityGate.call", () -> gate.call(ran::incrementAndGet), () -> {
                        assertEquals(0, ran.get(), "the body did not run");
                        assertEquals(2, gate.available(), "no permit taken");
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                    });
                },
                () -> {
                    SerialGate gate = new SerialGate();
                    AtomicInteger ran = new AtomicInteger();
                    return new Door("SerialGate.call", () -> gate.call(ran::incrementAndGet), () -> {
                        assertEquals(0, ran.get(), "the body did not run");
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                        assertEquals(1, gate.tryWithin(Task.value(1)).join(), "the gate is free");
                    });
                },
                () -> {
                    ReadWriteGate gate = new ReadWriteGate();
                    return new Door("ReadWriteGate.callRead", () -> gate.callRead(() -> 1), () -> {
                        assertEquals(0, gate.readers(), "no reader admitted");
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                    });
                },
                () -> {
                    ReadWriteGate gate = new ReadWriteGate();
                    return new Door("ReadWriteGate.callWrite", () -> gate.callWrite(() -> 1), () -> {
                        assertFalse(gate.isWriting(), "no writer admitted");
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                    });
                },
                () -> {
                    PriorityGate gate = new PriorityGate(1);
                    return new Door("PriorityGate.call", () -> gate.call(5, () -> 1), () -> {
                        assertEquals(1, gate.available(), "no permit taken");
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                    });
                },
                () -> {
                    BudgetGate gate = new BudgetGate(10);
                    return new Door("BudgetGate.call", () -> gate.call(3, () -> 1), () -> {
                        assertEquals(10, gate.available(), "no budget spent");
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                    });
                },
                () -> {
                    RateGate gate = new RateGate(1, 1);
                    return new Door("RateGate.call", () -> gate.call(() -> 1), () -> {
                        assertEquals(0, gate.queueLength(), "no waiter queued");
                        assertEquals(7, gate.tryWithin(Task.value(7)).join(), "the burst's one permit is still there");
                    });
                });
    }

    static Stream<Arguments> doorsOnSchedulers() {
        return doors().stream().flatMap(d -> Stream.of(Arguments.of("pool", d), Arguments.of("loop", d)));
    }

    /** Runs {@code door} on a thread of {@code on}; returns what it threw (or null if it returned). */
    private static Throwable runOn(Scheduler on, Runnable door) throws Exception {
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        on.execute(() -> {
            try {
                door.run();
                thrown.complete(null);
            } catch (Throwable t) {
                thrown.complete(t);
            }
        });
        return thrown.get(10, SECONDS); // a hang fails here instead of hanging the build
    }

    @ParameterizedTest(name = "{1} on the {0}")
    @MethodSource("doorsOnSchedulers")
    void everyBlockingDoorIsRefusedOnASchedulerThreadNamingItAndLeavesNothingBehind(String where,
            Supplier<Door> make) throws Exception {
        Scheduler on = where.equals("pool") ? pool : loop;
        Door door = make.get();
        Throwable t = runOn(on, door.call());
        IllegalStateException refused = assertInstanceOf(IllegalStateException.class, t, () -> door + " was not refused");
        String m = refused.getMessage();
        assertTrue(m.startsWith(door.name() + " would block"), m);
        assertTrue(m.contains(on.toString()), "names the scheduler: " + m);
        assertTrue(m.contains("Task.onVirtualThread") && m.contains("then/flatMap"), "says the way out: " + m);
        door.untouched().run();
    }

    @Test
    void theWorkersAndTheLoopThreadCarryTheirSchedulerAsTheirMark() throws Exception {
        CompletableFuture<Scheduler> onWorker = new CompletableFuture<>();
        pool.execute(() -> onWorker.complete(Scheduler.nonBlockingOwner()));
        assertSame(pool, onWorker.get(10, SECONDS));
        CompletableFuture<Scheduler> onLoop = new CompletableFuture<>();
        loop.execute(() -> onLoop.complete(Scheduler.nonBlockingOwner()));
        assertSame(loop, onLoop.get(10, SECONDS));
        assertNull(Scheduler.nonBlockingOwner(), "the test's thread may block");
    }

    @Test
    void aTaskOnThePoolJoinsOnAVirtualThreadInstead() {
        CapacityGate gate = new CapacityGate(1);
        int v = Task.onVirtualThread(() -> gate.call(() -> Task.value(20).join() + 1) + 1)
                .startOn(pool)
                .join();
        assertEquals(22, v);
        assertEquals(1, gate.available());
    }

    @Test
    void aJoinNestedInAJoinBlocksTheJoiningThreadAsUsual() {
        // The inner join runs inside the outer one's loop, after a real suspension (a delay): the
        // joining thread is not a shared scheduler's, so it may block again.
        int v = Task.delay(Duration.ofMillis(1))
                .then(Task.fromCallable(() -> Task.delay(Duration.ofMillis(1)).then(Task.value(4)).join() + 1))
                .join();
        assertEquals(5, v);
    }

    /**
     * Regression: a join called from work that a join's loop runs used to queue its task on the
     * thread's trampoline, behind the very item waiting for it, and hang for ever.
     */
    @Test
    void aJoinInsideATaskBodyOfAJoinRunsItsTaskAtOnceInsteadOfQueueingBehindItself() throws Exception {
        CompletableFuture<Integer> v = CompletableFuture.supplyAsync(
                () -> Task.fromCallable(() -> Task.value(1).join() + 1).join(), Thread::startVirtualThread);
        assertEquals(2, v.get(10, SECONDS));
        CapacityGate gate = new CapacityGate(1);
        CompletableFuture<Integer> nestedCall = CompletableFuture.supplyAsync(
                () -> gate.call(() -> gate.tryWithin(Task.value(1)).outcome().join() instanceof Outcome.Cancelled<?> ? 3 : 0),
                Thread::startVirtualThread);
        assertEquals(3, nestedCall.get(10, SECONDS), "the inner try is refused by the held gate, not hung");
        assertEquals(1, gate.available());
    }

    @Test
    void aPlainThreadJoinsWorkThatRunsOnThePoolAndTheLoop() throws Exception {
        assertEquals(3, Task.fromCallable(() -> 3).startOn(pool).join());
        assertEquals(4, Task.fromCallable(() -> 4).startOn(loop).join());
        CompletableFuture<Integer> fromPlain = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> fromPlain.complete(Task.value(5).startOn(pool).join()));
        assertEquals(5, fromPlain.get(10, SECONDS));
    }

    @Test
    void theSharedTimerThreadRefusesAJoinThatWouldStallEveryTimer() throws Exception {
        // the inline scheduler's timers run their work on the shared timer thread
        java.util.concurrent.CompletableFuture<Throwable> refused = new java.util.concurrent.CompletableFuture<>();
        Scheduler.inline().schedule(() -> {
            try {
                Task.delay(1, java.util.concurrent.TimeUnit.MILLISECONDS).then(Task.value(1)).join();
                refused.complete(null);
            } catch (Throwable e) {
                refused.complete(e);
            }
        }, 0, java.util.concurrent.TimeUnit.MILLISECONDS);
        Throwable e = refused.get(10, SECONDS);
        assertTrue(e instanceof IllegalStateException, "refused: " + e);
        assertTrue(e.getMessage().contains("coro-timer"), e.getMessage());
    }

    @Test
    void anExecutorsThreadsMayBlock() throws Exception {
        ExecutorService executor = Executors.newFixedThreadPool(1);
        try {
            Scheduler adapted = Scheduler.from(executor);
            assertNull(Task.fromCallable(Scheduler::nonBlockingOwner).startOn(adapted).join());
            int v = Task.fromCallable(() -> Task.fromCallable(() -> 6).startOn(pool).join() + 1)
                    .startOn(adapted)
                    .join();
            assertEquals(7, v);
        } finally {
            executor.shutdown();
            assertTrue(executor.awaitTermination(10, SECONDS));
        }
    }

    @Test
    void aMarkSetByHandIsRestoredAndRefusesUntilThen() {
        Scheduler previous = Scheduler.markNonBlocking(pool);
        try {
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> Task.value(1).join());
            assertTrue(e.getMessage().contains(pool.toString()), e.getMessage());
        } finally {
            assertSame(pool, Scheduler.markNonBlocking(previous));
        }
        assertNull(previous);
        assertEquals(1, Task.value(1).join(), "unmarked again");
    }
}
