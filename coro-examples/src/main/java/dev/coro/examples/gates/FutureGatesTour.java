package dev.coro.examples.gates;

import dev.coro.gate.Admission;
import dev.coro.gate.BackpressureGate;
import dev.coro.gate.BudgetGate;
import dev.coro.gate.DeadlineGate;
import dev.coro.gate.KeyedSerialGate;
import dev.coro.gate.LatestOnlyGate;
import dev.coro.gate.PriorityGate;
import dev.coro.gate.RateGate;
import dev.coro.gate.SerialGate;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Outcome;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import dev.coro.test.VirtualTimeScheduler;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The future gates of paper P4215 (seed 003) that change who is admitted next and what an admission
 * costs, one runnable example each, in the style of {@link GatesTour}: {@code ./coro demo gates}
 * runs them after the paper's six, and {@code ./coro demo ledger} (or {@code decode},
 * {@code priority}, {@code deadline}) runs one. Each prints what its gate guaranteed;
 * {@code FutureGatesTourTest} checks each printed fact.
 */
public final class FutureGatesTour {
    private final PrintStream out;
    private final WorkStealingPool pool;

    /**
     * Creates the tour on {@code pool}.
     *
     * @param out where it prints
     * @param pool where the examples' operations run
     */
    public FutureGatesTour(PrintStream out, WorkStealingPool pool) {
        this.out = out;
        this.pool = pool;
    }

    /** Runs every example. */
    public void runAll() {
        ledger(100_000, 1_000);
        imageDecoding(200, 64);
        interactiveOverBatch(20, 5);
        deadlineService(40);
        rateLimitedClient(300);
        searchBox("coroutines on the jvm", false);
        searchBox("coroutines on the jvm", true);
        producerAndConsumer(200, 8);
    }

    private void line(String text) {
        synchronized (out) {
            out.println(text);
        }
    }

    private void runAll(List<? extends Task<?>> tasks) {
        Scope scope = Scope.on(pool);
        for (Task<?> task : tasks) {
            scope.spawn(task);
        }
        scope.joinBlocking();
        scope.close();
    }

    // ---- keyed serial gate ----

    /** What {@link #ledger(int, int)} saw. */
    public record Ledger(int updates, int accounts, boolean balancesExact, int mostPerAccount, int mostAccounts) {}

    /**
     * Per-account serialization of ledger updates: each update reads an account's balance, yields
     * (I/O), and writes it back plus its amount; the keyed gate makes each account's read-modify-write
     * whole while different accounts update in parallel.
     *
     * @param updates the updates, spread over the accounts
     * @param accounts the accounts
     * @return whether every balance is exact, and the most updates seen inside at once per account
     *     and across accounts
     */
    public Ledger ledger(int updates, int accounts) {
        KeyedSerialGate<Integer> accountGate = new KeyedSerialGate<>();
        long[] balances = new long[accounts]; // plain: the gate orders each account's updates
        long[] expected = new long[accounts];
        AtomicInteger[] perAccount = new AtomicInteger[accounts];
        for (int a = 0; a < accounts; a++) {
            perAccount[a] = new AtomicInteger();
        }
        AtomicInteger mostPerAccount = new AtomicInteger();
        Occupancy acrossAccounts = new Occupancy();
        SplittableRandom random = new SplittableRandom(7);
        List<Task<Void>> work = new ArrayList<>();
        for (int i = 0; i < updates; i++) {
            int account = random.nextInt(accounts);
            long amount = random.nextInt(-50, 100);
            expected[account] += amount;
            long[] read = new long[1];
            Task<Void> update = Task.fromRunnable(() -> {
                        mostPerAccount.accumulateAndGet(perAccount[account].incrementAndGet(), Math::max);
                        acrossAccounts.enter();
                        read[0] = balances[account];
                    })
                    .then(Task.yieldNow()) // another update of the account would interleave here
                    .then(Task.fromRunnable(() -> {
                        balances[account] = read[0] + amount;
                        acrossAccounts.exit();
                        perAccount[account].decrementAndGet();
                    }));
            work.add(accountGate.within(account, update));
        }
        runAll(work);
        boolean exact = java.util.Arrays.equals(balances, expected);
        line("per-account ledger: " + updates + " updates over " + accounts + " accounts, balances "
                + (exact ? "exact" : "WRONG") + "; at most " + mostPerAccount.get() + " update per account at once, "
                + acrossAccounts.most() + " accounts at once; " + accountGate.activeKeys() + " account entries left");
        accountGate.closeAndCheck();
        return new Ledger(updates, accounts, exact, mostPerAccount.get(), acrossAccounts.most());
    }

    // ---- budget gate ----

    /** What {@link #imageDecoding(int, long)} saw. */
    public record Decoding(int images, long budgetMiB, long peakMiB, int decoded) {}

    /**
     * A memory budget for image decoding: each decode holds its image's decoded size (1 to 16 MiB)
     * from the budget while it runs; large and small images share it, FIFO.
     *
     * @param images the decode jobs
     * @param budgetMiB the budget, in MiB
     * @return the peak MiB in flight and how many images were decoded
     */
    public Decoding imageDecoding(int images, long budgetMiB) {
        BudgetGate memory = new BudgetGate(budgetMiB << 20);
        AtomicLong inFlight = new AtomicLong();
        AtomicLong peak = new AtomicLong();
        AtomicInteger decoded = new AtomicInteger();
        SplittableRandom random = new SplittableRandom(3);
        List<Task<Void>> work = new ArrayList<>();
        for (int i = 0; i < images; i++) {
            long bytes = (1 + random.nextInt(16)) << 20;
            Task<Void> decode = Task.fromRunnable(() -> peak.accumulateAndGet(inFlight.addAndGet(bytes), Math::max))
                    .then(Task.delay(Duration.ofMillis(1))) // decoding
                    .then(Task.fromRunnable(() -> {
                        inFlight.addAndGet(-bytes);
                        decoded.incrementAndGet();
                    }));
            work.add(memory.within(bytes, decode));
        }
        runAll(work);
        long peakMiB = peak.get() >> 20;
        line("image decoding budget: " + decoded.get() + " of " + images + " images decoded, peak " + peakMiB
                + " MiB in flight (budget " + budgetMiB + " MiB)");
        memory.closeAndCheck();
        return new Decoding(images, budgetMiB, peakMiB, decoded.get());
    }

    // ---- priority gate ----

    /** What {@link #interactiveOverBatch(int, int)} saw. */
    public record Priorities(int batch, int interactive, int interactiveAheadOfQueuedBatch,
            double meanInteractiveWaitMs, double meanBatchWaitMs) {}

    /**
     * Interactive requests overtake queued batch work in front of a busy service of capacity 2: batch
     * jobs queue first, interactive requests arrive after them, and every interactive request is
     * admitted before the batch jobs still queued. The requests arrive from this thread, in order.
     *
     * @param batch the batch jobs, queued first
     * @param interactive the interactive requests, arriving after them
     * @return how many interactive requests were admitted ahead of every queued batch job, and the
     *     mean wait of each class
     */
    public Priorities interactiveOverBatch(int batch, int interactive) {
        PriorityGate service = new PriorityGate(2);
        ConcurrentLinkedQueue<String> admitted = new ConcurrentLinkedQueue<>();
        AtomicLong interactiveWait = new AtomicLong();
        AtomicLong batchWait = new AtomicLong();
        Admission a1 = service.acquire(0).join(); // the service is busy when the queue forms
        Admission a2 = service.acquire(0).join();
        // Spawned on the inline scheduler: each request reaches the gate (and queues) before the next
        // is spawned, so the batch jobs are queued first; admitted work then runs where the slot
        // frees and on the timer thread of its delay.
        Scope scope = Scope.on(Scheduler.inline());
        for (int i = 0; i < batch; i++) {
            scope.spawn(request(service, 0, "batch", admitted, batchWait));
        }
        for (int i = 0; i < interactive; i++) {
            scope.spawn(request(service, 10, "interactive", admitted, interactiveWait));
        }
        a1.exit();
        a2.exit();
        scope.joinBlocking();
        scope.close();
        List<String> order = new ArrayList<>(admitted);
        int ahead = 0;
        while (ahead < order.size() && order.get(ahead).equals("interactive")) {
            ahead++;
        }
        double meanInteractive = interactiveWait.get() / 1e6 / interactive;
        double meanBatch = batchWait.get() / 1e6 / batch;
        line(String.format("interactive over batch: %d interactive requests admitted ahead of %d queued batch jobs;"
                + " mean wait %.1f ms interactive, %.1f ms batch", ahead, batch, meanInteractive, meanBatch));
        service.closeAndCheck();
        return new Priorities(batch, interactive, ahead, meanInteractive, meanBatch);
    }

    private Task<Void> request(PriorityGate service, int priority, String kind, ConcurrentLinkedQueue<String> admitted,
            AtomicLong waits) {
        return Task.defer(() -> {
            long arrived = System.nanoTime();
            return service.within(priority, Task.fromRunnable(() -> {
                waits.addAndGet(System.nanoTime() - arrived);
                admitted.add(kind);
            }).then(Task.delay(Duration.ofMillis(2))));
        });
    }

    // ---- deadline gate ----

    /** What {@link #deadlineService(int)} saw. */
    public record Deadlines(int requests, int served, int timedOut, int admittedLate, long lastAdmittedMs,
            long timedOutAtMs) {}

    /**
     * A deadline gate in front of a slow service (capacity 2, 5 ms a call): requests that must be
     * admitted within 12 ms all arrive at once; those that cannot be fail at their deadline with a
     * timeout instead of taking a slot whose answer nobody waits for any more. It runs on virtual time
     * (coro-test's {@link VirtualTimeScheduler}), so its times are exact: calls are admitted at 0, 5
     * and 10 ms, and the rest time out at 12 ms.
     *
     * @param requests the requests
     * @return how many were served and timed out, how many were admitted after their deadline (none),
     *     the last admission time and the time the others timed out
     */
    public Deadlines deadlineService(int requests) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        DeadlineGate service = new DeadlineGate(2, clock);
        AtomicInteger served = new AtomicInteger();
        AtomicInteger timedOut = new AtomicInteger();
        AtomicInteger admittedLate = new AtomicInteger();
        AtomicLong lastAdmitted = new AtomicLong();
        AtomicLong timedOutAt = new AtomicLong(-1);
        Scope scope = Scope.on(clock);
        for (int i = 0; i < requests; i++) {
            long deadline = clock.nanoTime() + Duration.ofMillis(12).toNanos();
            Task<Void> call = Task.fromRunnable(() -> {
                lastAdmitted.set(clock.nanoTime());
                if (clock.nanoTime() > deadline) {
                    admittedLate.incrementAndGet();
                }
            }).then(Task.delay(Duration.ofMillis(5))); // the slow service
            scope.spawn(service.within(deadline, call).outcome().map(o -> {
                if (o instanceof Outcome.Value<Void>) {
                    served.incrementAndGet();
                } else if (o instanceof Outcome.Failure<Void> f && f.error() instanceof TimeoutException) {
                    timedOut.incrementAndGet();
                    timedOutAt.set(clock.nanoTime());
                }
                return null;
            }));
        }
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        long lastMs = lastAdmitted.get() / 1_000_000;
        long timeoutMs = timedOutAt.get() / 1_000_000;
        line("deadline service (virtual time): " + requests + " requests due within 12 ms, " + served.get()
                + " served (the last admitted at " + lastMs + " ms), " + timedOut.get() + " timed out at "
                + timeoutMs + " ms without taking a slot, " + admittedLate.get() + " admitted after their deadline");
        service.closeAndCheck();
        return new Deadlines(requests, served.get(), timedOut.get(), admittedLate.get(), lastMs, timeoutMs);
    }

    // ---- rate gate ----

    /** What {@link #rateLimitedClient(int)} saw. */
    public record RateLimited(int requests, List<Integer> perSecond, int mostInAnySecond, long lastAdmittedMs) {}

    /**
     * An API client limited to 50 requests per second with bursts of 10: all requests are issued at
     * once, and the gate admits the burst at once and then one request every 20 ms, without a thread
     * waiting. It runs on virtual time, so the counts are exact: no sliding second ever holds more
     * than rate + burst = 60 admissions.
     *
     * @param requests the requests
     * @return the admissions in each second, the most in any sliding second, and the last admission
     */
    public RateLimited rateLimitedClient(int requests) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        RateGate api = new RateGate(50, 10, clock);
        ConcurrentLinkedQueue<Long> admittedAt = new ConcurrentLinkedQueue<>();
        Scope scope = Scope.on(clock);
        for (int i = 0; i < requests; i++) {
            scope.spawn(api.within(Task.fromRunnable(() -> admittedAt.add(clock.nanoTime()))));
        }
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        long second = Duration.ofSeconds(1).toNanos();
        List<Long> times = new ArrayList<>(admittedAt);
        times.sort(null);
        List<Integer> perSecond = new ArrayList<>();
        for (long t : times) {
            int window = (int) (t / second);
            while (perSecond.size() <= window) {
                perSecond.add(0);
            }
            perSecond.set(window, perSecond.get(window) + 1);
        }
        int most = 0;
        for (int i = 0, j = 0; i < times.size(); i++) { // admissions in [times[i], times[i] + 1 s)
            while (j < times.size() && times.get(j) < times.get(i) + second) {
                j++;
            }
            most = Math.max(most, j - i);
        }
        long lastMs = times.isEmpty() ? 0 : times.get(times.size() - 1) / 1_000_000;
        line("rate-limited API client (virtual time): " + requests + " requests issued at once, 50 per second with"
                + " bursts of 10: admitted per second " + perSecond + ", at most " + most
                + " in any sliding second (never above rate + burst = 60), the last at " + lastMs + " ms");
        return new RateLimited(requests, perSecond, most, lastMs);
    }

    // ---- latest-only gate ----

    /** What {@link #searchBox(String, boolean)} saw. */
    public record SearchBox(int typed, int started, int completed, int superseded, int mostAtOnce, String shown) {}

    /**
     * A search box: one keystroke every 35 ms, each starting a query of what is typed so far, which
     * takes 100 ms; the latest-only gate runs one query at a time and keeps only the newest waiting, so
     * the queries that a newer keystroke made pointless never start. With {@code cancelRunning} a
     * keystroke also cancels the query that runs ({@code switchMap}). On virtual time, so the counts are
     * exact.
     *
     * @param text what the user types, one keystroke per character
     * @param cancelRunning whether a keystroke cancels the running query
     * @return the queries typed, started, completed and superseded, the most running at once, and the
     *     results shown last
     */
    public SearchBox searchBox(String text, boolean cancelRunning) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        LatestOnlyGate searches = cancelRunning ? LatestOnlyGate.cancellingRunning() : new LatestOnlyGate();
        AtomicInteger started = new AtomicInteger();
        AtomicInteger completed = new AtomicInteger();
        Occupancy running = new Occupancy();
        String[] shown = {""};
        Scope scope = Scope.on(clock);
        for (int i = 1; i <= text.length(); i++) {
            String query = text.substring(0, i);
            Task<String> search = Task.fromRunnable(() -> {
                        started.incrementAndGet();
                        running.enter();
                    })
                    .then(Task.delay(Duration.ofMillis(100))) // the query's I/O
                    .andFinally(running::exit)
                    .map(ignored -> query);
            Task<Void> keystroke = Task.delay(Duration.ofMillis(35L * (i - 1)))
                    .then(searches.within(search).outcome())
                    .map(o -> {
                        if (o instanceof Outcome.Value<String> v) {
                            completed.incrementAndGet();
                            shown[0] = v.value();
                        }
                        return null;
                    });
            scope.spawn(keystroke);
        }
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        searches.closeAndCheck();
        int superseded = text.length() - started.get(); // ended cancelled without starting
        line("search box, latest only" + (cancelRunning ? ", a keystroke cancels the running query" : "")
                + " (virtual time): " + text.length() + " keystrokes 35 ms apart, queries of 100 ms: "
                + started.get() + " queries started, " + completed.get() + " completed"
                + ", " + (started.get() - completed.get()) + " cancelled while running, "
                + superseded + " superseded before starting"
                + ", at most " + running.most() + " at once; shown: '" + shown[0] + "'");
        return new SearchBox(text.length(), started.get(), completed.get(), superseded, running.most(), shown[0]);
    }

    // ---- backpressure gate ----

    /** What {@link #producerAndConsumer(int, int)} saw. */
    public record Backpressure(int items, int consumed, int window, int mostInFlight, long lastConsumedMs) {}

    /**
     * A fast producer (an item every 1 ms) and a slow consumer (5 ms an item) joined by a backpressure
     * gate: the consumer grants {@code window} items at the start and one more each time it has
     * consumed one, so the items produced but not yet consumed never exceed the window and the
     * producer slows to the consumer's pace without a queue that grows. On virtual time.
     *
     * @param items the items produced
     * @param window the consumer's initial grant
     * @return the items consumed, the most in flight, and when the last was consumed
     */
    public Backpressure producerAndConsumer(int items, int window) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        BackpressureGate demand = new BackpressureGate();
        SerialGate consumer = new SerialGate();
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger mostInFlight = new AtomicInteger();
        AtomicInteger consumed = new AtomicInteger();
        long[] lastConsumedAt = {0};
        Scope scope = Scope.on(clock);
        Task<Void> consume = Task.delay(Duration.ofMillis(5)).then(Task.fromRunnable(() -> {
            consumed.incrementAndGet();
            inFlight.decrementAndGet();
            lastConsumedAt[0] = clock.nanoTime();
            demand.grant(1); // room for one more
        }));
        Task<Void> produceOne = demand.within(Task.delay(Duration.ofMillis(1)).then(Task.fromRunnable(() -> {
            mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            scope.spawn(consumer.within(consume)); // hand the item over
        })));
        demand.grant(window);
        scope.spawn(Task.loop(0, i -> i < items, i -> produceOne.map(ignored -> i + 1)));
        clock.advanceUntilIdle();
        scope.joinBlocking();
        scope.close();
        long lastMs = lastConsumedAt[0] / 1_000_000;
        line("fast producer, slow consumer (virtual time): " + items + " items made in 1 ms each, consumed in 5 ms"
                + " each, the consumer granting " + window + " and then one per item taken: " + consumed.get()
                + " consumed, at most " + mostInFlight.get() + " in flight (never above the grant of " + window
                + "), the last at " + lastMs + " ms (the consumer's pace)");
        return new Backpressure(items, consumed.get(), window, mostInFlight.get(), lastMs);
    }
}
