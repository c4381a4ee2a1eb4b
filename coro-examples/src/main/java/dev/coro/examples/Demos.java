package dev.coro.examples;

import dev.coro.examples.channel.ChannelFizzBuzz;
import dev.coro.examples.channel.ChannelSieve;
import dev.coro.examples.channel.GeneratorSieve;
import dev.coro.examples.fleet.FleetDemo;
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

    /** A demo: what it shows, in one line, and how to run it. */
    private record Demo(String about, Runnable run) {}

    /**
     * What {@code ./coro demo} runs with no argument (the single future-gate demos are in "gates"). The
     * fleet demo starts a redis-server and three more JVMs; without a redis-server it says so in one line.
     */
    private static final String[] ALL = {"hello", "pool", "fizzbuzz", "echo", "gates", "sieve", "sieve-generators", "fizzbuzz-channels",
        "fleet"};

    /** Runs one example of the future gates on an 8-worker pool. */
    private static void futureGates(java.util.function.Consumer<FutureGatesTour> example) {
        try (WorkStealingPool pool = WorkStealingPool.create(8, "gates")) {
            example.accept(new FutureGatesTour(System.out, pool));
        }
    }

    /** Runs the demos named in {@code args} (all when none), or lists them with {@code --list}. */
    public static void main(String[] args) {
        Map<String, Demo> demos = new LinkedHashMap<>();
        demos.put("hello", new Demo("two tasks that each wait 50 ms, run concurrently in a scope, their sum joined", () -> Hello.main(new String[0])));
        demos.put("pool", new Demo("tasks on a pool of 4 worker threads, printing which thread runs each step", () -> new PoolDemo(System.out, Duration.ofMillis(20)).runAll()));
        demos.put("fizzbuzz", new Demo("FizzBuzz on one EventLoop: a 100 ms timer and non-blocking writes and reads on an OS pipe", () -> new FizzBuzz(System.out, Duration.ofMillis(100)).run()));
        demos.put("echo", new Demo("a TCP echo server and clients over loopback, non-blocking I/O on two EventLoops", () -> EchoClient.demo(System.out)));
        demos.put("gates", new Demo("every gate (semaphore, mutex, latch, barrier, read-write lock, rate limiter, ...) in a small scenario", () -> {
            try (WorkStealingPool pool = WorkStealingPool.create(8, "gates")) {
                new GatesTour(System.out, pool).runAll();
                new FutureGatesTour(System.out, pool).runAll();
                new FlakyDependency(System.out).run();
                new CacheMissStorm(System.out).storm(10_000, 100);
                new WriteBehindLog(System.out).runAll();
            }
        }));
        demos.put("ledger", new Demo("a keyed serial gate: per-account updates in order, different accounts in parallel", () -> futureGates(tour -> tour.ledger(100_000, 1_000))));
        demos.put("decode", new Demo("a budget gate: image decodes admitted while their bytes fit a memory budget", () -> futureGates(tour -> tour.imageDecoding(200, 64))));
        demos.put("priority", new Demo("a priority gate: interactive requests overtake queued batch work", () -> futureGates(tour -> tour.interactiveOverBatch(20, 5))));
        demos.put("deadline", new Demo("a deadline gate: earliest deadline first, late requests fail instead of waiting", () -> futureGates(tour -> tour.deadlineService(40))));
        demos.put("rate", new Demo("a rate gate: a client limited to a number of calls per second", () -> futureGates(tour -> tour.rateLimitedClient(300))));
        demos.put("search", new Demo("a latest-only gate: a search box runs only the newest query", () -> futureGates(tour -> {
            tour.searchBox("coroutines on the jvm", false);
            tour.searchBox("coroutines on the jvm", true);
        })));
        demos.put("writebehind", new Demo("a batch gate: log writes combined into batches", () -> new WriteBehindLog(System.out).runAll()));
        demos.put("coalesce", new Demo("a coalescing gate: 10,000 cache misses for 100 keys served by 100 loads", () -> new CacheMissStorm(System.out).storm(10_000, 100)));
        demos.put("breaker", new Demo("a circuit breaker around a flaky dependency", () -> new FlakyDependency(System.out).run()));
        demos.put("backpressure", new Demo("a backpressure gate: a producer admitted only as far as the consumer asked", () -> futureGates(tour -> tour.producerAndConsumer(200, 8))));
        demos.put("observe", new Demo("a small service watched with a JFR recording and Micrometer meters", () -> new ObservedService(System.out).run(400)));
        demos.put("fleet", new Demo("three JVMs share a capacity gate and a rate gate in a private redis-server; one is killed holding 2 slots", FleetDemo::demo));
        demos.put("sieve", new Demo("Go's concurrent prime sieve: 100 filter tasks connected by channels", () -> ChannelSieve.run(System.out)));
        demos.put("sieve-generators", new Demo("the prime sieve with generators, values produced on demand", () -> new GeneratorSieve().run(System.out)));
        demos.put("fizzbuzz-channels", new Demo("FizzBuzz as a pipeline of tasks and channels, with select over a tick and a quit channel", () -> new ChannelFizzBuzz(System.out, Duration.ofMillis(100)).run()));
        if (args.length == 1 && (args[0].equals("--list") || args[0].equals("--help"))) {
            System.out.println("./coro demo NAME... runs the named demos; ./coro demo runs " + String.join(", ", ALL)
                    + " (gates includes ledger, decode, priority, deadline, rate, search, backpressure, breaker,"
                    + " coalesce, writebehind)");
            demos.forEach((name, demo) -> System.out.printf("  %-18s %s%n", name, demo.about()));
            return;
        }
        String[] names = args.length == 0 ? ALL : args;
        for (String name : names) {
            Demo demo = demos.get(name);
            if (demo == null) {
                System.err.println("unknown demo '" + name + "'; demos: " + String.join(", ", demos.keySet()));
                System.exit(2);
            }
            System.out.println("######## demo: " + name + ": " + demo.about());
            demo.run().run();
        }
    }
}
