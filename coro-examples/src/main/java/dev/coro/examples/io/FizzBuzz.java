package dev.coro.examples.io;

import dev.coro.io.AsyncChannel;
import dev.coro.io.EventLoop;
import dev.coro.task.Task;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Seed 004's Fizz Buzz with {@code co_await}: three tasks on one {@link EventLoop} thread, joined by
 * two real OS pipes ({@link Pipe}, non-blocking) and woken by a periodic timer.
 *
 * <ul>
 *   <li>The <b>fizz writer</b> writes {@code Tick1}, {@code Tick2}, {@code Fizz} to the fizz pipe,
 *       forever; the <b>buzz writer</b> writes {@code Tock1} .. {@code Tock4}, {@code Buzz} to the
 *       buzz pipe. Each fills its pipe and then suspends on would-block (the seed's
 *       {@code async_write} returning {@code EAGAIN}) until the consumer makes room.</li>
 *   <li>The <b>consumer</b> waits for the periodic timer (every {@code tick}, 100 ms in the seed), and
 *       for each expiry reads one message from each pipe: it prints the {@code Fizz} and/or
 *       {@code Buzz} it got, or else the iteration number. After the 20th line it ends; the writers
 *       are then cancelled (their pending writes withdrawn), the pipes closed, and the loop shut
 *       down.</li>
 * </ul>
 *
 * <p><b>Framing.</b> The seed opens its pipes in packet mode ({@code O_DIRECT}), so each write is read
 * back as one packet. Java pipes are byte streams, so each message is framed: one length byte, then
 * that many ASCII bytes ({@code "Fizz"} travels as {@code 04 46 69 7a 7a}). The consumer reads the
 * length with {@code readFully} of one byte, then the body with {@code readFully} of that length;
 * the writers write each frame with {@code writeFully}, so a frame split by a full pipe is finished
 * when the pipe drains.
 *
 * <p><b>The timer</b> is a fixed-rate periodic timer read like the seed's {@code timerfd}: a wait
 * returns the number of expirations since the last one, and the consumer handles each in turn.
 */
public final class FizzBuzz {
    private static final int LINES = 20;

    private final PrintStream out;
    private final Duration tick;
    private final Set<String> threads = ConcurrentHashMap.newKeySet();
    private final long[] printedAt = new long[LINES];
    private volatile long fizzFrames;
    private volatile long buzzFrames;

    /**
     * Creates the program.
     *
     * @param out where the 20 lines go
     * @param tick the timer period (the seed's is 100 ms)
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code tick} is not positive
     */
    public FizzBuzz(PrintStream out, Duration tick) {
        this.out = Objects.requireNonNull(out, "out");
        this.tick = Objects.requireNonNull(tick, "tick");
        if (tick.isNegative() || tick.isZero()) {
            throw new IllegalArgumentException("tick must be positive, was " + tick);
        }
    }

    /** Runs the seed's program: 20 lines, one per 100 ms. */
    public static void main(String[] args) {
        new FizzBuzz(System.out, Duration.ofMillis(100)).run();
    }

    /**
     * Runs the program to its end: prints the 20 lines, then closes the pipes and the loop.
     *
     * @throws UncheckedIOException if a pipe cannot be opened
     */
    public void run() {
        Pipe fizzPipe;
        Pipe buzzPipe;
        try {
            fizzPipe = Pipe.open();
            buzzPipe = Pipe.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (EventLoop loop = EventLoop.start("fizzbuzz-loop");
                AsyncChannel fizzIn = AsyncChannel.open(loop, fizzPipe.source());
                AsyncChannel fizzOut = AsyncChannel.open(loop, fizzPipe.sink());
                AsyncChannel buzzIn = AsyncChannel.open(loop, buzzPipe.source());
                AsyncChannel buzzOut = AsyncChannel.open(loop, buzzPipe.sink())) {
            Task<Void> fizz = writer(fizzOut, true, "Tick1", "Tick2", "Fizz");
            Task<Void> buzz = writer(buzzOut, false, "Tock1", "Tock2", "Tock3", "Tock4", "Buzz");
            Task<Void> consume = consumer(loop, fizzIn, buzzIn);
            Task.whenAny(List.of(consume, fizz, buzz)).startOn(loop).join(); // the consumer ends first
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Writes the messages, framed, in a cycle, forever. */
    private Task<Void> writer(AsyncChannel pipe, boolean isFizz, String... messages) {
        ByteBuffer[] frames = new ByteBuffer[messages.length];
        for (int i = 0; i < messages.length; i++) {
            frames[i] = frame(messages[i]);
        }
        return Task.loop(0, i -> true, i -> {
            threads.add(Thread.currentThread().getName());
            return pipe.writeFully(frames[i].duplicate()).map(x -> {
                if (isFizz) {
                    fizzFrames++; // loop-confined writer; volatile for the reader of the count
                } else {
                    buzzFrames++;
                }
                return (i + 1) % frames.length;
            });
        }).map(x -> (Void) null);
    }

    /** On each timer expiry, one message from each pipe, one line out; 20 lines. */
    private Task<Void> consumer(EventLoop loop, AsyncChannel fizzIn, AsyncChannel buzzIn) {
        return Task.defer(() -> {
            Ticker ticker = new Ticker(loop, tick);
            long start = ticker.start();
            ByteBuffer length = ByteBuffer.allocate(1);
            ByteBuffer body = ByteBuffer.allocate(255);
            Task<String> readFizz = readFrame(fizzIn, length, body);
            Task<String> readBuzz = readFrame(buzzIn, length, body);
            return Task.loop(1, iteration -> iteration <= LINES, iteration -> ticker.await().flatMap(expirations ->
                    Task.loop(new long[] {expirations, iteration}, s -> s[0] > 0 && s[1] <= LINES, s ->
                            readFizz.flatMap(f -> readBuzz.map(b -> {
                                threads.add(Thread.currentThread().getName());
                                int k = (int) s[1];
                                String line = (f.equals("Fizz") ? f : "") + (b.equals("Buzz") ? b : "");
                                out.println(line.isEmpty() ? Integer.toString(k) : line);
                                printedAt[k - 1] = loop.nanoTime() - start;
                                return new long[] {s[0] - 1, s[1] + 1};
                            })))
                    .map(s -> (int) s[1])))
                    .andFinally(ticker::stop)
                    .map(x -> (Void) null);
        });
    }

    /** Reads one frame: its length byte, then its body. */
    private static Task<String> readFrame(AsyncChannel in, ByteBuffer length, ByteBuffer body) {
        return Task.defer(() -> {
            length.clear();
            return in.readFully(length).flatMap(x -> {
                body.clear().limit(length.get(0) & 0xff);
                return in.readFully(body).map(y -> new String(body.array(), 0, body.limit(), StandardCharsets.US_ASCII));
            });
        });
    }

    private static ByteBuffer frame(String message) {
        byte[] text = message.getBytes(StandardCharsets.US_ASCII);
        ByteBuffer f = ByteBuffer.allocate(1 + text.length);
        f.put((byte) text.length).put(text).flip();
        return f;
    }

    /**
     * Returns the names of the threads the three tasks ran their steps on (after {@link #run()}: only
     * the loop's).
     *
     * @return the thread names
     */
    public Set<String> threads() {
        return Set.copyOf(threads);
    }

    /**
     * Returns when each line was printed, in nanoseconds after the timer started (after
     * {@link #run()}); line k (from 1) is never printed before {@code k * tick}.
     *
     * @return one time per line
     */
    public long[] printedAt() {
        return printedAt.clone();
    }

    /**
     * Returns how many frames the fizz and buzz writers wrote (after {@link #run()}): far more than
     * 20, since each filled its pipe before it had to wait.
     *
     * @return {fizz frames, buzz frames}
     */
    public long[] framesWritten() {
        return new long[] {fizzFrames, buzzFrames};
    }
}
