package dev.coro.redis;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import dev.coro.task.TaskHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the tests of the Redis gates against a real redis-server share: a fresh gate name per test,
 * the gate objects it opened and the tasks it started (closed and cancelled after it), bounded waits
 * for a task, and work that holds a gate's admission until the test lets it go. Each subclass opens
 * its own kind of gate.
 */
@ExtendWith(RedisServerExtension.class)
abstract class RedisGateTestBase {
    /** Only makes a hang fail: generous, for a loaded machine. */
    static final Duration BOUND = Duration.ofSeconds(30);
    static final Duration SHORT_LEASE = Duration.ofMillis(300);
    /** The live gate's lease in the dead-holder tests: long, so a stalled machine never lets its own place lapse. */
    static final Duration SURVIVOR_LEASE = Duration.ofSeconds(10);

    private final String prefix;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final List<TaskHandle<?>> started = new ArrayList<>();
    /** The gate's name in this test: its method's name and a nanosecond stamp after the prefix. */
    String name;

    /** @param prefix how this class's gate names start */
    RedisGateTestBase(String prefix) {
        this.prefix = prefix;
    }

    @BeforeEach
    void name(TestInfo info) {
        name = prefix + info.getTestMethod().orElseThrow().getName() + "-" + System.nanoTime();
    }

    @AfterEach
    void closeAll() throws Exception {
        started.forEach(TaskHandle::cancel);
        for (AutoCloseable g : opened) {
            g.close();
        }
    }

    /** Closes {@code gate} after the test; returns it. */
    <G extends AutoCloseable> G opened(G gate) {
        opened.add(gate);
        return gate;
    }

    /** Starts {@code task}, to be cancelled after the test if it has not ended. */
    <T> TaskHandle<T> start(Task<T> task) {
        TaskHandle<T> h = task.start();
        started.add(h);
        return h;
    }

    static <T> T await(TaskHandle<T> h) throws Exception {
        return h.toCompletableFuture().get(BOUND.toSeconds(), SECONDS);
    }

    static <T> Outcome<T> outcome(TaskHandle<T> h) throws Exception {
        return h.outcome().toCompletableFuture().get(BOUND.toSeconds(), SECONDS);
    }

    /** The Redis key of this test's gate that ends in {@code part}, as {@code "queue"} or {@code "holders:k"}. */
    String key(String part) {
        return "coro:gate:{" + name + "}:" + part;
    }

    /** How many places the Redis queue of this test's gate holds (the gate's one lane). */
    long queued(RedisServer redis) {
        return redis.admin().zcard(key("queue"));
    }

    /** A work that signals it runs, then waits for {@code release}. */
    static Task<Void> holding(CountDownLatch running, Promise<Void> release) {
        return Task.fromRunnable(running::countDown).then(release.task());
    }

    /**
     * Starts {@link #holding} work through {@code enter} (as {@code gate::within}) and returns once it
     * runs: it holds its admission until {@link Holder#release()}.
     */
    Holder hold(UnaryOperator<Task<Void>> enter) throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        Promise<Void> release = new Promise<>();
        TaskHandle<Void> handle = start(enter.apply(holding(running, release)));
        assertTrue(running.await(BOUND.toSeconds(), SECONDS), "the holder's work runs");
        return new Holder(handle, release);
    }

    /** Admitted work that waits for the test to let it go. */
    static final class Holder {
        final TaskHandle<Void> handle;
        private final Promise<Void> release;

        private Holder(TaskHandle<Void> handle, Promise<Void> release) {
            this.handle = handle;
            this.release = release;
        }

        /** Lets the work end and waits until it has (its admission given back). */
        void release() throws Exception {
            release.complete(null);
            await(handle);
        }
    }
}
