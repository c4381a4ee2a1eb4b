package dev.coro.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.channel.Channel;
import dev.coro.channel.Generator;
import dev.coro.task.Task;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** {@link CoroTests#verify} and {@link SequenceVerifier}: the steps pass, and each failure says what, where and when. */
class SequenceVerifierTest {
    /** 1..count, one a second after each request. */
    private static Generator<Integer> ticks(int count) {
        return Generator.create(emitter -> Task.forRange(1, count + 1,
                n -> Task.delay(Duration.ofSeconds(1)).then(emitter.emit(n))));
    }

    /** 0, 1, 2, ... at once, forever; sets {@code cleanedUp} however it ends. */
    private static Generator<Integer> endless(AtomicBoolean cleanedUp) {
        return Generator.create(emitter -> Task.loop(0, n -> true, n -> emitter.emit(n).map(ignored -> n + 1))
                .andFinally(() -> cleanedUp.set(true)));
    }

    private static AssertionError fails(Runnable steps) {
        return assertThrows(AssertionError.class, steps::run);
    }

    // ---------------------------------------------------------------- passing

    @Test
    void aGeneratorOnVirtualTimePassesItsStepsAndTheTerminalStepSaysHowLongItTook() {
        Duration took = CoroTests.verify(ticks(5))
                .expectNext(1, 2)
                .expectNoEvent(Duration.ofMillis(999))
                .expectNextCount(3)
                .expectComplete();
        assertEquals(Duration.ofSeconds(5), took);
        assertEquals(Duration.ZERO, CoroTests.verify(Generator.empty()).expectComplete());
    }

    @Test
    void expectNoEventAllowsASignalExactlyAtItsEnd() {
        Duration took = CoroTests.verify(ticks(1)).expectNoEvent(Duration.ofSeconds(1)).expectNext(1).expectComplete();
        assertEquals(Duration.ofSeconds(1), took);
    }

    @Test
    void aGeneratorRunsOnlyOnDemandSoThenAwaitMovesTheClockWithoutRunningIt() {
        Duration took = CoroTests.verify(ticks(1)).thenAwait(Duration.ofSeconds(5)).expectNext(1).expectComplete();
        assertEquals(Duration.ofSeconds(6), took, "the one-second delay starts when the value is asked for");
    }

    @Test
    void aChannelsSendersRunOnTheSchedulerAndItsCloseIsTheEnd() {
        VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
        Channel<Integer> channel = Channel.buffered(4);
        Task.loop(1, n -> n <= 3, n -> Task.delay(Duration.ofSeconds(1)).then(channel.send(n)).map(x -> n + 1))
                .andFinally(channel::close)
                .start(scheduler);
        Duration took = CoroTests.verify(scheduler, channel)
                .thenAwait(Duration.ofSeconds(2)) // the senders run meanwhile: two elements wait in the buffer
                .expectNext(1, 2)
                .expectNext(3)
                .expectComplete();
        assertEquals(Duration.ofSeconds(3), took);
        CoroTests.assertNothingPending(scheduler, "test");
    }

    @Test
    void expectErrorMatchesTheProducersErrorTheClosingCauseOrACancellation() {
        IOException boom = new IOException("boom");
        assertEquals(Duration.ofSeconds(1), CoroTests.verify(Generator.<Integer>create(emitter -> emitter.emit(1)
                .then(Task.delay(Duration.ofSeconds(1))).then(Task.failure(boom))))
                .expectNext(1)
                .expectError(IOException.class));

        VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
        Channel<String> closed = Channel.buffered(2);
        closed.trySend("last words");
        closed.close(boom);
        CoroTests.verify(scheduler, closed).expectNext("last words").expectError(Exception.class);
        Channel<String> closedAgain = Channel.buffered(2);
        closedAgain.close(boom);
        CoroTests.verify(scheduler, closedAgain).expectErrorSatisfies(e -> assertSame(boom, e));

        CoroTests.verify(Generator.create(emitter -> Task.cancelled())).expectError(CancellationException.class);
    }

    @Test
    void assertNextRunsTheChecksOnTheValue() {
        List<Integer> seen = new ArrayList<>();
        CoroTests.verify(Generator.of(1, 2)).assertNext(seen::add).assertNext(n -> assertEquals(2, n)).expectComplete();
        assertEquals(List.of(1), seen);
    }

    @Test
    void thenCancelEndsTheProducerWhichRunsItsCleanup() {
        AtomicBoolean cleanedUp = new AtomicBoolean();
        CoroTests.verify(endless(cleanedUp)).expectNext(0, 1, 2).thenCancel();
        assertTrue(cleanedUp.get());

        VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
        Channel<Integer> channel = Channel.rendezvous();
        AtomicBoolean senderSawTheEnd = new AtomicBoolean();
        Task.loop(0, n -> true, n -> channel.send(n).map(x -> n + 1)).andFinally(() -> senderSawTheEnd.set(true)).start(scheduler);
        CoroTests.verify(scheduler, channel).expectNext(0, 1).thenCancel();
        assertTrue(channel.isClosedForSend(), "the consumer's cancel cancels the channel");
        assertTrue(senderSawTheEnd.get(), "and the sender's next send ends it");
    }

    @CoroTest
    void aCoroTestsSchedulerServesTheCodeUnderTestAndTheVerifier(VirtualTimeScheduler scheduler) {
        Generator<Long> clock = Generator.create(emitter -> Task.delay(Duration.ofMinutes(1))
                .then(Task.fromCallable(scheduler::nanoTime)).flatMap(emitter::emit));
        CoroTests.verify(scheduler, clock).expectNext(Duration.ofMinutes(1).toNanos()).expectComplete();
    }

    // ---------------------------------------------------------------- failing: what, where, when

    @Test
    void aWrongValueSaysWhatWasExpectedWhatCameAndWhereAndWhen() {
        AssertionError e = fails(() -> CoroTests.verify(ticks(3)).expectNext(1, 5));
        assertEquals("expectNext: at index 1, virtual time PT2S: expected <5> but got <2>", e.getMessage());
    }

    @Test
    void aValueExpectedAfterTheEndSaysTheSequenceCompleted() {
        AssertionError e = fails(() -> CoroTests.verify(Generator.of("a")).expectNext("a", "b"));
        assertEquals("expectNext: at index 1, virtual time PT0S: expected <b> but got the end (the sequence completed)",
                e.getMessage());
        AssertionError count = fails(() -> CoroTests.verify(ticks(3)).expectNextCount(5));
        assertEquals("expectNextCount(5): at index 3, virtual time PT3S: expected value 4 of 5 but got the end"
                + " (the sequence completed)", count.getMessage());
    }

    @Test
    void anEndExpectedWhileValuesComeSaysWhichValueCame() {
        AssertionError e = fails(() -> CoroTests.verify(ticks(3)).expectNext(1).expectComplete());
        assertEquals("expectComplete: at index 1, virtual time PT2S: expected the end but got <2>", e.getMessage());
    }

    @Test
    void anUnexpectedErrorIsNamedAndAttachedAsTheCause() {
        IllegalStateException boom = new IllegalStateException("boom");
        Generator<Integer> failing = Generator.create(emitter -> emitter.emit(1).then(Task.failure(boom)));
        AssertionError e = fails(() -> CoroTests.verify(failing).expectNext(1, 2));
        assertEquals("expectNext: at index 1, virtual time PT0S: expected <2> but got the error " + boom, e.getMessage());
        assertSame(boom, e.getCause());

        AssertionError wrongType = fails(() -> CoroTests.verify(failing).expectNext(1).expectError(IOException.class));
        assertEquals("expectError(IOException): at index 1, virtual time PT0S: expected an error of type"
                + " java.io.IOException but got the error " + boom, wrongType.getMessage());
        assertSame(boom, wrongType.getCause());

        AssertionError cancelled = fails(() -> CoroTests.verify(Generator.create(emitter -> Task.cancelled())).expectNext(1));
        assertEquals("expectNext: at index 0, virtual time PT0S: expected <1> but got a cancellation (the sequence was"
                + " cancelled)", cancelled.getMessage());
    }

    @Test
    void aFailedAssertionInAssertNextKeepsItsMessageAndCause() {
        AssertionError e = fails(() -> CoroTests.verify(ticks(2)).expectNext(1).assertNext(n -> assertEquals(3, n, "third")));
        assertTrue(e.getMessage().startsWith("assertNext: at index 1, virtual time PT2S: <2> failed the assertion: third"),
                e.getMessage());
        assertTrue(e.getCause() instanceof AssertionError);
    }

    @Test
    void aFailedAssertionOnTheErrorOrAValueInsteadOfAnErrorIsReported() {
        IOException boom = new IOException("boom");
        Generator<Integer> failing = Generator.create(emitter -> Task.delay(Duration.ofSeconds(1)).then(Task.failure(boom)));
        AssertionError e = fails(() -> CoroTests.verify(failing).expectErrorSatisfies(x -> assertEquals("bang", x.getMessage())));
        assertTrue(e.getMessage().startsWith("expectErrorSatisfies: at index 0, virtual time PT1S: the error " + boom
                + " failed the assertion: expected: <bang> but was: <boom>"), e.getMessage());
        AssertionError value = fails(() -> CoroTests.verify(Generator.of(4)).expectErrorSatisfies(x -> {}));
        assertEquals("expectErrorSatisfies: at index 0, virtual time PT0S: expected an error but got <4>", value.getMessage());
    }

    @Test
    void aSignalBeforeTheEndOfExpectNoEventFailsIt() {
        AssertionError e = fails(() -> CoroTests.verify(ticks(1)).expectNoEvent(Duration.ofMillis(1_500)));
        assertEquals("expectNoEvent(PT1.5S): at index 0, virtual time PT1S: expected nothing until PT1.5S but got <1>",
                e.getMessage());
    }

    @Test
    void aSequenceThatCanNeverGoOnFailsWithThePendingWorkInsteadOfHanging() {
        Channel<Integer> nobodySends = Channel.rendezvous();
        Generator<Integer> stuck = Generator.create(emitter -> nobodySends.receive().flatMap(emitter::emit));
        AssertionError e = fails(() -> CoroTests.verify(stuck).expectNext(1));
        assertTrue(e.getMessage().startsWith("expectNext: at index 0, virtual time PT0S: expected <1> but the sequence"
                + " waits, nothing is queued and no timer is pending, so it can never go on"), e.getMessage());
        assertTrue(e.getMessage().contains("0 queued, 0 timers"), e.getMessage());
    }

    @Test
    void aSequenceThatNeverGivesASignalFailsAfterTheStepLimitWithThePendingWork() {
        Generator<Integer> polling = Generator.create(emitter -> Task.loop(0, n -> true,
                n -> Task.delay(Duration.ofSeconds(1)).map(ignored -> n + 1))); // polls for ever, emits nothing
        AssertionError e = fails(() -> CoroTests.verify(polling).withStepLimit(1_000).expectComplete()); // not a million
        assertTrue(e.getMessage().startsWith("expectComplete: at index 0, virtual time PT16M40S: expected the end but"
                + " 1000 timer steps went by without a signal"), e.getMessage());
        assertTrue(e.getMessage().contains("1 timers"), e.getMessage());
    }

    @Test
    void aFailedStepCancelsTheConsumptionSoTheProducerCleansUp() {
        AtomicBoolean cleanedUp = new AtomicBoolean();
        SequenceVerifier<Integer> verifier = CoroTests.verify(endless(cleanedUp));
        fails(() -> verifier.expectNext(0, 7));
        assertTrue(cleanedUp.get());
        IllegalStateException after = assertThrows(IllegalStateException.class, () -> verifier.expectNext(2));
        assertTrue(after.getMessage().contains("has ended"), after.getMessage());
    }

    @Test
    void workTheSequenceLeftOnItsOwnSchedulerFailsTheTerminalStep() {
        Generator<Integer> leaky = Generator.create(emitter -> Task.context().flatMap(context -> {
            Task.delay(Duration.ofHours(1)).start(context.scheduler()); // nobody waits for it or cancels it
            return emitter.emit(1);
        }));
        AssertionError e = fails(() -> CoroTests.verify(leaky).expectNext(1).expectComplete());
        assertTrue(e.getMessage().startsWith("verify: work is still pending after the test: it leaked past the test"),
                e.getMessage());
    }

    @Test
    void stepsAfterTheEndAndBadInputAreRefused() {
        SequenceVerifier<Integer> done = CoroTests.verify(Generator.of(1));
        done.expectNext(1).expectComplete();
        assertThrows(IllegalStateException.class, done::expectComplete);
        assertThrows(IllegalStateException.class, () -> done.thenAwait(Duration.ZERO));

        assertThrows(NullPointerException.class, () -> CoroTests.verify((Generator<Object>) null));
        assertThrows(NullPointerException.class, () -> CoroTests.verify(null, Generator.empty()));
        assertThrows(NullPointerException.class, () -> CoroTests.verify(VirtualTimeScheduler.create(), (Channel<Object>) null));
        SequenceVerifier<Integer> v = CoroTests.verify(Generator.of(1));
        NullPointerException nullValue = assertThrows(NullPointerException.class, () -> v.expectNext(1, null));
        assertEquals("values[1] is null; sequence values are never null", nullValue.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class, () -> v.expectNextCount(-1));
        assertEquals("count must be >= 0, was -1", negative.getMessage());
        assertThrows(IllegalArgumentException.class, () -> v.expectNoEvent(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> v.thenAwait(Duration.ofSeconds(-1)));
        assertThrows(NullPointerException.class, () -> v.assertNext(null));
        assertThrows(NullPointerException.class, () -> v.expectError(null));
        assertThrows(NullPointerException.class, () -> v.expectErrorSatisfies(null));
        assertFalse(v.toString().contains("ended"), v.toString());
        v.expectNext(1).expectComplete();
    }
}
