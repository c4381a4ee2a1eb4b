package dev.coro.scheduler;

import dev.coro.LincheckSupport;
import java.util.ArrayDeque;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What the Lincheck tests of one {@link InjectionQueue} shard share ({@link InjectionQueueLincheckTest}:
 * any number of consumers; {@link InjectionQueueBatchLincheckTest}: the batch take, one consumer):
 * a fresh one-shard queue per run with small segments, values that are numbered {@link Item}s, the
 * run sizes of both modes, and the FIFO {@link Spec} their specifications extend.
 */
public abstract class InjectionQueueLincheck {
    /** The queue under test: one worker, so one shard (shard 0). */
    final InjectionQueue queue;
    /** Operations per thread in the parallel part of a model-checked scenario. */
    private final int modelCheckActorsPerThread;

    /**
     * A fresh, empty queue whose segments hold {@code segment} slots (Lincheck creates one instance
     * per run).
     */
    InjectionQueueLincheck(int segment, int modelCheckActorsPerThread) {
        this.queue = new InjectionQueue(1, segment);
        this.modelCheckActorsPerThread = modelCheckActorsPerThread;
    }

    /** A runnable that is only a number. */
    record Item(int value) implements Runnable {
        @Override
        public void run() {}
    }

    /** The number of a taken {@link Item}, or -1 for none. */
    static int valueOf(Runnable r) {
        return r == null ? -1 : ((Item) r).value();
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(3).actorsPerThread(modelCheckActorsPerThread).actorsBefore(2).actorsAfter(1)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    /** Both runs of this test: its specification and custom scenarios. */
    abstract LincheckSupport.Check check();

    /** The sequential specification's base: a FIFO queue that counts the values taken. */
    public static class Spec {
        /** The values, oldest first. */
        final ArrayDeque<Integer> values = new ArrayDeque<>();
        /** Values taken so far from the front: the index of the oldest one. */
        long taken;

        /** An empty queue. */
        public Spec() {}

        /** Appends. */
        public void offer(int v) {
            values.addLast(v);
        }

        /** Removes the oldest, or -1. */
        public int poll() {
            Integer v = values.pollFirst();
            if (v == null) {
                return -1;
            }
            taken++;
            return v;
        }

        /** Whether there is no value. */
        public boolean isEmpty() {
            return values.isEmpty();
        }
    }
}
