package dev.coro.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The 4-ary timer heap against a sorted-set model, with random adds, polls and removals. */
class TimerHeapTest {

    @Test
    void matchesASortedSetUnderRandomOperations() {
        long seed = new SplittableRandom().nextLong();
        SplittableRandom rnd = new SplittableRandom(seed);
        TimerHeap heap = new TimerHeap();
        TreeSet<LoopTimer> model = new TreeSet<>(
                Comparator.<LoopTimer>comparingLong(t -> t.deadline).thenComparingLong(t -> t.seq));
        List<LoopTimer> live = new ArrayList<>();
        for (int step = 0; step < 200_000; step++) {
            int op = rnd.nextInt(10);
            if (op < 5 || live.isEmpty()) {
                LoopTimer t = new LoopTimer(null, () -> {}, rnd.nextLong(0, 1000));
                heap.add(t);
                model.add(t);
                live.add(t);
            } else if (op < 7) {
                LoopTimer expected = model.pollFirst();
                assertSame(expected, heap.poll(), "seed " + seed);
                live.remove(expected);
                assertEquals(-1, expected.index);
            } else {
                LoopTimer t = live.remove(rnd.nextInt(live.size()));
                assertTrue(heap.remove(t), "seed " + seed);
                assertFalse(heap.remove(t));
                model.remove(t);
            }
            assertEquals(model.size(), heap.size());
            if (step % 1000 == 0) {
                assertTrue(heap.isConsistent(), "seed " + seed);
            }
        }
        while (!model.isEmpty()) {
            assertSame(model.pollFirst(), heap.poll());
        }
        assertNull(heap.poll());
        assertTrue(heap.isEmpty());
    }
}
