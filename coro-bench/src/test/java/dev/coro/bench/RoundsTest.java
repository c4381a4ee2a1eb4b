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
        assertEquals("shared cache (every hand-off reading < 100 ns) (3): coro 100.0 fjp 100.0  coro/fjp median "
                + "0.90x, Coro faster in 2 of 3", lines.get(1));
        assertEquals("no shared cache (every hand-off reading >= 100 ns) (1): coro 150.0 fjp 200.0  coro/fjp "
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
    void aRoundWhoseStateChangedCountsInAllRoundsOnly() {
        // the first round's state changed between its forks, though its first and last readings agree
        String summary = Rounds.summary(List.of("coro", "fjp"), new double[][] {{1, 2}, {3, 2}},
                new double[][] {{190, 20, 190}, {190, 200, 190}});
        List<String> lines = summary.lines().toList();
        assertEquals(2, lines.size(), summary);
        assertTrue(lines.get(0).startsWith("all rounds (2):"), summary);
        assertTrue(lines.get(1).startsWith("no shared cache (every hand-off reading >= 100 ns) (1): coro 3.0 fjp 2.0"),
                summary);
    }

    @Test
    void fewerThanOneRoundIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Rounds.run(0, List.of("SpawnCollectOutside.(coro|fjp)$"), System.out));
        assertTrue(e.getMessage().contains("--rounds-of must be at least 1, got 0"), e.getMessage());
    }
}
