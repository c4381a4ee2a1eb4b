package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.Stress;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Many tasks on a real pool: every element received exactly once, each producer's order kept, and
 * selects over many channels take each element once. Sizes grow with {@code -Dcoro.stress.scale}
 * (the stress profile's scale of 40 gives the 1,000,000 elements per producer).
 */
class ChannelStressTest {

    @Test
    @Tag("stress")
    void eightProducersAndEightConsumersThroughBuffered64() {
        int producers = 8;
        int consumers = 8;
        int perProducer = Stress.scaled(25_000);
        Channel<Long> ch = Channel.buffered(64);
        AtomicIntegerArray seen = new AtomicIntegerArray(producers * perProducer);
        try (WorkStealingPool pool = WorkStealingPool.create(4, "channel-stress")) {
            List<Task<?>> all = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                long base = (long) p << 32;
                all.add(Task.loop(0, i -> i < perProducer, i -> ch.send(base | i).map(sent -> i + 1)).startOn(pool));
            }
            List<Task<long[]>> readers = new ArrayList<>();
            for (int c = 0; c < consumers; c++) {
                long[] last = new long[producers];
                java.util.Arrays.fill(last, -1);
                readers.add(ch.forEach(v -> {
                    int p = (int) (v >>> 32);
                    int i = (int) (long) v;
                    assertTrue(i > last[p], "producer " + p + "'s order kept: " + i + " after " + last[p]);
                    last[p] = i;
                    seen.incrementAndGet(p * perProducer + i);
                }).map(done -> last).startOn(pool));
            }
            Task<?> consume = Task.whenAll(readers);
            var consuming = consume.toCompletableFuture();
            Task.whenAll(all).join();
            ch.close();
            consuming.join();
        }
        for (int k = 0; k < seen.length(); k++) {
            assertEquals(1, seen.get(k), "element " + k + " received exactly once");
        }
    }

    @Test
    @Tag("stress")
    void selectsOverSixteenChannelsTakeEachElementOnce() {
        int channels = 16;
        int rounds = Stress.scaled(20_000);
        List<Channel<Integer>> chs = new ArrayList<>();
        for (int i = 0; i < channels; i++) {
            chs.add(Channel.rendezvous());
        }
        List<SelectClause<Integer>> clauses = new ArrayList<>();
        for (Channel<Integer> c : chs) {
            clauses.add(c.onReceive(v -> v));
        }
        AtomicIntegerArray seen = new AtomicIntegerArray(rounds);
        try (WorkStealingPool pool = WorkStealingPool.create(4, "select-stress")) {
            Task<Integer> selecting = Task.loop(0, n -> n < rounds, n -> Select.select(clauses, true).map(v -> {
                seen.incrementAndGet(v);
                return n + 1;
            })).startOn(pool);
            var done = selecting.toCompletableFuture();
            List<Task<?>> senders = new ArrayList<>();
            int perSender = rounds / 4;
            for (int s = 0; s < 4; s++) {
                int from = s * perSender;
                senders.add(Task.loop(from, i -> i < from + perSender, i -> chs.get(i % channels).send(i)
                        .map(sent -> i + 1)).startOn(pool));
            }
            Task.whenAll(senders).join();
            done.join();
        }
        for (int k = 0; k < rounds; k++) {
            assertEquals(1, seen.get(k), "element " + k + " selected exactly once");
        }
    }
}
