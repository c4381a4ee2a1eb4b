package dev.coro.examples.gates;

import dev.coro.gate.CallNotPermittedException;
import dev.coro.gate.CircuitBreakerGate;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import dev.coro.test.VirtualTimeScheduler;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A {@link CircuitBreakerGate} in front of a dependency that fails for a while and then recovers,
 * on virtual time (coro-test's {@link VirtualTimeScheduler}), so every time it prints is exact.
 *
 * <p>A client calls an inventory service every 100 ms for 20 s; each call takes 50 ms. The service
 * is down from 2 s to 12 s: every call that reaches it then fails. The breaker (the last 10 calls,
 * at least 5, 50 % failures, open for 3 s, 2 trials) opens after the fifth failure, refuses the calls
 * of the next 3 s at once without running them, lets two trials through when the open period ends,
 * reopens on a failed trial, and closes once the trials succeed after the service has recovered.
 * It prints the calls made, the calls refused at once, and each transition with its time;
 * {@code FlakyDependencyTest} checks every printed fact.
 */
public final class FlakyDependency {
    private static final long MS = 1_000_000;
    private final PrintStream out;

    /**
     * Creates the example.
     *
     * @param out where it prints
     */
    public FlakyDependency(PrintStream out) {
        this.out = out;
    }

    /**
     * What {@link #run()} saw.
     *
     * @param calls the calls the client made
     * @param reached the calls the breaker let through to the service
     * @param failed the calls that reached the service and failed
     * @param refused the calls refused at once with {@link CallNotPermittedException}
     * @param refusedAfterWaiting the refused calls that ended later than they were made (none: a
     *     refusal is immediate)
     * @param callsWhileDown the calls made while the service was down
     * @param reachedWhileDown those of them that reached it
     * @param transitions each transition, as "FROM -> TO at N ms"
     * @param firstRefusal the message of the first refusal
     */
    public record Run(int calls, int reached, int failed, int refused, int refusedAfterWaiting, int callsWhileDown,
            int reachedWhileDown, List<String> transitions, String firstRefusal) {}

    /**
     * Runs the 20 s of calls on virtual time and prints what happened.
     *
     * @return what it saw
     */
    public Run run() {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        List<String> transitions = new ArrayList<>(); // the listener runs on this thread, inside the clock's runs
        CircuitBreakerGate breaker = CircuitBreakerGate.builder("inventory")
                .clock(clock)
                .countWindow(10).minimumCalls(5).failureRateThreshold(50)
                .openFor(Duration.ofSeconds(3))
                .halfOpenTrials(2)
                .onStateChange(t -> transitions.add(t.from() + " -> " + t.to() + " at " + t.atNanos() / MS + " ms"))
                .build();
        long downFrom = 2_000 * MS, downUntil = 12_000 * MS;
        int calls = 200;
        AtomicInteger reached = new AtomicInteger(), failed = new AtomicInteger(), refused = new AtomicInteger();
        AtomicInteger refusedAfterWaiting = new AtomicInteger(), callsWhileDown = new AtomicInteger();
        AtomicInteger reachedWhileDown = new AtomicInteger();
        AtomicReference<String> firstRefusal = new AtomicReference<>();
        // The service: down from 2 s to 12 s; each call takes 50 ms.
        Task<String> inventory = Task.defer(() -> {
            long now = clock.nanoTime();
            boolean down = now >= downFrom && now < downUntil;
            reached.incrementAndGet();
            if (down) {
                reachedWhileDown.incrementAndGet();
            }
            return Task.delay(Duration.ofMillis(50))
                    .then(down ? Task.<String>failure(new IOException("inventory service is down")) : Task.value("in stock"));
        });
        Scope scope = Scope.on(clock);
        for (int i = 0; i < calls; i++) {
            long madeAt = i * 100 * MS;
            if (madeAt >= downFrom && madeAt < downUntil) {
                callsWhileDown.incrementAndGet();
            }
            scope.spawn(Task.delay(Duration.ofNanos(madeAt)).then(breaker.within(inventory).outcome().map(o -> {
                if (o instanceof Outcome.Failure<String> f && f.error() instanceof CallNotPermittedException e) {
                    refused.incrementAndGet();
                    firstRefusal.compareAndSet(null, e.getMessage());
                    if (clock.nanoTime() != madeAt) {
                        refusedAfterWaiting.incrementAndGet();
                    }
                } else if (o instanceof Outcome.Failure<String>) {
                    failed.incrementAndGet();
                }
                return null;
            })));
        }
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        out.println("flaky dependency (virtual time): " + calls + " calls, one every 100 ms; the service is down from 2 s"
                + " to 12 s; breaker: last 10 calls, at least 5, opens at 50 % failures, open for 3 s, 2 trials");
        out.println("  calls that reached the service: " + reached.get() + " (" + failed.get() + " failed); refused at once"
                + " while open: " + refused.get() + " (" + refusedAfterWaiting.get() + " waited)");
        out.println("  while the service was down: " + reachedWhileDown.get() + " of " + callsWhileDown.get()
                + " calls reached it");
        for (String t : transitions) {
            out.println("  " + t);
        }
        out.println("  first refusal: " + firstRefusal.get());
        breaker.close();
        return new Run(calls, reached.get(), failed.get(), refused.get(), refusedAfterWaiting.get(), callsWhileDown.get(),
                reachedWhileDown.get(), List.copyOf(transitions), firstRefusal.get());
    }

    /**
     * Runs the example, printing to standard output.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        new FlakyDependency(System.out).run();
    }
}
