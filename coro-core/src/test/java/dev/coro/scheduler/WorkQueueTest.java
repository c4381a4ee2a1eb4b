package dev.coro.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Single-threaded behaviour of {@link WorkQueue}; the concurrent behaviour is WorkQueueLincheckTest's. */
class WorkQueueTest {
    record Item(int value) implements Runnable {
        @Override
        public void run() {}
    }

    private static int value(Runnable r) {
        return ((Item) r).value();
    }

    @Test
    void popsInPushOrder() {
        WorkQueue q = new WorkQueue();
        for (int i = 0; i < 10; i++) {
            assertTrue(q.push(new Item(i)));
        }
        assertEquals(10, q.size());
        for (int i = 0; i < 10; i++) {
            assertEquals(i, value(q.pop()));
        }
        assertNull(q.pop());
        assertEquals(0, q.size());
    }

    @Test
    void refusesWhenFullAndWrapsAroundAfterPops() {
        WorkQueue q = new WorkQueue(8);
        for (int round = 0; round < 5; round++) { // indices wrap the ring several times
            for (int i = 0; i < 8; i++) {
                assertTrue(q.push(new Item(round * 8 + i)));
            }
            assertFalse(q.push(new Item(-1)), "full");
            for (int i = 0; i < 8; i++) {
                assertEquals(round * 8 + i, value(q.pop()));
            }
        }
    }

    @Test
    void stealHalfTakesTheOlderHalfRoundedUpAndRunsItsNewest() {
        WorkQueue victim = new WorkQueue();
        WorkQueue thief = new WorkQueue();
        for (int i = 0; i < 7; i++) {
            victim.push(new Item(i));
        }
        Runnable first = victim.stealHalfInto(thief);
        assertEquals(3, value(first), "the newest of the 4 stolen runs first");
        assertEquals(List.of(0, 1, 2), drain(thief));
        assertEquals(List.of(4, 5, 6), drain(victim));
    }

    @Test
    void stealOfExactlyNTakesNothingWhenFewer() {
        WorkQueue victim = new WorkQueue();
        WorkQueue thief = new WorkQueue();
        victim.push(new Item(1));
        assertNull(victim.stealInto(thief, 2));
        assertEquals(1, victim.size());
        assertEquals(1, value(victim.stealInto(thief, 1)));
        assertNull(victim.stealHalfInto(thief), "empty");
        assertEquals(0, thief.size());
    }

    @Test
    void takeHalfRemovesTheOlderHalf() {
        WorkQueue q = new WorkQueue(8);
        for (int i = 0; i < 8; i++) {
            q.push(new Item(i));
        }
        Runnable[] half = q.takeHalf();
        assertEquals(4, half.length);
        for (int i = 0; i < 4; i++) {
            assertEquals(i, value(half[i]));
        }
        assertEquals(List.of(4, 5, 6, 7), drain(q));
        q.push(new Item(9));
        assertNull(q.takeHalf(), "fewer than two");
    }

    @Test
    void pushAllAddsWhatFits() {
        WorkQueue q = new WorkQueue(4);
        q.push(new Item(0));
        Runnable[] more = {new Item(1), new Item(2), new Item(3), new Item(4), new Item(5)};
        assertEquals(3, q.pushAll(more, 0, more.length));
        assertEquals(List.of(0, 1, 2, 3), drain(q));
        assertEquals(0, q.pushAll(more, 2, 2));
    }

    @Test
    void keepsNoReferenceToTasksThatLeft() throws Exception {
        WorkQueue q = new WorkQueue(4);
        WorkQueue thief = new WorkQueue(4);
        for (int i = 0; i < 4; i++) {
            q.push(new Item(i));
        }
        q.pop(); // by the owner
        q.stealHalfInto(thief); // by a thief, copied into its queue
        q.pop();
        assertEquals(0, q.size());
        var field = WorkQueue.class.getDeclaredField("buffer");
        field.setAccessible(true);
        Runnable[] slots = (Runnable[]) field.get(q);
        for (Runnable slot : slots) {
            assertNull(slot);
        }
    }

    @Test
    void headIndexMovesWhenATaskLeaves() {
        WorkQueue q = new WorkQueue();
        Item item = new Item(1);
        q.push(item);
        int before = q.headIndex();
        q.push(new Item(2));
        assertEquals(before, q.headIndex(), "pushes do not move it");
        assertSame(item, q.pop());
        assertEquals(before + 1, q.headIndex());
    }

    private static List<Integer> drain(WorkQueue q) {
        List<Integer> out = new ArrayList<>();
        Runnable r;
        while ((r = q.pop()) != null) {
            out.add(value(r));
        }
        return out;
    }

    /**
     * A thief whose own queue is empty by its count, but whose slots are still claimed by a paused
     * thief of its own, has no room: it takes one task and pushes nothing. Found by ChannelStressTest
     * on 8 workers over 2 cores ("no room to steal into"): the queue was full, a thief claimed half
     * and was preempted, the owner popped the rest and went stealing with a half-sized batch, which
     * would have written over the slots the paused thief had yet to copy.
     */
    @Test
    void aThiefWhoseOwnSlotsAreClaimedByAPausedThiefTakesOnlyWhatFits() {
        WorkQueue own = new WorkQueue();
        for (int i = 0; i < WorkQueue.CAPACITY; i++) {
            assertTrue(own.push(() -> { }));
        }
        assertTrue(own.claimOnlyForTest(WorkQueue.CAPACITY / 2), "the paused thief's claim");
        for (int i = 0; i < WorkQueue.CAPACITY / 2; i++) {
            assertNotNull(own.pop());
        }
        assertNull(own.pop(), "empty by its owner's count");
        assertEquals(0, own.room(), "but every slot is still taken");
        WorkQueue victim = new WorkQueue();
        for (int i = 0; i < 10; i++) {
            assertTrue(victim.push(() -> { }));
        }
        Runnable task = victim.stealHalfInto(own);
        assertNotNull(task);
        assertNotSame(WorkQueue.CONTENDED, task);
        assertEquals(9, victim.size(), "one task taken, no more");
        assertEquals(0, own.room(), "nothing pushed over the claimed slots");
    }
}
