package dev.coro.internal;

/**
 * What a primitive of interchangeable units (a mutex, a serial gate) asks of its engine beyond the
 * engine's own doors: the seed's free-standing release, and a snapshot of the free units. Both
 * {@link PermitLane} (FIFO hand-off) and {@link BargingLane} (admission by competition) answer it.
 */
public interface UnitCount {
    /**
     * Releases {@code weight} units if they are held (the seed's {@code unlock()}, which may be
     * misused); changes nothing otherwise.
     *
     * @param weight the units to release
     * @return whether released (false: they were not held)
     */
    boolean releaseIfHeld(long weight);

    /**
     * A snapshot of the free units: exact when no operation is entering or leaving.
     *
     * @return the free units
     */
    long freePermits();
}
