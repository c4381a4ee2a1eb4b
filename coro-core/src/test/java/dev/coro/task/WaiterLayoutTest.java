package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.cancel.CancellationSource;
import dev.coro.cancel.CancellationToken;
import dev.coro.gate.CapacityGate;
import dev.coro.internal.TokenSignals;
import dev.coro.internal.WaitNode;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.AsyncMutex;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * What a suspended task keeps alive (issue 16: at most 96 bytes per waiter on a mutex or a capacity
 * gate): its {@link Fiber} (eleven 4-byte fields with compressed oops: 56 bytes with a 12-byte
 * header) and its {@link AsyncStep} (seven: 40 bytes), and no frame array while it waits with at
 * most one frame; the fiber is its own registration on its cancellation token, so a wait allocates
 * nothing more for that. Pinned as field counts and object shapes, not bytes, so that it holds on
 * any JVM; the bytes are measured by {@code ./coro bench --memory}.
 */
class WaiterLayoutTest {

    @Test
    void aFiberHasElevenInstanceFieldsNoneWiderThanAReference() {
        assertEquals(List.of(
                        "SignalNode.listState", "SignalNode.listNext", "SweptStack.steering", "SignalList.head",
                        "Completion.result", "Fiber.listener", "Fiber.ctx", "Fiber.resume", "Fiber.home",
                        "Fiber.frames", "Fiber.sp"),
                instanceFields(Fiber.class));
        assertNarrow(Fiber.class);
    }

    @Test
    void aStepHasSevenInstanceFieldsNoneWiderThanAReference() {
        assertEquals(List.of(
                        "WaitNode.below", "WaitNode.after", "WaitNode.tag", "WaitNode.hook",
                        "AsyncStep.fiber", "AsyncStep.context", "AsyncStep.result"),
                instanceFields(AsyncStep.class));
        assertNarrow(AsyncStep.class);
    }

    @Test
    void aTaskWaitingOnAMutexIsItsFiberAndItsStepWithItsOneFrameInline() throws Exception {
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        // left-nested, as users chain: two frames are pushed before the lock is reached, one is left
        Task<Integer> waiter = Task.value(0).then(mutex.lock()).then(Task.value(7));
        CompletableFuture<Integer> done = waiter.start(Scheduler.inline()).toCompletableFuture();
        AsyncStep step = queuedStep(mutex);
        Fiber<?> fiber = fiberOf(step);
        Object frames = field(fiber, Fiber.class, "frames");
        assertFalse(frames instanceof Object[], "one frame is held inline, not in an array: " + frames);
        assertInstanceOf(Nodes.FlatMap.class, frames); // the outer then, waiting for the lock's value
        assertEquals(1, field(fiber, Fiber.class, "sp"));
        assertSame(step, field(fiber, Fiber.class, "resume"), "a waiting fiber keeps no node or result in flight, only its step");
        assertNull(field(fiber, sweptStackClass(), "steering"), "no waiter of its own left linked: no steering");

        mutex.unlock(); // hands the lock to the waiter, which resumes inline
        assertEquals(7, done.get(10, TimeUnit.SECONDS));
        assertTrue(mutex.isLocked(), "the waiter took the lock and never gave it back");
    }

    @Test
    void aFiberRegistersOnItsTokenOnceAndEachWaitPublishesOnlyItsStep() throws Exception {
        for (boolean cancelTheLastWait : new boolean[] {true, false}) {
            CancellationSource source = new CancellationSource();
            AtomicReference<Completer<Integer>> completer = new AtomicReference<>();
            TaskHandle<Integer> run = Task.<Integer>create(completer::set).repeat(4).then(Task.value(7))
                    .start(Scheduler.inline(), source.token());
            CancellationToken home = null;
            for (int i = 0; i < 4; i++) {
                AsyncStep step = AsyncStep.of(completer.get());
                Fiber<?> fiber = fiberOf(step);
                assertSame(step, field(fiber, Fiber.class, "resume"), "wait " + i + " publishes its step to the canceller");
                home = (CancellationToken) field(fiber, Fiber.class, "home");
                assertNotNull(home, "the fiber registered on its run's token");
                assertEquals(1, TokenSignals.of(home).linkedCount(), "one registration, the fiber's, however many waits");
                if (i < 3 || !cancelTheLastWait) {
                    completer.get().complete(i); // the fiber resumes inline and waits again
                }
            }
            if (cancelTheLastWait) {
                AsyncStep last = AsyncStep.of(completer.get());
                source.cancel(); // reaches the fourth wait through the fiber's one registration
                assertTrue(last.isSettled(), "the wait in progress was cancelled");
                assertThrows(CancellationException.class, run::join);
            } else {
                assertEquals(7, run.join());
                assertEquals(0, TokenSignals.of(home).linkedCount(), "the finished fiber took its registration back");
            }
        }
    }

    @Test
    void aTaskWaitingWithinACapacityGateHoldsNoFrameArray() throws Exception {
        CapacityGate gate = new CapacityGate(1);
        Promise<Void> holder = new Promise<>();
        CompletableFuture<Void> first = gate.within(holder.task()).start(Scheduler.inline()).toCompletableFuture();
        AtomicReference<Completer<Integer>> inside = new AtomicReference<>();
        Task<Integer> waiter = Task.value(0).then(gate.within(Task.<Integer>create(inside::set)));
        CompletableFuture<Integer> done = waiter.start(Scheduler.inline()).toCompletableFuture();
        assertNull(inside.get(), "the second task waits for the gate");
        Fiber<?> fiber = fiberOf(onlyWaiterOf(gate));
        assertFalse(field(fiber, Fiber.class, "frames") instanceof Object[]);

        holder.complete(null);
        assertNull(first.get(10, TimeUnit.SECONDS));
        assertNotNull(inside.get(), "admitted once the first left");
        inside.get().complete(5);
        assertEquals(5, done.get(10, TimeUnit.SECONDS));
        assertEquals(1, gate.available());
    }

    @Test
    void aTaskWaitingTwoFramesDeepKeepsItsArrayAndResumesThroughIt() throws Exception {
        AtomicReference<Completer<Integer>> completer = new AtomicReference<>();
        Task<Integer> waiter = Task.value(1).then(Task.<Integer>create(completer::set))
                .map(x -> x + 1).map(x -> x * 10);
        CompletableFuture<Integer> done = waiter.start(Scheduler.inline()).toCompletableFuture();
        Fiber<?> fiber = fiberOf(AsyncStep.of(completer.get()));
        Object frames = field(fiber, Fiber.class, "frames");
        assertInstanceOf(Object[].class, frames, "two frames wait: the array holds them");
        assertEquals(2, field(fiber, Fiber.class, "sp"));
        completer.get().complete(4);
        assertEquals(50, done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aStepIsTheContinuationItsResumptionRuns() throws Exception {
        AtomicReference<Completer<String>> completer = new AtomicReference<>();
        List<Runnable> submitted = new ArrayList<>();
        Scheduler collecting = new Scheduler() {
            @Override
            public void execute(Runnable r) {
                submitted.add(r);
            }

            @Override
            public Cancellable schedule(Runnable r, Duration delay) {
                throw new UnsupportedOperationException("no timers here");
            }

            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public boolean isCurrent() {
                return false; // never inline: every resumption is submitted, so the test sees it
            }
        };
        CompletableFuture<String> done = Task.<String>create(completer::set).map(s -> s + "!")
                .start(collecting).toCompletableFuture();
        assertEquals(1, submitted.size(), "the start submits the fiber");
        submitted.remove(0).run(); // the fiber runs, and suspends in the body
        completer.get().complete("resumed");
        assertEquals(1, submitted.size(), "the completion submits one continuation");
        assertSame(completer.get(), submitted.get(0), "the continuation is the step itself");
        assertFalse(done.isDone());
        submitted.remove(0).run();
        assertEquals("resumed!", done.get(10, TimeUnit.SECONDS));
    }

    @Test
    void aStrayRunOfAPendingStepIsRefusedAndChangesNothing() throws Exception {
        AtomicReference<Completer<String>> completer = new AtomicReference<>();
        CompletableFuture<String> done = Task.<String>create(completer::set).map(s -> s + "?")
                .start(Scheduler.inline()).toCompletableFuture();
        Runnable stray = (Runnable) completer.get(); // a completer is its step, and so a Runnable
        IllegalStateException e = assertThrows(IllegalStateException.class, stray::run);
        assertTrue(e.getMessage().contains("only once it has completed"), e.getMessage());
        assertFalse(done.isDone(), "the task still waits");
        completer.get().complete("ok");
        assertEquals("ok?", done.get(10, TimeUnit.SECONDS));
    }

    // ---- helpers ----

    private static Class<?> sweptStackClass() {
        return Fiber.class.getSuperclass().getSuperclass().getSuperclass(); // Completion, SignalList, SweptStack
    }

    /** The instance fields of {@code type} and its superclasses, root first, as Class.field. */
    private static List<String> instanceFields(Class<?> type) {
        List<Class<?>> chain = new ArrayList<>();
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            chain.add(0, c);
        }
        List<String> out = new ArrayList<>();
        for (Class<?> c : chain) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers())) {
                    out.add(c.getSimpleName() + "." + f.getName());
                }
            }
        }
        return out;
    }

    /** Every instance field is a reference or an int or narrower: 4 bytes with compressed oops. */
    private static void assertNarrow(Class<?> type) {
        for (Class<?> c = type; c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (!Modifier.isStatic(f.getModifiers())) {
                    assertFalse(f.getType() == long.class || f.getType() == double.class,
                            c.getSimpleName() + "." + f.getName() + " takes 8 bytes");
                }
            }
        }
    }

    private static Object field(Object target, Class<?> owner, String name) throws ReflectiveOperationException {
        Field f = owner.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(target);
    }

    private static Fiber<?> fiberOf(AsyncStep step) throws ReflectiveOperationException {
        return (Fiber<?>) field(step, AsyncStep.class, "fiber");
    }

    /** The one waiter queued on the mutex's engine: the newest node of its intake. */
    private static AsyncStep queuedStep(AsyncMutex mutex) throws ReflectiveOperationException {
        return newestInIntake(field(mutex, AsyncMutex.class, "lane"));
    }

    private static AsyncStep onlyWaiterOf(CapacityGate gate) throws ReflectiveOperationException {
        Class<?> admissionGate = CapacityGate.class.getSuperclass().getSuperclass();
        return newestInIntake(field(gate, admissionGate, "engine"));
    }

    private static AsyncStep newestInIntake(Object engine) throws ReflectiveOperationException {
        Object intake = field(engine, dev.coro.internal.AdmissionEngine.class, "intake");
        Object state = ((dev.coro.internal.WaitQueue) intake).state();
        assertInstanceOf(WaitNode.class, state, "a waiter is queued");
        return (AsyncStep) state;
    }
}
