package dev.coro.scheduler;

import dev.coro.LincheckSupport;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

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
public class InjectionQueueLincheckTest extends InjectionQueueLincheck {
    /** Slots per segment: small, so that scenarios cross segment ends. */
    static final int SEGMENT = 2;

    /** One value per number, the same object every time (remove matches by identity). */
    static final Item[] ITEMS = new Item[10];

    static {
        for (int i = 0; i < ITEMS.length; i++) {
            ITEMS[i] = new Item(i);
        }
    }

    /** A fresh, empty queue per scenario (Lincheck creates one instance per run). */
    public InjectionQueueLincheckTest() {
        super(SEGMENT, 2);
    }

    /** A submitter appends {@code v} (whether it must signal is not a queue state: not checked here). */
    @Operation
    public void offer(@Param(name = "v") int v) {
        queue.offer(ITEMS[v], 0);
    }

    /** A consumer takes the oldest value, or -1 when empty. */
    @Operation
    public int poll() {
        return valueOf(queue.poll(0));
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

    @Override
    LincheckSupport.Check check() {
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
    public static final class Spec extends InjectionQueueLincheck.Spec {
        /** An empty queue. */
        public Spec() {}

        /** Removes the oldest occurrence of {@code v}; whether there was one. */
        public boolean remove(int v) {
            return values.removeFirstOccurrence(v);
        }
    }
}
