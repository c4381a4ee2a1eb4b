package dev.coro.channel;

import dev.coro.task.Task;

/**
 * One consumption of a {@link Generator}, pulled one value at a time (what C++ writes
 * {@code co_await generator.next()}). Obtained from {@link Generator#open()}; the producer starts at the first
 * {@link #next()} and runs only while a {@code next()} waits for it.
 *
 * <p><b>End.</b> Because elements are never null, {@code next()} completes with {@code null} when the
 * generator has ended, and again for every later call. If the producer fails, {@code next()} fails
 * with its error at the point where it would have received the next value (and every later call
 * fails with the same error).
 *
 * <p><b>Cancel safety.</b> A {@code next()} whose wait is cancelled completes on the cancelled channel
 * and <em>closes the cursor</em>: the value the producer was about to hand over would otherwise be lost,
 * so the producer is ended instead (its cleanup runs). {@link #close()} does the same at any time.
 *
 * <p><b>Where things run.</b> The producer runs in the context of the task that first calls
 * {@code next()}: on its scheduler, with its values, and it is cancelled when that task's token is.
 * A waiting {@code next()} resumes on its own scheduler: inline, through the trampoline, when the
 * producer runs there (no thread hop per element), otherwise by submission.
 *
 * <p><b>Thread-safety.</b> One consumer: {@code next()} may be called from any thread, but only after
 * the previous {@code next()} has completed; a {@code next()} that starts while another is pending
 * fails with {@link IllegalStateException}. {@link #close()} may be called from any thread at any time
 * and is idempotent. Actions of the producer before it emits a value happen-before the {@code next()}
 * that returns it.
 *
 * {@snippet :
 * Task<Integer> firstTwo = Task.defer(() -> {
 *     Cursor<Integer> cursor = Generator.range(1, 100).open();
 *     return cursor.next()
 *             .flatMap(a -> cursor.next().map(b -> a + b))
 *             .andFinally(cursor::close);          // 1 + 2; the producer ends here
 * });
 * }
 *
 * @param <T> the element type
 */
public interface Cursor<T> extends AutoCloseable {
    /**
     * Returns a task that asks the producer for its next value and completes with it, or with
     * {@code null} once the generator has ended. The same task object is returned on every call; each
     * run of it pulls one value.
     *
     * <p>The task fails with the producer's error if the producer failed, with
     * {@link IllegalStateException} if the cursor is closed or another {@code next()} is pending, and
     * completes cancelled if its wait is cancelled (which closes the cursor) or if the producer was
     * cancelled (by the token of the task that started it).
     *
     * @return the task
     */
    Task<T> next();

    /**
     * Closes the cursor: a pending {@code next()} completes cancelled, the producer is cancelled at
     * the wait it is in (its emit, or whatever else it awaits) and its cleanup runs on its scheduler;
     * later {@code next()} calls fail with {@link IllegalStateException}. Does not wait for the
     * producer's cleanup. Idempotent; never throws.
     */
    @Override
    void close();
}
