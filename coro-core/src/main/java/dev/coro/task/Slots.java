package dev.coro.task;

import java.util.AbstractList;
import java.util.RandomAccess;

/**
 * A fixed number of slots stored in chunks of {@link #CHUNK} references rather than one array, and
 * its read-only list view. A collection of 200,000 values is then 49 small arrays instead of one
 * 800 KB array: G1 allocates an array of half a region or more (512 KB with the 1 MB regions of a
 * 2 GB heap) as a humongous object, outside the young generation, which made collecting values several
 * times slower than joining (stop 25's measurement). Small counts use one chunk of exactly their size.
 *
 * <p>Not thread-safe by itself: writers publish their plain slot writes through the volatile
 * read-modify-write that counts them down, and the list is handed out only after the last one.
 */
final class Slots extends AbstractList<Object> implements RandomAccess {
    /** References per chunk (16 KB with compressed references): far below any G1 humongous threshold. */
    static final int CHUNK = 4096;
    private static final int SHIFT = 12;
    private static final int MASK = CHUNK - 1;

    private final Object[][] chunks;
    private final int size;

    Slots(int size) {
        assert size >= 0 && Integer.bitCount(CHUNK) == 1 && CHUNK == 1 << SHIFT;
        this.size = size;
        int n = (size + MASK) >>> SHIFT;
        chunks = new Object[n][];
        for (int c = 0; c < n; c++) {
            chunks[c] = new Object[Math.min(CHUNK, size - (c << SHIFT))];
        }
    }

    /** Slot {@code i} (unchecked: {@code 0 <= i < size}, asserted). */
    Object at(int i) {
        assert i >= 0 && i < size : i;
        return chunks[i >>> SHIFT][i & MASK];
    }

    /** Sets slot {@code i}, a plain write (unchecked, asserted). */
    void put(int i, Object value) {
        assert i >= 0 && i < size : i;
        chunks[i >>> SHIFT][i & MASK] = value;
    }

    /**
     * Copies {@code list} into new slots, in its iteration order, refusing null elements.
     *
     * @throws NullPointerException if an element is null: "{@code name}[i] is null"
     */
    static Slots copyOfNonNull(java.util.Collection<?> list, String name) {
        Slots copy = new Slots(list.size());
        int i = 0;
        for (Object e : list) {
            if (i == copy.size) {
                throw new java.util.ConcurrentModificationException(name + " changed size while it was copied");
            }
            if (e == null) {
                throw new NullPointerException(name + "[" + i + "] is null");
            }
            copy.put(i++, e);
        }
        if (i != copy.size) {
            throw new java.util.ConcurrentModificationException(name + " changed size while it was copied");
        }
        return copy;
    }

    /**
     * The element at {@code index}: the slot's content.
     *
     * @throws IndexOutOfBoundsException unless {@code 0 <= index < size()}
     */
    @Override
    public Object get(int index) {
        if (index < 0 || index >= size) {
            throw new IndexOutOfBoundsException("index " + index + " out of bounds for size " + size);
        }
        return chunks[index >>> SHIFT][index & MASK];
    }

    @Override
    public int size() {
        return size;
    }
}
