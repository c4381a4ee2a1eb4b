package dev.coro.examples.gates;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.scheduler.WorkStealingPool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Checks the fact each example of the gates tour prints, on an 8-worker pool. */
class GatesTourTest {
    private static WorkStealingPool pool;
    private static final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private static GatesTour tour;

    @BeforeAll
    static void start() {
        pool = WorkStealingPool.create(8, "tour");
        tour = new GatesTour(new PrintStream(printed, true, StandardCharsets.UTF_8), pool);
    }

    @AfterAll
    static void stop() {
        pool.close();
    }

    @Test
    void serialGatesLoseNoUpdateAndNeverOverlap() {
        GatesTour.CacheUpdates updates = tour.serializedCacheUpdates(300);
        assertEquals(300, updates.total(), "every read-modify-write is whole");
        assertEquals(1, updates.mostInside());
        GatesTour.SerialConnection connection = tour.serialConnection(40);
        assertEquals(40, connection.answered());
        assertEquals(0, connection.overlaps());
    }

    @Test
    void readersShareAndWritersAreAlone() {
        GatesTour.ReadMostly cache = tour.readMostlyCache(200, 5);
        assertEquals(5, cache.inserts());
        assertEquals(0, cache.readersDuringWrites(), "no lookup runs during an insert");
        assertEquals(1, cache.mostWriters());
        assertTrue(cache.mostReaders() >= 1);
    }

    @Test
    void capacityGatesBoundTheWorkNotThePool() {
        GatesTour.Bounded service = tour.serviceCapacityLimit(64);
        assertTrue(service.mostInside() <= 8 && service.mostInside() >= 1, "limit 8: " + service);
        GatesTour.Bounded compression = tour.compressionLimit(16);
        assertTrue(compression.mostInside() <= 4 && compression.mostInside() >= 1, "limit 4: " + compression);
        assertEquals(8, compression.poolWorkers());
    }

    @Test
    void tryWithinSkipsWhileBusyAndRunsWhenFree() {
        GatesTour.Refresh refresh = tour.opportunisticRefresh(10);
        assertEquals(0, refresh.ranWhileBusy());
        assertTrue(refresh.ranWhenFree());
    }

    @Test
    void readinessAdmitsNothingBeforeTheConditionHolds() {
        for (GatesTour.Readiness r : List.of(tour.initializationReadiness(6), tour.configurationReadiness(6),
                tour.configurationReadinessWithAPredicate(6))) {
            assertEquals(0, r.servedBeforeReady(), r.toString());
            assertEquals(r.requests(), r.served(), r.toString());
        }
    }

    @Test
    void completionAdmitsTheDependentAfterEveryArrival() {
        GatesTour.Completion startup = tour.startupCompletion();
        assertEquals(3, startup.finishedBeforeDependent());
        GatesTour.Completion batch = tour.batchSummary(12);
        assertEquals(12, batch.finishedBeforeDependent());
    }

    @Test
    void phasesNeverRunAhead() {
        GatesTour.Phases iterations = tour.iterationPhases(4, 3);
        assertEquals(0, iterations.orderViolations());
        assertEquals(4 * 7, iterations.log().size(), "each worker: compute + 3 x (exchange, compute)");
        GatesTour.Phases pipeline = tour.pipelineStages(6);
        assertEquals(0, pipeline.orderViolations());
        assertEquals(6 * 3, pipeline.log().size());
        assertFalse(printed.toString(StandardCharsets.UTF_8).isEmpty());
    }
}
