package dev.coro.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.cancel.CancellationSource;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Issue 14, item 2: the inverses of {@link Task#outcome()}. */
class OutcomeTest {
    private static final RuntimeException BOOM = new RuntimeException("boom");

    private static List<Outcome<String>> allThree() {
        return List.of(new Outcome.Value<>("v"), new Outcome.Value<>(null), new Outcome.Failure<>(BOOM),
                new Outcome.Failure<>(new IOException("checked")), new Outcome.Cancelled<>());
    }

    @Test
    void fromOutcomeIsTheInverseOfOutcomeOnEveryChannel() {
        for (Outcome<String> o : allThree()) {
            assertEquals(o, Task.fromOutcome(o).outcome().join(), "round trip of " + o);
            Task<String> original = Task.fromOutcome(o);
            assertEquals(o, original.outcome().flatMap(Task::fromOutcome).outcome().join());
        }
    }

    @Test
    void fromOutcomeReRaisesTheSameErrorInstanceAndTheCancelledChannel() {
        assertSame(BOOM, assertThrows(RuntimeException.class,
                () -> Task.fromOutcome(new Outcome.Failure<String>(BOOM)).join()));
        IOException io = new IOException("disk");
        assertSame(io, assertThrows(CompletionException.class,
                () -> Task.fromOutcome(new Outcome.Failure<String>(io)).join()).getCause());
        assertThrows(CancellationException.class, () -> Task.fromOutcome(new Outcome.Cancelled<String>()).join());
        assertNull(Task.fromOutcome(new Outcome.Value<String>(null)).join());
    }

    @Test
    void fromOutcomeRunsNothingAndIsDecidedAtOnce() {
        AtomicInteger runs = new AtomicInteger();
        Task<Integer> counted = Task.fromCallable(runs::incrementAndGet);
        Outcome<Integer> seen = counted.outcome().join();
        Task<Integer> replay = Task.fromOutcome(seen);
        assertEquals(1, replay.join());
        assertEquals(1, replay.join());
        assertEquals(1, runs.get(), "re-raising an outcome does not run the task again");
    }

    @Test
    void aCancelledWaitAndACancelledTaskBothGiveCancelled() {
        CancellationSource source = new CancellationSource();
        source.cancel();
        Task<Outcome<Object>> underCancelledToken =
                new Nodes.WithContext<>(Task.never().outcome(), c -> c.withToken(source.token()));
        Outcome<Object> o = underCancelledToken.join();
        assertInstanceOf(Outcome.Cancelled.class, o);
        assertThrows(CancellationException.class, () -> Task.fromOutcome(o).join());
    }

    @Test
    void promiseCompleteWithPassesEachChannelOnOnce() {
        for (Outcome<String> o : allThree()) {
            Promise<String> p = new Promise<>();
            assertTrue(p.completeWith(o));
            assertFalse(p.completeWith(new Outcome.Value<>("again")), "the first completion wins");
            assertFalse(p.complete("again"));
            assertEquals(o, p.task().outcome().join());
        }
        Promise<String> failed = new Promise<>();
        failed.completeWith(new Outcome.Failure<>(BOOM));
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> failed.task().join()));
    }

    @Test
    void getReRaisesForBlockingCode() {
        assertEquals("v", new Outcome.Value<>("v").get());
        assertSame(BOOM, assertThrows(RuntimeException.class, () -> new Outcome.Failure<String>(BOOM).get()));
        IOException io = new IOException("disk");
        assertSame(io, assertThrows(CompletionException.class, () -> new Outcome.Failure<String>(io).get()).getCause());
        assertThrows(CancellationException.class, () -> new Outcome.Cancelled<String>().get());
    }

    @Test
    void nullOutcomesAreRejectedByName() {
        assertEquals("outcome", assertThrows(NullPointerException.class, () -> Task.fromOutcome(null)).getMessage());
        assertEquals("outcome",
                assertThrows(NullPointerException.class, () -> new Promise<String>().completeWith(null)).getMessage());
        assertEquals("error", assertThrows(NullPointerException.class, () -> new Outcome.Failure<String>(null)).getMessage());
    }
}
