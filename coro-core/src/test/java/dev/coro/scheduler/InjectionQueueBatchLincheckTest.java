package dev.coro.scheduler;

import dev.coro.LincheckSupport;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;

/**
 * Lincheck checks the batch take of {@link InjectionQueue} ({@link InjectionQueue#pollInto}) against
 * {@link Spec}, in model-checking and stress modes: submitters {@link #offer} on every thread while
 * one consumer (a worker: {@link #batch}, {@link #poll} and {@link #isEmpty} share a non-parallel
 * group) takes. With one consumer a batch is linearizable at its last slot load: it takes the
 * oldest value and the values after it, at most {@code max} in all, never past the end of the
 * oldest value's segment. A batch that read a slot before its submitter wrote it stops there
 * (that submitter sees the slot before its own taken, and signals: I4 of InjectionQueue); a batch
 * that moved the head one slot too far, or past an unwritten slot, loses a value, which this test
 * reports.
 *
 * <p>Segments hold three slots, so that batches end at segment ends and offers link new segments
 * while a batch runs.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:9")
@Param(name = "max", gen = IntGen.class, conf = "1:3")
public class InjectionQueueBatchLincheckTest extends InjectionQueueLincheck {
    /** Slots per segment. */
    static final int SEGMENT = 3;

    /** A fresh, empty queue per scenario (Lincheck creates one instance per run). */
    public InjectionQueueBatchLincheckTest() {
        super(SEGMENT, 3);
    }

    /** A submitter appends {@code v}. */
    @Operation
    public void offer(@Param(name = "v") int v) {
        queue.offer(new Item(v), 0);
    }

    /**
     * The consumer takes a batch of at most {@code max} into a queue of its own; answers what it
     * took, oldest first (empty when the queue was empty).
     */
    @Operation(nonParallelGroup = "consumer")
    public List<Integer> batch(@Param(name = "max") int max) {
        WorkQueue mine = new WorkQueue(4);
        Runnable first = queue.pollInto(0, mine, max);
        List<Integer> taken = new ArrayList<>();
        if (first != null) {
            taken.add(valueOf(first));
            Runnable r;
            while ((r = mine.pop()) != null) {
                taken.add(valueOf(r));
            }
        }
        return taken;
    }

    /** The consumer takes the oldest value, or -1. */
    @Operation(nonParallelGroup = "consumer")
    public int poll() {
        return valueOf(queue.poll(0));
    }

    /** The consumer's park re-check. */
    @Operation(nonParallelGroup = "consumer")
    public boolean isEmpty() {
        return queue.isEmpty();
    }

    @Override
    LincheckSupport.Check check() {
        return LincheckSupport.lincheck(InjectionQueueBatchLincheckTest.class)
                .spec(Spec.class)
                .scenarios(batchesRacingOffersAcrossSegmentEnds());
    }

    /** Two submitters fill two segments while the consumer batches from the first. */
    static ExecutionScenario batchesRacingOffersAcrossSegmentEnds() {
        return LincheckSupport.scenario(InjectionQueueBatchLincheckTest.class,
                "offer 1; offer 2",
                "offer 3; offer 4; offer 5 | offer 6; offer 7 | batch 3; batch 3; isEmpty",
                "batch 3; batch 3; poll");
    }

    /**
     * The sequential specification: a FIFO queue whose batch takes the oldest values, at most
     * {@code max}, up to the end of the segment the oldest one is in (values fill segments of
     * {@link #SEGMENT} in order).
     */
    public static final class Spec extends InjectionQueueLincheck.Spec {
        /** An empty queue. */
        public Spec() {}

        /** Takes up to {@code max} oldest values, not past the oldest one's segment. */
        public List<Integer> batch(int max) {
            int room = SEGMENT - (int) (taken % SEGMENT);
            List<Integer> out = new ArrayList<>();
            while (out.size() < Math.min(max, room) && !values.isEmpty()) {
                out.add(values.pollFirst());
                taken++;
            }
            return out;
        }
    }
}
