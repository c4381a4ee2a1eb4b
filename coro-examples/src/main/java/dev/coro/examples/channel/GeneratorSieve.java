package dev.coro.examples.channel;

import dev.coro.channel.Cursor;
import dev.coro.channel.Generator;
import dev.coro.task.Task;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Seed 004's prime sieve (its part 1): a source generator of the numbers from 2 up, and a chain of
 * filter generators, one per prime found. The consumer pulls the next number from the end of the
 * chain with {@code co_await next()} ({@link Cursor#next()} here); that number is prime, and the chain
 * grows by a generator that drops its multiples, the seed's {@code g = filter(std::move(g), prime)}.
 *
 * <p>Each stage is a {@link Generator} whose producer pulls from the stage before it through that
 * stage's cursor, and owns it: when a stage ends (its consumer closes it), its cleanup closes the
 * stage before it, so closing the last cursor ends the whole chain, down to the source. Nothing is
 * computed ahead: a number travels down the chain only when the consumer asks for the next prime.
 */
public final class GeneratorSieve {
    private final AtomicInteger stagesEnded = new AtomicInteger();

    /** Creates the program. */
    public GeneratorSieve() {}

    /** Prints the first 100 primes. */
    public static void main(String[] args) {
        new GeneratorSieve().run(System.out);
    }

    /**
     * Prints the first 100 primes to {@code out}, ten to a line.
     *
     * @param out where the primes go
     * @throws NullPointerException if {@code out} is null
     */
    public void run(PrintStream out) {
        Objects.requireNonNull(out, "out");
        List<Integer> primes = firstPrimes(100).join();
        for (int i = 0; i < primes.size(); i += 10) {
            StringBuilder line = new StringBuilder();
            for (int j = i; j < Math.min(i + 10, primes.size()); j++) {
                line.append(j > i ? " " : "").append(primes.get(j));
            }
            out.println(line);
        }
    }

    /**
     * Returns a task that finds the first {@code count} primes with the chain of filters, and closes
     * the chain before it completes.
     *
     * @param count how many primes, at least 1
     * @return the task
     * @throws IllegalArgumentException if {@code count < 1}
     */
    public Task<List<Integer>> firstPrimes(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, was " + count);
        }
        return Task.defer(() -> {
            List<Integer> primes = new ArrayList<>(count);
            Cursor<Integer>[] chain = cursorArray(source().open()); // the end of the chain
            return Task.loop(0, found -> found < count, found -> chain[0].next().map(prime -> {
                primes.add(prime);
                if (found + 1 < count) {
                    chain[0] = filter(chain[0], prime).open(); // g = filter(std::move(g), prime)
                }
                return found + 1;
            })).andFinally(() -> chain[0].close()).map(ignored -> primes);
        });
    }

    /** The seed's {@code source}: 2, 3, 4, ... */
    static Generator<Integer> source() {
        return Generator.create(emitter -> Task.loop(2, n -> true, n -> emitter.emit(n).map(ignored -> n + 1)));
    }

    /**
     * The seed's {@code filter(g, prime)}: the numbers of {@code upstream} that {@code prime} does not
     * divide. It takes {@code upstream} over, as the seed's filter takes its generator by value: its
     * producer closes it when it ends, so the generator is meant to be consumed once.
     */
    Generator<Integer> filter(Cursor<Integer> upstream, int prime) {
        return Generator.create(emitter -> Task.loop(Boolean.TRUE, more -> more, ignored -> upstream.next()
                .flatMap(n -> n == null ? Task.value(Boolean.FALSE)
                        : n % prime == 0 ? Task.value(Boolean.TRUE)
                        : emitter.emit(n).map(emitted -> Boolean.TRUE)))
                .andFinally(() -> {
                    upstream.close();
                    stagesEnded.incrementAndGet();
                }));
    }

    /** How many filter stages have ended (their cleanup ran) so far. */
    int stagesEnded() {
        return stagesEnded.get();
    }

    @SuppressWarnings({"unchecked", "rawtypes"}) // a generic array is created raw
    private static Cursor<Integer>[] cursorArray(Cursor<Integer> first) {
        return new Cursor[] {first};
    }
}
