package dev.coro.examples.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Seed 004's program with a fast tick: the exact 20 lines, all work on the loop thread. */
class FizzBuzzTest {
    private static final String EXPECTED = String.join("\n", "1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz",
            "Buzz", "11", "Fizz", "13", "14", "FizzBuzz", "16", "17", "Fizz", "19", "Buzz") + "\n";

    @Test
    void printsTheTwentyLinesOnePerTickAllOnTheLoopThread() {
        for (long tickMillis : new long[] {1, 2}) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
            Duration tick = Duration.ofMillis(tickMillis);
            FizzBuzz program = new FizzBuzz(out, tick);
            program.run();
            assertEquals(EXPECTED, bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
            assertEquals(Set.of("fizzbuzz-loop"), program.threads());
            long[] at = program.printedAt();
            for (int k = 1; k <= 20; k++) {
                assertTrue(at[k - 1] >= k * tick.toNanos(), "line " + k + " printed before tick " + k);
            }
            long[] frames = program.framesWritten();
            assertTrue(frames[0] > 100 && frames[1] > 100,
                    "the writers filled their pipes before waiting: " + frames[0] + ", " + frames[1]);
        }
    }

    @Test
    void badInput() {
        assertThrows(NullPointerException.class, () -> new FizzBuzz(null, Duration.ofMillis(1)));
        assertThrows(NullPointerException.class, () -> new FizzBuzz(System.out, null));
        assertThrows(IllegalArgumentException.class, () -> new FizzBuzz(System.out, Duration.ZERO));
    }
}
