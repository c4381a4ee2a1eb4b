package dev.coro.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Rounds}: what a regex selects, and the summary of the per-round figures by cross-core state. */
class RoundsTest {
    @Test
    void aRegexSelectsCoroAndItsPeersOfOneWorkloadInTheWorkloadsOrder() {
        Rounds.Selection s = Rounds.select(List.of("SpawnCollectOutside.(fjp|coro)$"));
        assertEquals(SpawnCollectOutside.class, s.workload().type());
        assertEquals(List.of("coro", "fjp"), s.impls());
    }

    @Test
    void aRegexOverTwoWorkloadsOrWithoutCoroOrWithoutAPeerIsRefusedWithWhy() {
        IllegalArgumentException two = assertThrows(IllegalArgumentException.class,
                () -> Rounds.select(List.of("SpawnCollect(Outside)?.coro$")));
        assertTrue(two.getMessage().contains("more than one workload"), two.getMessage());
        IllegalArgumentException noCoro = assertThrows(IllegalArgumentException.class,
                () -> Rounds.select(List.of("SpawnCollectOutside.fjp$")));
        assertTrue(noCoro.getMessage().contains("coro and at least one peer"), noCoro.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Rounds.select(List.of("SpawnCollectOutside.coro$")));
        assertThrows(IllegalArgumentException.class, () -> Rounds.select(List.of("NoSuchBenchmark")));
    }

    @Test
    void theSummaryGivesMediansAndWinsForAllRoundsAndForEachCrossCoreState() {
        // rounds: (coro, fjp) ns per item, and the hand-off before each fork and after the last
        double[][] perItem = {{100, 120}, {110, 100}, {90, 100}, {150, 200}};
        double[][] handOffs = {{22, 23, 24}, {25, 30, 21}, {30, 28, 35}, {190, 210, 200}};
        String summary = Rounds.summary(List.of("coro", "fjp"), perItem, handOffs);
        List<String> lines = summary.lines().toList();
        assertEquals(3, lines.size(), summary);
        // ratios 0.833, 1.1, 0.9, 0.75: median of all (0.833 + 0.9) / 2 = 0.87; wins 3 of 4
        assertEquals("all rounds (4): coro 105.0 fjp 110.0  coro/fjp median 0.87x, Coro faster in 3 of 4",
                lines.get(0));
        assertEquals("shared cache (forks between readings < 100 ns): coro 100.0 (3) fjp 100.0 (3)  coro/fjp median "
                + "0.90x, Coro faster in 2 of 3", lines.get(1));
        assertEquals("no shared cache (forks between readings >= 100 ns): coro 150.0 (1) fjp 200.0 (1)  coro/fjp "
                + "median 0.75x, Coro faster in 1 of 1", lines.get(2));
    }

    @Test
    void aStateWithNoRoundsIsLeftOut() {
        String summary = Rounds.summary(List.of("coro", "fjp"), new double[][] {{1, 2}},
                new double[][] {{20, 20, 20}});
        assertEquals(2, summary.lines().count(), summary);
        assertTrue(!summary.contains("no shared cache"), summary);
    }

    @Test
    void aForkBetweenReadingsThatDisagreeCountsInAllRoundsOnly() {
        // the first round's state changed twice: each fork has one reading of each state around it
        String summary = Rounds.summary(List.of("coro", "fjp"), new double[][] {{1, 2}, {3, 2}},
                new double[][] {{190, 20, 190}, {190, 200, 190}});
        List<String> lines = summary.lines().toList();
        assertEquals(2, lines.size(), summary);
        assertTrue(lines.get(0).startsWith("all rounds (2):"), summary);
        assertTrue(lines.get(1).startsWith("no shared cache (forks between readings >= 100 ns): coro 3.0 (1) fjp 2.0 (1)"),
                summary);
    }

    @Test
    void aRatioCountsInAStateForTheRoundsInWhichBothForksRanInIt() {
        // three implementations; round r runs implementation (r + k) % 3 k-th, so the readings around
        // coro, fjp, x are: round 1 (20, 20) (20, 190) (190, 190); round 2 (20, 20) for all;
        // round 3 coro (190, 190), fjp (190, 20), x (190, 190)
        double[][] perItem = {{10, 20, 40}, {12, 10, 24}, {30, 99, 15}};
        double[][] handOffs = {{20, 20, 190, 190}, {20, 20, 20, 20}, {190, 190, 190, 20}};
        List<String> lines = Rounds.summary(List.of("coro", "fjp", "x"), perItem, handOffs).lines().toList();
        assertEquals(List.of(
                "all rounds (3): coro 12.0 fjp 20.0 x 24.0  coro/fjp median 0.50x, Coro faster in 2 of 3"
                        + "  coro/x median 0.50x, Coro faster in 2 of 3",
                "shared cache (forks between readings < 100 ns): coro 11.0 (2) fjp 10.0 (1) x 24.0 (1)"
                        + "  coro/fjp median 1.20x, Coro faster in 0 of 1  coro/x median 0.50x, Coro faster in 1 of 1",
                "no shared cache (forks between readings >= 100 ns): coro 30.0 (1) fjp - x 27.5 (2)"
                        + "  coro/fjp: no round with both in this state  coro/x median 2.00x, Coro faster in 0 of 1"),
                lines);
    }

    @Test
    void roundsRotateWhoGoesFirst() {
        assertEquals(0, Rounds.position(0, 0, 3));
        assertEquals(2, Rounds.position(1, 0, 3)); // round 2 runs 1, 2, 0
        assertEquals(0, Rounds.position(1, 1, 3));
        assertEquals(1, Rounds.position(2, 0, 3)); // round 3 runs 2, 0, 1
    }

    @Test
    void fewerThanOneRoundIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Rounds.run(0, List.of("SpawnCollectOutside.(coro|fjp)$"), System.out));
        assertTrue(e.getMessage().contains("--rounds-of must be at least 1, got 0"), e.getMessage());
    }
}
