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

    /**
     * Part 11, one side: the readiness hint lets through every run-loop fast path that can succeed.
     * Rules out a hint the owner never leaves (a send beside a waiting receiver would answer FULL),
     * a bit read inverted, and a receive that trusts the hint on a closed channel (END is decided
     * under ownership).
     */
    @Test
    void theFastPathsTakeWhatTheHintSaysIsThere() {
        ChannelCore ch = core(ChannelCore.RENDEZVOUS, null);
        TestWaitNode receiver = new TestWaitNode(1);
        ch.enterReceive(receiver);
        assertEquals(ChannelCore.SENT, ch.sendNow("to the receiver"));
        assertEquals("to the receiver", receiver.outcome.get());
        TestWaitNode sender = new TestWaitNode(2);
        ch.enterSend(sender, "from the sender");
        assertEquals("from the sender", ch.receiveNow());
        assertSame(TestWaitNode.ADMITTED_NULL, sender.outcome.get());

        ChannelCore unlimited = core(ChannelCore.UNLIMITED, null);
        assertEquals(ChannelCore.SENT, unlimited.sendNow("buffered"), "a channel without a wait never declines");
        assertEquals("buffered", unlimited.receiveNow());
        unlimited.close(null);
        assertSame(ChannelCore.END, unlimited.receiveNow(), "closed and drained: the end, decided under ownership");

        ChannelCore buffered = core(1, null);
        TestWaitNode bufferedReceiver = new TestWaitNode(3);
        buffered.enterReceive(bufferedReceiver); // shuts the lane: the fast path asks the owner
        assertEquals(ChannelCore.SENT, buffered.sendNow("past the shut lane"));
        assertEquals("past the shut lane", bufferedReceiver.outcome.get());
        assertNull(ch.checkQuiescent());
        assertNull(unlimited.checkQuiescent());
        assertNull(buffered.checkQuiescent());
    }

    /**
     * Part 11, the other side: a fast path that the hint says would wait answers at once, without an
     * owner section (the waiting door owns once, instead of twice per wait). Rules out a hint that
     * always says "maybe" and a rendezvous send that owns to learn nobody receives.
     */
    @Test
    void theFastPathsThatWouldWaitDoNotOwn() {
        ChannelCore ch = core(ChannelCore.RENDEZVOUS, null);
        long before = ch.passes();
        assertEquals(ChannelCore.FULL, ch.sendNow("nobody receives"));
        assertSame(ChannelCore.EMPTY, ch.receiveNow());
        assertEquals(before, ch.passes(), "no owner section for a rendezvous with nobody waiting");

        ChannelCore full = core(1, null);
        assertEquals(ChannelCore.SENT, full.trySend("fills it"));
        TestWaitNode sender = new TestWaitNode(1);
        full.enterSend(sender, "waits"); // full: it waits, and the lane is shut
        before = full.passes();
        assertEquals(ChannelCore.FULL, full.sendNow("behind the waiting sender"));
        assertEquals(before, full.passes(), "a sender waits, so this send would wait behind it");

        ChannelCore empty = core(1, null);
        TestWaitNode receiver = new TestWaitNode(2);
        empty.enterReceive(receiver); // empty: it waits, and the lane is shut
        before = empty.passes();
        assertSame(ChannelCore.EMPTY, empty.receiveNow());
        assertEquals(before, empty.passes(), "a receiver waits, so this receive would wait behind it");
        assertNull(ch.checkQuiescent());
    }

    /**
     * Part 13: with the lane shut (a receiver listed), receiveSoon decides as receiveNow does and
     * takes nothing the listed receiver is owed. Rules out a look that takes the lane's LANE_SHUT
     * answer for an element, and one that claims cells of a shut lane.
     */
    @Test
    void receiveSoonTakesNothingAListedReceiverIsOwed() {
        ChannelCore ch = core(2, null);
        TestWaitNode receiver = new TestWaitNode(1);
        ch.enterReceive(receiver); // empty: it waits, and the lane is shut
        assertSame(ChannelCore.EMPTY, ch.receiveSoon(3));
        assertEquals(ChannelCore.SENT, ch.trySend("owed"));
        assertEquals("owed", receiver.outcome.get(), "the listed receiver got the next element");
        assertNull(ch.checkQuiescent());
    }

    /**
     * Part 13: below half the buffer, receiveSoon still takes an element at its last look, and takes
     * each element once. Rules out a last look that never polls (the receive would wait beside an
     * element its own look could take) and a look that consumes an element it does not return.
     */
    @Test
    void receiveSoonTakesAnElementBelowHalfAtItsLastLook() {
        ChannelCore ch = core(4, null);
        assertEquals(ChannelCore.SENT, ch.trySend("only"));
        assertEquals("only", ch.receiveSoon(3));
        assertEquals(ChannelCore.SENT, ch.trySend("a"));
        assertEquals(ChannelCore.SENT, ch.trySend("b"));
        assertEquals("a", ch.receiveSoon(5), "half full: the oldest first");
        assertEquals("b", ch.tryReceive());
        assertSame(ChannelCore.EMPTY, ch.tryReceive());
        assertSame(ChannelCore.EMPTY, ch.receiveSoon(3), "empty: nothing after its looks");
        assertNull(ch.checkQuiescent());
    }

    /**
     * Part 13's hint: looks that found nothing make the next waits of the channel skip theirs (a
     * channel whose senders are idle pays the spin once per SOON_SKIPS_AFTER_MISS + 1 waits), and the
     * wait after them looks again. Rules out a channel that spins on every wait while nobody sends.
     */
    @Test
    void afterLooksThatFoundNothingTheNextWaitsGoToTheirDoorAtOnce() {
        ChannelCore ch = core(4, null);
        assertSame(ChannelCore.EMPTY, ch.receiveSoon(3), "nothing sent: the looks miss");
        assertEquals(ChannelCore.SENT, ch.trySend("x"));
        for (int i = 0; i < ChannelCore.SOON_SKIPS_AFTER_MISS; i++) {
            assertSame(ChannelCore.EMPTY, ch.receiveSoon(3), "wait " + i + " after the miss: no looks");
        }
        assertEquals("x", ch.receiveSoon(3), "the wait after them looks again");
        assertNull(ch.checkQuiescent());
    }

    /** Part 13: no looks (polls 0, or a channel without a lane) answer EMPTY; a closed channel ends. */
    @Test
    void receiveSoonWithoutLooksOrLaneAnswersEmptyAndAClosedChannelEnds() {
        ChannelCore unlimited = core(ChannelCore.UNLIMITED, null);
        assertEquals(false, unlimited.hasLane());
        assertEquals(ChannelCore.SENT, unlimited.trySend("x"));
        assertSame(ChannelCore.EMPTY, unlimited.receiveSoon(4), "no lane: no looks");
        ChannelCore buffered = core(2, null);
        assertEquals(true, buffered.hasLane());
        assertEquals(ChannelCore.SENT, buffered.trySend("y"));
        assertSame(ChannelCore.EMPTY, buffered.receiveSoon(0), "polls 0: no looks");
        assertEquals("y", buffered.receiveSoon(2));
        buffered.close(null);
        assertSame(ChannelCore.END, buffered.receiveSoon(2), "closed and drained: the end");
        assertNull(buffered.checkQuiescent());
    }

    /**
     * Part 13 against a sender on another thread: every element is taken exactly once and in order,
     * whatever each look finds (a state, not a time, is checked).
     */
    @Test
    void receiveSoonRacingASenderTakesEachElementOnceInOrder() throws InterruptedException {
        ChannelCore ch = core(8, null);
        int n = 20_000;
        Thread sender = new Thread(() -> {
            for (int i = 0; i < n; ) {
                if (ch.trySend(i) == ChannelCore.SENT) {
                    i++;
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        sender.start();
        for (int expected = 0; expected < n; ) {
            Object e = ch.receiveNow();
            if (e == ChannelCore.EMPTY) {
                e = ch.receiveSoon(3);
            }
            if (e != ChannelCore.EMPTY) {
                assertEquals(expected, e, "FIFO, exactly once");
                expected++;
            }
        }
        sender.join();
        assertSame(ChannelCore.EMPTY, ch.tryReceive(), "nothing left over");
        assertNull(ch.checkQuiescent());
    }

    @Test
    void aCapacityBelowConflatedIsRefused() {
        assertEquals("capacity must be RENDEZVOUS (0), positive, UNLIMITED or CONFLATED, got -2",
                assertThrows(IllegalArgumentException.class, () -> core(-2, null)).getMessage());
    }
}
