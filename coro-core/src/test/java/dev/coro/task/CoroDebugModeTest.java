package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.Cancellable;
import dev.coro.channel.Channel;
import dev.coro.gate.CapacityGate;
import dev.coro.io.AsyncChannel;
import dev.coro.io.EventLoop;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.sync.AsyncMutex;
import dev.coro.sync.Event;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, diagnostics: the task dump and assembly traces with debug mode on. Runs in the debug
 * surefire execution (a JVM started with {@code -Dcoro.debug=true}: the switch is a constant read
 * once); a focused run passes {@code -Dcoro.debug=true} itself.
 */
class CoroDebugModeTest {
    /** The runs a test started and must end, so that no test sees another's waiters. */
    private final List<TaskHandle<?>> started = new ArrayList<>();
    /** Ids above this belong to the running test (ids increase; tests run one at a time). */
    private long baseline;

    @BeforeAll
    static void debugModeIsOn() {
        assertTrue(CoroDebug.isEnabled(), "run this class with -Dcoro.debug=true (the debug surefire execution does)");
    }

    @BeforeEach
    void baseline() {
        TaskHandle<Object> probe = Task.never().start();
        baseline = ids(mine()).stream().mapToLong(Long::longValue).max().orElseThrow();
        probe.cancel();
    }

    @AfterEach
    void endRuns() {
        started.forEach(TaskHandle::cancel);
    }

    private <T> TaskHandle<T> start(Task<T> task) {
        TaskHandle<T> h = task.start(Scheduler.inline());
        started.add(h);
        return h;
    }

    /** The suspended tasks started since the baseline. */
    private List<CoroDebug.SuspendedTask> mine() {
        return CoroDebug.suspendedTasks().stream().filter(t -> t.id() > baseline).toList();
    }

    private static List<Long> ids(List<CoroDebug.SuspendedTask> tasks) {
        return tasks.stream().map(CoroDebug.SuspendedTask::id).toList();
    }

    private static Map<CoroDebug.WaitKind, CoroDebug.SuspendedTask> byKind(List<CoroDebug.SuspendedTask> tasks) {
        return tasks.stream().collect(Collectors.toMap(t -> t.waitingOn().kind(), Function.identity()));
    }

    @Test
    void theDumpListsATaskWaitingOnEachKindOfPrimitive() throws Exception {
        CapacityGate gate = new CapacityGate(1);
        start(gate.within(Task.never()));                 // holds the gate
        start(gate.within(Task.value("second")));         // waits on it
        AsyncMutex mutex = new AsyncMutex();
        assertTrue(mutex.tryLock());
        start(mutex.lock());
        Event<String> event = new Event<>();
        start(event.await());
        Channel<String> receiving = Channel.rendezvous();
        start(receiving.receive());
        Channel<String> sending = Channel.rendezvous();
        start(sending.send("x"));

        Map<CoroDebug.WaitKind, CoroDebug.SuspendedTask> dump = byKind(
                mine().stream().filter(t -> t.waitingOn().kind() != CoroDebug.WaitKind.OTHER).toList());
        assertEquals(List.of(CoroDebug.WaitKind.GATE, CoroDebug.WaitKind.MUTEX, CoroDebug.WaitKind.EVENT,
                CoroDebug.WaitKind.CHANNEL_SEND, CoroDebug.WaitKind.CHANNEL_RECEIVE).stream().sorted().toList(),
                dump.keySet().stream().sorted().toList());
        assertTrue(dump.get(CoroDebug.WaitKind.GATE).waitingOn().description().contains(gate.toString()),
                dump.get(CoroDebug.WaitKind.GATE).toString());
        assertTrue(dump.get(CoroDebug.WaitKind.GATE).waitingOn().description().startsWith("CapacityGate"));
        assertTrue(dump.get(CoroDebug.WaitKind.MUTEX).waitingOn().description().startsWith("AsyncMutex"));
        assertTrue(dump.get(CoroDebug.WaitKind.MUTEX).waitingOn().description().contains(mutex.toString()));
        assertTrue(dump.get(CoroDebug.WaitKind.EVENT).waitingOn().description().startsWith("Event"));
        assertTrue(dump.get(CoroDebug.WaitKind.CHANNEL_RECEIVE).waitingOn().description().contains(receiving.toString()));
        assertTrue(dump.get(CoroDebug.WaitKind.CHANNEL_SEND).waitingOn().description().contains(sending.toString()));
        for (CoroDebug.SuspendedTask t : dump.values()) {
            assertNull(t.waitingOn().remaining(), t.toString());
            assertEquals(String.valueOf(Scheduler.inline()), t.scheduler());
            assertTrue(t.suspendedAtNanos() != 0, t.toString());
        }
    }

    @Test
    void aDelayIsListedWithTheTimeLeftOnItsSchedulersClock() {
        ManualClock clock = new ManualClock();
        start(Task.delay(Duration.ofMillis(250)).startOn(clock));
        start(Task.delay(2, TimeUnit.SECONDS).startOn(clock));
        List<CoroDebug.SuspendedTask> timers = mine();
        assertEquals(2, timers.size(), timers.toString());
        assertEquals(CoroDebug.WaitKind.TIMER, timers.get(0).waitingOn().kind());
        assertEquals(Duration.ofMillis(250), timers.get(0).waitingOn().remaining());
        assertEquals(Duration.ofSeconds(2), timers.get(1).waitingOn().remaining());
        assertEquals(clock.toString(), timers.get(0).scheduler());
        assertTrue(timers.get(0).waitingOn().description().contains(clock.toString()));

        clock.now = TimeUnit.MILLISECONDS.toNanos(100);
        assertEquals(Duration.ofMillis(150), mine().get(0).waitingOn().remaining());
        assertTrue(CoroDebug.dump().contains("TIMER: Task.delay on " + clock + ", due in 150 ms"), CoroDebug.dump());
    }

    @Test
    void aJoinNamesTheTaskItWaitsFor() {
        TaskHandle<Object> target = start(Task.never());
        start(target.task().map(x -> x));
        Promise<String> promise = new Promise<>();
        start(promise.task());
        List<CoroDebug.SuspendedTask> dump = mine();
        assertEquals(3, dump.size(), dump.toString());
        long targetId = dump.get(0).id();
        assertEquals(CoroDebug.WaitKind.OTHER, dump.get(0).waitingOn().kind());
        assertEquals(new CoroDebug.WaitingOn(CoroDebug.WaitKind.JOIN, "task #" + targetId, null), dump.get(1).waitingOn());
        assertEquals(new CoroDebug.WaitingOn(CoroDebug.WaitKind.JOIN, "a promise", null), dump.get(2).waitingOn());
    }

    @Test
    void anIoReadOnAPipeIsListedWithItsChannel() throws Exception {
        try (EventLoop loop = EventLoop.start(); Pipe.SourceChannel source = Pipe.open().source()) {
            AsyncChannel channel = AsyncChannel.open(loop, source);
            start(channel.read(ByteBuffer.allocate(1))); // from this thread: armed before start returns
            List<CoroDebug.SuspendedTask> dump = mine();
            assertEquals(1, dump.size(), dump.toString());
            assertEquals(new CoroDebug.WaitingOn(CoroDebug.WaitKind.IO, "read on " + source, null),
                    dump.get(0).waitingOn());
            channel.close();
        }
    }

    @Test
    void aCompletedTaskLeavesTheDump() {
        Event<String> event = new Event<>();
        TaskHandle<String> waiter = start(event.await());
        assertEquals(1, mine().size());
        event.set("go");
        assertEquals("go", waiter.join());
        assertEquals(List.of(), mine());
        assertFalse(CoroDebug.dump().contains("EVENT"), CoroDebug.dump());
    }

    @Test
    void aCancelledWaiterLeavesTheDump() {
        CapacityGate gate = new CapacityGate(1);
        start(gate.within(Task.never()));
        TaskHandle<String> waiter = start(gate.within(Task.value("never admitted")));
        List<Long> before = ids(mine());
        assertEquals(2, before.size()); // the holder waits in never(), the waiter on the gate
        waiter.cancel();
        assertThrows(java.util.concurrent.CancellationException.class, waiter::join);
        List<CoroDebug.SuspendedTask> after = mine();
        assertEquals(List.of(before.get(0)), ids(after));
        assertEquals(CoroDebug.WaitKind.OTHER, after.get(0).waitingOn().kind());
    }

    @Test
    void theTextHasOneEntryPerStructuredTask() {
        start(new Event<String>().await());
        start(Channel.<String>rendezvous().receive());
        List<CoroDebug.SuspendedTask> tasks = mine();
        String text = CoroDebug.dump();
        assertTrue(text.startsWith("Coro task dump: "), text);
        for (CoroDebug.SuspendedTask t : tasks) {
            String head = "task #" + t.id() + " on " + t.scheduler() + ", suspended for ";
            int at = text.indexOf(head);
            assertTrue(at >= 0, text);
            String entry = text.substring(at);
            assertTrue(entry.contains(", waiting on " + t.waitingOn() + "\n    created at " + t.creationSite().get(0)),
                    entry);
            for (StackTraceElement f : t.creationSite()) {
                assertTrue(entry.contains(f.toString()), f + " in " + entry);
            }
        }
        assertEquals(CoroDebug.render(tasks).lines().count(),
                tasks.stream().mapToLong(t -> t.toString().lines().count()).sum() + 1);
    }

    @Test
    void theCreationSiteNamesTheMethodThatStartedTheTask() {
        start(new Event<String>().await());
        CoroDebug.SuspendedTask t = mine().get(0);
        StackTraceElement top = t.creationSite().get(0);
        assertEquals(CoroDebugModeTest.class.getName(), top.getClassName(), t.creationSite().toString());
        assertEquals("start", top.getMethodName()); // this class's helper, then the test method
        assertEquals("theCreationSiteNamesTheMethodThatStartedTheTask", t.creationSite().get(1).getMethodName());
        for (StackTraceElement f : t.creationSite()) {
            assertFalse(f.getClassName().startsWith("dev.coro.task.Fiber")
                    || f.getClassName().startsWith("dev.coro.task.TaskHandle")
                    || f.getClassName().startsWith("jdk.internal.reflect"), f.toString());
        }
        assertTrue(t.creationSite().size() <= 12);
    }

    @Test
    void dumpingWhileTasksWaitAndCompleteOnAPoolIsSafe() throws Exception {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Event<Integer> go = new Event<>();
            List<TaskHandle<Integer>> waiters = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                waiters.add(go.await().map(x -> x + 1).startOn(pool).start());
            }
            for (int i = 0; i < 10; i++) {
                assertTrue(CoroDebug.dump().startsWith("Coro task dump: "));
            }
            go.set(1);
            for (int i = 0; i < 10; i++) { // while the pool resumes and completes them
                for (CoroDebug.SuspendedTask t : CoroDebug.suspendedTasks()) {
                    assertNotNull(t.waitingOn().description());
                }
            }
            for (TaskHandle<Integer> h : waiters) {
                assertEquals(2, h.toCompletableFuture().get(10, TimeUnit.SECONDS));
            }
            assertEquals(List.of(), mine()); // a run leaves the registry before its result is published
        }
    }

    @Test
    void aTaskNobodyCanResumeIsNotKeptAliveByTheRegistry() {
        long id = startAndForget();
        assertTrue(ids(mine()).contains(id));
        for (int i = 0; i < 50 && ids(mine()).contains(id); i++) {
            System.gc(); // the only referent is the registry's weak key: a full collection clears it
        }
        assertFalse(ids(mine()).contains(id));
    }

    /** Starts a wait on a gate and an event that nothing references once this returns. */
    private long startAndForget() {
        CapacityGate gate = new CapacityGate(1);
        gate.within(Task.never()).start(Scheduler.inline());
        Event<String> never = new Event<>();
        never.await().start(Scheduler.inline());
        return mine().stream().filter(t -> t.waitingOn().kind() == CoroDebug.WaitKind.EVENT).findFirst()
                .orElseThrow().id();
    }

    // ---- assembly traces ----

    private static Task<Integer> level3() {
        return Task.value(1).map(x -> {
            throw new IllegalStateException("boom");
        });
    }

    private static Task<Integer> level2() {
        return level3().map(x -> x + 1);
    }

    private static Task<Integer> level1() {
        return level2().flatMap(x -> Task.value(x * 2));
    }

    private static AssemblyTrace traceOf(Throwable e) {
        List<AssemblyTrace> traces = Arrays.stream(e.getSuppressed())
                .filter(AssemblyTrace.class::isInstance).map(AssemblyTrace.class::cast).toList();
        assertEquals(1, traces.size(), "one assembly trace on " + e + ": " + Arrays.toString(e.getSuppressed()));
        return traces.get(0);
    }

    private static List<String> methods(AssemblyTrace trace) {
        return trace.sites().stream().map(StackTraceElement::getMethodName).toList();
    }

    @Test
    void anErrorThreeLevelsDownCarriesTheMethodsThatBuiltTheChain() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> level1().join());
        AssemblyTrace trace = traceOf(e);
        assertEquals(List.of("level3", "level2", "level1"), methods(trace).subList(0, 3), trace.sites().toString());
        for (StackTraceElement site : trace.sites()) {
            assertEquals(CoroDebugModeTest.class.getName(), site.getClassName());
        }
        assertEquals(List.of(trace.getStackTrace()), trace.sites()); // printed as the trace's stack
    }

    private static Task<Integer> failingCall() {
        return Task.fromCallable(() -> {
            throw new IllegalStateException("boom");
        });
    }

    private static Task<Void> rangeOverAFailingCall() {
        return Task.forRange(0, 3, i -> i == 1 ? failingCall() : Task.value(i));
    }

    private static Task<Integer> repeatOverAFailingCall() {
        return failingCall().repeat(3);
    }

    @Test
    void anErrorFromARangesOrARepeatsIterationNamesTheIterationAndTheRangeOrRepeat() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> rangeOverAFailingCall().map(x -> x).join());
        List<String> methods = methods(traceOf(e));
        assertEquals(List.of("failingCall", "rangeOverAFailingCall"), methods.subList(0, 2), methods.toString());
        assertTrue(methods.get(2).startsWith("lambda$anErrorFromARangesOrARepeats"), methods.toString());

        IllegalStateException r = assertThrows(IllegalStateException.class, () -> repeatOverAFailingCall().join());
        List<String> repeated = methods(traceOf(r));
        assertEquals(List.of("failingCall", "repeatOverAFailingCall"), repeated.subList(0, 2), repeated.toString());
    }

    private static Task<Integer> loopOverAFailingMap() {
        return Task.loop(0, i -> i < 3, i -> i == 1 ? level3() : Task.value(i).map(x -> x + 1));
    }

    @Test
    void anErrorFromAMapThatEndsAtOnceInALoopNamesTheMethodsThatBuiltIt() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> loopOverAFailingMap().map(x -> x).join());
        List<String> methods = methods(traceOf(e));
        assertEquals(List.of("level3", "loopOverAFailingMap"), methods.subList(0, 2), methods.toString());
        assertTrue(methods.get(2).startsWith("lambda$anErrorFromAMapThatEndsAtOnceInALoop"), methods.toString());
    }

    private static Task<Integer> spawnFailing(Scope scope) {
        return scope.spawn(level1());
    }

    @Test
    void aSpawnedChildsErrorNamesTheChainAndTheSpawnSite() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Scope.scoped(CoroDebugModeTest::spawnFailing).join());
        List<String> methods = methods(traceOf(e));
        assertEquals(List.of("level3", "level2", "level1", "spawnFailing"), methods.subList(0, 4), methods.toString());
    }

    @Test
    void theTraceIsAttachedOnceThoughTheErrorTravelsThroughSeveralChainsAndJoins() {
        IllegalStateException boom = new IllegalStateException("boom");
        TaskHandle<Integer> failed = Task.<Integer>failure(boom).map(x -> x + 1).start(Scheduler.inline());
        Task<Integer> first = failed.task().map(x -> x * 2);
        Task<Integer> second = failed.task().flatMap(x -> Task.value(x)).recoverWith(Task::failure);
        for (int i = 0; i < 3; i++) {
            assertThrows(IllegalStateException.class, first::join);
            assertThrows(IllegalStateException.class, second::join);
            assertThrows(IllegalStateException.class, failed::join);
        }
        AssemblyTrace trace = traceOf(boom);
        List<StackTraceElement> sites = trace.sites();
        assertEquals(sites.size(), sites.stream().distinct().count(), sites.toString());
        assertEquals("theTraceIsAttachedOnceThoughTheErrorTravelsThroughSeveralChainsAndJoins",
                sites.get(0).getMethodName());
        assertTrue(sites.size() >= 4, sites.toString()); // failure, map; then each outer chain's steps
    }

    @Test
    void aRecoveredErrorLeavesNoTraceOfTheStepsAfterTheRecovery() {
        IllegalStateException boom = new IllegalStateException("boom");
        assertEquals(7, Task.<Integer>failure(boom).recover(e -> 7).map(x -> x).join());
        List<StackTraceElement> sites = traceOf(boom).sites();
        assertEquals(1, sites.size(), sites.toString()); // Task.failure's site only: recover handled it
    }

    @Test
    void aTraceListsAtMostItsBoundOfSites() {
        IllegalStateException boom = new IllegalStateException("boom");
        for (int i = 0; i < AssemblyTrace.MAX_SITES + 10; i++) {
            AssemblyTrace.of(boom).add(new StackTraceElement("C", "m" + i, "C.java", i));
            AssemblyTrace.of(boom).add(new StackTraceElement("C", "m" + i, "C.java", i)); // a repeat
        }
        List<StackTraceElement> sites = traceOf(boom).sites();
        assertEquals(AssemblyTrace.MAX_SITES, sites.size());
        assertEquals("m0", sites.get(0).getMethodName());
        assertEquals("m" + (AssemblyTrace.MAX_SITES - 1), sites.get(sites.size() - 1).getMethodName());
    }

    @Test
    void aValueOrACancellationCarriesNoTrace() {
        assertEquals(2, Task.value(1).map(x -> x + 1).join());
        TaskHandle<Object> h = start(Task.never().map(x -> x));
        h.cancel();
        assertThrows(java.util.concurrent.CancellationException.class, h::join);
        assertNotNull(h.toString());
    }

    /** A scheduler that runs inline and whose clock the test sets; holds timers without firing them. */
    private static final class ManualClock implements Scheduler {
        volatile long now;

        @Override
        public void execute(Runnable task) {
            Scheduler.inline().execute(task);
        }

        @Override
        public Cancellable schedule(Runnable task, Duration delay) {
            return () -> true;
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public boolean isCurrent() {
            return true;
        }

        @Override
        public String toString() {
            return "ManualClock";
        }
    }
}
