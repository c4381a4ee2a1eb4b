package dev.coro.examples.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.coro.scheduler.WorkStealingPool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The seed's sieve: the known first 100 primes, on a joining thread and on a pool; the chain is closed. */
class GeneratorSieveTest {
    /** The first 100 primes, from the literature. */
    private static final int[] PRIMES = {
        2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71,
        73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173,
        179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281,
        283, 293, 307, 311, 313, 317, 331, 337, 347, 349, 353, 359, 367, 373, 379, 383, 389, 397, 401, 409,
        419, 421, 431, 433, 439, 443, 449, 457, 461, 463, 467, 479, 487, 491, 499, 503, 509, 521, 523, 541};

    private static List<Integer> expected() {
        List<Integer> list = new ArrayList<>();
        for (int p : PRIMES) {
            list.add(p);
        }
        return list;
    }

    @Test
    void printsTheFirstHundredPrimesTenToALine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        GeneratorSieve sieve = new GeneratorSieve();
        sieve.run(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        StringBuilder want = new StringBuilder();
        for (int i = 0; i < PRIMES.length; i += 10) {
            for (int j = i; j < i + 10; j++) {
                want.append(j > i ? " " : "").append(PRIMES[j]);
            }
            want.append('\n');
        }
        assertEquals(want.toString(), bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"));
        assertEquals(99, sieve.stagesEnded(), "closing the end of the chain ended every filter stage");
    }

    @Test
    void findsThemOnAPoolToo() {
        try (WorkStealingPool pool = WorkStealingPool.create(2)) {
            GeneratorSieve sieve = new GeneratorSieve();
            assertEquals(expected(), sieve.firstPrimes(100).startOn(pool).join());
            assertEquals(List.of(2), sieve.firstPrimes(1).startOn(pool).join());
        }
    }

    @Test
    void badInput() {
        assertThrows(NullPointerException.class, () -> new GeneratorSieve().run(null));
        assertEquals("count must be >= 1, was 0",
                assertThrows(IllegalArgumentException.class, () -> new GeneratorSieve().firstPrimes(0)).getMessage());
    }
}
