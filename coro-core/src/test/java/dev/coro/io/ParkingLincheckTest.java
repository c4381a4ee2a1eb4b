package dev.coro.io;

import dev.coro.LincheckSupport;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * A model check of the event loop's park protocol ({@link Parking}): the real park word, the real
 * inbox and the real timer wheel (a tiny one: four slots of two nanoseconds on a clock that stays at
 * zero), and a stand-in for the selector ({@link ModelSelector}) that records wakeups and, instead of
 * blocking, records that the loop sleeps until a deadline. Submitters hand over work as
 * {@link EventLoop} does (a runnable: inbox push, wake for now; a timer: wheel push, wake for its
 * slot's take time, or inbox push, wake for its deadline); the loop's iteration does what
 * {@link EventLoop}'s does around its select (take the inbox in, compute its wake time with
 * {@link LoopTimers#nextWake()}, park with hasWork(d) = inbox not empty, or wheel dirty and a slot
 * to take before d on a rescan). A park that
 * the check lets through is a sleep; it ends at the loop's next iteration, by the pending wakeup if
 * there is one (or a wakeup a submitter has committed to by winning the CAS, and is about to make),
 * else at its deadline (time passes).
 *
 * <p>Checked in every interleaving the model checker explores:
 * <ul>
 *   <li><b>No lost wakeup.</b> Whenever a sleep until d ends with no wakeup pending (at the loop's
 *       next iteration, or still sleeping after the run), nothing whose hand-over has completed is
 *       due before d: no runnable waits in the inbox, no timer in the inbox is due before d, and no
 *       timer waits in a wheel slot that must be taken before d.</li>
 *   <li><b>At most one wakeup per park.</b> Wakeups never outnumber the parks announced (so a burst
 *       costs one wakeup, and a loop that is awake gets none).</li>
 * </ul>
 * Every operation answers nothing, so any history is linearizable; the properties above are the
 * check (as in PermitGateLincheck). Mutations that break the protocol fail it: no re-check
 * after the announcement, a check-then-set instead of the CAS in wakeFor, clearing the wheel's
 * dirty flag after the scan instead of before, a wheel push that does not set the flag.
 */
@Param(name = "due", gen = IntGen.class, conf = "0:9")
@Param(name = "tid", gen = ThreadIdGen.class)
public class ParkingLincheckTest {
    private static final int THREADS = 3;
    private static final int ROWS = THREADS + 2;
    private static final int MAX_OPS = 8;

    /** Ticks of 2 ns, 4 slots, the clock at 0: timers due 4 to 9 go into the wheel, others not. */
    private final LoopTimers timers = new LoopTimers(1, 4);
    private final Inbox inbox = new Inbox();
    private final Parking park = new Parking();
    private final ModelSelector selector = new ModelSelector();
    /** handed[tid][k]: the k-th piece of work thread tid handed over; done[tid] of them are complete. */
    private final Inbox.Node[][] handed = new Inbox.Node[ROWS][MAX_OPS];
    private final AtomicIntegerArray done = new AtomicIntegerArray(ROWS);
    private volatile int parks;
    private volatile String broken;
    // loop-confined
    private boolean sleeping;
    private long sleepingUntil;

    /** Fresh structures per scenario. */
    public ParkingLincheckTest() {}

    /** The selector stand-in: a sticky wakeup flag and a count of wakeups. */
    final class ModelSelector implements Parking.Sleeper {
        volatile boolean wakeupPending;
        volatile int wakeups;

        @Override
        public boolean hasWork(long deadline) { // as EventLoop's (whose runState check is left out)
            return !inbox.isEmpty() || (timers.isDirty() && timers.nextWake() < deadline);
        }

        @Override
        public void wakeup() {
            wakeups++; // only the one CAS winner calls it
            wakeupPending = true;
        }
    }

    /** A runnable in the inbox; {@code taken} once the loop has it (loop-written). */
    static final class Work extends Inbox.Node {
        boolean taken;
    }

    /** A runnable handed over from another thread, as {@code execute} does. */
    @Operation
    public void execute(@Param(name = "tid") int tid) {
        Work w = new Work();
        int k = record(tid, w);
        inbox.push(w);
        park.wakeFor(Long.MIN_VALUE, selector);
        done.set(tid, k + 1);
    }

    /** A timer scheduled from another thread at time 0, as {@code schedule} does. */
    @Operation
    public void schedule(@Param(name = "tid") int tid, @Param(name = "due") int due) {
        LoopTimer t = new LoopTimer(null, () -> {}, due);
        int k = record(tid, t);
        int pushed = timers.offer(t, 0);
        if (pushed != TimerWheel.REFUSED) {
            if (pushed == TimerWheel.TELL) { // as EventLoop: not when it joined a told timer
                park.wakeFor(timers.takeTime(due), selector);
                t.told();
            }
        } else {
            inbox.push(t);
            park.wakeFor(due, selector);
        }
        done.set(tid, k + 1);
    }

    private int record(int tid, Inbox.Node n) {
        int k = done.get(tid);
        handed[tid][k] = n;
        return k;
    }

    /**
     * One loop iteration around its select: ends the previous sleep (checking that, unless a wakeup
     * ended it, nothing handed over was due before its deadline), takes the inbox in, and parks
     * until its wake time if that is in the future.
     */
    @Operation(nonParallelGroup = "loop")
    public void iteration() {
        if (sleeping) {
            sleeping = false;
            int[] complete = completeCounts(); // hand-overs complete before the sleep ends
            boolean committed = !park.isParked(); // a submitter won the CAS: its wakeup() is coming
            park.awake(); // the sleep ends; later submitters see the loop awake
            if (selector.wakeupPending) {
                selector.wakeupPending = false; // the select returned because of it
            } else if (!committed) {
                checkNothingDueBefore(sleepingUntil, complete); // the select returned at its deadline
            }
        }
        timers.advance(0);
        for (Inbox.Node n = inbox.takeAll(); n != null; ) {
            Inbox.Node next = n.next;
            n.next = null;
            if (n instanceof LoopTimer t) {
                timers.add(t);
            } else {
                ((Work) n).taken = true;
            }
            n = next;
        }
        long wake = timers.nextWake(); // clears the dirty flag, then scans
        if (!inbox.isEmpty() || wake <= 0) {
            return; // selectNow
        }
        parks++;
        if (park.park(wake, selector)) {
            sleeping = true;
            sleepingUntil = wake;
        }
    }

    private int[] completeCounts() {
        int[] n = new int[ROWS];
        for (int tid = 0; tid < ROWS; tid++) {
            n[tid] = done.get(tid);
        }
        return n;
    }

    /** Lost wakeup: handed over (the first complete[tid] of each thread), not taken, due before d. */
    private void checkNothingDueBefore(long d, int[] complete) {
        for (int tid = 0; tid < ROWS; tid++) {
            for (int k = 0; k < complete[tid]; k++) {
                long due = Long.MAX_VALUE;
                if (handed[tid][k] instanceof Work w) {
                    due = w.taken ? Long.MAX_VALUE : Long.MIN_VALUE;
                } else if (handed[tid][k] instanceof LoopTimer t) {
                    if (t.index == LoopTimer.NOT_HELD) {
                        due = t.deadline; // in the inbox
                    } else if (t.index == LoopTimer.INCOMING) {
                        due = timers.takeTime(t.deadline); // in its wheel slot, not taken in
                    }
                }
                if (due < d) {
                    broken = "lost wakeup: the loop slept until " + d + " with work of thread " + tid
                            + " due at " + due;
                }
            }
        }
    }

    /** After each run: no lost wakeup in the final state, and no more wakeups than parks. */
    @Validate
    public void validate() {
        if (sleeping && park.isParked() && !selector.wakeupPending) {
            checkNothingDueBefore(sleepingUntil, completeCounts());
        }
        if (broken != null) {
            throw new AssertionError(broken);
        }
        if (selector.wakeups > parks) {
            throw new AssertionError(selector.wakeups + " wakeups for " + parks + " parks");
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(15).invocations(500)
                .threads(THREADS).actorsPerThread(3).actorsBefore(1).actorsAfter(1)
                .modelCheck();
    }

    /** Every run of this test: the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(ParkingLincheckTest.class)
                .scenarios(aWheelPushRacingTheScan(), aBurstToAParkedLoop());
    }

    /**
     * A timer already in the wheel (due 6: the loop must take its slot at 4, and the dirty flag is
     * set) while the loop computes its wake time, and an earlier one (due 4: take at 2) pushed
     * meanwhile: the loop must not sleep until 4 without a wakeup. Catches a dirty flag cleared after
     * the scan instead of before it.
     */
    static ExecutionScenario aWheelPushRacingTheScan() {
        return LincheckSupport.scenario(ParkingLincheckTest.class,
                "schedule 0 6",
                "iteration | schedule 2 4",
                null);
    }

    /** A parked loop and a burst from two threads: at most one wakeup for the park, none lost. */
    static ExecutionScenario aBurstToAParkedLoop() {
        return LincheckSupport.scenario(ParkingLincheckTest.class,
                "iteration",
                "iteration | execute 2; schedule 2 5 | schedule 3 8; execute 3",
                null);
    }

}
