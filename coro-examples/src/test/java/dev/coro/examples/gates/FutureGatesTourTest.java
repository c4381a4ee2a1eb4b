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
}
