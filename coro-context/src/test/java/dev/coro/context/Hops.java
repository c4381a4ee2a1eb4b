package dev.coro.context;

import dev.coro.gate.Admission;
import dev.coro.gate.SerialGate;
import dev.coro.io.EventLoop;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A chain of steps that crosses every kind of hop a task makes (a pool hop, a timer resumption, a
 * gate hand-off to a waiter, an event-loop resumption), with a probe at each step, and a way to probe
 * every worker and the loop with plain runnables afterwards.
 */
final class Hops implements AutoCloseable {
    static final String POOL = "hop-pool";
    static final String LOOP = "hop-loop";
    static final List<String> STEPS = List.of(
            "first", "after-yield", "after-timer", "in-gate", "on-loop", "back-on-pool", "resumed-on-loop");

    final WorkStealingPool pool = WorkStealingPool.create(2, POOL);
    final EventLoop loop = EventLoop.start(LOOP);
    private final SerialGate gate = new SerialGate();
    /** Step name to the thread that ran it. */
    final Map<String, String> threads = new ConcurrentHashMap<>();
    private Admission held;
    private CountDownLatch reachedGate;

    /**
     * Starts every thread the chain will use before the test sets any context, so that no thread can
     * get a value by inheritance (SLF4J's basic MDC adapter, for one, keeps an InheritableThreadLocal)
     * and every value a probe finds was left by a step.
     */
    Hops() {
        List<Task<Void>> spread = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            spread.add(Task.yieldNow());
        }
        Task.whenAll(spread).startOn(pool).join();
        Task.delay(Duration.ofMillis(1)).startOn(pool).join();
        Task.delay(Duration.ofMillis(1)).startOn(loop).join();
    }

    /**
     * Starts the chain on the pool from the calling thread (which is where the context is captured),
     * with the gate held by the test so that the chain must wait for it.
     */
    CompletableFuture<Void> start(Consumer<String> probe) {
        held = gate.acquire().join();
        reachedGate = new CountDownLatch(1);
        Task<Void> chain = step("first", probe)
                .then(Task.yieldNow()) // back through the pool's queue, any worker
                .then(step("after-yield", probe))
                .then(Task.delay(Duration.ofMillis(1))) // resumed by the timer
                .then(step("after-timer", probe))
                .then(Task.fromRunnable(reachedGate::countDown))
                .then(gate.within(step("in-gate", probe))) // admitted when a worker releases the gate
                .then(Task.delay(Duration.ofMillis(1)).then(step("on-loop", probe)).startOn(loop))
                .then(step("back-on-pool", probe))
                .then(Task.delay(Duration.ofMillis(1)).resumeOn(loop))
                .then(step("resumed-on-loop", probe));
        return chain.startOn(pool).toCompletableFuture();
    }

    /**
     * Once the chain waits at the gate, lets it through from a plain runnable on a worker (a thread
     * with no context of its own), and waits for the chain to end: the chain is admitted by the
     * worker's release, a hand-off.
     */
    void finish(CompletableFuture<Void> chain) throws InterruptedException {
        reachedGate.await();
        while (gate.queueLength() == 0) {
            Thread.onSpinWait(); // until the chain is queued at the gate
        }
        pool.execute(held::close);
        chain.join();
    }

    /**
     * Runs {@code probe} as plain runnables, once on each of the pool's workers (they meet at a
     * barrier, so each runs on a different worker) and once on the loop; returns what they saw.
     */
    <T> List<T> probeEveryThread(Supplier<T> probe) throws InterruptedException {
        List<T> seen = new CopyOnWriteArrayList<>();
        int workers = pool.workers();
        CountDownLatch done = new CountDownLatch(workers + 1);
        java.util.concurrent.CyclicBarrier everyWorker = new java.util.concurrent.CyclicBarrier(workers);
        for (int i = 0; i < workers; i++) {
            pool.execute(() -> {
                try {
                    everyWorker.await(); // all of the pool's workers at once: one runnable each
                } catch (InterruptedException | java.util.concurrent.BrokenBarrierException e) {
                    throw new IllegalStateException(e);
                }
                seen.add(probe.get());
                done.countDown();
            });
        }
        loop.execute(() -> {
            seen.add(probe.get());
            done.countDown();
        });
        done.await();
        return seen;
    }

    private Task<Void> step(String name, Consumer<String> probe) {
        return Task.fromRunnable(() -> {
            threads.put(name, Thread.currentThread().getName());
            probe.accept(name);
        });
    }

    @Override
    public void close() {
        loop.close();
        pool.close();
    }
}
