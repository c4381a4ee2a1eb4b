package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * White-box tests of {@link ChannelCore}'s races, made deterministic with test nodes: a node that
 * loses its admit CAS to its own cancellation at that very instant (the window the model checker
 * rarely lines up), and a node whose cancellation is requested but not yet settled. Each test names
 * the mutation it rules out.
 */
class ChannelCoreTest {

    private static ChannelCore core(int capacity, List<Object> dropped) {
        return new ChannelCore(capacity, dropped == null ? null : dropped::add, cause -> new IllegalStateException("closed"));
    }

    /** Rules out admitting the receiver before the sender: a send that lost to its cancellation delivered nothing. */
    @Test
    void aRendezvousSenderThatLosesItsAdmitDeliversNothing() {
        ChannelCore ch = core(ChannelCore.RENDEZVOUS, null);
        TestWaitNode receiver = new TestWaitNode(1);
        ch.enterReceive(receiver);
        TestWaitNode sender = new TestWaitNode(2);
        sender.cancelAtAdmit = true;
        ch.enterSend(sender, "lost");
        assertSame(TestWaitNode.ABANDONED, sender.outcome.get(), "the send ended cancelled");
        assertNull(receiver.outcome.get(), "the receiver got nothing and still waits");
        assertEquals(ChannelCore.SENT, ch.trySend("next"));
        assertEquals("next", receiver.outcome.get());
        assertNull(ch.checkQuiescent());
    }

    /** Rules out dropping a paired element whose receiver lost: it is held for the next receiver. */
    @Test
    void aRendezvousReceiverThatLosesItsAdmitLeavesTheElementToTheNext() {
        ChannelCore ch = core(ChannelCore.RENDEZVOUS, null);
        TestWaitNode first = new TestWaitNode(1);
        first.cancelAtAdmit = true;
        TestWaitNode second = new TestWaitNode(2);
        ch.enterReceive(first);
        ch.enterReceive(second);
        TestWaitNode sender = new TestWaitNode(3);
        ch.enterSend(sender, "e");
        assertSame(TestWaitNode.ADMITTED_NULL, sender.outcome.get(), "the send completed: its element is delivered");
        assertEquals("e", second.outcome.get(), "the next receiver got it");
        assertSame(TestWaitNode.ABANDONED, first.outcome.get());
        assertNull(ch.checkQuiescent());
    }

    /** Rules out taking the buffered element for a receiver that lost its admit. */
    @Test
    void aBufferedElementOfferedToALosingReceiverStaysFirst() {
        ChannelCore ch = core(1, null);
        assertEquals(ChannelCore.SENT, ch.trySend("e1"));
        TestWaitNode receiver = new TestWaitNode(1);
        receiver.cancelAtAdmit = true;
        ch.enterReceive(receiver);
        assertSame(TestWaitNode.ABANDONED, receiver.outcome.get());
        assertEquals("e1", ch.tryReceive(), "the element stayed in the buffer");
        assertSame(ChannelCore.EMPTY, ch.tryReceive());
    }

    /** Rules out handing an element to a waiter whose cancellation is requested: it is abandoned instead. */
    @Test
    void aWaiterBeingCancelledIsAbandonedNotHandedAnElement() {
        ChannelCore ch = core(1, null);
        TestWaitNode receiver = new TestWaitNode(1);
        ch.enterReceive(receiver);
        receiver.requestCancel(); // its token fired; its own CAS has not run yet
        assertEquals(ChannelCore.SENT, ch.trySend("e"));
        assertSame(TestWaitNode.ABANDONED, receiver.outcome.get());
        assertEquals("e", ch.tryReceive(), "the element went to the buffer, not to the cancelled receiver");
    }

    /** A conflated channel hands each replaced element to the callback, once. */
    @Test
    void conflatedReplacementsAreDropped() {
        List<Object> dropped = new ArrayList<>();
        ChannelCore ch = core(ChannelCore.CONFLATED, dropped);
        for (int i = 0; i < 5; i++) {
            assertEquals(ChannelCore.SENT, ch.trySend(i));
        }
        assertEquals(4, ch.tryReceive());
        assertEquals(List.of(0, 1, 2, 3), dropped);
    }

    @Test
    void aCapacityBelowConflatedIsRefused() {
        assertEquals("capacity must be RENDEZVOUS (0), positive, UNLIMITED or CONFLATED, got -2",
                assertThrows(IllegalArgumentException.class, () -> core(-2, null)).getMessage());
    }
}
