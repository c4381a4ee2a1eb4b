package dev.coro.examples.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The channel programs print what they should. */
class ChannelProgramsTest {

    private static final int[] FIRST_100_PRIMES = {
        2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71,
        73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173,
        179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281,
        283, 293, 307, 311, 313, 317, 331, 337, 347, 349, 353, 359, 367, 373, 379, 383, 389, 397, 401, 409,
        419, 421, 431, 433, 439, 443, 449, 457, 461, 463, 467, 479, 487, 491, 499, 503, 509, 521, 523, 541};

    @Test
    void theSievePrintsTheFirstHundredPrimes() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ChannelSieve.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        List<Integer> printed = new ArrayList<>();
        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        for (int i = 1; i < lines.length; i++) {
            for (String p : lines[i].trim().split("\\s+")) {
                printed.add(Integer.parseInt(p));
            }
        }
        List<Integer> expected = new ArrayList<>();
        for (int p : FIRST_100_PRIMES) {
            expected.add(p);
        }
        assertEquals(expected, printed);
        assertThrows(IllegalArgumentException.class, () -> ChannelSieve.primes(0, null));
    }

    @Test
    void fizzBuzzThroughChannelsPrintsTwentyLines() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new ChannelFizzBuzz(new PrintStream(bytes, true, StandardCharsets.UTF_8), Duration.ofMillis(1)).run();
        List<String> lines = List.of(bytes.toString(StandardCharsets.UTF_8).split("\n"));
        assertEquals(List.of("1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz", "Buzz", "11", "Fizz", "13", "14",
                "FizzBuzz", "16", "17", "Fizz", "19", "Buzz"), lines.subList(1, lines.size()), "after the heading");
        assertThrows(IllegalArgumentException.class, () -> new ChannelFizzBuzz(System.out, Duration.ZERO));
    }
}
