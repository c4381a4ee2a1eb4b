package dev.coro.cancel;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Single-threaded tests of {@link CancellationToken}, {@link CancellationSource} and {@link Registration}. */
class CancellationTokenTest {
    /** The list's sweep threshold constant (32) plus one: at most 2 * live + SLACK stay linked. */
    private static final int SLACK = 33;

    /** A callback that counts its runs and remembers the thread of the last one. */
    private static final class Counter implements Runnable {
        final AtomicInteger runs = new AtomicInteger();
        final AtomicReference<Thread> ranOn = new AtomicReference<>();

        @Override
        public void run() {
            ranOn.set(Thread.currentThread());
            runs.incrementAndGet();
        }
    }

    /** Runs {@code body} with an uncaught-exception handler on this thread that collects into the list. */
    private static List<Throwable> collectingUncaught(Runnable body) {
        List<Throwable> seen = new ArrayList<>();
        Thread current = Thread.currentThread();
        Thread.UncaughtExceptionHandler saved = current.getUncaughtExceptionHandler();
        current.setUncaughtExceptionHandler((t, e) -> {
            assertSame(current, t);
            seen.add(e);
        });
        try {
            body.run();
        } finally {
            current.setUncaughtExceptionHandler(saved);
        }
        return seen;
    }

    @Test
    void cancelRunsEachRegisteredCallbackOnceOnTheCancellingThread() {
        CancellationSource source = new CancellationSource();
        CancellationToken token = source.token();
        Counter a = new Counter();
        Counter b = new Counter();
        token.register(a);
        token.register(b);
        assertEquals(0, a.runs.get());
        assertFalse(token.isCancelled());
        assertFalse(source.isCancelled());

        assertTrue(source.cancel());
        assertEquals(1, a.runs.get());
        assertEquals(1, b.runs.get());
        assertSame(Thread.currentThread(), a.ranOn.get());
        assertTrue(token.isCancelled());
        assertTrue(source.isCancelled());
        assertEquals(0, token.linkedCount(), "a cancelled token keeps no registrations");
    }

    @Test
    void cancelReturnsTrueOnlyOnce() {
        CancellationSource source = new CancellationSource();
        Counter c = new Counter();
        source.token().register(c);
        assertTrue(source.cancel());
        for (int i = 0; i < 3; i++) {
            assertFalse(source.cancel());
        }
        assertEquals(1, c.runs.get(), "later cancels run nothing");
    }

    @Test
    void throwIfCancelledThrowsOnlyOnceCancelled() {
        CancellationSource source = new CancellationSource();
        assertDoesNotThrow(source.token()::throwIfCancelled);
        source.cancel();
        CancellationException e = assertThrows(CancellationException.class, source.token()::throwIfCancelled);
        assertEquals("cancelled", e.getMessage());
    }

    @Test
    void callbackRegisteredAfterCancelRunsAtOnceExactlyOnce() {
        CancellationSource source = new CancellationSource();
        source.cancel();
        Counter late = new Counter();
        Registration r = source.token().register(late);
        assertEquals(1, late.runs.get(), "ran during register");
        assertSame(Thread.currentThread(), late.ranOn.get());
        assertFalse(r.unregister(), "it ran: unregister cannot take it back");
        assertFalse(source.cancel());
        assertEquals(1, late.runs.get(), "still once");
        assertEquals(0, source.token().linkedCount());
    }

    @Test
    void unregisterBeforeCancelTakesTheCallbackBack() {
        CancellationSource source = new CancellationSource();
        Counter kept = new Counter();
        Counter taken = new Counter();
        source.token().register(kept);
        Registration r = source.token().register(taken);
        assertTrue(r.unregister());
        assertFalse(r.unregister(), "second unregister");
        source.cancel();
        assertEquals(0, taken.runs.get());
        assertEquals(1, kept.runs.get());
        assertFalse(r.unregister(), "after cancel");
    }

    @Test
    void closeUnregistersInTryWithResources() {
        CancellationSource source = new CancellationSource();
        Counter c = new Counter();
        try (Registration r = source.token().register(c)) {
            assertEquals(1, source.token().linkedCount());
            assertNotSame(Registration.NONE, r);
        }
        assertEquals(0, source.token().linkedCount());
        source.cancel();
        assertEquals(0, c.runs.get());
    }

    @Test
    void unregisterAfterCancelReturnsFalse() {
        CancellationSource source = new CancellationSource();
        Counter c = new Counter();
        Registration r = source.token().register(c);
        source.cancel();
        assertFalse(r.unregister());
        assertEquals(1, c.runs.get());
    }

    /**
     * Regression (found by SignalListLincheckTest): a callback run by cancel() sees the token
     * cancelled and unregisters a callback that cancel() has not reached yet. Unregister used to
     * return {@code true} and the other callback was skipped, although the cancel was visible.
     */
    @Test
    void unregisterAfterObservedCancelLosesToCanceller() {
        CancellationSource source = new CancellationSource();
        CancellationToken token = source.token();
        Counter older = new Counter();
        Registration olderRegistration = token.register(older);
        AtomicInteger answer = new AtomicInteger(-1);
        token.register(() -> { // runs first: newest first
            assertTrue(token.isCancelled());
            answer.set(olderRegistration.unregister() ? 1 : 0);
        });
        source.cancel();
        assertEquals(0, answer.get(), "unregister after an observed cancel");
        assertEquals(1, older.runs.get());
    }

    @Test
    void throwingCallbackGoesToTheUncaughtExceptionHandlerAndDoesNotStopTheOthers() {
        CancellationSource source = new CancellationSource();
        Counter first = new Counter();
        Counter last = new Counter();
        IllegalStateException boom = new IllegalStateException("boom");
        source.token().register(first);
        source.token().register(() -> {
            throw boom;
        });
        source.token().register(last);
        AtomicReference<Boolean> cancelled = new AtomicReference<>();
        List<Throwable> seen = collectingUncaught(() -> cancelled.set(source.cancel()));
        assertEquals(List.of(boom), seen);
        assertTrue(cancelled.get(), "cancel() returned normally, and true");
        assertEquals(1, first.runs.get());
        assertEquals(1, last.runs.get());
    }

    @Test
    void throwingCallbackRegisteredAfterCancelGoesToTheUncaughtExceptionHandler() {
        CancellationSource source = new CancellationSource();
        source.cancel();
        IllegalStateException boom = new IllegalStateException("late boom");
        AtomicReference<Registration> registration = new AtomicReference<>();
        List<Throwable> seen = collectingUncaught(() -> registration.set(source.token().register(() -> {
            throw boom;
        })));
        assertEquals(List.of(boom), seen);
        assertFalse(registration.get().unregister());
    }

    @Test
    void noneTokenNeverCancelsAndKeepsNothing() {
        CancellationToken none = CancellationToken.NONE;
        assertFalse(none.canBeCancelled());
        assertTrue(new CancellationSource().token().canBeCancelled());
        Counter c = new Counter();
        Registration r = none.register(c);
        assertSame(Registration.NONE, r);
        assertEquals(0, none.linkedCount());
        assertFalse(none.isCancelled());
        assertDoesNotThrow(none::throwIfCancelled);
        assertEquals(0, c.runs.get());
        assertFalse(Registration.NONE.unregister());
        assertEquals("CancellationToken[never]", none.toString());
    }

    @Test
    void nullArgumentsAreRejectedWithTheirNames() {
        CancellationSource source = new CancellationSource();
        NullPointerException e1 = assertThrows(NullPointerException.class, () -> source.token().register(null));
        assertEquals("callback", e1.getMessage());
        NullPointerException e2 = assertThrows(NullPointerException.class, () -> CancellationToken.NONE.register(null));
        assertEquals("callback", e2.getMessage());
        NullPointerException e3 = assertThrows(NullPointerException.class, () -> CancellationSource.linkedTo(null));
        assertEquals("parent", e3.getMessage());
        assertEquals(0, source.token().linkedCount());
    }

    @Test
    void toStringSaysTheState() {
        CancellationSource source = new CancellationSource();
        assertEquals("CancellationToken[active]", source.token().toString());
        assertEquals("CancellationSource[active]", source.toString());
        source.cancel();
        assertEquals("CancellationToken[cancelled]", source.token().toString());
        assertEquals("CancellationSource[cancelled]", source.toString());
    }

    // ---- memory ----

    @Test
    void aMillionRegisterUnregisterPairsKeepMemoryFlat() {
        CancellationSource source = new CancellationSource();
        CancellationToken token = source.token();
        Counter longLived = new Counter();
        token.register(longLived);
        Counter shortLived = new Counter();
        for (int i = 0; i < 1_000_000; i++) {
            Registration r = token.register(shortLived);
            assertTrue(r.unregister());
            if ((i & 0xFFF) == 0) {
                assertEquals(1, token.linkedCount(), "after " + i + " pairs");
            }
        }
        assertEquals(1, token.linkedCount());
        source.cancel();
        assertEquals(1, longLived.runs.get());
        assertEquals(0, shortLived.runs.get());
    }

    /** register A, register B, unregister A, register C, unregister B, ...: each removal is buried. */
    @Test
    void interleavedRegisterUnregisterKeepsMemoryBounded() {
        CancellationSource source = new CancellationSource();
        CancellationToken token = source.token();
        Counter removed = new Counter();
        Registration previous = token.register(removed);
        int maxLinked = 0;
        for (int i = 0; i < 1_000_000; i++) {
            Registration next = token.register(removed);
            assertTrue(previous.unregister());
            previous = next;
            if ((i & 0x7F) == 0) {
                maxLinked = Math.max(maxLinked, token.linkedCount());
            }
        }
        assertTrue(maxLinked <= 2 + 2 + SLACK, "max linked " + maxLinked);
        assertTrue(previous.unregister());
        source.cancel();
        assertEquals(0, removed.runs.get(), "every callback was taken back");
    }

    /** FIFO windows of k registrations: the oldest goes each step. */
    @Test
    void fifoWindowsKeepMemoryBoundedByTheLiveCount() {
        for (int k : new int[] {2, 16, 256}) {
            CancellationSource source = new CancellationSource();
            CancellationToken token = source.token();
            ArrayDeque<Registration> window = new ArrayDeque<>();
            Counter c = new Counter();
            for (int i = 0; i < k; i++) {
                window.addLast(token.register(c));
            }
            int maxLinked = 0;
            for (int i = 0; i < 200_000; i++) {
                window.addLast(token.register(c));
                assertTrue(window.removeFirst().unregister());
                if (k <= 16 || (i & 7) == 0) {
                    maxLinked = Math.max(maxLinked, token.linkedCount());
                }
            }
            assertTrue(maxLinked <= 2 * (k + 1) + SLACK, "k=" + k + ": max linked " + maxLinked);
            source.cancel();
            assertEquals(k, c.runs.get(), "k=" + k + ": exactly the window ran");
        }
    }

    /**
     * Random registers and unregisters (seeded; the seed is in every message): memory stays bounded
     * by the live registrations, and unregister's answer matches whether the callback ran.
     */
    @Test
    void randomRegisterUnregisterKeepsMemoryBoundedAndAnswersTruthfully() {
        for (int trial = 0; trial < 5; trial++) {
            long seed = new SplittableRandom().nextLong();
            String context = "seed " + seed;
            SplittableRandom random = new SplittableRandom(seed);
            int cap = 1 + random.nextInt(300);
            CancellationSource source = new CancellationSource();
            CancellationToken token = source.token();
            List<Registration> live = new ArrayList<>();
            List<Counter> liveCallbacks = new ArrayList<>();
            List<Counter> takenBack = new ArrayList<>();
            for (int i = 0; i < 100_000; i++) {
                if (live.isEmpty() || (live.size() < cap && random.nextInt(3) != 0)) {
                    Counter c = new Counter();
                    live.add(token.register(c));
                    liveCallbacks.add(c);
                } else {
                    int at = random.nextInt(live.size());
                    Registration r = live.get(at);
                    Counter c = liveCallbacks.get(at);
                    int last = live.size() - 1;
                    live.set(at, live.get(last));
                    liveCallbacks.set(at, liveCallbacks.get(last));
                    live.remove(last);
                    liveCallbacks.remove(last);
                    assertTrue(r.unregister(), context);
                    if (takenBack.size() < 5_000) {
                        takenBack.add(c);
                    }
                }
                if ((i & 0xF) == 0) {
                    int linked = token.linkedCount();
                    assertTrue(linked >= live.size() && linked <= 2 * live.size() + SLACK,
                            context + ": step " + i + ", linked " + linked + ", live " + live.size());
                }
            }
            // Half of the live ones are taken back after the cancel: too late, they ran.
            assertTrue(source.cancel(), context);
            for (int i = 0; i < live.size(); i++) {
                assertFalse(i % 2 == 0 && live.get(i).unregister(), context + ": unregister after cancel");
                assertEquals(1, liveCallbacks.get(i).runs.get(), context);
            }
            for (Counter c : takenBack) {
                assertEquals(0, c.runs.get(), context + ": a callback taken back ran");
            }
        }
    }

    // ---- linked sources ----

    @Test
    void linkedSourceIsCancelledWithItsParent() {
        CancellationSource parent = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(parent.token());
        CancellationSource grandchild = CancellationSource.linkedTo(child.token());
        Counter c = new Counter();
        grandchild.token().register(c);
        assertFalse(child.isCancelled());

        assertTrue(parent.cancel());
        assertTrue(child.isCancelled());
        assertTrue(grandchild.isCancelled());
        assertEquals(1, c.runs.get());
        assertFalse(child.cancel(), "the parent cancelled it already");
        assertFalse(grandchild.cancel());
        assertDoesNotThrow(child::close);
    }

    @Test
    void cancellingAChildLeavesTheParentAloneAndUnlinksTheChild() {
        CancellationSource parent = new CancellationSource();
        int baseline = parent.token().linkedCount();
        CancellationSource child = CancellationSource.linkedTo(parent.token());
        assertEquals(baseline + 1, parent.token().linkedCount());
        assertTrue(child.cancel());
        assertFalse(parent.isCancelled());
        assertEquals(baseline, parent.token().linkedCount(), "the child's cancel unlinked it");
        assertTrue(parent.cancel());
    }

    /** Regression: the parent's callback called cancel(), which read the link field before it was set. */
    @Test
    void linkedToCancelledParentIsCancelledAtOnce() {
        CancellationSource parent = new CancellationSource();
        parent.cancel();
        CancellationSource child = assertDoesNotThrow(() -> CancellationSource.linkedTo(parent.token()));
        assertTrue(child.isCancelled());
        assertFalse(child.cancel());
        assertDoesNotThrow(child::close);
        assertEquals(0, parent.token().linkedCount());
    }

    @Test
    void linkedToNoneIsAnOrdinarySource() {
        CancellationSource child = CancellationSource.linkedTo(CancellationToken.NONE);
        assertFalse(child.isCancelled());
        assertTrue(child.cancel());
        child.close();
    }

    @Test
    void closedChildIsNotCancelledByItsParent() {
        CancellationSource parent = new CancellationSource();
        CancellationSource child = CancellationSource.linkedTo(parent.token());
        Counter c = new Counter();
        child.token().register(c);
        child.close();
        child.close(); // idempotent
        parent.cancel();
        assertFalse(child.isCancelled());
        assertEquals(0, c.runs.get());
        assertTrue(child.cancel(), "a closed child still cancels itself");
        assertEquals(1, c.runs.get());
    }

    @Test
    void closingManyLinkedChildrenReturnsTheParentToBaseline() {
        CancellationSource parent = new CancellationSource();
        CancellationToken token = parent.token();
        Counter own = new Counter();
        token.register(own);
        token.register(own);
        int baseline = token.linkedCount();
        assertEquals(2, baseline);

        // Creation order (each close buries the rest), reverse order, and a seeded shuffle.
        long seed = new SplittableRandom().nextLong();
        SplittableRandom random = new SplittableRandom(seed);
        for (String order : new String[] {"fifo", "lifo", "random"}) {
            List<CancellationSource> children = new ArrayList<>();
            for (int i = 0; i < 10_000; i++) {
                children.add(CancellationSource.linkedTo(token));
            }
            assertEquals(baseline + 10_000, token.linkedCount(), order);
            if (order.equals("lifo")) {
                Collections.reverse(children);
            } else if (order.equals("random")) {
                for (int i = children.size() - 1; i > 0; i--) {
                    Collections.swap(children, i, random.nextInt(i + 1));
                }
            }
            for (CancellationSource child : children) {
                child.close();
            }
            assertEquals(baseline, token.linkedCount(), order + ", seed " + seed);
        }
        parent.cancel();
        assertEquals(2, own.runs.get());
    }

    /**
     * Children closed beneath a registration made after them cannot be popped; sweeps must unlink
     * them. Before the sweep threshold followed the current live count, about 10,000 stayed linked.
     */
    @Test
    void closedChildrenBuriedUnderALaterRegistrationStayBounded() {
        CancellationSource parent = new CancellationSource();
        CancellationToken token = parent.token();
        List<CancellationSource> children = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            children.add(CancellationSource.linkedTo(token));
        }
        Counter later = new Counter();
        token.register(later);
        for (CancellationSource child : children) {
            child.close();
        }
        int linked = token.linkedCount();
        assertTrue(linked <= 2 * 1 + SLACK, "linked " + linked + " with one live registration");
        parent.cancel();
        assertEquals(1, later.runs.get());
        for (CancellationSource child : children) {
            assertFalse(child.isCancelled());
        }
    }
}
