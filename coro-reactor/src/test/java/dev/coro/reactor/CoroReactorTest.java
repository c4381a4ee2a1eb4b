package dev.coro.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Context;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** {@link CoroReactor} against real Reactor (and its StepVerifier). */
class CoroReactorTest {
    private static final Context.Key<String> TENANT = Context.Key.named("tenant");

    @Test
    void aMonoAsATaskGivesItsValueNothingOrItsError() {
        assertEquals(1, CoroReactor.fromMono(Mono.just(1)).join());
        assertNull(CoroReactor.fromMono(Mono.<Integer>empty()).join());
        Outcome<Integer> failed = CoroReactor.fromMono(Mono.<Integer>error(new IOException("refused"))).outcome().join();
        IOException e = assertInstanceOf(IOException.class, ((Outcome.Failure<Integer>) failed).error());
        assertEquals("refused", e.getMessage());
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            assertEquals("late", CoroReactor.fromMono(Mono.delay(Duration.ofMillis(5)).map(x -> "late")).startOn(pool).join());
        }
    }

    @Test
    void cancellingTheTaskDisposesOfTheSubscription() throws Exception {
        CountDownLatch disposed = new CountDownLatch(1);
        CompletableFuture<Object> running = CoroReactor.fromMono(Mono.never().doOnCancel(disposed::countDown)).toCompletableFuture();
        running.cancel(false);
        disposed.await();
        assertTrue(running.isCancelled());
    }

    @Test
    void theMonoSeesTheTasksCoroContext() {
        Mono<String> reads = Mono.deferContextual(view -> Mono.just(view.get(Context.class).get(TENANT)));
        assertEquals("acme", CoroReactor.fromMono(reads).withValue(TENANT, "acme").join());
    }

    @Test
    void aTaskAsAMonoEmitsItsValueCompletesEmptyOrFails() {
        StepVerifier.create(CoroReactor.toMono(Task.value(1))).expectNext(1).verifyComplete();
        StepVerifier.create(CoroReactor.toMono(Task.value((Integer) null))).verifyComplete();
        StepVerifier.create(CoroReactor.toMono(Task.failure(new IllegalStateException("boom"))))
                .expectErrorMatches(e -> e instanceof IllegalStateException && e.getMessage().equals("boom")).verify();
        StepVerifier.create(CoroReactor.toMono(Task.cancelled())).expectError(CancellationException.class).verify();
    }

    @Test
    void eachSubscriptionRunsTheTaskOnce() {
        int[] runs = {0};
        Mono<Integer> mono = CoroReactor.toMono(Task.fromCallable(() -> ++runs[0]));
        assertEquals(0, runs[0], "lazy: nothing runs before a subscription");
        StepVerifier.create(mono).expectNext(1).verifyComplete();
        StepVerifier.create(mono).expectNext(2).verifyComplete();
    }

    @Test
    void cancellingTheSubscriptionCancelsTheTask() throws Exception {
        CountDownLatch cleanedUp = new CountDownLatch(1);
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            Task<Void> waits = Task.delay(Duration.ofHours(1)).andFinally(cleanedUp::countDown).startOn(pool);
            StepVerifier.create(CoroReactor.toMono(waits)).expectSubscription().thenCancel().verify();
            cleanedUp.await(); // the task's cleanup ran: it was cancelled, not left waiting an hour
        }
    }

    @Test
    void coroKeysInTheReactorContextBecomeTheTasksValues() {
        Mono<String> tenant = CoroReactor.toMono(Task.context().map(c -> c.get(TENANT)))
                .contextWrite(c -> c.put(TENANT, "acme").put("not a coro key", 1));
        StepVerifier.create(tenant).expectNext("acme").verifyComplete();
    }

    @Test
    void badInput() {
        assertThrows(NullPointerException.class, () -> CoroReactor.fromMono(null));
        assertThrows(NullPointerException.class, () -> CoroReactor.toMono(null));
    }
}
