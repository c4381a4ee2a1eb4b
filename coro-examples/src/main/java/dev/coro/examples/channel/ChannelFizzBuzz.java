package dev.coro.examples.channel;

import dev.coro.cancel.Cancellable;
import dev.coro.channel.Channel;
import dev.coro.channel.Select;
import dev.coro.io.EventLoop;
import dev.coro.task.Task;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;

/**
 * FizzBuzz as a pipeline of tasks joined by channels, on one {@link EventLoop}: a timer sends a tick
 * every period (100 ms by default) into a conflated channel; the <b>producer</b> waits, with
 * {@link Select}, for the next tick or for the quit channel, and sends the next number on each tick;
 * the <b>fizz</b> filter marks the multiples of 3, the <b>buzz</b> filter those of 5, and the
 * <b>consumer</b> prints each line (the marks, or else the number). After 20 lines the consumer
 * closes the quit channel: the producer's select sees it, the producer closes the numbers channel,
 * and the close flows down the pipeline until every task has ended.
 */
public final class ChannelFizzBuzz {
    private static final int LINES = 20;

    private final PrintStream out;
    private final Duration tick;

    /** One number on its way down the pipeline, with the marks the filters gave it. */
    private record Line(int number, String marks) {}

    /**
     * Creates the program.
     *
     * @param out where the lines go
     * @param tick the timer period
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code tick} is not positive
     */
    public ChannelFizzBuzz(PrintStream out, Duration tick) {
        this.out = Objects.requireNonNull(out, "out");
        this.tick = Objects.requireNonNull(tick, "tick");
        if (tick.isNegative() || tick.isZero()) {
            throw new IllegalArgumentException("tick must be positive, was " + tick);
        }
    }

    /** Runs the pipeline until the 20th line, then lets every task end. */
    public void run() {
        Channel<Long> ticks = Channel.conflated();
        Channel<Void> quit = Channel.rendezvous();
        Channel<Integer> numbers = Channel.rendezvous();
        Channel<Line> fizzed = Channel.rendezvous();
        Channel<Line> lines = Channel.rendezvous();
        out.println("FizzBuzz as a pipeline of four tasks joined by channels on one event loop: numbers, a Fizz"
                + " filter, a Buzz filter, the printer; a number every " + tick.toMillis() + " ms:");
        try (EventLoop loop = EventLoop.start("fizzbuzz-channels")) {
            Cancellable[] timer = new Cancellable[1];
            Runnable[] fire = new Runnable[1];
            long[] count = {0};
            fire[0] = () -> { // on the loop: the periodic tick, until the pipeline has ended
                if (ticks.isClosedForSend()) {
                    return;
                }
                ticks.trySend(++count[0]);
                try {
                    timer[0] = loop.schedule(fire[0], tick);
                } catch (RejectedExecutionException closing) {
                    // the loop is closing (the pipeline has ended): the tick stops here
                }
            };
            loop.execute(() -> timer[0] = loop.schedule(fire[0], tick));

            Task<Integer> producer = Task.loop(1, n -> n > 0, n -> Select.select(
                    ticks.onReceive(t -> true),
                    quit.onReceive(q -> false)).flatMap(more -> more
                            ? numbers.send(n).map(sent -> n + 1)
                            : Task.value(0)))
                    .andFinally(numbers::close);
            Task<Void> fizz = numbers.forEachAsync(n -> fizzed.send(new Line(n, n % 3 == 0 ? "Fizz" : "")))
                    .andFinally(fizzed::close);
            Task<Void> buzz = fizzed.forEachAsync(l -> lines.send(new Line(l.number(), l.marks()
                    + (l.number() % 5 == 0 ? "Buzz" : "")))).andFinally(lines::close);
            int[] printed = {0};
            Task<Void> consumer = lines.forEach(l -> {
                if (printed[0] < LINES) {
                    out.println(l.marks().isEmpty() ? Integer.toString(l.number()) : l.marks());
                    if (++printed[0] == LINES) {
                        quit.close(); // the producer's select sees it
                    }
                }
            });
            Task.whenAll(List.of(producer, fizz, buzz, consumer)).andFinally(() -> {
                ticks.close(); // on the loop: the tick stops re-arming
                timer[0].cancel();
            }).startOn(loop).join();
        }
    }

    /**
     * Runs the program with the 100 ms tick on standard output.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        new ChannelFizzBuzz(System.out, Duration.ofMillis(100)).run();
    }
}
