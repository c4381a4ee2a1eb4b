package dev.coro.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The loop's timer structures ({@link LoopTimers}: wheel, owned lists, heap) on a virtual clock,
 * against a model: random schedules from "other threads" (wheel pushes, or the inbox when the wheel
 * refuses) and from the loop, cancels from both sides, loop iterations that advance the clock by
 * small steps or by jumps longer than the wheel. Checked at every iteration: a timer fires only once
 * due (never early), every due timer fires in that iteration (none is missed or left in the wheel),
 * in deadline order; the wake time is never after the first pending deadline; the exact count; and
 * at the end, closing hands back exactly the timers still pending.
 */
class LoopTimersTest {

    @Test
    void matchesAModelOnATinyWheel() {
        run(new LoopTimers(4, 8), 4, 8, 300_000);
    }

    @Test
    void matchesAModelOnTheLoopsWheel() {
        run(new LoopTimers(), LoopTimers.SHIFT, LoopTimers.SLOTS, 100_000);
    }

    /** A timer and whether it was handed to the loop through the inbox (not yet processed). */
    private record Inbound(LoopTimer timer, boolean removal) {}

    private static void run(LoopTimers timers, int shift, int slots, int steps) {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom rnd = new SplittableRandom(seed);
        long tick = 1L << shift;
        long span = tick * slots; // the wheel's span
        long now = 0;
        List<Inbound> inbox = new ArrayList<>(); // handed over, not yet processed by the loop
        List<LoopTimer> live = new ArrayList<>(); // pending (not fired, not cancelled)
        Set<LoopTimer> fired = new HashSet<>();
        for (int step = 0; step < steps; step++) {
            int op = rnd.nextInt(100);
            if (op < 40) { // schedule from another thread
                LoopTimer t = timer(now + delay(rnd, tick, span));
                if (!accepted(timers.offer(t, now))) {
                    inbox.add(new Inbound(t, false));
                }
                live.add(t);
            } else if (op < 55) { // schedule on the loop
                LoopTimer t = timer(now + delay(rnd, tick, span));
                timers.add(t);
                live.add(t);
            } else if (op < 70 && !live.isEmpty()) { // cancel, from either side
                LoopTimer t = live.remove(rnd.nextInt(live.size()));
                assertTrue(t.take() != null, "seed " + seed); // the cancel's exchange
                if (rnd.nextBoolean()) {
                    inbox.add(new Inbound(t, true));
                } else {
                    timers.remove(t);
                }
            } else { // a loop iteration
                now += rnd.nextInt(20) == 0 ? rnd.nextLong(span * 3) : rnd.nextLong(tick * 3);
                for (Inbound in : inbox) {
                    if (in.removal()) {
                        timers.remove(in.timer());
                    } else if (in.timer().isPending()) {
                        timers.add(in.timer());
                    }
                }
                inbox.clear();
                timers.advance(now);
                long last = Long.MIN_VALUE;
                LoopTimer t;
                while ((t = timers.pollDue(now)) != null) {
                    assertTrue(t.deadline <= now, "early, seed " + seed);
                    assertTrue(t.deadline >= last, "out of order, seed " + seed);
                    last = t.deadline;
                    if (t.take() != null) {
                        assertTrue(fired.add(t), "fired twice, seed " + seed);
                        assertTrue(live.remove(t), "seed " + seed);
                    }
                }
                long first = Long.MAX_VALUE;
                for (LoopTimer p : live) {
                    assertTrue(p.deadline > now, "missed a due timer, seed " + seed);
                    first = Math.min(first, p.deadline);
                }
                long wake = timers.nextWake();
                assertTrue(wake <= first, "wakes at " + wake + " after a deadline at " + first + ", seed " + seed);
                assertTrue(wake > now, "wakes at " + wake + ", not after now " + now + ", seed " + seed);
                if (step % 97 == 0) {
                    assertEquals(live.size(), timers.size(), "seed " + seed);
                    assertTrue(timers.isConsistent(), "seed " + seed);
                }
            }
        }
        for (Inbound in : inbox) { // the last hand-overs, then close
            if (in.removal()) {
                timers.remove(in.timer());
            } else if (in.timer().isPending()) {
                timers.add(in.timer());
            }
        }
        assertEquals(live.size(), timers.size(), "seed " + seed);
        Set<LoopTimer> closed = new HashSet<>();
        timers.close(t -> {
            if (t.isPending()) {
                assertTrue(closed.add(t), "handed back twice");
            }
        });
        assertEquals(new HashSet<>(live), closed, "seed " + seed);
        assertEquals(0, timers.heldKnown());
        LoopTimer late = timer(now + 10 * tick);
        assertFalse(accepted(timers.offer(late, now)), "a closed wheel refuses pushes");
    }

    private static long delay(SplittableRandom rnd, long tick, long span) {
        return switch (rnd.nextInt(10)) {
            case 0 -> 0;
            case 1 -> rnd.nextLong(tick * 2);
            case 2 -> span + rnd.nextLong(span); // beyond the wheel: the heap
            default -> rnd.nextLong(span);
        };
    }

    private static LoopTimer timer(long deadline) {
        return new LoopTimer(null, () -> {}, deadline);
    }

    @Test
    void equalDeadlinesFireInTheOrderTheLoopTookThemIn() {
        LoopTimers timers = new LoopTimers(4, 8);
        long deadline = 5 * 16;
        List<LoopTimer> order = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            LoopTimer t = timer(deadline);
            if (i % 2 == 0) {
                timers.add(t); // owned list
            } else {
                assertTrue(accepted(timers.offer(t, 0))); // pushed chain
            }
            order.add(t);
        }
        timers.advance(deadline);
        // the owned list first (taken in by the loop), then the pushed chain, each oldest first
        List<LoopTimer> expected = List.of(order.get(0), order.get(2), order.get(4), order.get(1), order.get(3),
                order.get(5));
        for (LoopTimer t : expected) {
            assertSame(t, timers.pollDue(deadline));
        }
        assertNull(timers.pollDue(deadline));
    }

    @Test
    void aTimerAddedForATickAlreadySortedFiresAfterTheRunsTimersOfTheSameDeadline() {
        LoopTimers timers = new LoopTimers(4, 8);
        long deadline = 5 * 16 + 3;
        LoopTimer first = timer(deadline);
        assertTrue(accepted(timers.offer(first, 0))); // into the wheel
        timers.advance(4 * 16); // tick 5 starts within the lead: its slot is sorted into the run
        LoopTimer second = timer(deadline);
        timers.add(second); // a tick already taken: the heap
        assertTrue(second.index >= 0, "in the heap");
        assertTrue(timers.isConsistent());
        assertEquals(deadline, timers.nextWake());
        assertNull(timers.pollDue(deadline - 1), "never early");
        assertSame(first, timers.pollDue(deadline), "taken first: fires first");
        assertSame(second, timers.pollDue(deadline));
        assertNull(timers.pollDue(deadline));
        assertEquals(0, timers.heldKnown());
    }

    @Test
    void aCancelledTimerLeavesTheRunAtOnce() {
        LoopTimers timers = new LoopTimers(4, 8);
        LoopTimer kept = timer(5 * 16 + 9);
        LoopTimer dropped = timer(5 * 16 + 1);
        assertTrue(accepted(timers.offer(kept, 0)));
        assertTrue(accepted(timers.offer(dropped, 0)));
        timers.advance(4 * 16);
        assertEquals(2, timers.heldKnown());
        assertTrue(dropped.take() != null); // cancelled
        assertTrue(timers.remove(dropped));
        assertEquals(LoopTimer.NOT_HELD, dropped.index);
        assertEquals(1, timers.heldKnown());
        assertTrue(timers.isConsistent());
        assertEquals(kept.deadline, timers.nextWake(), "the removed timer no longer sets the wake time");
        assertSame(kept, timers.pollDue(kept.deadline));
        assertEquals(0, timers.heldKnown());
    }

    @Test
    void aCancelledPushedTimerLeavesNothingBehind() {
        LoopTimers timers = new LoopTimers(4, 8);
        LoopTimer kept = timer(70);
        LoopTimer dropped = timer(75);
        assertTrue(accepted(timers.offer(kept, 0)));
        assertTrue(accepted(timers.offer(dropped, 0)));
        assertEquals(LoopTimer.INCOMING, dropped.index);
        assertTrue(dropped.take() != null); // cancelled
        assertTrue(timers.remove(dropped));
        assertEquals(LoopTimer.NOT_HELD, dropped.index);
        assertEquals(LoopTimer.OWNED, kept.index, "its slot mate was taken in");
        assertEquals(1, timers.size());
        assertFalse(timers.remove(dropped), "a second removal finds nothing");
        assertTrue(kept.take() != null);
        assertTrue(timers.remove(kept));
        assertEquals(0, timers.size());
        assertTrue(timers.isConsistent());
        assertEquals(EventLoop.FOREVER, timers.nextWake());
    }

    @Test
    void nearTimersAreRefusedSoTheyTravelWithTheRunnables() {
        LoopTimers timers = new LoopTimers(4, 8);
        assertFalse(accepted(timers.offer(timer(0), 0)));
        assertFalse(accepted(timers.offer(timer(16 * (1 + LoopTimers.LEAD_TICKS) - 1), 0)), "due within the lead");
        assertTrue(accepted(timers.offer(timer(16 * (1 + LoopTimers.LEAD_TICKS)), 0)));
        assertFalse(accepted(timers.offer(timer(16 * 8), 0)), "beyond the wheel");
    }

    /** Whether an offer put the timer into the wheel (TELL or JOINED). */
    private static boolean accepted(int offered) {
        return offered != TimerWheel.REFUSED;
    }
}
