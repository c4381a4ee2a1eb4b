package dev.coro.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.internal.TestLane.Ask;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * The engine's abilities, each through the small test-only rule {@link TestLane} (or a rule written
 * here): weights, a keyed order, expiry on a clock, the arrival hook. The select-able waiter has its
 * own test, {@link SelectTest}. Everything runs on the calling thread (the inline scheduler), so each
 * step's effect is checked right after it.
 */
class AdmissionEngineTest {

    private static CompletableFuture<Void> enter(TestLane lane, Ask ask) {
        return lane.enter(ask).toCompletableFuture();
    }

    private static void assertWaiting(CompletableFuture<?> f, String why) {
        assertFalse(f.isDone(), why);
    }

    private static void assertAdmitted(CompletableFuture<Void> f, String why) {
        assertTrue(f.isDone() && !f.isCompletedExceptionally(), why);
    }

    private static void assertCancelled(CompletableFuture<?> f) {
        assertTrue(f.isCancelled(), "expected cancelled: " + f);
    }

    // ---- weights ----

    @Test
    void aHeavyWaiterAtTheHeadBlocksLighterOnesBehindItAndNoNewcomerBarges() {
        TestLane budget = new TestLane(10);
        assertTrue(budget.tryEnterNow(Ask.weight(6)));
        assertEquals(4, budget.freePermits());
        CompletableFuture<Void> heavy = enter(budget, Ask.weight(5));
        CompletableFuture<Void> light = enter(budget, Ask.weight(1));
        assertWaiting(heavy, "5 units do not fit in 4");
        assertWaiting(light, "strict FIFO: the light waiter waits behind the heavy one");
        assertFalse(budget.tryEnterNow(Ask.weight(1)), "no barging while a queued waiter lacks units");
        budget.release(6);
        assertAdmitted(heavy, "the release covers the head's 5");
        assertAdmitted(light, "then the light one's 1");
        assertEquals(4, budget.freePermits());
        budget.release(5);
        budget.release(1);
        assertEquals(10, budget.freePermits());
        assertEquals(0, budget.linkedWaiters());
    }

    @Test
    void aWaiterCancelledWhilePartlyCoveredLeavesTheCountAsItFoundIt() {
        TestLane budget = new TestLane(10);
        assertTrue(budget.tryEnterNow(Ask.weight(6)));
        CompletableFuture<Void> w = enter(budget, Ask.weight(8)); // takes the 4 free units as credits
        assertWaiting(w, "8 do not fit");
        assertEquals(0, budget.freePermits());
        budget.release(3); // 3 more units go to it: 7 of 8 covered
        assertWaiting(w, "7 of 8");
        assertTrue(w.cancel(false));
        assertEquals(7, budget.freePermits(), "its 7 covered units are free again, nothing more");
        budget.release(3);
        assertEquals(10, budget.freePermits());
        CompletableFuture<Void> all = enter(budget, Ask.weight(10));
        assertAdmitted(all, "every unit is back");
        budget.release(10);
    }

    @Test
    void cancelledWaitersOfEveryWeightGiveBackExactlyWhatTheyHeld() {
        TestLane budget = new TestLane(10);
        assertTrue(budget.tryEnterNow(Ask.weight(10)));
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int w = 1; w <= 10; w++) {
            waiters.add(enter(budget, Ask.weight(w)));
        }
        budget.release(4); // the first waiters (1 and 2) are admitted, 3 waits with 1 of 3
        assertAdmitted(waiters.get(0), "1");
        assertAdmitted(waiters.get(1), "2");
        for (int i = 2; i < 10; i += 2) {
            assertTrue(waiters.get(i).cancel(false));
        }
        budget.release(6);
        // now: 1 + 2 held, the rest of the odd-indexed waiters (4, 6, 8, 10) served in order as far as
        // the units go: 4 fits (7 free), 6 does not
        assertAdmitted(waiters.get(3), "4");
        assertWaiting(waiters.get(5), "6 does not fit in 3");
        budget.release(1);
        budget.release(2);
        assertAdmitted(waiters.get(5), "6 fits in 6");
        budget.release(4);
        budget.release(6);
        assertAdmitted(waiters.get(7), "8");
        budget.release(8);
        assertAdmitted(waiters.get(9), "10");
        budget.release(10);
        assertEquals(10, budget.freePermits());
        assertEquals(0, budget.ruleAdmitted());
    }

    /**
     * PermitLane T3: a release larger than the deficit posts only the deficit as credit; the rest is
     * free (found by mutation: posting the whole release left credits over, which later let a heavy
     * arrival in over the capacity, while the free count looked right).
     */
    @Test
    void aReleaseLargerThanTheDeficitPostsOnlyTheDeficitAsCredit() {
        TestLane budget = new TestLane(3);
        assertTrue(budget.tryEnterNow(Ask.weight(3)));
        CompletableFuture<Void> light = enter(budget, Ask.weight(1)); // lacks 1
        assertWaiting(light, "the lane is full");
        budget.release(3); // 1 unit goes to the light waiter (the deficit), 2 become free
        assertAdmitted(light, "the deficit was covered");
        assertEquals(2, budget.freePermits());
        assertEquals(1, budget.ruleAdmitted(), "no credit left over: 3 = 2 free + 1 held");
        CompletableFuture<Void> heavy = enter(budget, Ask.weight(3));
        assertWaiting(heavy, "3 units do not fit while the light waiter holds 1");
        budget.release(1);
        assertAdmitted(heavy, "the light waiter's unit completes it");
        budget.release(3);
        assertEquals(3, budget.freePermits());
        assertEquals(0, budget.ruleAdmitted());
    }

    // ---- order ----

    @Test
    void aKeyedOrderAdmitsTheLeastKeyFirstAndArrivalOrderAmongEqualKeys() {
        TestLane lane = new TestLane(1, TestLane.byKey(), null);
        assertTrue(lane.tryEnterNow(Ask.key(0)));
        long[] keys = {5, 1, 3, 1, 5, 2};
        List<Integer> admitted = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) {
            int name = i;
            lane.enter(Ask.key(keys[i])).map(v -> admitted.add(name)).toCompletableFuture();
        }
        assertTrue(admitted.isEmpty());
        for (int i = 0; i < keys.length; i++) {
            lane.release(1);
        }
        assertEquals(List.of(1, 3, 5, 2, 0, 4), admitted, "key ascending, then arrival");
        lane.release(1);
        assertEquals(1, lane.freePermits());
    }

    @Test
    void aLaterArrivalWithALesserKeyGoesFirstAmongTheWaiters() {
        TestLane lane = new TestLane(1, TestLane.byKey(), null);
        assertTrue(lane.tryEnterNow(Ask.key(0)));
        List<String> admitted = new ArrayList<>();
        lane.enter(Ask.key(9)).map(v -> admitted.add("late-low")).toCompletableFuture();
        lane.release(1); // late-low is admitted: it was alone
        lane.enter(Ask.key(9)).map(v -> admitted.add("low")).toCompletableFuture();
        lane.enter(Ask.key(1)).map(v -> admitted.add("high")).toCompletableFuture();
        lane.release(1);
        lane.release(1);
        lane.release(1);
        assertEquals(List.of("late-low", "high", "low"), admitted);
        assertEquals(1, lane.freePermits());
    }

    @Test
    void settledWaitersInAKeyedOrderArePurgedNotKept() {
        TestLane lane = new TestLane(1, TestLane.byKey(), null);
        assertTrue(lane.tryEnterNow(Ask.key(0)));
        CompletableFuture<Void> keep = enter(lane, Ask.key(1_000_000));
        lane.release(1); // keep is admitted; the lane is held by it
        for (int i = 0; i < 100_000; i++) {
            enter(lane, Ask.key(i)).cancel(false);
        }
        assertAdmitted(keep, "the first waiter");
        assertTrue(lane.linkedWaiters() <= 2 * 32 + 32 + 1, "cancelled waiters were purged: " + lane.linkedWaiters());
        lane.release(1);
        assertEquals(1, lane.freePermits());
    }

    // ---- expiry ----

    @Test
    void waitersExpireExactlyAtTheirDeadlineTakeNothingAndOneTimerServesThemAll() {
        ManualClock clock = new ManualClock(1_000);
        TestLane lane = new TestLane(1, WaitOrder.arrival(), clock);
        assertTrue(lane.tryEnterNow(null));
        CompletableFuture<Void> a = enter(lane, Ask.until(1_100));
        CompletableFuture<Void> b = enter(lane, Ask.until(1_050));
        CompletableFuture<Void> c = enter(lane, Ask.weight(1)); // no deadline
        assertEquals(1, clock.pending(), "one timer, for the earliest deadline");
        clock.advance(49);
        assertWaiting(b, "never early: 1 ns before its deadline");
        clock.advance(1);
        CompletionException e = assertThrows(CompletionException.class, b::join);
        assertInstanceOf(TimeoutException.class, e.getCause());
        assertWaiting(a, "a's deadline is later");
        assertEquals(1, clock.pending(), "re-armed for the next deadline");
        clock.advance(50);
        assertInstanceOf(TimeoutException.class, assertThrows(CompletionException.class, a::join).getCause());
        assertEquals(0, clock.pending());
        assertWaiting(c, "no deadline");
        lane.release(1);
        assertAdmitted(c, "the expired waiters took nothing: c is next");
        lane.release(1);
        assertEquals(1, lane.freePermits());
        assertEquals(0, lane.linkedWaiters());
    }

    @Test
    void anEarlierDeadlineRearmsTheOneTimerAndALaterOneDoesNot() {
        ManualClock clock = new ManualClock();
        TestLane lane = new TestLane(1, WaitOrder.arrival(), clock);
        assertTrue(lane.tryEnterNow(null));
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (int i = 100; i > 0; i--) { // each earlier than the last: re-armed each time
            waiters.add(enter(lane, Ask.until(i * 10L)));
            assertEquals(1, clock.pending(), "never more than one timer pending");
        }
        int armed = clock.scheduled();
        for (int i = 101; i <= 200; i++) { // each later than the earliest: no new timer
            waiters.add(enter(lane, Ask.until(i * 10L)));
        }
        assertEquals(armed, clock.scheduled(), "a later deadline does not re-arm");
        clock.advance(2_000);
        for (CompletableFuture<Void> w : waiters) {
            assertInstanceOf(TimeoutException.class, assertThrows(CompletionException.class, w::join).getCause());
        }
        assertEquals(0, clock.pending());
        lane.release(1);
        assertEquals(1, lane.freePermits());
    }

    /**
     * A unit frees after a waiter's deadline but before its timer has fired (timers run late on a
     * busy machine): the waiter must expire, not be admitted. Found by the deadline gate's demo on a
     * real clock, where a request was admitted a moment after its deadline.
     */
    @Test
    void aWaiterWhoseDeadlinePassedIsNotAdmittedBeforeItsLateTimerFires() {
        ManualClock clock = new ManualClock();
        TestLane lane = new TestLane(1, WaitOrder.arrival(), clock);
        assertTrue(lane.tryEnterNow(null));
        CompletableFuture<Void> late = enter(lane, Ask.until(10));
        CompletableFuture<Void> next = enter(lane, Ask.weight(1));
        clock.moveWithoutTimers(10);
        lane.release(1);
        assertInstanceOf(TimeoutException.class, assertThrows(CompletionException.class, late::join).getCause());
        assertAdmitted(next, "the unit goes to the next waiter");
        lane.release(1);
        assertEquals(1, lane.freePermits());
        assertEquals(0, clock.pending(), "the late timer is disarmed once its waiter expired");
    }

    @Test
    void aDeadlineAlreadyPassedExpiresAtOnceWithoutWaitingForATimer() {
        ManualClock clock = new ManualClock(500);
        TestLane lane = new TestLane(1, WaitOrder.arrival(), clock);
        assertTrue(lane.tryEnterNow(null));
        CompletableFuture<Void> late = enter(lane, Ask.until(500));
        assertInstanceOf(TimeoutException.class, assertThrows(CompletionException.class, late::join).getCause());
        assertEquals(0, clock.pending());
        lane.release(1);
        assertEquals(1, lane.freePermits());
    }

    @Test
    void aDeadlineFarInTheFutureDoesNotOverflowIntoThePast() {
        ManualClock clock = new ManualClock(-1_000); // a clock may read negative
        TestLane lane = new TestLane(1, WaitOrder.arrival(), clock);
        assertTrue(lane.tryEnterNow(null));
        CompletableFuture<Void> far = enter(lane, Ask.until(Long.MAX_VALUE - 1));
        clock.advance(1_000_000_000_000L);
        assertWaiting(far, "centuries away");
        lane.release(1);
        assertAdmitted(far, "admitted, never expired");
        lane.release(1);
    }

    @Test
    void anAdmittedWaiterDoesNotExpireAndCloseDisarmsTheTimer() {
        ManualClock clock = new ManualClock();
        TestLane lane = new TestLane(1, WaitOrder.arrival(), clock);
        assertTrue(lane.tryEnterNow(null));
        CompletableFuture<Void> a = enter(lane, Ask.until(100));
        CompletableFuture<Void> b = enter(lane, Ask.until(200));
        lane.release(1);
        assertAdmitted(a, "admitted before its deadline");
        clock.advance(150);
        assertAdmitted(a, "and stays admitted");
        lane.close();
        assertCancelled(b);
        assertEquals(0, clock.pending(), "close disarmed the timer");
        lane.release(1);
        assertEquals(1, lane.freePermits());
    }

    // ---- arrivals ----

    /** A rule that admits nothing until opened, and records every arrival it is told of. */
    static final class Recorder extends AdmissionEngine {
        final List<Object> arrivals = new ArrayList<>();
        private boolean open;

        Recorder() {
            super(WaitOrder.arrival(), true, null);
        }

        @Override
        protected Object ruleArrived(Object tag) {
            arrivals.add(tag);
            return "stamped " + tag;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            assertTrue(((String) tag).startsWith("stamped "), "decided on the stamped tag");
            return open;
        }

        @Override
        protected boolean ruleCanEnter() {
            return open;
        }

        @Override
        protected void ruleLeave(long released) {}

        @Override
        protected long ruleAdmitted() {
            return 0;
        }

        @Override
        protected void ruleSignal(int count) {
            open = true;
        }
    }

    @Test
    void aRuleThatWatchesArrivalsIsToldEachOneInOrderBeforeAnyDecisionAndHasNoFastPath() {
        Recorder rule = new Recorder();
        assertFalse(rule.tryEnterNow("x"), "no fast path: every arrival is queued and counted");
        assertEquals(List.of(), rule.arrivals);
        List<CompletableFuture<Void>> waiters = new ArrayList<>();
        for (String tag : List.of("a", "b", "c")) {
            waiters.add(Task.<Void>create(rule.waitingDoor(tag)).toCompletableFuture());
        }
        assertEquals(List.of("a", "b", "c"), rule.arrivals, "told at once, though nobody can be admitted");
        waiters.get(1).cancel(false);
        rule.signal(1);
        assertAdmitted(waiters.get(0), "a");
        assertAdmitted(waiters.get(2), "c");
        assertEquals(0, rule.linkedWaiters());
    }

    /** A rule that watches arrivals and admits nobody; its first decision runs a given action. */
    static final class QueuedDuringDecision extends AdmissionEngine {
        final List<Object> arrivals = new ArrayList<>();
        Runnable duringDecision;

        QueuedDuringDecision() {
            super(WaitOrder.arrival(), true, null);
        }

        @Override
        protected Object ruleArrived(Object tag) {
            arrivals.add(tag);
            return tag;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            Runnable r = duringDecision;
            duringDecision = null;
            if (r != null) {
                r.run();
            }
            return false;
        }

        @Override
        protected boolean ruleCanEnter() {
            return false;
        }

        @Override
        protected void ruleLeave(long released) {}

        @Override
        protected long ruleAdmitted() {
            return 0;
        }
    }

    /**
     * Part 5's re-check: a waiter pushed while the owner decides (its own owner CAS fails) is taken
     * by the owner before it lets go (found by mutation: an owner that ignored such pushes left the
     * arrival uncounted; the Lincheck runs reached it only for some rules).
     */
    @Test
    void aWaiterPushedWhileTheOwnerDecidesIsTakenBeforeTheOwnerLetsGo() throws Exception {
        QueuedDuringDecision rule = new QueuedDuringDecision();
        rule.duringDecision = () -> {
            Thread other = Thread.ofPlatform().start(
                    () -> Task.<Void>create(rule.waitingDoor("b")).toCompletableFuture());
            try {
                other.join(); // b is pushed; its owner CAS failed: this thread owns the decision
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        };
        Task.<Void>create(rule.waitingDoor("a")).toCompletableFuture();
        assertEquals(List.of("a", "b"), rule.arrivals, "b, pushed while the owner decided, was taken by its re-check");
        rule.close();
    }

    @Test
    void runOwnedRefusesWhileAnotherThreadOwns() throws Exception {
        TestLane lane = new TestLane(1);
        CompletableFuture<Void> inside = new CompletableFuture<>();
        CompletableFuture<Void> release = new CompletableFuture<>();
        Thread owner = Thread.ofPlatform().start(() -> lane.runOwned(() -> {
            inside.complete(null);
            release.join();
        }));
        inside.join();
        assertThrows(IllegalStateException.class, () -> lane.runOwned(() -> {}));
        release.complete(null);
        owner.join();
        boolean[] ran = {false};
        lane.runOwned(() -> ran[0] = true);
        assertTrue(ran[0], "owned once the other thread let go");
    }

    @Test
    void anExpiredWaiterOfAWeightedLaneGivesBackItsPartialCover() {
        ManualClock clock = new ManualClock();
        TestLane budget = new TestLane(10, WaitOrder.arrival(), clock);
        assertTrue(budget.tryEnterNow(Ask.weight(6)));
        CompletableFuture<Void> w = enter(budget, new Ask(8, 0, 100)); // 4 of 8 covered at once
        clock.advance(100);
        assertInstanceOf(TimeoutException.class, assertThrows(CompletionException.class, w::join).getCause());
        assertEquals(4, budget.freePermits());
        budget.release(6);
        assertEquals(10, budget.freePermits());
        assertInstanceOf(Outcome.Value.class, budget.enter(Ask.weight(10)).outcome().join());
    }

    // ---- rules of time (ruleReadyAt) ----

    /** A rule of time: admits one waiter at a time, each once the clock reads {@code opensAt}. */
    static final class OpensAt extends AdmissionEngine {
        final ManualClock clock;
        long opensAt;
        /** Moves the clock right after the queued waiter's refusal read it, as another thread's tick would. */
        long moveAfterRefusal;
        private int refusals;

        OpensAt(ManualClock clock, long opensAt) {
            super(WaitOrder.arrival(), false, clock);
            this.clock = clock;
            this.opensAt = opensAt;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            if (clock.nanoTime() >= opensAt) {
                return true;
            }
            if (++refusals == 2) { // the first is the fast path's, the second the queued waiter's
                clock.moveWithoutTimers(moveAfterRefusal);
            }
            return false;
        }

        @Override
        protected long ruleReadyAt(Object tag) {
            return opensAt;
        }

        @Override
        protected boolean ruleCanEnter() {
            return clock.nanoTime() >= opensAt;
        }

        @Override
        protected void ruleLeave(long released) {}

        @Override
        protected long ruleAdmitted() {
            return 0;
        }
    }

    @Test
    void aRuleOfTimeIsOfferedAgainByTheOneTimerAtItsReadyTime() {
        ManualClock clock = new ManualClock();
        OpensAt rule = new OpensAt(clock, 100);
        CompletableFuture<Void> a = Task.<Void>create(rule.waitingDoor(null)).toCompletableFuture();
        CompletableFuture<Void> b = Task.<Void>create(rule.waitingDoor(null)).toCompletableFuture();
        assertEquals(1, clock.pending(), "one timer, for the first waiter's ready time");
        clock.advance(99);
        assertWaiting(a, "offered before its ready time");
        clock.advance(1);
        assertAdmitted(a, "not offered again at its ready time");
        assertAdmitted(b, "the rule admits the next one too");
        assertEquals(0, clock.pending());
    }

    /**
     * The clock moves past the ready time between the rule's refusal and the engine's arming of the
     * timer (another thread's tick): the engine must offer the waiter again in the same drain, since
     * no timer would fire for a time already past. Found by this test: the pass returned after the
     * refusal and left the "passed" mark to nobody, and the waiter stayed queued with no timer armed.
     */
    @Test
    void aReadyTimeAlreadyPassedWhenArmedIsOfferedAgainAtOnce() {
        ManualClock clock = new ManualClock();
        OpensAt rule = new OpensAt(clock, 5);
        rule.moveAfterRefusal = 10;
        CompletableFuture<Void> a = Task.<Void>create(rule.waitingDoor(null)).toCompletableFuture();
        assertAdmitted(a, "stranded: its ready time passed before the timer was armed");
        assertEquals(0, clock.pending());
    }
}
