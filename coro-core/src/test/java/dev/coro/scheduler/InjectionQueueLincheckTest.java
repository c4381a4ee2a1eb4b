package dev.coro.scheduler;

import dev.coro.LincheckSupport;
import java.util.ArrayDeque;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks one shard of {@link InjectionQueue} for linearizability against {@link Spec}, a
 * sequential FIFO queue, in model-checking and stress modes: {@link #offer} from every thread (the
 * submitters' lock), {@link #poll} by any number of consumers (the slot CAS and the helped head),
 * {@link #remove} (a submitter taking its task back as it races shutdown, against consumers taking
 * it) and {@link #isEmpty} (the park re-check). Segments hold two slots, so scenarios cross segment
 * ends, where a consumer moves the shard's head segment while a submitter links the next one.
 *
 * <p>Values are interned {@link Item}s, so that {@link InjectionQueue#remove} (which matches by
 * identity) finds a value offered by another operation, and a value queued twice is a real
 * duplicate: remove takes one occurrence that no consumer took.
 *
 * <p>{@link InjectionQueue#pollInto} (a batch) is not one atomic step when several consumers take
 * at once; {@link InjectionQueueBatchLincheckTest} checks it with one consumer.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:4")
public class InjectionQueueLincheckTest {
    /** Slots per segment: small, so that scenarios cross segment ends. */
    static final int SEGMENT = 2;

    /** One value per number, the same object every time (remove matches by identity). */
    static final Item[] ITEMS = new Item[10];

    static {
        for (int i = 0; i < ITEMS.length; i++) {
            ITEMS[i] = new Item(i);
        }
    }

    private final InjectionQueue queue = new InjectionQueue(1, SEGMENT); // one worker: one shard

    /** A fresh, empty queue per scenario (Lincheck creates one instance per run). */
    public InjectionQueueLincheckTest() {}

    /** A runnable that is only a number. */
    record Item(int value) implements Runnable {
        @Override
        public void run() {}
    }

    /** A submitter appends {@code v} (whether it must signal is not a queue state: not checked here). */
    @Operation
    public void offer(@Param(name = "v") int v) {
        queue.offer(ITEMS[v], 0);
    }

    /** A consumer takes the oldest value, or -1 when empty. */
    @Operation
    public int poll() {
        Runnable r = queue.poll(0);
        return r == null ? -1 : ((Item) r).value();
    }

    /** A submitter takes back one occurrence of {@code v} that no consumer took; whether it did. */
    @Operation
    public boolean remove(@Param(name = "v") int v) {
        return queue.remove(ITEMS[v], 0);
    }

    /** The park re-check. */
    @Operation
    public boolean isEmpty() {
        return queue.isEmpty();
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(3).actorsPerThread(2).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(InjectionQueueLincheckTest.class)
                .spec(Spec.class)
                .scenarios(aRemoveRacingTwoConsumersAcrossASegmentEnd(), offersRacingAConsumerAtASegmentEnd());
    }

    /**
     * A value queued twice, the first copy at a segment's end: its submitter's remove races two
     * consumers, so the remove may lose the first copy to a consumer and must then take the second.
     */
    static ExecutionScenario aRemoveRacingTwoConsumersAcrossASegmentEnd() {
        return LincheckSupport.scenario(InjectionQueueLincheckTest.class,
                "offer 1; offer 2; offer 3",
                "offer 2; remove 2 | poll; poll | poll; isEmpty",
                "poll; poll");
    }

    /** Two submitters fill the next segments while a consumer empties the first one. */
    static ExecutionScenario offersRacingAConsumerAtASegmentEnd() {
        return LincheckSupport.scenario(InjectionQueueLincheckTest.class,
                "offer 1",
                "offer 2; offer 3 | offer 4; isEmpty | poll; poll; poll",
                "poll; isEmpty");
    }

    /** The sequential specification: a FIFO queue whose remove takes the oldest occurrence. */
    public static final class Spec {
        private final ArrayDeque<Integer> values = new ArrayDeque<>();

        /** An empty queue. */
        public Spec() {}

        /** Appends. */
        public void offer(int v) {
            values.addLast(v);
        }

        /** Removes the oldest, or -1. */
        public int poll() {
            Integer v = values.pollFirst();
            return v == null ? -1 : v;
        }

        /** Removes the oldest occurrence of {@code v}; whether there was one. */
        public boolean remove(int v) {
            return values.removeFirstOccurrence(v);
        }

        /** Whether there is no value. */
        public boolean isEmpty() {
            return values.isEmpty();
        }
    }
}
