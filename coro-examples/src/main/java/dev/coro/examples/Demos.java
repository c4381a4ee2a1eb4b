package dev.coro.examples;

import dev.coro.examples.channel.ChannelFizzBuzz;
import dev.coro.examples.channel.ChannelSieve;
import dev.coro.examples.channel.GeneratorSieve;
import dev.coro.examples.gates.CacheMissStorm;
import dev.coro.examples.gates.FlakyDependency;
import dev.coro.examples.gates.FutureGatesTour;
import dev.coro.examples.gates.GatesTour;
import dev.coro.examples.gates.WriteBehindLog;
import dev.coro.examples.io.EchoClient;
import dev.coro.examples.io.FizzBuzz;
import dev.coro.examples.observe.ObservedService;
import dev.coro.examples.pool.PoolDemo;
import dev.coro.scheduler.WorkStealingPool;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The README's main command: {@code ./coro demo [name...]} runs the named demos, or all of them.
 */
public final class Demos {
    private Demos() {}

    /** What {@code ./coro demo} runs with no argument (the single future-gate demos are in "gates"). */
    private static final String[] ALL = {"hello", "pool", "fizzbuzz", "echo", "gates", "sieve", "sieve-generators", "fizzbuzz-channels"};

    /** Runs one example of the future gates on an 8-worker pool. */
    private static void futureGates(java.util.function.Consumer<FutureGatesTour> example) {
        try (WorkStealingPool pool = WorkStealingPool.create(8, "gates")) {
            example.accept(new FutureGatesTour(System.out, pool));
        }
    }

    /** Runs the demos named in {@code args} (all when none), or lists them with {@code --list}. */
    public static void main(String[] args) {
        Map<String, Runnable> demos = new LinkedHashMap<>();
        demos.put("hello", () -> Hello.main(new String[0]));
        demos.put("pool", () -> new PoolDemo(System.out, Duration.ofMillis(20)).runAll());
        demos.put("fizzbuzz", () -> new FizzBuzz(System.out, Duration.ofMillis(100)).run());
        demos.put("echo", () -> EchoClient.demo(System.out));
        demos.put("gates", () -> {
            try (WorkStealingPool pool = WorkStealingPool.create(8, "gates")) {
                new GatesTour(System.out, pool).runAll();
                new FutureGatesTour(System.out, pool).runAll();
                new FlakyDependency(System.out).run();
                new CacheMissStorm(System.out).storm(10_000, 100);
                new WriteBehindLog(System.out).runAll();
            }
        });
        demos.put("ledger", () -> futureGates(tour -> tour.ledger(100_000, 1_000)));
        demos.put("decode", () -> futureGates(tour -> tour.imageDecoding(200, 64)));
        demos.put("priority", () -> futureGates(tour -> tour.interactiveOverBatch(20, 5)));
        demos.put("deadline", () -> futureGates(tour -> tour.deadlineService(40)));
        demos.put("rate", () -> futureGates(tour -> tour.rateLimitedClient(300)));
        demos.put("search", () -> futureGates(tour -> {
            tour.searchBox("coroutines on the jvm", false);
            tour.searchBox("coroutines on the jvm", true);
        }));
        demos.put("writebehind", () -> new WriteBehindLog(System.out).runAll());
        demos.put("coalesce", () -> new CacheMissStorm(System.out).storm(10_000, 100));
        demos.put("breaker", () -> new FlakyDependency(System.out).run());
        demos.put("backpressure", () -> futureGates(tour -> tour.producerAndConsumer(200, 8)));
        demos.put("observe", () -> new ObservedService(System.out).run(400));
        demos.put("sieve", () -> ChannelSieve.run(System.out));
        demos.put("sieve-generators", () -> new GeneratorSieve().run(System.out));
        demos.put("fizzbuzz-channels", () -> new ChannelFizzBuzz(System.out, Duration.ofMillis(100)).run());
        if (args.length == 1 && (args[0].equals("--list") || args[0].equals("--help"))) {
            System.out.println("demos: " + String.join(", ", demos.keySet()) + " (no argument: "
                    + String.join(", ", ALL) + "; gates includes ledger, decode, priority, deadline, rate, search, backpressure, breaker, coalesce, writebehind)");
            return;
        }
        String[] names = args.length == 0 ? ALL : args;
        for (String name : names) {
            Runnable demo = demos.get(name);
            if (demo == null) {
                System.err.println("unknown demo '" + name + "'; demos: " + String.join(", ", demos.keySet()));
                System.exit(2);
            }
            System.out.println("######## demo: " + name);
            demo.run();
        }
    }
}
