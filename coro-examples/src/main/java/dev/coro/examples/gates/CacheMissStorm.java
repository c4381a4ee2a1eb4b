package dev.coro.examples.gates;

import dev.coro.gate.CoalescingGate;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import dev.coro.test.VirtualTimeScheduler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A cache-miss storm (P4215's coalescing gate, runnable): a cold cache receives 10,000 requests for
 * 100 keys at once, and every request goes to the loader through a {@link CoalescingGate}, so each
 * key is loaded once however many requests miss it together. Then the same storm again after the
 * loads ended, which loads again (the gate shares work in flight, it does not cache), and callers
 * that all give up, which cancels their load. Runs on virtual time, so every count is exact;
 * {@code CacheMissStormTest} checks each printed fact.
 */
public final class CacheMissStorm {
    /** How long one load takes (virtual time). */
    static final Duration LOAD_TIME = Duration.ofMillis(50);

    private final PrintStream out;

    /**
     * Creates the example.
     *
     * @param out where it prints
     */
    public CacheMissStorm(PrintStream out) {
        this.out = out;
    }

    /**
     * What {@link #storm(int, int)} saw.
     *
     * @param requests the requests of the storm
     * @param keys the keys they asked for
     * @param loads the loads the storm caused
     * @param minCallersPerLoad the fewest callers one load answered
     * @param maxCallersPerLoad the most callers one load answered
     * @param everyCallerGotItsKey whether each caller received the value of its own key
     * @param answeredAtMs when the last caller was answered (virtual ms)
     * @param secondStormLoads the loads of the same storm issued after the first one's loads ended
     * @param impatientCallers the callers of one key that all gave up before its load ended
     * @param impatientLoadCancelled whether their load was cancelled (and when, virtual ms; -1 if not)
     */
    public record Storm(int requests, int keys, int loads, int minCallersPerLoad, int maxCallersPerLoad,
            boolean everyCallerGotItsKey, long answeredAtMs, int secondStormLoads, int impatientCallers,
            long impatientLoadCancelled) {}

    /** One load's result: the key it loaded, and which load it was. */
    private record Loaded(int key, int load) {}

    /**
     * Runs the storm: {@code requests} requests over {@code keys} keys (request i asks for key
     * i mod keys), all issued at time 0; each load takes {@link #LOAD_TIME}.
     *
     * @param requests the requests
     * @param keys the keys
     * @return what it saw
     */
    public Storm storm(int requests, int keys) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        CoalescingGate<Integer, Loaded> loader = new CoalescingGate<>();
        AtomicInteger loads = new AtomicInteger();
        Map<Integer, AtomicInteger> callersPerLoad = new ConcurrentHashMap<>();
        AtomicInteger wrongKey = new AtomicInteger();
        long[] lastAnswer = new long[1];

        Scope scope = Scope.on(clock);
        for (int i = 0; i < requests; i++) {
            int key = i % keys;
            Task<Loaded> load = Task.defer(() -> {
                int id = loads.incrementAndGet();
                return Task.delay(LOAD_TIME).map(ignored -> new Loaded(key, id));
            });
            scope.spawn(loader.within(key, load).map(v -> {
                if (v.key() != key) {
                    wrongKey.incrementAndGet();
                }
                callersPerLoad.computeIfAbsent(v.load(), id -> new AtomicInteger()).incrementAndGet();
                lastAnswer[0] = clock.nanoTime(); // one thread: the virtual-time scheduler's
                return v;
            }));
        }
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        int firstLoads = loads.get();
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (AtomicInteger n : callersPerLoad.values()) {
            min = Math.min(min, n.get());
            max = Math.max(max, n.get());
        }
        long answeredAtMs = lastAnswer[0] / 1_000_000;
        line("cache-miss storm (virtual time): " + requests + " requests for " + keys + " keys at once, served by "
                + firstLoads + " loads; callers per load: min " + min + ", max " + max + "; every caller got its own key's value: "
                + (wrongKey.get() == 0) + "; all answered at " + answeredAtMs + " ms (one load time)");

        Scope again = Scope.on(clock); // the same storm after the loads ended: no caching, so it loads again
        for (int i = 0; i < requests; i++) {
            int key = i % keys;
            again.spawn(loader.within(key, Task.defer(() -> {
                loads.incrementAndGet();
                return Task.delay(LOAD_TIME).map(ignored -> new Loaded(key, -1));
            })));
        }
        clock.advanceUntilIdle();
        again.joinBlocking();
        again.close();
        int secondLoads = loads.get() - firstLoads;
        line("  the same storm after those loads ended: " + secondLoads + " new loads (the gate shares work in flight;"
                + " it does not cache)");

        // impatient callers: every caller of one key gives up after 10 ms of a 50 ms load
        int impatient = requests / keys;
        long start = clock.nanoTime();
        long[] cancelledAt = {-1};
        Task<Loaded> slowLoad = Task.delay(LOAD_TIME).transform(o -> {
            if (o instanceof Outcome.Cancelled<Void>) {
                cancelledAt[0] = (clock.nanoTime() - start) / 1_000_000;
                return Task.cancelled();
            }
            return Task.value(new Loaded(-1, -1));
        });
        Scope giveUp = Scope.on(clock);
        List<Task<Outcome<Loaded>>> waits = new ArrayList<>();
        for (int i = 0; i < impatient; i++) {
            waits.add(giveUp.spawn(loader.within(-1, slowLoad).timeout(Duration.ofMillis(10)).outcome()));
        }
        clock.advanceUntilIdle();
        giveUp.joinBlocking();
        giveUp.close();
        int timedOut = 0;
        for (Task<Outcome<Loaded>> w : waits) {
            if (w.join() instanceof Outcome.Failure<Loaded> f && f.error() instanceof TimeoutException) {
                timedOut++;
            }
        }
        line("  " + impatient + " callers of one key all give up after 10 ms (" + timedOut + " timed out): their load"
                + (cancelledAt[0] >= 0 ? " was cancelled at " + cancelledAt[0] + " ms, when the last one left" : " ran on"));
        return new Storm(requests, keys, firstLoads, min, max, wrongKey.get() == 0, answeredAtMs, secondLoads,
                timedOut, cancelledAt[0]);
    }

    private void line(String text) {
        out.println(text);
    }
}
