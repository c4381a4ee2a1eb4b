package dev.coro.examples.channel;

import dev.coro.channel.Channel;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The concurrent prime sieve, Go's classic (the point Russ Cox makes about channels): a generator
 * task sends 2, 3, 4, ... into a channel; the first number out of a channel is a prime; for each prime
 * a filter task passes on, into a new channel, the numbers not divisible by it, and the next prime
 * comes out of the newest channel. Every channel is a rendezvous: each number is handed from one
 * task to the next, and no task runs ahead of the one that reads from it.
 *
 * <p>All tasks run in one scope on a scheduler; when enough primes are out, the scope is cancelled,
 * which ends the generator and every filter where they wait.
 */
public final class ChannelSieve {
    private ChannelSieve() {}

    /**
     * Returns a task that computes the first {@code count} primes with a chain of filter tasks on
     * {@code scheduler}.
     *
     * @param count how many primes, at least 1
     * @param scheduler where the generator and the filters run
     * @return the primes, in order
     * @throws IllegalArgumentException if {@code count < 1}
     */
    public static List<Integer> primes(int count, Scheduler scheduler) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be at least 1, got " + count);
        }
        Scope scope = Scope.on(scheduler);
        Channel<Integer> numbers = Channel.rendezvous();
        scope.spawn(Task.loop(2, n -> true, n -> numbers.send(n).map(sent -> n + 1))); // 2, 3, 4, ...
        List<Integer> primes = new ArrayList<>();
        Task<Channel<Integer>> sieve = Task.loop(numbers, in -> primes.size() < count, in -> in.receive().map(prime -> {
            primes.add(prime);
            Channel<Integer> out = Channel.rendezvous();
            scope.spawn(filter(in, out, prime));
            return out;
        }));
        try {
            sieve.startOn(scheduler).join();
        } finally {
            scope.cancel(); // the generator and the filters end where they wait
        }
        return primes;
    }

    /** Passes on from {@code in} to {@code out} every number not divisible by {@code prime}. */
    private static Task<Boolean> filter(Channel<Integer> in, Channel<Integer> out, int prime) {
        return Task.loop(Boolean.TRUE, more -> more, more -> in.receive().flatMap(n -> n % prime == 0
                ? Task.value(true)
                : out.send(n).map(sent -> true)));
    }

    /**
     * Prints the first 100 primes, ten to a line, computed by 100 filter tasks on a 2-worker pool.
     *
     * @param out where to print
     */
    public static void run(PrintStream out) {
        try (WorkStealingPool pool = WorkStealingPool.create(2, "sieve")) {
            List<Integer> primes = primes(100, pool);
            out.println("the first 100 primes, from a chain of 100 filter tasks joined by rendezvous channels:");
            for (int i = 0; i < primes.size(); i += 10) {
                StringBuilder line = new StringBuilder();
                for (int p : primes.subList(i, Math.min(i + 10, primes.size()))) {
                    line.append(String.format("%4d", p));
                }
                out.println(line);
            }
        }
    }

    /**
     * Runs {@link #run(PrintStream)} on standard output.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        run(System.out);
    }
}
