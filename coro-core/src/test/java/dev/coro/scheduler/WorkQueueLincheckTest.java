package dev.coro.scheduler;

import dev.coro.LincheckSupport;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import kotlin.Unit;
import kotlin.reflect.KFunction;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.CustomScenarioDSLKt;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link WorkQueue} for linearizability against {@link Spec}, a sequential bounded
 * FIFO queue whose steal removes the {@code n} oldest values, in model-checking and stress modes.
 * ({@link WorkQueue#stealHalfInto} picks {@code n} from a size it read just before, so "half" is
 * not one atomic step and is not what is checked here; {@link WorkQueue#stealInto} is.)
 * The queue has four slots, so scenarios fill it (push answers false) and wrap around the ring,
 * where a thief still copying a claimed slot races the owner's next push into it.
 *
 * <p>{@link #push} and {@link #pop} belong to the queue's single owner, so they share a
 * non-parallel group (Lincheck runs them on one thread); {@link #steal} runs on the other threads,
 * each into a fresh destination queue, and answers with everything it took, oldest first. Its
 * {@code n} is at most 2, half the capacity, as the queue requires.
 * {@link WorkQueue#CONTENDED} (another thief is mid-steal) is not a queue state, so the operation
 * retries until it gets an answer; a queue that answered CONTENDED without another steal in progress
 * would make that loop spin forever, which Lincheck reports.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:9")
@Param(name = "n", gen = IntGen.class, conf = "1:2")
public class WorkQueueLincheckTest {
    /** Small, so that scenarios fill it and wrap around the ring. */
    private static final int CAPACITY = 4;

    private final WorkQueue queue = new WorkQueue(CAPACITY);

    /** A fresh, empty queue per scenario (Lincheck creates one instance per run). */
    public WorkQueueLincheckTest() {}

    /** A runnable that is only a number, so results compare by value. */
    record Item(int value) implements Runnable {
        @Override
        public void run() {}
    }

    /**
     * The owner pushes {@code v}; false when full. The queue also refuses while a thief still copies
     * slots it claimed (they are not free yet, though no longer counted); that is not a queue state,
     * so the operation waits it out, and answers false only when the ring holds CAPACITY values.
     */
    @Operation(nonParallelGroup = "owner")
    public boolean push(@Param(name = "v") int v) {
        Item item = new Item(v);
        while (!queue.push(item)) {
            if (queue.size() == CAPACITY) {
                return false;
            }
            Thread.onSpinWait(); // a thief is copying; it finishes without our help
        }
        return true;
    }

    /** The owner takes the oldest value, or -1 when empty. */
    @Operation(nonParallelGroup = "owner")
    public int pop() {
        Runnable r = queue.pop();
        return r == null ? -1 : ((Item) r).value();
    }

    /** A thief takes the {@code n} oldest, if there are that many, into a queue of its own. */
    @Operation
    public List<Integer> steal(@Param(name = "n") int n) {
        WorkQueue mine = new WorkQueue(CAPACITY);
        Runnable r;
        while ((r = queue.stealInto(mine, n)) == WorkQueue.CONTENDED) {
            Thread.onSpinWait(); // another thief is copying; it finishes without our help
        }
        List<Integer> taken = new ArrayList<>();
        if (r != null) {
            Runnable older;
            while ((older = mine.pop()) != null) {
                taken.add(((Item) older).value());
            }
            taken.add(((Item) r).value()); // the thief runs the newest of its batch first
        }
        return taken;
    }

    /** The number of values, from any thread. */
    @Operation
    public int size() {
        return queue.size();
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(3).actorsPerThread(2).actorsBefore(3).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(3).actorsAfter(2)
                .stress();
    }

    /** Every run of this test: the sequential specification and the custom scenarios. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(WorkQueueLincheckTest.class)
                .spec(Spec.class)
                .scenarios(pushIntoTheSlotAThiefIsCopying(), twoThievesAndTheOwner());
    }

    /**
     * The ring is full; a thief claims the two oldest while the owner pops and pushes twice: the
     * pushes wrap around onto the slots the thief may still be copying (I2 of WorkQueue).
     */
    static ExecutionScenario pushIntoTheSlotAThiefIsCopying() {
        return CustomScenarioDSLKt.scenario(s -> {
            s.initial(t -> {
                for (int v = 1; v <= CAPACITY; v++) {
                    t.actor(op("push"), v);
                }
                return Unit.INSTANCE;
            });
            s.parallel(p -> {
                p.thread(t -> {
                    t.actor(op("push"), 5);
                    t.actor(op("pop"));
                    t.actor(op("push"), 6);
                    t.actor(op("push"), 7);
                    return Unit.INSTANCE;
                });
                p.thread(t -> {
                    t.actor(op("steal"), 2);
                    return Unit.INSTANCE;
                });
                return Unit.INSTANCE;
            });
            s.post(t -> {
                t.actor(op("pop"));
                t.actor(op("pop"));
                return Unit.INSTANCE;
            });
            return Unit.INSTANCE;
        });
    }

    /** Two thieves (one gets CONTENDED and retries) and the owner popping between their steps. */
    static ExecutionScenario twoThievesAndTheOwner() {
        return LincheckSupport.scenario(WorkQueueLincheckTest.class,
                "push 1; push 2; push 3",
                "pop; push 4 | steal 2 | steal 1",
                null);
    }

    private static KFunction<?> op(String name) {
        return LincheckSupport.op(WorkQueueLincheckTest.class, name);
    }

    /**
     * The sequential specification: a FIFO queue of {@link #CAPACITY} values; steal removes the
     * {@code n} oldest, or nothing when there are fewer.
     */
    public static final class Spec {
        private final ArrayDeque<Integer> values = new ArrayDeque<>();

        /** An empty queue. */
        public Spec() {}

        /** Appends, unless full. */
        public boolean push(int v) {
            if (values.size() == CAPACITY) {
                return false;
            }
            values.addLast(v);
            return true;
        }

        /** Removes the oldest, or -1. */
        public int pop() {
            Integer v = values.pollFirst();
            return v == null ? -1 : v;
        }

        /** Removes the {@code n} oldest, oldest first, if there are that many; else nothing. */
        public List<Integer> steal(int n) {
            List<Integer> taken = new ArrayList<>();
            if (values.size() >= n) {
                for (int i = 0; i < n; i++) {
                    taken.add(values.pollFirst());
                }
            }
            return taken;
        }

        /** The count. */
        public int size() {
            return values.size();
        }
    }
}
