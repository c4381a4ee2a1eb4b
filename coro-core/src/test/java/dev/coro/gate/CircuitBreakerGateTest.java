package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.gate.CircuitBreakerGate.State;
import dev.coro.gate.CircuitBreakerGate.Transition;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * CircuitBreakerGate on virtual time: opening by failure rate (count and time windows), by slow-call
 * rate, the minimum, refusal at once while open, half-open exactly after the open period, the trial
 * bound and the trials' verdict, verdicts of cancelled and ignored calls, the listener, manual
 * transitions, close, bad input.
 */
class CircuitBreakerGateTest {
    private static final long MS = 1_000_000, S = 1_000 * MS;
    private final ManualScheduler clock = new ManualScheduler();
    private final List<Transition> seen = new ArrayList<>();

    private CircuitBreakerGate.Builder builder() {
        return CircuitBreakerGate.builder("inventory").clock(clock).onStateChange(seen::add);
    }

    // ---- closed -> open ----

    @Test
    void opensWhenTheFailureRateOverTheCountWindowReachesTheThreshold() {
        CircuitBreakerGate gate = builder().countWindow(4).minimumCalls(4).failureRateThreshold(50).build();
        succeed(gate);
        succeed(gate);
        fail(gate);
        assertEquals(State.CLOSED, gate.state(), "3 calls: below the minimum");
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 3, 1, 0), gate.metrics());
        clock.advance(7 * MS);
        fail(gate);
        assertEquals(State.OPEN, gate.state(), "2 of 4 failed: 50 %");
        assertEquals(List.of(new Transition(State.CLOSED, State.OPEN, 7 * MS)), seen);
        assertEquals(new CircuitBreakerGate.Metrics(State.OPEN, 4, 2, 0), gate.metrics(), "the window that opened it");
        assertEquals(50.0, gate.metrics().failureRate());
    }

    @Test
    void theCountWindowHoldsTheLastCallsOnly() {
        CircuitBreakerGate gate = builder().countWindow(4).minimumCalls(4).failureRateThreshold(50).build();
        fail(gate);
        succeed(gate);
        succeed(gate);
        succeed(gate); // F S S S: 25 %
        succeed(gate); // S S S S: the failure has left
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 4, 0, 0), gate.metrics());
        fail(gate); // S S S F
        assertEquals(State.CLOSED, gate.state(), "25 %: had the first failure stayed, 50 %");
        fail(gate); // S S F F
        assertEquals(State.OPEN, gate.state());
    }

    @Test
    void opensWhenTheFailureRateOverTheTimeWindowReachesTheThreshold() {
        // 10 s window in 1 s buckets: a failure at 0 counts until the window's buckets are 1..10, at 10 s.
        CircuitBreakerGate gate = builder().timeWindow(Duration.ofSeconds(10)).minimumCalls(2).build();
        fail(gate);
        clock.advance(10 * S);
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 0, 0, 0), gate.metrics(),
                "at 10 s the failure's bucket is still in its slot, but out of the window");
        succeed(gate);
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 1, 0, 0), gate.metrics(), "the failure at 0 has left at 10 s");
        assertEquals(State.CLOSED, gate.state());
        fail(gate);
        assertEquals(State.OPEN, gate.state(), "1 of 2 within the window");
        assertEquals(new Transition(State.CLOSED, State.OPEN, 10 * S), seen.get(0));

        seen.clear();
        CircuitBreakerGate kept = builder().timeWindow(Duration.ofSeconds(10)).minimumCalls(2).build();
        fail(kept);
        clock.advance(10 * S - 1);
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 1, 1, 0), kept.metrics(), "a tick before 10 s it counts");
        succeed(kept);
        assertEquals(State.OPEN, kept.state(), "the failure at 0 and the success at 10 s - 1 tick: 50 %");
    }

    @Test
    void theTimeWindowCountsEveryBucketItSpans() {
        CircuitBreakerGate gate = builder().timeWindow(Duration.ofSeconds(10)).minimumCalls(100).build();
        for (int i = 0; i < 25; i++) {
            succeed(gate);
            fail(gate);
            clock.advance(S / 2);
        }
        // 12.5 s: buckets 3..12 hold the calls from 3 s on: 19 pairs (3.0, 3.5, ... 12.0).
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 38, 19, 0), gate.metrics());
        clock.advance(20 * S);
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 0, 0, 0), gate.metrics(), "all left");
    }

    @Test
    void opensWhenTheSlowCallRateReachesItsThreshold() {
        CircuitBreakerGate gate = builder().countWindow(2).minimumCalls(2).failureRateThreshold(100)
                .slowCallDuration(Duration.ofSeconds(1)).slowCallRateThreshold(50).build();
        Promise<String> fast = new Promise<>();
        CompletableFuture<Outcome<String>> f1 = start(gate, fast.task());
        clock.advance(S - 1);
        fast.complete("fast");
        assertInstanceOf(Outcome.Value.class, done(f1));
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 1, 0, 0), gate.metrics(), "1 tick short of slow");
        Promise<String> slow = new Promise<>();
        CompletableFuture<Outcome<String>> f2 = start(gate, slow.task());
        clock.advance(S);
        slow.fail(new IOException("slow and failed"));
        assertInstanceOf(Outcome.Failure.class, done(f2));
        assertEquals(State.OPEN, gate.state(), "1 of 2 slow: 50 % (its failure alone, 50 %, is below 100 %)");
        assertEquals(new CircuitBreakerGate.Metrics(State.OPEN, 2, 1, 1), gate.metrics());
        assertEquals(50.0, gate.metrics().slowCallRate());
    }

    @Test
    void slowCallsAreNotMeasuredUnlessAsked() {
        CircuitBreakerGate gate = builder().countWindow(2).minimumCalls(2).build();
        Promise<String> slow = new Promise<>();
        CompletableFuture<Outcome<String>> f = start(gate, slow.task());
        clock.advance(3_600 * S);
        slow.complete("late");
        succeed(gate);
        done(f);
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 2, 0, 0), gate.metrics());
    }

    @Test
    void belowTheMinimumCallsEvenAllFailuresDoNotOpen() {
        CircuitBreakerGate gate = builder().countWindow(10).minimumCalls(5).build();
        for (int i = 0; i < 4; i++) {
            fail(gate);
        }
        assertEquals(State.CLOSED, gate.state(), "4 failures of 4 calls, minimum 5");
        fail(gate);
        assertEquals(State.OPEN, gate.state());
    }

    @Test
    void theDefaultMinimumIsTheSmallerOf100AndTheCountWindow() {
        CircuitBreakerGate small = builder().countWindow(3).build();
        fail(small);
        fail(small);
        assertEquals(State.CLOSED, small.state());
        fail(small);
        assertEquals(State.OPEN, small.state());
        CircuitBreakerGate large = builder().countWindow(1_000).build();
        for (int i = 0; i < 99; i++) {
            fail(large);
        }
        assertEquals(State.CLOSED, large.state(), "99 calls, minimum 100");
        fail(large);
        assertEquals(State.OPEN, large.state());
    }

    // ---- open ----

    @Test
    void whileOpenACallFailsAtOnceWithoutRunningAndTheErrorNamesTheGate() {
        CircuitBreakerGate gate = opened(Duration.ofSeconds(30));
        clock.advance(10 * S);
        AtomicInteger ran = new AtomicInteger();
        Outcome<Integer> o = done(gate.within(Task.fromCallable(ran::incrementAndGet)).outcome().toCompletableFuture());
        assertEquals(0, ran.get(), "refused work ran");
        CallNotPermittedException e = assertInstanceOf(CallNotPermittedException.class, ((Outcome.Failure<Integer>) o).error());
        assertEquals("inventory", e.gateName());
        assertEquals(State.OPEN, e.state());
        assertEquals(Duration.ofSeconds(20), e.retryAfter());
        assertTrue(e.getMessage().contains("'inventory' is OPEN") && e.getMessage().contains("20.000 s"), e.getMessage());
        assertEquals(0, e.getStackTrace().length, "a refusal carries no stack trace");
        CallNotPermittedException thrown = assertThrows(CallNotPermittedException.class, () -> gate.call(ran::incrementAndGet));
        assertEquals(0, ran.get());
        assertEquals(1, thrown.getSuppressed().length, "join adds the caller's stack");
    }

    @Test
    void halfOpensExactlyWhenTheOpenPeriodEndsNotATickEarlier() {
        CircuitBreakerGate gate = opened(Duration.ofSeconds(30));
        long openedAt = clock.nanoTime();
        assertEquals(1, clock.pending(), "one timer for the open period");
        clock.advance(30 * S - 1);
        assertEquals(State.OPEN, gate.state());
        assertInstanceOf(CallNotPermittedException.class, error(gate.within(Task.value("x"))));
        assertEquals(Duration.ofNanos(1), ((CallNotPermittedException) error(gate.within(Task.value("x")))).retryAfter());
        clock.advance(1);
        assertEquals(State.HALF_OPEN, gate.state(), "the timer made the change");
        assertEquals(0, clock.pending());
        assertEquals(new Transition(State.OPEN, State.HALF_OPEN, openedAt + 30 * S), seen.get(seen.size() - 1));
    }

    @Test
    void aTimerThatRunsLateStillDatesTheChangeAtTheEndOfTheOpenPeriod() {
        CircuitBreakerGate gate = opened(Duration.ofSeconds(30));
        long openedAt = clock.nanoTime();
        clock.advance(45 * S);
        assertEquals(State.HALF_OPEN, gate.state());
        assertEquals(new Transition(State.OPEN, State.HALF_OPEN, openedAt + 30 * S), seen.get(seen.size() - 1));
    }

    @Test
    void aCallAtTheEndOfTheOpenPeriodIsATrialEvenBeforeTheTimerRuns() {
        LateTimers late = new LateTimers();
        CircuitBreakerGate gate = CircuitBreakerGate.builder("inventory").clock(late).onStateChange(seen::add)
                .countWindow(1).openFor(Duration.ofSeconds(5)).halfOpenTrials(1).build();
        fail(gate);
        assertEquals(1, late.timers.size());
        late.now = 5 * S - 1;
        assertInstanceOf(CallNotPermittedException.class, error(gate.within(Task.value("early"))));
        late.now = 5 * S; // the timer has not run: a late timer thread
        Promise<String> trial = new Promise<>();
        CompletableFuture<Outcome<String>> f = start(gate, trial.task());
        assertFalse(f.isDone(), "the call was admitted as a trial");
        assertEquals(State.HALF_OPEN, gate.state());
        trial.complete("ok");
        assertEquals(State.CLOSED, gate.state());
        late.timers.get(0).run(); // the late timer changes nothing
        assertEquals(State.CLOSED, gate.state());
        assertEquals(List.of(State.OPEN, State.HALF_OPEN, State.CLOSED), seen.stream().map(Transition::to).toList());
        assertEquals(5 * S, seen.get(1).atNanos());
    }

    @Test
    void aSchedulerThatRefusesTheTimerLeavesTheChangeToTheNextCall() {
        LateTimers late = new LateTimers();
        late.refuse = true;
        CircuitBreakerGate gate = CircuitBreakerGate.builder("inventory").clock(late)
                .countWindow(1).openFor(Duration.ofSeconds(5)).halfOpenTrials(1).build();
        fail(gate);
        assertEquals(State.OPEN, gate.state());
        late.now = 5 * S;
        assertEquals(State.HALF_OPEN, gate.state());
    }

    /** A clock whose timers run only when the test runs them (a timer thread running late), or are refused. */
    private static final class LateTimers implements dev.coro.scheduler.Scheduler {
        volatile long now;
        volatile boolean refuse;
        final List<Runnable> timers = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public void execute(Runnable task) {
            task.run();
        }

        @Override
        public dev.coro.cancel.Cancellable schedule(Runnable task, Duration delay) {
            if (refuse) {
                throw new java.util.concurrent.RejectedExecutionException("shut down");
            }
            timers.add(task);
            return () -> timers.remove(task);
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public boolean isCurrent() {
            return true;
        }
    }

    // ---- half-open ----

    @Test
    void halfOpenAdmitsAtMostTheTrialsAndACancelledTrialGivesItsPlaceBack() {
        CircuitBreakerGate gate = halfOpen(2);
        Promise<String> a = new Promise<>();
        Promise<String> b = new Promise<>();
        CompletableFuture<Outcome<String>> fa = start(gate, a.task());
        CompletableFuture<Outcome<String>> fb = start(gate, b.task());
        assertFalse(fa.isDone() || fb.isDone(), "two trials admitted");
        CallNotPermittedException e = (CallNotPermittedException) error(gate.within(Task.value("third")));
        assertEquals(State.HALF_OPEN, e.state());
        assertEquals(Duration.ZERO, e.retryAfter());
        assertTrue(e.getMessage().contains("has admitted its 2 trial call(s)"), e.getMessage());
        b.cancel();
        assertInstanceOf(Outcome.Cancelled.class, done(fb));
        assertEquals(State.HALF_OPEN, gate.state(), "a cancelled trial is no verdict");
        Promise<String> c = new Promise<>();
        CompletableFuture<Outcome<String>> fc = start(gate, c.task());
        assertFalse(fc.isDone(), "the cancelled trial's place was given back");
        assertInstanceOf(CallNotPermittedException.class, error(gate.within(Task.value("fourth"))));
        a.complete("a");
        assertEquals(State.HALF_OPEN, gate.state(), "1 of 2 verdicts, both needed to close at 50 %");
        c.complete("c");
        assertEquals(State.CLOSED, gate.state());
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 0, 0, 0), gate.metrics(), "a fresh window");
    }

    @Test
    void successfulTrialsCloseTheGateAsSoonAsTheVerdictIsCertain() {
        CircuitBreakerGate gate = halfOpen(4); // 50 %: 3 successes leave at most 1 failure of 4, 25 %
        List<Promise<String>> trials = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Promise<String> p = new Promise<>();
            trials.add(p);
            start(gate, p.task());
        }
        trials.get(0).complete("1");
        trials.get(1).complete("2");
        assertEquals(State.HALF_OPEN, gate.state(), "2 failures of 4 could still come: 50 %");
        trials.get(2).complete("3");
        assertEquals(State.CLOSED, gate.state());
        trials.get(3).fail(new IOException("late trial")); // a verdict of an ended period
        assertEquals(State.CLOSED, gate.state());
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 0, 0, 0), gate.metrics(), "the late trial changed nothing");
        assertEquals(List.of(State.OPEN, State.HALF_OPEN, State.CLOSED), seen.stream().map(Transition::to).toList());
    }

    @Test
    void aFailingTrialReopensTheGateForAnotherFullOpenPeriod() {
        CircuitBreakerGate gate = halfOpen(2);
        Promise<String> a = new Promise<>();
        Promise<String> b = new Promise<>();
        start(gate, a.task());
        CompletableFuture<Outcome<String>> fb = start(gate, b.task());
        clock.advance(3 * S);
        long failedAt = clock.nanoTime();
        a.fail(new IOException("still down"));
        assertEquals(State.OPEN, gate.state(), "1 failure of 2 trials: 50 %, certain");
        assertEquals(new CircuitBreakerGate.Metrics(State.OPEN, 1, 1, 0), gate.metrics());
        b.complete("b");
        assertInstanceOf(Outcome.Value.class, done(fb), "the other trial ends as it ended");
        assertEquals(State.OPEN, gate.state(), "its verdict came after the period ended");
        clock.advance(10 * S - 1);
        assertEquals(State.OPEN, gate.state());
        clock.advance(1);
        assertEquals(State.HALF_OPEN, gate.state());
        assertEquals(new Transition(State.HALF_OPEN, State.OPEN, failedAt), seen.get(2));
        assertEquals(new Transition(State.OPEN, State.HALF_OPEN, failedAt + 10 * S), seen.get(3));
    }

    // ---- verdicts ----

    @Test
    void aCancelledCallIsNeitherSuccessNorFailure() {
        CircuitBreakerGate gate = builder().countWindow(2).minimumCalls(2).build();
        Promise<String> p = new Promise<>();
        CompletableFuture<Outcome<String>> f = start(gate, p.task());
        p.cancel();
        assertInstanceOf(Outcome.Cancelled.class, done(f));
        CompletableFuture<Outcome<String>> g = start(gate, new Promise<String>().task());
        g.cancel(false); // cancelling the caller's task cancels the admitted work
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 0, 0, 0), gate.metrics());
        fail(gate);
        assertEquals(State.CLOSED, gate.state(), "one call counted, not three");
    }

    @Test
    void recordFailureDecidesWhichErrorsCountAndIgnoreErrorsWhichAreNotCounted() {
        CircuitBreakerGate gate = builder().countWindow(3).minimumCalls(3)
                .recordFailure(e -> e instanceof IOException)
                .ignoreErrors(e -> e instanceof IllegalStateException)
                .build();
        assertInstanceOf(Outcome.Failure.class, run(gate, Task.failure(new IllegalArgumentException("bad request"))));
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 1, 0, 0), gate.metrics(), "not a failure: a success");
        run(gate, Task.failure(new IllegalStateException("ignored")));
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 1, 0, 0), gate.metrics(), "ignored: not counted");
        fail(gate);
        fail(gate);
        assertEquals(State.OPEN, gate.state(), "2 IOExceptions of 3 counted calls");
    }

    @Test
    void aThrowingPredicateMakesTheCallAFailureAndShowsItsError() {
        IllegalStateException bug = new IllegalStateException("predicate bug");
        CircuitBreakerGate gate = builder().countWindow(1).recordFailure(e -> {
            throw bug;
        }).build();
        IOException down = new IOException("down");
        Outcome<String> o = run(gate, Task.failure(down));
        assertSame(down, ((Outcome.Failure<String>) o).error());
        assertSame(bug, down.getSuppressed()[0]);
        assertEquals(State.OPEN, gate.state());
    }

    @Test
    void aVerdictOfACallAdmittedBeforeTheGateOpenedChangesNothing() {
        CircuitBreakerGate gate = builder().countWindow(2).minimumCalls(2).build();
        Promise<String> early = new Promise<>();
        start(gate, early.task());
        fail(gate);
        fail(gate);
        assertEquals(State.OPEN, gate.state());
        gate.transitionToClosed();
        early.fail(new IOException("admitted in the previous closed period"));
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 0, 0, 0), gate.metrics());
    }

    @Test
    void withinIsLazyAndEachStartIsOneCall() {
        CircuitBreakerGate gate = builder().countWindow(10).build();
        AtomicInteger ran = new AtomicInteger();
        Task<Integer> call = gate.within(Task.fromCallable(ran::incrementAndGet));
        assertEquals(0, ran.get(), "building ran the work");
        assertEquals(1, call.join());
        assertEquals(2, call.join());
        assertEquals(2, gate.metrics().calls());
        assertEquals("ok", gate.call(() -> "ok"));
        UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> gate.call(() -> {
            throw new UncheckedIOException(new IOException("down"));
        }));
        assertEquals("down", e.getCause().getMessage());
        assertEquals(new CircuitBreakerGate.Metrics(State.CLOSED, 4, 1, 0), gate.metrics());
    }

    // ---- listener, manual transitions, close ----

    @Test
    void listenersSeeEveryTransitionOnceInOrderAndAThrowingListenerStopsNothing() {
        List<String> second = new ArrayList<>();
        List<Throwable> reported = new ArrayList<>();
        Thread.UncaughtExceptionHandler before = Thread.currentThread().getUncaughtExceptionHandler();
        Thread.currentThread().setUncaughtExceptionHandler((t, e) -> reported.add(e));
        try {
            CircuitBreakerGate[] self = new CircuitBreakerGate[1];
            CircuitBreakerGate gate = builder().countWindow(1).openFor(Duration.ofSeconds(1)).halfOpenTrials(1)
                    .onStateChange(t -> {
                        throw new IllegalStateException("listener bug at " + t.to());
                    })
                    .onStateChange(t -> {
                        second.add(t.from() + ">" + t.to());
                        if (t.to() == State.HALF_OPEN && second.size() == 2) {
                            self[0].transitionToOpen(); // a transition from inside a listener: told after this one
                            second.add("reopened inside");
                        }
                    })
                    .build();
            self[0] = gate;
            fail(gate); // CLOSED > OPEN
            clock.advance(S); // OPEN > HALF_OPEN, and the listener reopens: HALF_OPEN > OPEN
            clock.advance(S); // OPEN > HALF_OPEN
            succeed(gate); // HALF_OPEN > CLOSED
            assertEquals(List.of("CLOSED>OPEN", "OPEN>HALF_OPEN", "reopened inside", "HALF_OPEN>OPEN", "OPEN>HALF_OPEN",
                    "HALF_OPEN>CLOSED"), second);
            assertEquals(List.of(State.OPEN, State.HALF_OPEN, State.OPEN, State.HALF_OPEN, State.CLOSED),
                    seen.stream().map(Transition::to).toList());
            assertEquals(List.of(0L, S, S, 2 * S, 2 * S), seen.stream().map(Transition::atNanos).toList());
            assertEquals(5, reported.size(), "each throw reported once");
        } finally {
            Thread.currentThread().setUncaughtExceptionHandler(before);
        }
    }

    @Test
    void manualTransitions() {
        CircuitBreakerGate gate = builder().openFor(Duration.ofSeconds(5)).halfOpenTrials(1).build();
        assertFalse(gate.transitionToClosed(), "already closed");
        assertTrue(gate.transitionToOpen());
        assertFalse(gate.transitionToOpen(), "already open");
        assertInstanceOf(CallNotPermittedException.class, error(gate.within(Task.value(1))));
        assertTrue(gate.transitionToClosed());
        assertEquals(1, run(gate, Task.value(1)) instanceof Outcome.Value<Integer> v ? v.value() : null);
        assertTrue(gate.transitionToOpen());
        clock.advance(5 * S);
        Promise<String> trial = new Promise<>();
        start(gate, trial.task());
        assertTrue(gate.transitionToOpen(), "from half-open, a trial in flight");
        trial.complete("late");
        assertEquals(State.OPEN, gate.state());
        clock.advance(5 * S);
        assertTrue(gate.transitionToClosed(), "from half-open");
        assertEquals(List.of(State.OPEN, State.CLOSED, State.OPEN, State.HALF_OPEN, State.OPEN, State.HALF_OPEN, State.CLOSED),
                seen.stream().map(Transition::to).toList());
    }

    @Test
    void aManualTransitionAfterTheOpenPeriodEndedStartsFromHalfOpen() {
        LateTimers late = new LateTimers();
        CircuitBreakerGate gate = CircuitBreakerGate.builder("inventory").clock(late).onStateChange(seen::add)
                .countWindow(1).openFor(Duration.ofSeconds(5)).build();
        fail(gate);
        late.now = 6 * S; // the timer has not run
        assertTrue(gate.transitionToOpen(), "half-open by the clock: opened again");
        assertEquals(List.of(new Transition(State.CLOSED, State.OPEN, 0), new Transition(State.OPEN, State.HALF_OPEN, 5 * S),
                new Transition(State.HALF_OPEN, State.OPEN, 6 * S)), seen);
    }

    @Test
    void anOpenPeriodOfCenturiesNeedsNoTimerAndDoesNotWrap() {
        LateTimers late = new LateTimers();
        late.now = Long.MAX_VALUE - S; // a nanoTime near its end: since + openFor wraps
        CircuitBreakerGate gate = CircuitBreakerGate.builder("inventory").clock(late).countWindow(1)
                .openFor(Duration.ofDays(365L * 200)).build();
        fail(gate);
        assertEquals(0, late.timers.size(), "no absolute time for it on this clock");
        late.now += 10 * S; // the clock itself wraps past Long.MAX_VALUE, as System.nanoTime may
        assertEquals(State.OPEN, gate.state());
        assertEquals(Duration.ofDays(365L * 200).minusSeconds(10),
                ((CallNotPermittedException) error(gate.within(Task.value(1)))).retryAfter());
    }

    @Test
    void closeCancelsLaterCallsFreezesTheStateAndCancelsTheTimer() {
        CircuitBreakerGate gate = opened(Duration.ofSeconds(30));
        assertEquals(1, clock.pending());
        gate.close();
        assertTrue(gate.isClosed());
        assertEquals(0, clock.pending(), "the open period's timer");
        AtomicInteger ran = new AtomicInteger();
        assertInstanceOf(Outcome.Cancelled.class, run(gate, Task.fromCallable(ran::incrementAndGet)));
        assertThrows(CancellationException.class, () -> gate.call(ran::incrementAndGet));
        assertEquals(0, ran.get());
        clock.advance(60 * S);
        assertEquals(State.OPEN, gate.state(), "the state it was closed in");
        assertFalse(gate.transitionToClosed());
        assertFalse(gate.transitionToOpen());
        gate.close();
        assertEquals(1, seen.size(), "no transition after close");
        assertTrue(gate.toString().contains("gate closed"), gate.toString());
    }

    @Test
    void admittedWorkRunsToItsEndAfterClose() {
        CircuitBreakerGate gate = halfOpen(1);
        Promise<String> trial = new Promise<>();
        CompletableFuture<Outcome<String>> f = start(gate, trial.task());
        gate.close();
        assertFalse(f.isDone());
        trial.complete("done");
        assertEquals(new Outcome.Value<>("done"), done(f));
        assertEquals(State.HALF_OPEN, gate.state());
        assertTrue(gate.isClosed());
    }

    @Test
    void toStringShowsNameStateAndCounts() {
        CircuitBreakerGate gate = builder().countWindow(10).build();
        fail(gate);
        succeed(gate);
        assertEquals("CircuitBreakerGate[inventory, CLOSED, 1 failed and 0 slow of 2 calls]", gate.toString());
        assertEquals("inventory", gate.name());
        assertEquals(clock.nanoTime(), gate.nanoTime());
    }

    @Test
    void badInputIsRefusedWithTheArgumentsName() {
        assertMessage(NullPointerException.class, "name", () -> CircuitBreakerGate.builder(null));
        assertMessage(IllegalArgumentException.class, "name", () -> CircuitBreakerGate.builder(" "));
        CircuitBreakerGate.Builder b = CircuitBreakerGate.builder("x");
        for (double bad : new double[] {0, -1, 100.5, Double.NaN}) {
            assertMessage(IllegalArgumentException.class, "failureRateThreshold", () -> b.failureRateThreshold(bad));
            assertMessage(IllegalArgumentException.class, "slowCallRateThreshold", () -> b.slowCallRateThreshold(bad));
        }
        assertMessage(NullPointerException.class, "slowCallDuration", () -> b.slowCallDuration(null));
        assertMessage(IllegalArgumentException.class, "slowCallDuration", () -> b.slowCallDuration(Duration.ZERO));
        assertMessage(IllegalArgumentException.class, "countWindow", () -> b.countWindow(0));
        assertMessage(IllegalArgumentException.class, "countWindow", () -> b.countWindow(1_000_001));
        assertMessage(NullPointerException.class, "window", () -> b.timeWindow(null));
        assertMessage(IllegalArgumentException.class, "timeWindow", () -> b.timeWindow(Duration.ofNanos(9)));
        assertMessage(IllegalArgumentException.class, "minimumCalls", () -> b.minimumCalls(0));
        assertMessage(NullPointerException.class, "openFor", () -> b.openFor(null));
        assertMessage(IllegalArgumentException.class, "openFor", () -> b.openFor(Duration.ofSeconds(-1)));
        assertMessage(IllegalArgumentException.class, "halfOpenTrials", () -> b.halfOpenTrials(0));
        assertMessage(IllegalArgumentException.class, "halfOpenTrials", () -> b.halfOpenTrials(10_001));
        assertMessage(NullPointerException.class, "isFailure", () -> b.recordFailure(null));
        assertMessage(NullPointerException.class, "isIgnored", () -> b.ignoreErrors(null));
        assertMessage(NullPointerException.class, "scheduler", () -> b.clock(null));
        assertMessage(NullPointerException.class, "listener", () -> b.onStateChange(null));
        b.countWindow(10).minimumCalls(11);
        assertMessage(IllegalArgumentException.class, "minimumCalls (11) must be at most the countWindow (10)", b::build);
        b.timeWindow(Duration.ofSeconds(1)); // a time window has no such bound
        CircuitBreakerGate gate = b.build();
        assertMessage(NullPointerException.class, "work", () -> gate.within(null));
        assertMessage(NullPointerException.class, "body", () -> gate.call(null));
    }

    // ---- helpers ----

    /** A gate opened at the clock's time by one failure (window of 1), listener attached. */
    private CircuitBreakerGate opened(Duration openFor) {
        CircuitBreakerGate gate = builder().countWindow(1).openFor(openFor).build();
        fail(gate);
        assertEquals(State.OPEN, gate.state());
        return gate;
    }

    /** A gate half-open with {@code trials} trials, at 50 %, reopening for 10 s. */
    private CircuitBreakerGate halfOpen(int trials) {
        CircuitBreakerGate gate = builder().countWindow(1).openFor(Duration.ofSeconds(10)).halfOpenTrials(trials).build();
        fail(gate);
        clock.advance(10 * S);
        assertEquals(State.HALF_OPEN, gate.state());
        return gate;
    }

    private void succeed(CircuitBreakerGate gate) {
        assertInstanceOf(Outcome.Value.class, run(gate, Task.value("ok")));
    }

    private void fail(CircuitBreakerGate gate) {
        assertInstanceOf(Outcome.Failure.class, run(gate, Task.failure(new IOException("down"))));
    }

    private static <T> Outcome<T> run(CircuitBreakerGate gate, Task<T> work) {
        return done(start(gate, work));
    }

    private static <T> CompletableFuture<Outcome<T>> start(CircuitBreakerGate gate, Task<T> work) {
        return gate.within(work).outcome().toCompletableFuture();
    }

    private static Throwable error(Task<?> task) {
        Outcome<?> o = done(task.outcome().toCompletableFuture());
        return ((Outcome.Failure<?>) o).error();
    }

    private static void assertMessage(Class<? extends Throwable> type, String part, org.junit.jupiter.api.function.Executable call) {
        Throwable e = assertThrows(type, call);
        assertTrue(e.getMessage() != null && e.getMessage().contains(part), "expected '" + part + "' in: " + e.getMessage());
    }

    /** The future's value; it must be complete (work runs inline on virtual time), never waited for. */
    private static <T> T done(CompletableFuture<T> f) {
        assertTrue(f.isDone(), "not complete: the test would wait for ever");
        return f.join();
    }
}
