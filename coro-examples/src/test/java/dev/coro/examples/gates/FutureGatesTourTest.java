package dev.coro.examples.gates;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Checks the fact each example of the future gates prints, on an 8-worker pool. */
class FutureGatesTourTest {
    private static WorkStealingPool pool;
    private static final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private static FutureGatesTour tour;

    @BeforeAll
    static void start() {
        pool = WorkStealingPool.create(8, "tour");
        tour = new FutureGatesTour(new PrintStream(printed, true, StandardCharsets.UTF_8), pool);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    @Test
    void theLedgerIsExactWithOneUpdatePerAccountAndManyAccountsAtOnce() {
        FutureGatesTour.Ledger ledger = tour.ledger(100_000, 1_000);
        assertTrue(ledger.balancesExact(), "a read-modify-write of an account was lost");
        assertEquals(1, ledger.mostPerAccount());
        assertTrue(ledger.mostAccounts() > 1, "accounts never updated in parallel: " + ledger);
        assertTrue(printed.toString(StandardCharsets.UTF_8).contains("0 account entries left"));
    }

    @Test
    void decodingNeverExceedsTheBudget() {
        FutureGatesTour.Decoding decoding = tour.imageDecoding(200, 64);
        assertEquals(200, decoding.decoded());
        assertTrue(decoding.peakMiB() <= 64 && decoding.peakMiB() >= 16, "peak " + decoding.peakMiB() + " MiB");
    }

    @Test
    void interactiveRequestsOvertakeQueuedBatchWork() {
        FutureGatesTour.Priorities p = tour.interactiveOverBatch(20, 5);
        assertEquals(5, p.interactiveAheadOfQueuedBatch(), "every interactive request is admitted first");
        assertTrue(p.meanInteractiveWaitMs() < p.meanBatchWaitMs(), p.toString());
    }

    @Test
    void lateRequestsFailAtTheirDeadlineAndNoneIsAdmittedAfterIt() {
        FutureGatesTour.Deadlines d = tour.deadlineService(40);
        assertEquals(6, d.served(), "admitted at 0, 5 and 10 ms, two at a time: " + d);
        assertEquals(34, d.timedOut(), d.toString());
        assertEquals(10, d.lastAdmittedMs());
        assertEquals(12, d.timedOutAtMs(), "timed out at the deadline, not later");
        assertEquals(0, d.admittedLate());
    }

    @Test
    void theRateLimitedClientAdmitsTheBurstThenFiftyASecondAndNeverMore() {
        FutureGatesTour.RateLimited r = tour.rateLimitedClient(300);
        assertEquals(java.util.List.of(59, 50, 50, 50, 50, 41), r.perSecond(),
                "10 at once and one every 20 ms, then 50 a second: " + r);
        assertEquals(59, r.mostInAnySecond(), "never above rate + burst: " + r);
        assertEquals(5_800, r.lastAdmittedMs(), "290 requests after the burst, 20 ms apart");
    }

    @Test
    void theSearchBoxRunsOneQueryAtATimeAndAlwaysTheLast() {
        String text = "coroutines on the jvm";
        FutureGatesTour.SearchBox keep = tour.searchBox(text, false);
        assertEquals(text.length(), keep.typed());
        assertEquals(1, keep.mostAtOnce(), "two queries at once: " + keep);
        assertEquals(keep.started(), keep.completed(), "a running query was cancelled: " + keep);
        assertEquals(keep.typed(), keep.started() + keep.superseded(), keep.toString());
        assertTrue(keep.superseded() > keep.typed() / 2, "most keystrokes' queries never start: " + keep);
        assertEquals(text, keep.shown(), "the last query's results are shown");

        FutureGatesTour.SearchBox cancel = tour.searchBox(text, true);
        assertEquals(1, cancel.mostAtOnce(), "two queries at once: " + cancel);
        assertEquals(text.length(), cancel.started(), "each keystroke starts its query at once: " + cancel);
        assertEquals(1, cancel.completed(), "only the last query completes: " + cancel);
        assertEquals(0, cancel.superseded());
        assertEquals(text, cancel.shown());
    }

    @Test
    void theProducerNeverRunsAheadOfTheConsumersGrant() {
        FutureGatesTour.Backpressure b = tour.producerAndConsumer(200, 8);
        assertEquals(200, b.consumed(), "items lost: " + b);
        assertEquals(8, b.mostInFlight(), "in flight above the grant, or the window never filled: " + b);
        assertEquals(1_001, b.lastConsumedMs(), "the consumer's pace: the first item made at 1 ms, then 200 x 5 ms: " + b);
    }
}
