package dev.coro.examples.gates;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Checks each fact the write-behind log example prints (virtual time: the counts are exact). */
class WriteBehindLogTest {
    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private final WriteBehindLog example = new WriteBehindLog(new PrintStream(printed, true, StandardCharsets.UTF_8));

    /** 1,000 appends in 13 bursts go out in 22 coalesced flushes of 7 to 64 entries, one flush at a time, in order. */
    @Test
    void appendsAreFlushedInCoalescedBatchesNeverAboveTheMaximumAndInOrder() {
        WriteBehindLog.Flushes f = example.run(1_000, 64);
        assertEquals(1_000, f.appends());
        assertEquals(13, f.bursts(), "bursts of 1 to 120: " + f);
        assertEquals(22, f.flushes(), "coalesced flushes: " + f);
        assertEquals(7, f.fewestPerFlush(), f.toString());
        assertEquals(64, f.mostPerFlush(), "a burst above the maximum fills a flush: " + f);
        assertTrue(f.mostPerFlush() <= f.maxPerFlush(), "a flush above the maximum: " + f);
        assertEquals(1, f.mostFlushesAtOnce(), "one flush at a time: " + f);
        assertTrue(f.logInOrder(), "the log misses, repeats or reorders an entry");
        assertTrue(f.offsetsInOrder(), "an append got another's offset, or results arrived out of order");
        assertEquals(126, f.lastFlushEndMs(), "the last burst at 120 ms, 1 ms of linger, a 5 ms flush");
        String line = printed.toString(StandardCharsets.UTF_8);
        assertTrue(line.contains("1000 appends in 13 bursts"), line);
        assertTrue(line.contains("22 flushes of 7 to 64 entries (never above 64)"), line);
        assertTrue(line.contains("at most 1 flush at once"), line);
        assertTrue(line.contains("every entry once, in append order"), line);
        assertTrue(line.contains("its own offset, in order"), line);
        assertTrue(line.contains("the last flush ended at 126 ms"), line);
    }

    /** With a small maximum, the backlog is cut into full flushes; none above it, order kept. */
    @Test
    void aSmallMaximumCutsTheBacklogIntoFullFlushes() {
        WriteBehindLog.Flushes f = example.run(300, 10);
        assertEquals(10, f.mostPerFlush(), f.toString());
        assertTrue(f.flushes() >= 30, "300 entries need at least 30 flushes of 10: " + f);
        assertEquals(1, f.mostFlushesAtOnce());
        assertTrue(f.logInOrder() && f.offsetsInOrder(), f.toString());
    }
}
