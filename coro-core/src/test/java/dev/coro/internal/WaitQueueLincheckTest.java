package dev.coro.internal;

import dev.coro.LincheckSupport;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Objects;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks the {@link WaitQueue} engine against {@link Spec}: {@code push} queues the thread's
 * next waiter (refused once closed), {@code cancel} cancels the thread's latest waiter (it wins only
 * while nobody has settled it), {@code take} and {@code close} move every queued waiter, in arrival
 * order, to the taker's list ({@code close} also makes the queue refuse pushes), and
 * {@code admitNext} admits the oldest taken waiter that is still unsettled and answers its name. So
 * FIFO order, exactly-once settlement, the cancellation race (one CAS on the waiter) and the engine's
 * unlinking of cancelled nodes (pops and sweeps racing pushes and takes) are all checked.
 *
 * <p>Why taking and settling are separate operations: a taker settles the nodes it took one by one,
 * after its exchange, and a cancel may win any of them in between. That is the engine's contract (a
 * taken waiter is settled by the taker's CAS or by its own cancellation, whichever is first), and the
 * primitives are linearizable on top of it (their own Lincheck tests); a combined take-and-admit
 * operation is not, as the first version of this test showed: a push refused after a close's
 * exchange, then a cancel that beat the close's abandon of an older waiter, has no sequential order.
 * The taker's list is the test's, guarded by its monitor, so that takes append in exchange order.
 */
@Param(name = "tid", gen = ThreadIdGen.class)
public class WaitQueueLincheckTest {
    static final int THREADS = 3;
    private static final int PER_SLOT = 8;
    private static final int SLOTS = THREADS + 2;
    private static final WaitQueue.Sentinel OPEN = new WaitQueue.Sentinel("OPEN", true);
    private static final WaitQueue.Sentinel CLOSED = new WaitQueue.Sentinel("CLOSED", false);

    private final WaitQueue queue = new WaitQueue(OPEN, null, true); // sweep at once: sweeps race everything
    // Slot tid is touched only by the thread that runs tid's operations.
    private final int[] pushes = new int[SLOTS];
    private final TestWaitNode[] latest = new TestWaitNode[SLOTS];

    /** Queues this thread's next waiter; false if the queue is closed. */
    @Operation
    public boolean push(@Param(name = "tid") int tid) {
        TestWaitNode n = new TestWaitNode(PER_SLOT * tid + pushes[tid]++);
        if (queue.push(n) != null) {
            return false;
        }
        latest[tid] = n;
        return true;
    }

    /** Cancels this thread's latest queued waiter: whether the cancel won its CAS. */
    @Operation
    public boolean cancel(@Param(name = "tid") int tid) {
        TestWaitNode n = latest[tid];
        return n != null && n.cancel();
    }

    private final ArrayDeque<WaitNode> taken = new ArrayDeque<>();

    /** Moves the queued waiters to the taker's list, in arrival order. */
    @Operation
    public synchronized void take() {
        Object s;
        do {
            s = queue.state();
            if (s == CLOSED) {
                return;
            }
        } while (!queue.casState(s, OPEN));
        appendTaken(queue.drain(s));
    }

    /** Makes the queue refuse pushes and moves its waiters to the taker's list. */
    @Operation
    public synchronized void close() {
        appendTaken(queue.drain(queue.exchange(CLOSED)));
    }

    /** Admits the oldest taken waiter that is still unsettled: its name, or -1. */
    @Operation
    public synchronized int admitNext() {
        for (WaitNode n; (n = taken.pollFirst()) != null; ) {
            if (n.admit("in")) {
                return ((TestWaitNode) n).name;
            }
        }
        return -1;
    }

    private void appendTaken(WaitNode first) {
        for (WaitNode n = first; n != null; ) {
            WaitNode next = WaitQueue.next(n);
            taken.addLast(n);
            n = next;
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(30).invocations(500)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(30).invocations(2000)
                .threads(THREADS).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    /** Every run of this test: the sequential specification. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(WaitQueueLincheckTest.class)
                .spec(Spec.class);
    }

    /** The sequential specification: a FIFO queue of names, each settled at most once. */
    public static final class Spec {
        private boolean closed;
        private final ArrayDeque<Integer> queue = new ArrayDeque<>();
        private final ArrayDeque<Integer> taken = new ArrayDeque<>();
        private final int[] pushes = new int[SLOTS];
        private final int[] latest = new int[SLOTS];
        private final boolean[] settled = new boolean[PER_SLOT * SLOTS];

        /** An open, empty queue. */
        public Spec() {
            Arrays.fill(latest, -1);
        }

        /** See {@link WaitQueueLincheckTest#push(int)}. */
        public boolean push(int tid) {
            int name = PER_SLOT * tid + pushes[tid]++;
            if (closed) {
                return false;
            }
            queue.addLast(name);
            latest[tid] = name;
            return true;
        }

        /** See {@link WaitQueueLincheckTest#cancel(int)}. */
        public boolean cancel(int tid) {
            int name = latest[tid];
            if (name < 0 || settled[name]) {
                return false;
            }
            settled[name] = true;
            queue.remove(name);
            taken.remove(name);
            return true;
        }

        /** See {@link WaitQueueLincheckTest#take()}. */
        public void take() {
            if (!closed) {
                taken.addAll(queue);
                queue.clear();
            }
        }

        /** See {@link WaitQueueLincheckTest#close()}. */
        public void close() {
            closed = true;
            taken.addAll(queue);
            queue.clear();
        }

        /** See {@link WaitQueueLincheckTest#admitNext()}. */
        public int admitNext() {
            for (Integer name; (name = taken.pollFirst()) != null; ) {
                if (!settled[name]) {
                    settled[name] = true;
                    return name;
                }
            }
            return -1;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && closed == s.closed && Arrays.equals(queue.toArray(), s.queue.toArray())
                    && Arrays.equals(taken.toArray(), s.taken.toArray())
                    && Arrays.equals(pushes, s.pushes) && Arrays.equals(latest, s.latest)
                    && Arrays.equals(settled, s.settled);
        }

        @Override
        public int hashCode() {
            return Objects.hash(closed, Arrays.hashCode(queue.toArray()), Arrays.hashCode(taken.toArray()),
                    Arrays.hashCode(pushes),
                    Arrays.hashCode(latest), Arrays.hashCode(settled));
        }
    }
}
