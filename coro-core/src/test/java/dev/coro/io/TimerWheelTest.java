package dev.coro.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Which pushes into a {@link TimerWheel} must tell the loop (TimerWheel I4), step by step on one
 * thread; the concurrent side is ParkingLincheckTest's.
 */
class TimerWheelTest {
    private static final int SHIFT = 4;

    private final TimerWheel wheel = new TimerWheel(SHIFT, 4);

    private static LoopTimer timer(long tick, int offset) {
        LoopTimer t = new LoopTimer(null, () -> {}, (tick << SHIFT) + offset);
        t.index = LoopTimer.INCOMING;
        return t;
    }

    /**
     * The model check caught the variant in which only the push onto an empty slot told the loop: a
     * second push could return having told no one while the first pusher had not told yet.
     */
    @Test
    void aPushJoiningAChainWhoseFirstPusherHasNotToldYetTellsTheLoopItself() {
        LoopTimer first = timer(2, 0);
        assertEquals(TimerWheel.TELL, wheel.push(first));
        assertTrue(wheel.isDirty());
        wheel.clearDirty(); // the loop scanned meanwhile; first's pusher has not finished telling
        LoopTimer second = timer(2, 1);
        assertEquals(TimerWheel.TELL, wheel.push(second), "behind an untold timer: tells the loop itself");
        assertTrue(wheel.isDirty());
    }

    @Test
    void onlyPushesBehindAToldTimerOfTheSameChainSkipTheLoop() {
        LoopTimer first = timer(2, 0);
        assertEquals(TimerWheel.TELL, wheel.push(first));
        first.told(); // its pusher woke the loop if needed
        wheel.clearDirty();
        LoopTimer second = timer(2, 1);
        assertEquals(TimerWheel.JOINED, wheel.push(second));
        assertFalse(wheel.isDirty(), "a joined push leaves the flag alone");
        assertEquals(TimerWheel.JOINED, wheel.push(timer(2, 2)), "told is inherited along the chain");

        wheel.drain(2); // the loop took the chain in: the next push starts a new chain
        assertEquals(TimerWheel.TELL, wheel.push(timer(2, 3)));
        assertTrue(wheel.isDirty());

        wheel.clearDirty();
        assertEquals(TimerWheel.TELL, wheel.push(timer(3, 0)), "another slot's first push tells");
        assertEquals(TimerWheel.REFUSED, wheel.push(timer(6, 0)), "a tick the slot does not hold");
    }

    @Test
    void aTakenSlotsNextTickStartsAChainThatTellsTheLoop() {
        LoopTimer t = timer(0, 1);
        assertEquals(TimerWheel.TELL, wheel.push(t));
        t.told();
        wheel.take(0); // slot 0 moves on to tick 4
        wheel.clearDirty();
        assertEquals(TimerWheel.TELL, wheel.push(timer(4, 0)));
        assertTrue(wheel.isDirty());
    }
}
