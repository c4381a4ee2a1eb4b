package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Latches;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** KeyedSerialGate: exclusion per key, concurrency across keys, FIFO, the bound, no leaked entries. */
class KeyedSerialGateTest {

    /** Unequal keys with equal hash codes: never striped together. */
    private record Colliding(int id) {
        @Override
        public int hashCode() {
            return 42;
        }
    }

    @Test
    void operationsOfOneKeyRunOneAtATimeInArrivalOrder() {
        KeyedSerialGate<String> gate = new KeyedSerialGate<>();
        Admission held = gate.acquire("a").join();
        List<Integer> order = new ArrayList<>();
        List<CompletableFuture<Void>> runs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            int n = i;
            runs.add(gate.within("a", Task.fromRunnable(() -> order.add(n))).toCompletableFuture());
        }
        assertTrue(order.isEmpty(), "ran while its key was held");
        assertEquals(1, gate.activeKeys());
        held.exit();
        runs.forEach(CompletableFuture::join);
        assertEquals(List.of(0, 1, 2, 3, 4), order);
        assertEquals(0, gate.activeKeys(), "the key's entry outlived its last operation");
        gate.closeAndCheck();
    }

    @Test
    void differentKeysRunConcurrentlyEvenWithCollidingHashCodes() {
        KeyedSerialGate<Colliding> gate = new KeyedSerialGate<>();
        Admission one = gate.acquire(new Colliding(1)).join();
        Outcome<Admission> two = gate.tryAcquire(new Colliding(2)).outcome().join();
        Admission second = (Admission) assertInstanceOf(Outcome.Value.class, two,
                "an unequal key with the same hash waited").value();
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire(new Colliding(1)).outcome().join(),
                "an equal key was admitted twice");
        assertEquals(2, gate.activeKeys());
        one.exit();
        second.exit();
        assertEquals(0, gate.activeKeys());
        gate.closeAndCheck();
    }

    /**
     * The proof: 64 tasks x 10,000 operations over 16 keys, on 2 workers. (That different
     * keys do run at once is shown deterministically by the colliding-keys test: whether two tiny
     * critical sections overlap in time here depends on the machine.)
     */
    @Test
    void exclusionPerKeyAndExactCountersUnderContention() throws Exception {
        KeyedSerialGate<Integer> gate = new KeyedSerialGate<>();
        int keys = 16;
        long[] counters = new long[keys];
        AtomicIntegerArray inside = new AtomicIntegerArray(keys);
        AtomicInteger overlaps = new AtomicInteger();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<CompletableFuture<Void>> tasks = new ArrayList<>();
            for (int t = 0; t < 64; t++) {
                int seed = t;
                Task<Void> one = Task.defer(() -> {
                    int key = Math.floorMod(seed * 31 + (int) (System.nanoTime() & 0xff), keys);
                    return gate.within(key, Task.fromRunnable(() -> {
                        if (inside.incrementAndGet(key) != 1) {
                            overlaps.incrementAndGet();
                        }
                        counters[key]++; // plain: the gate must order it
                        inside.decrementAndGet(key);
                    }));
                });
                tasks.add(one.repeat(10_000).startOn(pool).toCompletableFuture());
            }
            tasks.forEach(CompletableFuture::join);
        }
        assertEquals(0, overlaps.get(), "two operations of one key ran at once");
        long total = 0;
        for (long c : counters) {
            total += c;
        }
        assertEquals(640_000, total, "lost updates: the per-key counters do not add up");
        assertEquals(0, gate.activeKeys(), "entries leaked");
        gate.closeAndCheck();
    }

    /** The proof: 100,000 keys churned through, each once and some twice at once: no entry left. */
    @Test
    void churnedKeysLeaveNoEntryBehind() throws Exception {
        KeyedSerialGate<Long> gate = new KeyedSerialGate<>();
        AtomicInteger ran = new AtomicInteger();
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            List<CompletableFuture<Void>> batch = new ArrayList<>();
            for (long k = 0; k < 100_000; k++) {
                Task<Void> op = gate.within(k, Task.fromRunnable(ran::incrementAndGet).then(Task.yieldNow()));
                batch.add(op.startOn(pool).toCompletableFuture());
                if (k % 10 == 0) {
                    batch.add(op.startOn(pool).toCompletableFuture()); // the same key twice at once
                }
                if (batch.size() >= 1_000) {
                    batch.forEach(CompletableFuture::join);
                    batch.clear();
                }
            }
            batch.forEach(CompletableFuture::join);
        }
        assertEquals(110_000, ran.get());
        assertEquals(0, gate.activeKeys(), "entries of finished keys are still in the map");
        gate.closeAndCheck();
    }

    @Test
    void aCancelledWaiterLeavesNoEntryAndDoesNotHoldTheKey() {
        KeyedSerialGate<String> gate = new KeyedSerialGate<>();
        Admission held = gate.acquire("k").join();
        CompletableFuture<Admission> waiter = gate.acquire("k").toCompletableFuture();
        waiter.cancel(false);
        held.exit();
        assertTrue(waiter.isCancelled());
        assertEquals(0, gate.activeKeys());
        Admission again = gate.tryAcquire("k").join();
        again.exit();
        gate.closeAndCheck();
    }

    @Test
    void theBoundAdmitsAtMostThatManyKeysFifoAcrossKeys() {
        KeyedSerialGate<String> gate = new KeyedSerialGate<>(2);
        Admission a = gate.acquire("a").join();
        Admission b = gate.acquire("b").join();
        CompletableFuture<Admission> c = gate.acquire("c").toCompletableFuture();
        List<String> order = new ArrayList<>();
        CompletableFuture<Void> d = gate.within("d", Task.fromRunnable(() -> order.add("d"))).toCompletableFuture();
        assertFalse(c.isDone() || d.isDone(), "a third key was admitted under a bound of 2");
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire("e").outcome().join());
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire("a").outcome().join(),
                "a held key admitted a second operation");
        a.exit(); // frees a's slot: to c, which waited longer than d
        Admission cHeld = c.join();
        assertFalse(d.isDone(), "d overtook c across keys");
        b.exit();
        d.join();
        assertEquals(List.of("d"), order);
        cHeld.exit();
        assertEquals(0, gate.activeKeys());
        gate.closeAndCheck();
    }

    /**
     * Under a bound, a key holds one slot from its first admission to its entry's death: the next
     * operation of the same key is handed the key without asking for another slot, and the slot comes
     * back when the key's last operation leaves (found by mutation: a slot taken without being marked
     * was never given back, and the key's next operation waited on its own slot).
     */
    @Test
    void aKeyHoldsOneSlotAcrossItsOperationsAndGivesItBack() {
        KeyedSerialGate<String> gate = new KeyedSerialGate<>(1);
        Admission first = gate.acquire("a").join();
        CompletableFuture<Admission> second = gate.acquire("a").toCompletableFuture();
        assertInstanceOf(Outcome.Cancelled.class, gate.tryAcquire("b").outcome().join(), "the one slot is a's");
        first.exit();
        assertTrue(second.isDone(), "a's next operation waited for a slot its key already holds");
        second.join().exit();
        for (int i = 0; i < 3; i++) {
            assertEquals(1, gate.call("k" + i, gate::activeKeys), "one key at a time under the bound");
        }
        Admission other = gate.tryAcquire("b").join(); // every slot given back
        other.exit();
        assertEquals(0, gate.activeKeys());
        gate.closeAndCheck();
    }

    /** A key whose hashCode, on one chosen thread once armed, signals and then waits to be let go. */
    private static final class PausingKey {
        final CountDownLatch paused = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);
        volatile Thread pauseOn;

        @Override
        public int hashCode() {
            if (Thread.currentThread() == pauseOn) {
                pauseOn = null;
                paused.countDown();
                Latches.await(resume);
            }
            return 7;
        }
    }

    /**
     * The killer of an entry pauses between its CAS 1 -> 0 and its removal from the map (inside the
     * map's hashCode call); a newcomer of the same key finds the dead entry, helps remove it, and is
     * admitted on a new one instead of waiting for the killer (found by mutation: a joiner that did
     * not help spun until the killer's removal).
     */
    @Test
    void aNewcomerHelpsRemoveADeadEntryInsteadOfWaitingForItsKiller() throws Exception {
        KeyedSerialGate<PausingKey> gate = new KeyedSerialGate<>();
        PausingKey key = new PausingKey();
        Admission first = gate.acquire(key).join();
        Thread killer = Thread.ofPlatform().start(() -> {
            key.pauseOn = Thread.currentThread(); // its next hashCode is the killer's removal
            first.exit();
        });
        key.paused.await();
        Admission newcomer = gate.tryAcquire(key).join(); // the key is free: admitted at once
        key.resume.countDown();
        killer.join();
        assertEquals(1, gate.activeKeys(), "the newcomer's entry");
        newcomer.exit();
        assertEquals(0, gate.activeKeys());
        gate.closeAndCheck();
    }

    @Test
    void closeCancelsWaitersOfEveryKeyAndLaterAcquisitions() {
        KeyedSerialGate<String> gate = new KeyedSerialGate<>();
        Admission a = gate.acquire("a").join();
        CompletableFuture<Admission> waiting = gate.acquire("a").toCompletableFuture();
        gate.close();
        assertTrue(waiting.isCancelled());
        assertInstanceOf(Outcome.Cancelled.class, gate.acquire("b").outcome().join());
        assertInstanceOf(Outcome.Cancelled.class, gate.within("c", Task.value(1)).outcome().join());
        IllegalStateException e = assertThrows(IllegalStateException.class, gate::closeAndCheck);
        assertTrue(e.getMessage().contains("1 admitted"), e.getMessage());
        a.exit();
        assertEquals(0, gate.activeKeys());
        gate.closeAndCheck();
    }

    @Test
    void badInputIsRefusedWithTheRuleNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new KeyedSerialGate<String>(0));
        assertTrue(e.getMessage().contains("maxConcurrentKeys"), e.getMessage());
        KeyedSerialGate<String> gate = new KeyedSerialGate<>();
        assertThrows(NullPointerException.class, () -> gate.within(null, Task.value(1)));
        assertThrows(NullPointerException.class, () -> gate.within("k", null));
        assertThrows(NullPointerException.class, () -> gate.acquire(null));
        assertThrows(NullPointerException.class, () -> gate.tryAcquire(null));
        assertThrows(NullPointerException.class, () -> gate.tryWithin(null, Task.value(1)));
        assertThrows(NullPointerException.class, () -> gate.call("k", null));
        assertEquals(5, gate.call("k", () -> 5));
    }
}
