package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Unit tests of every door and channel of {@link SerialGate} and {@link CapacityGate}. */
class GateTest {

    @Test
    void badCapacityIsRejectedNamingTheValue() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class, () -> new CapacityGate(0));
        assertTrue(zero.getMessage().contains("capacity") && zero.getMessage().contains("0"), zero.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> new CapacityGate(-3));
        assertTrue(negative.getMessage().contains("-3"), negative.getMessage());
        assertThrows(NullPointerException.class, () -> new SerialGate().within(null));
        assertThrows(NullPointerException.class, () -> new SerialGate().tryWithin(null));
        assertThrows(NullPointerException.class, () -> new CapacityGate(1).call(null));
    }

    @Test
    void withinReleasesOnTheValueErrorAndCancelledChannels() {
        CapacityGate gate = new CapacityGate(1);
        assertEquals(5, gate.within(Task.value(5)).join());
        assertEquals(1, gate.available());
        IllegalStateException boom = new IllegalStateException("boom");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> gate.within(Task.failure(boom)).join()));
        assertEquals(1, gate.available());
        assertThrows(CancellationException.class, () -> gate.within(Task.cancelled()).join());
        assertEquals(1, gate.available());
        gate.closeAndCheck(); // nothing admitted remains
    }

    @Test
    void acquireGivesAnAdmissionThatExitsExactlyOnce() {
        CapacityGate gate = new CapacityGate(2);
        Admission a = gate.acquire().join();
        Admission b = gate.acquire().join();
        assertEquals(0, gate.available());
        assertFalse(a.isExited());
        assertTrue(a.exit());
        assertFalse(a.exit(), "a second exit does nothing");
        a.close();
        assertTrue(a.isExited());
        assertEquals(1, gate.available());
        b.close();
        assertEquals(2, gate.available());
    }

    @Test
    void waitersAreAdmittedInArrivalOrderAndNeverMoreThanTheCapacity() {
        CapacityGate gate = new CapacityGate(2);
        Admission x = gate.acquire().join();
        Admission y = gate.acquire().join();
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            int n = i;
            waiters.add(gate.within(Task.fromRunnable(() -> order.add(n))).toCompletableFuture());
        }
        assertTrue(order.isEmpty(), "nothing runs while both slots are held");
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.value(1)).join());
        x.exit(); // inline scheduler: each admitted waiter runs and leaves, admitting the next
        for (int i = 0; i < 1000; i++) {
            assertEquals(i, order.get(i));
            assertTrue(waiters.get(i).isDone());
        }
        assertEquals(1, gate.available());
        y.exit();
        assertEquals(2, gate.available());
    }

    @Test
    void serialGateExcludesAndHandsOverInOrder() {
        SerialGate gate = new SerialGate();
        Admission held = gate.acquire().join();
        assertTrue(gate.isBusy());
        List<String> order = new ArrayList<>();
        CompletableFuture<String> first = gate.within(Task.fromCallable(() -> {
            order.add("first");
            return "a";
        })).toCompletableFuture();
        CompletableFuture<String> second = gate.within(Task.fromCallable(() -> {
            order.add("second");
            return "b";
        })).toCompletableFuture();
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.value(0)).join());
        assertTrue(order.isEmpty());
        held.exit();
        assertEquals(List.of("first", "second"), order);
        assertEquals("a", first.join());
        assertEquals("b", second.join());
        assertFalse(gate.isBusy());
        assertEquals(7, gate.tryWithin(Task.value(7)).join());
    }

    @Test
    void tryWithinRunsOnlyWhenAdmissionIsImmediate() {
        CapacityGate gate = new CapacityGate(1);
        AtomicInteger ran = new AtomicInteger();
        Task<Integer> work = Task.fromCallable(ran::incrementAndGet);
        assertEquals(1, gate.tryWithin(work).join());
        Admission held = gate.acquire().join();
        assertThrows(CancellationException.class, () -> gate.tryWithin(work).join());
        assertThrows(CancellationException.class, () -> gate.tryAcquire().join());
        assertEquals(1, ran.get(), "declined work does not run");
        held.exit();
        // a queued waiter blocks try even when a slot is about to be free: no barging
        Admission again = gate.tryAcquire().join();
        CompletableFuture<Integer> queued = gate.within(work).toCompletableFuture();
        assertThrows(CancellationException.class, () -> gate.tryWithin(work).join());
        again.exit();
        assertEquals(2, queued.join());
        assertEquals(1, gate.available());
    }

    @Test
    void aCancelledQueuedWaiterLeaksNoSlotAndItsWorkNeverRuns() {
        CapacityGate gate = new CapacityGate(1);
        Admission held = gate.acquire().join();
        AtomicInteger ran = new AtomicInteger();
        List<CompletableFuture<Integer>> waiters = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiters.add(gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture());
        }
        for (int i = 0; i < 10; i += 2) {
            assertTrue(waiters.get(i).cancel(false));
        }
        held.exit();
        assertEquals(5, ran.get(), "only the waiters that were not cancelled ran");
        for (int i = 1; i < 10; i += 2) {
            assertTrue(waiters.get(i).isDone() && !waiters.get(i).isCancelled());
        }
        assertEquals(1, gate.available());
        gate.closeAndCheck();
    }

    @Test
    void closeCancelsWaitersAndLaterAcquisitionsWhileAdmittedWorkFinishes() {
        SerialGate gate = new SerialGate();
        Admission held = gate.acquire().join();
        AtomicInteger ran = new AtomicInteger();
        CompletableFuture<Integer> queued = gate.within(Task.fromCallable(ran::incrementAndGet)).toCompletableFuture();
        gate.close();
        assertTrue(gate.isClosed());
        assertThrows(CancellationException.class, queued::join);
        assertThrows(CancellationException.class, () -> gate.within(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.tryWithin(Task.fromCallable(ran::incrementAndGet)).join());
        assertThrows(CancellationException.class, () -> gate.acquire().join());
        assertThrows(CancellationException.class, () -> gate.call(ran::incrementAndGet));
        assertEquals(0, ran.get(), "no work ran after close");
        IllegalStateException live = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(live.getMessage().contains("1 admitted"), live.getMessage());
        held.exit(); // admitted work leaves a closed gate as usual
        assertFalse(gate.isBusy());
        gate.closeAndCheck();
        gate.close(); // idempotent
    }

    @Test
    void closeOfACapacityGateReportsEveryAdmissionLeft() {
        CapacityGate gate = new CapacityGate(3);
        Admission a = gate.acquire().join();
        Admission b = gate.acquire().join();
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(e.getMessage().contains("2 admitted"), e.getMessage());
        a.exit();
        b.exit();
        gate.closeAndCheck();
        assertEquals(3, gate.available());
    }

    @Test
    void theBlockingDoorBoundsVirtualThreads() throws Exception {
        CapacityGate gate = new CapacityGate(2);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        int threads = 16;
        int calls = 200;
        CountDownLatch start = new CountDownLatch(1);
        try (ExecutorService vts = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(vts.submit(() -> {
                    start.await();
                    int sum = 0;
                    for (int i = 0; i < calls; i++) {
                        sum += gate.call(() -> {
                            int now = inside.incrementAndGet();
                            most.accumulateAndGet(now, Math::max);
                            Thread.yield();
                            inside.decrementAndGet();
                            return 1;
                        });
                    }
                    return sum;
                }));
            }
            start.countDown();
            for (Future<Integer> f : done) {
                assertEquals(calls, f.get());
            }
        }
        assertTrue(most.get() <= 2, "at most 2 inside, saw " + most.get());
        assertEquals(2, gate.available());
        gate.closeAndCheck();
    }

    @Test
    void theBlockingDoorRethrowsTheBodysError() {
        SerialGate gate = new SerialGate();
        IllegalArgumentException boom = new IllegalArgumentException("boom");
        assertSame(boom, assertThrows(IllegalArgumentException.class, () -> gate.call(() -> {
            throw boom;
        })));
        assertFalse(gate.isBusy());
    }

    @Test
    void aScopeJoinsGatedWorkWhetherQueuedOrAdmitted() throws Exception {
        SerialGate gate = new SerialGate();
        Admission holder = gate.acquire().join(); // everything spawned below queues behind it
        AtomicInteger ran = new AtomicInteger();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Scope scope = Scope.on(pool);
            for (int i = 0; i < 3; i++) {
                scope.spawn(gate.within(Task.fromRunnable(ran::incrementAndGet)));
            }
            CompletableFuture<Void> joined = scope.join().toCompletableFuture();
            assertEquals(3, scope.activeCount(), "queued gated work counts as the scope's children");
            assertFalse(joined.isDone(), "the scope waits for work still queued at the gate");
            holder.exit();
            joined.get();
            scope.close(); // nothing left to cancel or wait for
            assertEquals(3, ran.get(), "each queued operation was admitted and ran before the join");
            assertFalse(gate.isBusy());

            Admission again = gate.acquire().join();
            Scope cancelled = Scope.on(pool);
            Task<Integer> queued = cancelled.spawn(gate.within(Task.fromCallable(ran::incrementAndGet)));
            cancelled.close();
            cancelled.cancel(); // a queued waiter completes cancelled and the scope still joins
            // the join ends (cancelled, as documented for a cancelled scope) once the child has ended
            assertThrows(CancellationException.class, cancelled::joinBlocking);
            assertEquals(0, cancelled.activeCount());
            assertThrows(CancellationException.class, queued::join);
            again.exit();
            assertEquals(3, ran.get(), "cancelled gated work never runs");
            gate.closeAndCheck();
        }
    }
}
