package dev.coro.io;

import dev.coro.LincheckSupport;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link TimerWheel} (two slots, ticks of 16 ns) for linearizability against
 * {@link Spec}: a window of two ticks starting at a cursor, one FIFO list per tick. {@link #push}
 * from any thread is accepted exactly when its tick is in the window (a push for a tick the loop has
 * already taken, or for one too far ahead, is refused, never lost or misfiled); {@link #take} (the
 * cursor's tick, then the window moves on), {@link #drain} and {@link #close} (one slot: the wheel's
 * close() closes the slots one by one, and each is its own linearization point) belong to the one
 * consumer (a non-parallel group) and answer the pushed ids in push order. So a push that lands in a
 * slot after the loop moved it to another tick, a lost push, or a push accepted by a closed slot is
 * a wrong answer.
 */
@Param(name = "tick", gen = IntGen.class, conf = "0:3")
@Param(name = "id", gen = IntGen.class, conf = "0:15")
public class TimerWheelLincheckTest {
    private static final int SHIFT = 4;
    private static final int SLOTS = 2;

    private final TimerWheel wheel = new TimerWheel(SHIFT, SLOTS);
    private long cursor; // consumer-only

    /** A fresh wheel per scenario: slot i holds tick i. */
    public TimerWheelLincheckTest() {}

    /**
     * Pushes a timer of tick {@code tick} carrying {@code id}; whether the wheel accepted it (TELL or
     * JOINED). A push that answers TELL marks its timer told, as EventLoop does after its wakeFor, so
     * later pushes into the slot take the JOINED path too.
     */
    @Operation
    public boolean push(@Param(name = "tick") int tick, @Param(name = "id") int id) {
        LoopTimer t = new LoopTimer(null, () -> {}, ((long) tick << SHIFT) | id);
        t.index = LoopTimer.INCOMING;
        int pushed = wheel.push(t);
        if (pushed == TimerWheel.TELL) {
            t.told();
        }
        return pushed != TimerWheel.REFUSED;
    }

    /** Takes the cursor's tick (its ids, oldest push first) and moves the window on. */
    @Operation(nonParallelGroup = "loop")
    public List<Integer> take() {
        return ids(wheel.take(cursor++));
    }

    /** Takes what slot {@code tick % SLOTS} holds now, oldest first, leaving it on its tick. */
    @Operation(nonParallelGroup = "loop")
    public List<Integer> drain(@Param(name = "tick") int tick) {
        return ids(wheel.drain(tick % SLOTS));
    }

    /** Closes slot {@code tick % SLOTS}: the ids it held, oldest first (close() is this per slot). */
    @Operation(nonParallelGroup = "loop")
    public List<Integer> close(@Param(name = "tick") int tick) {
        return ids(wheel.close(tick % SLOTS));
    }

    private static List<Integer> ids(LoopTimer t) {
        List<Integer> out = new ArrayList<>();
        while (t != null) {
            out.add((int) (t.deadline & ((1 << SHIFT) - 1)));
            t = (LoopTimer) t.next;
        }
        return out;
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(10).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    /** Every run of this test: the sequential specification. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(TimerWheelLincheckTest.class)
                .spec(Spec.class);
    }

    /** The sequential specification: a window of SLOTS ticks from a cursor, a FIFO list per tick. */
    public static final class Spec {
        private final List<List<Integer>> byTick = new ArrayList<>();
        private final boolean[] closed = new boolean[SLOTS];
        private long cursor;

        /** A fresh window on ticks 0 and 1. */
        public Spec() {
            for (int i = 0; i < 64; i++) {
                byTick.add(new ArrayList<>());
            }
        }

        public boolean push(int tick, int id) {
            if (closed[tick % SLOTS] || tick < cursor || tick >= cursor + SLOTS) {
                return false;
            }
            byTick.get(tick).add(id);
            return true;
        }

        public List<Integer> take() {
            return takeTick(cursor++);
        }

        public List<Integer> drain(int tick) {
            return takeTick(cursor + Math.floorMod(tick - cursor, SLOTS)); // the tick that slot holds now
        }

        public List<Integer> close(int tick) {
            closed[tick % SLOTS] = true;
            return drain(tick);
        }

        private List<Integer> takeTick(long tick) {
            List<Integer> out = new ArrayList<>(byTick.get((int) tick));
            byTick.get((int) tick).clear();
            return out;
        }
    }
}
