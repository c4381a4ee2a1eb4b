package dev.coro.channel;

import dev.coro.internal.Blocking;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.function.Consumer;

/**
 * The blocking door of a {@link Generator}: an iterator (and the stream's spliterator) over one
 * consumption, each value waited for with {@code join()}. A stream consumed whole takes the push path
 * ({@link Generator#forEach} in one join) when nothing has been pulled yet. Not thread-safe.
 */
final class GeneratorIterator<T> implements Iterator<T>, Spliterator<T>, AutoCloseable {
    private final Generator<T> generator;
    private final GeneratorCursor<T> cursor;
    private T peeked;
    private boolean started;
    private boolean done;

    GeneratorIterator(Generator<T> generator) {
        this.generator = generator;
        this.cursor = new GeneratorCursor<>(generator, Generator.blockingContext());
    }

    @Override
    public boolean hasNext() {
        if (peeked != null) {
            return true;
        }
        if (done) {
            return false;
        }
        Blocking.checkAllowed(Generator.class, "iterator().hasNext"); // before any state changes
        started = true;
        T v;
        try {
            v = cursor.next().join();
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
        if (v == null) {
            close();
            return false;
        }
        peeked = v;
        return true;
    }

    @Override
    public T next() {
        if (!hasNext()) {
            throw new NoSuchElementException("the generator has ended");
        }
        T v = peeked;
        peeked = null;
        return v;
    }

    @Override
    public boolean tryAdvance(Consumer<? super T> action) {
        if (!hasNext()) {
            return false;
        }
        action.accept(next());
        return true;
    }

    @Override
    public void forEachRemaining(Consumer<? super T> action) {
        if (!started && !done) { // nothing pulled yet: run the producer inside one join, no hand-off
            Blocking.checkAllowed(Generator.class, "iterator().forEachRemaining");
            started = true;
            done = true;
            generator.forEach(action).join();
            return;
        }
        while (tryAdvance(action)) {
            // pulled one by one
        }
    }

    @Override
    public Spliterator<T> trySplit() {
        return null;
    }

    @Override
    public long estimateSize() {
        return Long.MAX_VALUE;
    }

    @Override
    public int characteristics() {
        return Generator.CHARACTERISTICS;
    }

    @Override
    public void close() {
        done = true;
        peeked = null;
        cursor.close();
    }
}
