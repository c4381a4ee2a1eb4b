package dev.coro.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.gate.ManualScheduler;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Select over channel clauses, tasks and timeouts: exactly one clause takes effect. */
class SelectTest {

    @Test
    void theReadyClauseWinsAndTheOtherChannelKeepsItsElement() {
        Channel<Integer> a = Channel.buffered(1);
        Channel<Integer> b = Channel.buffered(1);
        b.trySend(2);
        String r = Select.select(a.onReceive(v -> "a" + v), b.onReceive(v -> "b" + v)).join();
        assertEquals("b2", r);
        a.trySend(1);
        assertEquals("a1", Select.select(a.onReceive(v -> "a" + v), b.onReceive(v -> "b" + v)).join());
        assertNull(a.tryReceive());
        assertNull(b.tryReceive());
    }

    /**
     * The run-loop fast path (Select's overview): a select that a ready clause wins at once never
     * queued a clause on the channels before it. Rules out a select that always builds its waiter,
     * which owns the first channel twice (to queue its clause, then to drop it when it loses).
     */
    @Test
    void aSelectWonAtOnceLeavesTheChannelsBeforeTheWinnerUntouched() {
        Channel<Integer> a = Channel.rendezvous();
        Channel<Integer> b = Channel.buffered(1);
        assertTrue(b.trySend(7));
        long before = a.core().passes();
        assertEquals(107, Select.select(a.onReceive(v -> v), b.onReceive(v -> v + 100)).join());
        assertEquals(before, a.core().passes(), "a was only asked, never owned, and holds no clause");
        assertEquals(0, a.core().linkedWaiters());
    }

    @Test
    void aWaitingSelectTakesFromTheFirstChannelToGetAnElementAndTheLoserConsumesNothing() {
        Channel<Integer> a = Channel.rendezvous();
        Channel<Integer> b = Channel.rendezvous();
        CompletableFuture<String> s = Select.select(a.onReceive(v -> "a" + v), b.onReceive(v -> "b" + v))
                .toCompletableFuture();
        assertFalse(s.isDone());
        assertTrue(a.trySend(1));
        assertEquals("a1", s.join());
        assertFalse(b.trySend(2), "the losing clause left b: nobody receives there");
        assertEquals(0, a.core().linkedWaiters() + b.core().linkedWaiters(), "no clause node left behind");
    }

    @Test
    void biasedSelectPrefersTheFirstReadyClause() {
        Channel<Integer> a = Channel.unlimited();
        Channel<Integer> b = Channel.unlimited();
        for (int i = 0; i < 10; i++) {
            a.trySend(i);
            b.trySend(i);
        }
        for (int i = 0; i < 10; i++) {
            assertEquals("a", Select.select(a.onReceive(v -> "a"), b.onReceive(v -> "b")).join());
        }
    }

    @Test
    void unbiasedSelectServesEveryReadyClause() {
        Channel<Integer> a = Channel.unlimited();
        Channel<Integer> b = Channel.unlimited();
        int n = 2000;
        for (int i = 0; i < n; i++) {
            a.trySend(i);
            b.trySend(i);
        }
        int fromA = 0;
        for (int i = 0; i < n; i++) {
            if (Select.selectUnbiased(a.onReceive(v -> true), b.onReceive(v -> false)).join()) {
                fromA++;
            }
        }
        assertTrue(fromA > 0 && fromA < n, "both channels served: " + fromA + " of " + n + " from a");
    }

    @Test
    void aSendClauseWinsOnlyWhenItsElementIsTaken() {
        Channel<String> out = Channel.rendezvous();
        Channel<String> in = Channel.rendezvous();
        CompletableFuture<String> s = Select.select(out.onSend("x", () -> "sent"), in.onReceive(v -> "got " + v))
                .toCompletableFuture();
        assertFalse(s.isDone());
        assertTrue(in.trySend("y"));
        assertEquals("got y", s.join());
        assertNull(out.tryReceive(), "the losing send clause sent nothing");

        CompletableFuture<String> t = Select.select(out.onSend("x", () -> "sent"), in.onReceive(v -> "got " + v))
                .toCompletableFuture();
        assertEquals("x", out.tryReceive());
        assertEquals("sent", t.join());
        assertFalse(in.trySend("z"), "the losing receive clause left");
    }

    @Test
    void aTimeoutWinsOnTheSchedulersClockAndIsDisarmedWhenItLoses() {
        ManualScheduler time = new ManualScheduler();
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<String> s = Select.select(ch.onReceive(v -> "got"), Select.onTimeout(Duration.ofMillis(100),
                () -> "timeout")).startOn(time).toCompletableFuture();
        assertFalse(s.isDone());
        time.advance(Duration.ofMillis(99).toNanos());
        assertFalse(s.isDone());
        time.advance(Duration.ofMillis(1).toNanos());
        assertEquals("timeout", s.join());
        assertFalse(ch.trySend(1), "the receive clause left");

        CompletableFuture<String> t = Select.select(ch.onReceive(v -> "got"), Select.onTimeout(Duration.ofMillis(100),
                () -> "timeout")).startOn(time).toCompletableFuture();
        assertEquals(1, time.pending());
        assertTrue(ch.trySend(1));
        assertEquals("got", t.join());
        assertEquals(0, time.pending(), "the losing timeout was disarmed");
        assertEquals("now", Select.select(Select.onTimeout(Duration.ZERO, () -> "now")).join());
    }

    @Test
    void aTaskClauseWinsWithItsValueAndIsCancelledWhenItLoses() {
        Promise<String> p = new Promise<>();
        Channel<Integer> ch = Channel.rendezvous();
        CompletableFuture<String> s = Select.select(Select.onComplete(p.task(), v -> "task " + v),
                ch.onReceive(v -> "ch")).toCompletableFuture();
        assertFalse(s.isDone());
        p.complete("done");
        assertEquals("task done", s.join());
        assertFalse(ch.trySend(1));

        AtomicBoolean cancelled = new AtomicBoolean();
        Task<String> never = Task.<String>never().andFinally(() -> cancelled.set(true));
        CompletableFuture<String> t = Select.select(Select.onComplete(never, v -> "task"), ch.onReceive(v -> "ch " + v))
                .toCompletableFuture();
        assertTrue(ch.trySend(5));
        assertEquals("ch 5", t.join());
        assertTrue(cancelled.get(), "the losing task was cancelled");

        Promise<String> failing = new Promise<>();
        CompletableFuture<String> u = Select.select(Select.onComplete(failing.task(), v -> v)).toCompletableFuture();
        IllegalStateException boom = new IllegalStateException("boom");
        failing.fail(boom);
        assertSame(boom, ((Outcome.Failure<String>) Task.fromCompletionStage(() -> u).outcome().join()).error());
    }

    @Test
    void aSelectInALoopOverAClosedChannelTerminates() {
        Channel<Integer> a = Channel.buffered(4);
        Channel<Integer> b = Channel.rendezvous();
        a.trySend(1);
        a.trySend(2);
        a.close();
        int[] sum = {0};
        Task<Boolean> loop = Task.loop(Boolean.TRUE, more -> more,
                ignored -> Select.select(a.onReceive(v -> {
                    if (v == null) {
                        return false; // a is closed and drained
                    }
                    sum[0] += v;
                    return true;
                }), b.onReceive(v -> true)));
        assertFalse(loop.join());
        assertEquals(3, sum[0]);
        assertFalse(b.trySend(1), "no clause left on b");
    }

    @Test
    void aSendClauseOnAClosedChannelFailsTheSelect() {
        Channel<Integer> ch = Channel.buffered(1);
        ch.close();
        Outcome<String> o = Select.select(ch.onSend(1, () -> "sent")).outcome().join();
        assertInstanceOf(ChannelClosedException.class, ((Outcome.Failure<String>) o).error());
    }

    @Test
    void cancellingTheSelectWithdrawsEveryClause() {
        Channel<Integer> a = Channel.rendezvous();
        Channel<Integer> b = Channel.rendezvous();
        CompletableFuture<String> s = Select.select(a.onReceive(v -> "a"), b.onSend(7, () -> "b"))
                .toCompletableFuture();
        s.cancel(true);
        assertTrue(s.isCancelled());
        assertFalse(a.trySend(1), "no receiver left on a");
        assertNull(b.tryReceive(), "the send clause sent nothing");
        assertEquals(0, a.core().linkedWaiters() + b.core().linkedWaiters());
    }

    @Test
    void badInputIsRefused() {
        assertEquals("clauses: a select needs at least one clause",
                assertThrows(IllegalArgumentException.class, () -> Select.select()).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Select.select(List.<SelectClause<Integer>>of(), false));
        assertThrows(NullPointerException.class, () -> Select.select((SelectClause<Integer>) null));
        Channel<Integer> ch = Channel.rendezvous();
        assertEquals("fn", assertThrows(NullPointerException.class, () -> ch.onReceive(null)).getMessage());
        assertEquals("element", assertThrows(NullPointerException.class, () -> ch.onSend(null, () -> 1)).getMessage());
        assertEquals("timeout",
                assertThrows(NullPointerException.class, () -> Select.onTimeout(null, () -> 1)).getMessage());
        assertEquals("task", assertThrows(NullPointerException.class, () -> Select.onComplete(null, v -> 1)).getMessage());
    }
}
