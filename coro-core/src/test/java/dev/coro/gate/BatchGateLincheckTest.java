package dev.coro.gate;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck explores a {@link BatchGate} (batches of at most 2, a linger of one tick, one batch at a
 * time) on a {@link ManualScheduler}: submissions race cancellations, ticks (which run the linger
 * timer on the ticking thread), the finishing of the running batch (which forms the next one on the
 * finishing thread) and close. Operations answer nothing; checked after each run, everything
 * quiescent:
 * <ul>
 *   <li>each item is sent at most once, batches hold 1 or 2 items, and each thread's items are sent
 *       in its submission order (FIFO inside and across batches);</li>
 *   <li>each caller ended at most once: with its own element (item * 10) only if its item was sent
 *       and its batch finished; cancelled only if it asked to be, or, untaken, if the gate closed;
 *       a caller that asked to be cancelled has ended;</li>
 *   <li>a caller whose item was sent and not cancelled waits only while its batch runs;</li>
 *   <li>no lost wake-up: a caller whose item waits finds the gate open and either a batch running or
 *       the linger timer armed; at most one timer;</li>
 *   <li>no leak: {@code pending()} is exactly the callers still waiting untaken; nothing stays
 *       linked once none waits, and at most the waiting and the cancelled untaken ones otherwise.</li>
 * </ul>
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class BatchGateLincheckTest {
    private static final int THREADS = 3;
    private static final int MAX_BATCH = 2;

    private final ManualScheduler clock = new ManualScheduler();
    private final List<Sent> sent = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<Sent> running = new ConcurrentLinkedQueue<>();
    private final BatchGate<Integer, Integer> gate = new BatchGate<>(this::batch, MAX_BATCH, Duration.ofNanos(1), clock);
    private final List<Caller> callers = new CopyOnWriteArrayList<>();
    private final Caller[] latest = new Caller[THREADS + 2];
    private final int[] submitted = new int[THREADS + 2];
    private volatile String broken;

    /** One call of the batch function: its items, and the promise {@link #finish()} completes. */
    record Sent(List<Integer> items, Promise<List<Integer>> result) {}

    private Task<List<Integer>> batch(List<Integer> items) {
        Sent s = new Sent(List.copyOf(items), new Promise<>());
        sent.add(s);
        running.add(s);
        return s.result().task();
    }

    /** Submits this thread's next item and keeps it as this thread's latest caller. */
    @Operation
    public void submit(@Param(name = "tid") int tid) {
        Caller c = new Caller(tid * 1000 + submitted[tid]++);
        callers.add(c);
        latest[tid] = c;
        c.future = gate.submit(c.item).outcome().map(c::ended).toCompletableFuture();
    }

    /** Cancels this thread's latest caller (a no-op if it has ended). */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        Caller c = latest[tid];
        if (c != null) {
            c.cancelRequested = true;
            c.future.cancel(false);
        }
    }

    /** Finishes the running batch, if any, with each item times 10. */
    @Operation
    public void finish() {
        Sent s = running.poll();
        if (s != null) {
            s.result().complete(s.items().stream().map(i -> i * 10).toList());
        }
    }

    /** Moves the clock one tick; the linger timer runs on this thread if it came due. */
    @Operation
    public void tick() {
        clock.advance(1);
    }

    /** Closes the gate. */
    @Operation
    public void close() {
        gate.close();
    }

    /** After each run: the invariants in the class javadoc. */
    @Validate
    public void validate() {
        if (broken != null) {
            throw new AssertionError(broken);
        }
        List<Integer> order = new ArrayList<>();
        for (Sent s : sent) {
            if (s.items().isEmpty() || s.items().size() > MAX_BATCH) {
                throw new AssertionError("a batch of " + s.items().size());
            }
            order.addAll(s.items());
        }
        int[] last = new int[THREADS + 2];
        java.util.Arrays.fill(last, -1);
        for (int item : order) {
            if (item % 1000 <= last[item / 1000]) {
                throw new AssertionError("items sent out of order or twice: " + order);
            }
            last[item / 1000] = item % 1000;
        }
        int waitingUntaken = 0;
        int cancelledUntaken = 0;
        for (Caller c : callers) {
            Sent in = null;
            for (Sent s : sent) {
                if (s.items().contains(c.item)) {
                    in = s;
                }
            }
            boolean finished = in != null && in.result().isDone();
            int endings = c.endings.get();
            if (endings > 1) {
                throw new AssertionError("a caller ended " + endings + " times");
            }
            if (endings == 0) {
                if (c.cancelRequested) {
                    throw new AssertionError("a cancelled caller is still waiting");
                }
                if (in == null) {
                    waitingUntaken++;
                    if (gate.isClosed()) {
                        throw new AssertionError("the gate is closed and an item waits");
                    }
                    if (running.isEmpty() && clock.pending() == 0) {
                        throw new AssertionError("lost wake-up: an item waits, no batch runs, no timer is armed");
                    }
                } else if (finished) {
                    throw new AssertionError("item " + c.item + "'s batch finished and its caller waits");
                }
            } else if (c.outcome instanceof Outcome.Value<Integer> v) {
                if (!finished || v.value() != c.item * 10) {
                    throw new AssertionError("caller of " + c.item + " got " + v.value() + ", sent: " + (in != null));
                }
            } else if (c.outcome instanceof Outcome.Cancelled<Integer>) {
                if (!c.cancelRequested && (in != null || !gate.isClosed())) {
                    throw new AssertionError("caller of " + c.item + " cancelled unasked, sent: " + (in != null));
                }
                if (in == null) {
                    cancelledUntaken++;
                }
            } else {
                throw new AssertionError("caller failed: " + c.outcome);
            }
        }
        if (gate.pending() != waitingUntaken) {
            throw new AssertionError(waitingUntaken + " items wait, but the gate counts " + gate.pending());
        }
        // Each waiting item is linked twice (the engine's node, the rule's slot); a cancelled one
        // behind a live one may stay linked until it is met or purged, never once none waits.
        int linked = gate.linkedWaiters();
        if (waitingUntaken == 0 ? linked != 0 : linked > 2 * (waitingUntaken + cancelledUntaken)) {
            throw new AssertionError(waitingUntaken + " items wait (" + cancelledUntaken
                    + " cancelled untaken), but the gate links " + linked);
        }
        if (clock.pending() > 1) {
            throw new AssertionError(clock.pending() + " timers pending: one per gate");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(2).invocations(100)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /**
     * The custom scenarios alone, explored much deeper: the narrow windows of the take and the flush
     * (about 5 minutes on 2 cores, so in the long group that ./coro stress runs, not in CI's bounded pass).
     */
    @Test
    @Tag("long")
    void modelCheckingTheRacesDeeply() {
        check().iterations(0).invocations(dev.coro.Stress.scaled(3000)).modelCheck("modelCheckingTheRacesDeeply");
    }

    private LincheckSupport.Check check() {
        return LincheckSupport.lincheck(getClass()).scenarios(cancelRacingTheFlush(), finishRacingCloseAndTick(),
                cancelRacingTheTake(), memberCancelledWhileALaterItemArrives());
    }

    /**
     * Two items wait behind a running batch; the finish forms the next batch while one of them is
     * cancelled: the cancelled one is sent only if it was taken first, and its caller ends cancelled
     * either way; the other gets its element.
     */
    static ExecutionScenario cancelRacingTheFlush() {
        return LincheckSupport.scenario(BatchGateLincheckTest.class,
                "submit 0; submit 1",
                "finish | submit 1; cancel 1 | submit 2",
                "tick; finish; finish");
    }

    /** The running batch finishes while the gate closes and the linger timer fires. */
    static ExecutionScenario finishRacingCloseAndTick() {
        return LincheckSupport.scenario(BatchGateLincheckTest.class,
                "submit 0; submit 1",
                "finish | close | tick; submit 2",
                "finish; finish");
    }

    /**
     * One item waits behind the running batch; the finish forms the next batch and takes it while
     * its caller cancels: either it is not sent, or it is sent and its caller ends cancelled (the
     * take won; its admission then loses, and the counts must come out right).
     */
    static ExecutionScenario cancelRacingTheTake() {
        return LincheckSupport.scenario(BatchGateLincheckTest.class,
                "submit 0; submit 1",
                "finish | cancel 1",
                "finish; submit 2; finish");
    }

    /**
     * Two items wait behind the running batch and are chosen together by the finish; the second is
     * cancelled while a third arrives: a batch without the second must go before the third is
     * considered, and the third must form a later batch.
     */
    static ExecutionScenario memberCancelledWhileALaterItemArrives() {
        return LincheckSupport.scenario(BatchGateLincheckTest.class,
                "submit 0; submit 1; submit 2",
                "finish | cancel 2 | submit 1",
                "finish; finish");
    }

    /** One submit() run, watched through its outcome. */
    final class Caller {
        final int item;
        final AtomicInteger endings = new AtomicInteger();
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;
        volatile Outcome<Integer> outcome;

        Caller(int item) {
            this.item = item;
        }

        Void ended(Outcome<Integer> o) {
            outcome = o;
            endings.incrementAndGet();
            return null;
        }
    }
}
