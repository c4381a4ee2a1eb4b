package dev.coro.channel;

import dev.coro.LincheckSupport;
import dev.coro.internal.ChannelCore;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What the channel Lincheck tests share: one channel of a capacity kind; sends and receives started
 * as tasks on the inline scheduler (so a waiter resumes on the thread that completed it) and watched
 * through their outcome; try operations; cancellation of each thread's latest waiter; close and
 * cancel of the channel. Every element is unique.
 *
 * <p>A test may have two channels (a select waits on both): an operation's {@code ch} picks one.
 *
 * <p><b>Why the operations answer nothing.</b> As in the engine's tests (LaneLincheck): which thread
 * completes a waiter, and whether a try meets a waiter that another thread's request has not yet
 * handed to the owner, are not functions of a sequential history, so the checked property is the
 * state, at quiescence ({@link #validate()}): each waiter ended at most once, and one whose
 * cancellation was requested has ended; no request was left undecided and the core's invariants
 * hold (ChannelCore.checkQuiescent: no receiver waits beside an element or a sender, no sender
 * beside room, nobody waits on a closed channel with nothing left); and every element leaves exactly
 * once: each element whose send completed is received once, or still in the channel, or handed to
 * the undelivered callback, and no other element (a cancelled or failed send's) is ever received.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
@Param(name = "ch", gen = IntGen.class, conf = "0:1")
public abstract class ChannelLincheck {
    static final int SLOTS = 6;

    final Channel<Integer>[] channels;
    private final AtomicInteger nextElement = new AtomicInteger(1);
    final List<Waiter> waiters = new CopyOnWriteArrayList<>();
    private final List<Integer> trySent = new CopyOnWriteArrayList<>();
    private final List<Integer> tryReceived = new CopyOnWriteArrayList<>();
    private final List<Integer> undelivered = new CopyOnWriteArrayList<>();
    /** Each thread's latest waiter; slot tid is touched only by the thread that runs tid's operations. */
    final Waiter[] latest = new Waiter[SLOTS];

    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    ChannelLincheck(int capacity, int count) {
        this.channels = new Channel[count];
        for (int i = 0; i < count; i++) {
            channels[i] = Channel.create(capacity, undelivered::add);
        }
    }

    /** The channel an operation's {@code ch} picks. */
    final Channel<Integer> channel(int ch) {
        return channels[ch % channels.length];
    }

    /** A fresh element: unique, positive. */
    final int nextElement() {
        return nextElement.getAndIncrement();
    }

    /** One send or receive, watched through its outcome. */
    static final class Waiter {
        /** The element it sends, or 0 for a receive. */
        final int element;
        final AtomicInteger endings = new AtomicInteger();
        volatile Outcome<?> outcome;
        volatile CompletableFuture<Void> future;
        volatile boolean cancelRequested;

        Waiter(int element) {
            this.element = element;
        }

        Void ended(Outcome<?> o) {
            outcome = o;
            endings.incrementAndGet();
            return null;
        }
    }

    final Waiter start(int tid, int element, Task<?> task) {
        Waiter w = new Waiter(element);
        waiters.add(w); // before it starts: another thread may complete it from then on
        latest[tid] = w;
        w.future = task.outcome().map(w::ended).toCompletableFuture();
        return w;
    }

    /** Starts a send of a fresh element, kept as this thread's latest waiter. */
    @Operation
    public void send(@Param(name = "tid") int tid, @Param(name = "ch") int ch) {
        int e = nextElement();
        start(tid, e, channel(ch).send(e));
    }

    /** Starts a receive, kept as this thread's latest waiter. */
    @Operation
    public void receive(@Param(name = "tid") int tid, @Param(name = "ch") int ch) {
        start(tid, 0, channel(ch).receive());
    }

    /** Sends a fresh element if that needs no wait. */
    @Operation
    public void trySend(@Param(name = "ch") int ch) {
        int e = nextElement();
        try {
            if (channel(ch).trySend(e)) {
                trySent.add(e);
            }
        } catch (ChannelClosedException closed) {
            // refused: not sent
        }
    }

    /** Receives an element if there is one now. */
    @Operation
    public void tryReceive(@Param(name = "ch") int ch) {
        Integer e = channel(ch).tryReceive();
        if (e != null) {
            tryReceived.add(e);
        }
    }

    /**
     * A receive's looks before it waits (ChannelCore part 13: receiveNow, then two looks of
     * receiveSoon, as a pool worker's receive makes): takes an element if it finds one.
     */
    @Operation
    public void receiveSoon(@Param(name = "ch") int ch) {
        ChannelCore core = channel(ch).core();
        Object e = core.receiveNow();
        if (e == ChannelCore.EMPTY) {
            e = core.receiveSoon(2);
        }
        if (e != ChannelCore.EMPTY && e != ChannelCore.END) {
            tryReceived.add((Integer) e);
        }
    }

    /** Cancels this thread's latest waiter (a no-op if it has ended). */
    @Operation
    public void cancel(@Param(name = "tid") int tid) {
        Waiter w = latest[tid];
        if (w != null) {
            w.cancelRequested = true;
            w.future.cancel(false);
        }
    }

    /** Closes the channel. */
    @Operation
    public void close(@Param(name = "ch") int ch) {
        channel(ch).close();
    }

    /** Cancels the channel. */
    @Operation
    public void cancelChannel(@Param(name = "ch") int ch) {
        channel(ch).cancel();
    }

    /**
     * The races every channel kind is model-checked on first (generated scenarios rarely line them
     * up): a waiting send cancelled while a receive pairs with it; a waiting receive cancelled while
     * an element is handed to it (by a send, or from the buffer by an owner that took it from the
     * intake); close racing a send; cancel racing a waiting receive and a try-send.
     *
     * @param test the test class
     * @return the scenarios
     */
    static ExecutionScenario[] races(Class<?> test) {
        return new ExecutionScenario[] {
            LincheckSupport.scenario(test, null, "send 1 0; cancel 1 | receive 2 0", null),
            LincheckSupport.scenario(test, null, "receive 1 0; cancel 1 | send 2 0", null),
            LincheckSupport.scenario(test, "trySend 0", "receive 1 0; cancel 1 | send 2 0; tryReceive 0", null),
            LincheckSupport.scenario(test, null, "send 1 0 | close 0; receive 2 0", null),
            LincheckSupport.scenario(test, null, "receive 1 0 | trySend 0 | cancelChannel 0", null),
        };
    }

    /** The scenarios the model check runs first: {@link #races}; a test may name others. */
    ExecutionScenario[] scenarios() {
        return races(getClass());
    }

    @Test
    void modelChecking() {
        LincheckSupport.lincheck(getClass())
                .scenarios(scenarios())
                .scaledIterations(4).invocations(100)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        LincheckSupport.lincheck(getClass())
                .scaledIterations(30).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(1)
                .stress();
    }

    /** The checks of the class javadoc. */
    @Validate
    public void validate() {
        for (Channel<Integer> channel : channels) {
            String bad = channel.core().checkQuiescent();
            if (bad != null) {
                throw new AssertionError(bad);
            }
        }
        for (Waiter w : waiters) {
            int n = w.endings.get();
            if (n > 1 || (w.cancelRequested && n != 1)) {
                throw new AssertionError("a waiter ended " + n + " times (cancel requested: " + w.cancelRequested + ")");
            }
        }
        Set<Integer> sent = new HashSet<>(trySent);
        for (Waiter w : waiters) {
            if (w.element != 0 && w.outcome instanceof Outcome.Value<?>) {
                sent.add(w.element);
            }
        }
        List<Integer> left = new ArrayList<>(tryReceived);
        for (Waiter w : waiters) {
            if (w.element == 0 && w.outcome instanceof Outcome.Value<?> v && v.value() instanceof Integer e && e > 0) {
                left.add(e); // a receive's element (a select's timeout answers 0; the end is null)
            }
        }
        left.addAll(undelivered);
        List<Integer> drained = new ArrayList<>();
        for (Channel<Integer> channel : channels) {
            if (!channel.core().isCancelled()) {
                for (Integer e; (e = channel.tryReceive()) != null; ) {
                    drained.add(e); // a waiting sender's element too: its send completes now
                }
            }
        }
        for (Waiter w : waiters) { // sends the drain completed
            if (w.element != 0 && w.outcome instanceof Outcome.Value<?>) {
                sent.add(w.element);
            }
        }
        left.addAll(drained);
        Set<Integer> once = new HashSet<>();
        for (Integer e : left) {
            if (!once.add(e)) {
                throw new AssertionError("element " + e + " left the channel twice");
            }
            if (!sent.contains(e)) {
                throw new AssertionError("element " + e + " left the channel but its send did not complete");
            }
        }
        if (!once.equals(sent)) {
            Set<Integer> lost = new HashSet<>(sent);
            lost.removeAll(once);
            throw new AssertionError("elements sent and never received, held or dropped: " + lost);
        }
    }
}
