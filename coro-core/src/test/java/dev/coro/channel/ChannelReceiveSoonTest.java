package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A receive that found a buffered channel empty looks again before it waits (ChannelCore part 13)
 * only where a sender can run meanwhile: on a worker of a pool with other workers.
 */
class ChannelReceiveSoonTest {

    /** Rules out looks on a one-worker pool or a plain thread, where nothing could send meanwhile. */
    @Test
    void looksOnlyOnAWorkerOfAPoolWithOtherWorkers() {
        assertEquals(0, Channel.soonPolls(), "a plain thread");
        try (WorkStealingPool one = WorkStealingPool.create(1, "soon-one");
                WorkStealingPool two = WorkStealingPool.create(2, "soon-two")) {
            assertEquals(0, Task.fromCallable(Channel::soonPolls).startOn(one).join(), "one worker");
            assertEquals(Channel.SOON_POLLS, Task.fromCallable(Channel::soonPolls).startOn(two).join(), "two workers");
        }
        assertEquals(0, Task.fromCallable(Channel::soonPolls).startOn(Scheduler.inline()).join(), "the inline scheduler");
    }

    /** On two workers, forEach and receive (which look before they wait) take every element once, in order. */
    @Test
    void receiversThatLookTakeEveryElementOnceInOrder() {
        int n = 50_000;
        try (WorkStealingPool pool = WorkStealingPool.create(2, "soon-order")) {
            Channel<Integer> ch = Channel.buffered(8);
            Task<?> producer = Task.loop(0, i -> i < n, i -> ch.send(i).map(sent -> i + 1))
                    .andFinally(ch::close);
            List<Integer> got = new ArrayList<>();
            Task<Void> consumer = ch.forEach(got::add);
            Task.whenAll(producer, consumer, (a, b) -> null).startOn(pool).join();
            assertEquals(n, got.size());
            for (int i = 0; i < n; i++) {
                assertEquals(i, got.get(i), "FIFO, exactly once");
            }

            Channel<Integer> ch2 = Channel.buffered(4);
            Task<?> producer2 = Task.loop(0, i -> i < n, i -> ch2.send(i).map(sent -> i + 1))
                    .andFinally(ch2::close);
            Task<Long> receiver = Task.loop(new long[] {0, 0}, s -> s[1] >= 0, s -> ch2.receive().map(e -> {
                if (e == null) {
                    return new long[] {s[0], -1};
                }
                assertEquals(s[1], (long) e, "FIFO, exactly once");
                return new long[] {s[0] + e, s[1] + 1};
            })).map(s -> s[0]);
            long sum = Task.whenAll(producer2, receiver, (a, b) -> b).startOn(pool).join();
            assertEquals((long) n * (n - 1) / 2, sum);
        }
    }
}
