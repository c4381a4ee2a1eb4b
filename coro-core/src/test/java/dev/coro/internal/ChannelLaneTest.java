package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@link ChannelLane} alone, and the fast lane inside {@link ChannelCore} (its part 10) with test
 * nodes: who may claim cells while the lane is open and while it is shut, and when the owner shuts
 * and opens it. Each test names the mutation it rules out.
 */
class ChannelLaneTest {

    private static ChannelCore core(int capacity) {
        return new ChannelCore(capacity, null, cause -> new IllegalStateException("closed"));
    }

    /**
     * Exactly capacity elements fit, and they leave in order, lap after lap, for a capacity of one
     * (published and next-lap-free must differ), a power of two and another size. Rules out the
     * undoubled sequence numbers (capacity 1 took an element twice).
     */
    @Test
    void aRingHoldsExactlyItsCapacityInOrderLapAfterLap() {
        for (int capacity : new int[] {1, 3, 4}) {
            ChannelLane lane = new ChannelLane(capacity);
            int next = 0;
            int expected = 0;
            for (int lap = 0; lap < 10; lap++) {
                for (int i = 0; i < capacity; i++) {
                    assertSame(ChannelLane.ROOM, lane.offer(next++, false), "capacity " + capacity);
                }
                assertSame(ChannelLane.FULL, lane.offer(-1, false), "capacity " + capacity + " is full");
                assertEquals(capacity, lane.size());
                for (int i = 0; i < capacity; i++) {
                    assertEquals(expected++, lane.poll(false), "capacity " + capacity + ": FIFO");
                }
                assertNull(lane.poll(false), "capacity " + capacity + " is empty");
                assertEquals(0, lane.size());
            }
        }
    }

    /** Rules out a lane operation that ignores the shut bit: only the owner claims cells then. */
    @Test
    void aShutLaneServesOnlyTheOwner() {
        ChannelLane lane = new ChannelLane(2);
        assertSame(ChannelLane.ROOM, lane.offer("a", false));
        lane.shut();
        assertTrue(lane.isShut());
        assertSame(ChannelLane.LANE_SHUT, lane.offer("b", false));
        assertSame(ChannelLane.LANE_SHUT, lane.poll(false));
        assertSame(ChannelLane.ROOM, lane.offer("b", true));
        assertFalse(lane.hasRoomOwned());
        assertEquals("a", lane.peekOwned());
        assertEquals("a", lane.poll(true));
        assertTrue(lane.hasRoomOwned());
        lane.open();
        assertEquals("b", lane.poll(false));
        assertNull(lane.poll(false));
    }

    /**
     * A receiver that waits shuts the lane, so the next send reaches it instead of the ring, and the
     * lane opens again once it is served. Rules out deciding a waiter with the lane open (C1).
     */
    @Test
    void aWaitingReceiverShutsTheLaneAndTheNextSendReachesIt() {
        ChannelCore ch = core(2);
        TestWaitNode receiver = new TestWaitNode(1);
        ch.enterReceive(receiver);
        assertTrue(ch.lane().isShut(), "a receiver waits: the lane is shut");
        assertNull(ch.checkQuiescent());
        assertEquals(ChannelCore.SENT, ch.trySend("e"));
        assertEquals("e", receiver.outcome.get(), "the send went to the waiting receiver");
        assertFalse(ch.lane().isShut(), "nobody waits: the lane is open again");
        assertSame(ChannelCore.EMPTY, ch.tryReceive());
        assertNull(ch.checkQuiescent());
    }

    /**
     * A sender waits on a full ring; a later send does not overtake it, and the receive that frees
     * the cell lets the waiting sender's element in. Rules out opening the lane while a sender
     * waits (a barging send) and a receive that frees room without filling it (C2).
     */
    @Test
    void aWaitingSenderIsLetInBeforeALaterSend() {
        ChannelCore ch = core(1);
        assertEquals(ChannelCore.SENT, ch.trySend("e1"));
        TestWaitNode sender = new TestWaitNode(1);
        ch.enterSend(sender, "e2");
        assertNull(sender.outcome.get(), "the ring is full: the sender waits");
        assertTrue(ch.lane().isShut());
        assertNull(ch.checkQuiescent());
        assertEquals(ChannelCore.FULL, ch.trySend("e3"), "a later send does not take the waiter's place");
        assertEquals("e1", ch.tryReceive());
        assertSame(TestWaitNode.ADMITTED_NULL, sender.outcome.get(), "the freed cell went to the waiter");
        assertFalse(ch.lane().isShut());
        assertEquals(ChannelCore.FULL, ch.trySend("e3"));
        assertEquals("e2", ch.tryReceive());
        assertSame(ChannelCore.EMPTY, ch.tryReceive());
        assertNull(ch.checkQuiescent());
    }

    /** Rules out leaving the lane shut after the last waiter departs (every later operation would pay for the owner). */
    @Test
    void theLaneOpensAgainWhenTheLastWaiterIsCancelled() {
        ChannelCore ch = core(1);
        TestWaitNode receiver = new TestWaitNode(1);
        ch.enterReceive(receiver);
        assertTrue(ch.lane().isShut());
        receiver.cancel();
        assertFalse(ch.lane().isShut(), "the departure's pass opened the lane");
        assertEquals(ChannelCore.SENT, ch.trySend("e"));
        assertSame(TestWaitNode.ABANDONED, receiver.outcome.get());
        assertEquals("e", ch.tryReceive());
    }

    /**
     * close shuts the lane for good: the elements in the ring are received before the end, a later
     * send fails. Rules out a lane that stays open after a close (a send accepted after it).
     */
    @Test
    void closeShutsTheLaneForGoodAndTheRingDrainsBeforeTheEnd() {
        ChannelCore ch = core(2);
        assertEquals(ChannelCore.SENT, ch.trySend("e1"));
        assertTrue(ch.close(null));
        assertTrue(ch.lane().isShut());
        assertEquals(ChannelCore.CLOSED, ch.trySend("e2"));
        assertEquals("e1", ch.receiveNow());
        assertSame(ChannelCore.END, ch.receiveNow());
        assertTrue(ch.lane().isShut());
        assertNull(ch.checkQuiescent());
    }

    /** A buffered channel above the lane's bound keeps the owner's deque, and the same order. */
    @Test
    void aBufferedChannelAboveTheBoundHasNoLane() {
        ChannelCore big = core(ChannelCore.LANE_MAX_CAPACITY + 1);
        assertNull(big.lane());
        assertTrue(core(ChannelCore.LANE_MAX_CAPACITY).lane() != null);
        for (int i = 0; i < 10; i++) {
            assertEquals(ChannelCore.SENT, big.trySend(i));
        }
        for (int i = 0; i < 10; i++) {
            assertEquals(i, big.tryReceive());
        }
        assertNull(big.checkQuiescent());
    }

    /** cancel drops what the ring holds, once each. Rules out a cancel that leaves lane elements behind. */
    @Test
    void cancelDropsTheRing() {
        java.util.List<Object> dropped = new java.util.ArrayList<>();
        ChannelCore ch = new ChannelCore(3, dropped::add, cause -> new IllegalStateException("closed"));
        ch.trySend("e1");
        ch.trySend("e2");
        assertTrue(ch.cancel());
        assertEquals(java.util.List.of("e1", "e2"), dropped);
        assertSame(ChannelCore.EMPTY, ch.tryReceive());
        assertNull(ch.checkQuiescent());
    }
}
