package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One admission to a gate, as {@code acquire()} and {@code tryAcquire()} give it: the paper's exit
 * sender in Java form. {@link #exit()} leaves the gate exactly once, whichever thread calls it and
 * however often; {@link #close()} does the same, for try-with-resources.
 *
 * <p>Prefer a gate's {@code within(task)}, which exits on every completion path of the work by
 * construction and allocates no admission object.
 *
 * <p>Thread-safety: {@code exit} may be called from any thread; one call wins. Actions before the
 * winning {@code exit} happen-before the admission of the waiter it lets in.
 *
 * {@snippet :
 * CapacityGate gate = new CapacityGate(4);
 * try (Admission admission = gate.acquire().join()) {
 *     upload(chunk);                   // at most 4 uploads at once
 * }
 * }
 */
public final class Admission implements AutoCloseable {
    private final AdmissionEngine engine;
    private final long weight;
    /** What leaving does for a gate that is more than one engine (a keyed gate), or null. */
    private final Runnable leave;
    private volatile int exited;

    Admission(AdmissionEngine engine, long weight) {
        this.engine = engine;
        this.weight = weight;
        this.leave = null;
    }

    /** An admission whose exit runs {@code leave} (once). */
    Admission(Runnable leave) {
        this.engine = null;
        this.weight = 0;
        this.leave = leave;
    }

    /**
     * Leaves the gate, the first time it is called (from any thread); later calls do nothing.
     *
     * @return whether this call left the gate
     */
    public boolean exit() {
        if (exited != 0 || !EXITED.compareAndSet(this, 0, 1)) {
            return false;
        }
        if (leave != null) {
            leave.run();
        } else {
            engine.release(weight);
        }
        return true;
    }

    /** Leaves the gate, as {@link #exit()}. */
    @Override
    public void close() {
        exit();
    }

    /**
     * Returns whether the admission has been exited.
     *
     * @return whether exited
     */
    public boolean isExited() {
        return exited != 0;
    }

    @Override
    public String toString() {
        return "Admission[" + (exited != 0 ? "exited" : "held") + "]";
    }

    private static final VarHandle EXITED;

    static {
        try {
            EXITED = MethodHandles.lookup().findVarHandle(Admission.class, "exited", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
