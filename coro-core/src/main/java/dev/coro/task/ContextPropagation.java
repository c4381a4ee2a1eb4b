package dev.coro.task;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The registry of {@link ContextPropagator}s: what every task started from now on carries across
 * its hops. With none registered (the default) a task carries nothing and pays one read of an empty
 * registry when it starts.
 *
 * <p>Thread-safety: lock-free; a registration affects the tasks started after it returns (a task
 * keeps the propagators of its start for its whole run).
 *
 * {@snippet :
 * ContextPropagation.Registration mdc = ContextPropagation.register(myMdcPropagator);
 * // ... tasks started now carry the MDC ...
 * mdc.close(); // tasks started later do not
 * }
 */
public final class ContextPropagation {
    private static final ContextPropagator<?, ?>[] NONE = {};
    private static final AtomicReference<ContextPropagator<?, ?>[]> REGISTERED = new AtomicReference<>(NONE);

    private ContextPropagation() {}

    /** A registration: closing it removes the propagator for the tasks started afterwards. */
    public static final class Registration implements AutoCloseable {
        private final ContextPropagator<?, ?> propagator;

        private Registration(ContextPropagator<?, ?> propagator) {
            this.propagator = propagator;
        }

        /** Removes the propagator (tasks already started keep it); idempotent. */
        @Override
        public void close() {
            REGISTERED.updateAndGet(current -> {
                int i = Arrays.asList(current).indexOf(propagator);
                if (i < 0) {
                    return current;
                }
                ContextPropagator<?, ?>[] next = new ContextPropagator<?, ?>[current.length - 1];
                System.arraycopy(current, 0, next, 0, i);
                System.arraycopy(current, i + 1, next, i, current.length - i - 1);
                return next;
            });
        }
    }

    /**
     * Registers {@code propagator} for every task started from now on.
     *
     * @param propagator the propagator
     * @return the registration, whose {@code close()} removes it
     * @throws NullPointerException if {@code propagator} is null
     * @throws IllegalArgumentException if it is registered already
     */
    public static Registration register(ContextPropagator<?, ?> propagator) {
        Objects.requireNonNull(propagator, "propagator");
        REGISTERED.updateAndGet(current -> {
            if (Arrays.asList(current).contains(propagator)) {
                throw new IllegalArgumentException("propagator is registered already: " + propagator);
            }
            ContextPropagator<?, ?>[] next = Arrays.copyOf(current, current.length + 1);
            next[current.length] = propagator;
            return next;
        });
        return new Registration(propagator);
    }

    /**
     * Returns a propagator for {@code local}: a task carries the value the starting thread had; each
     * step runs with it set, and the thread's own value (or none) is put back after the step.
     *
     * @param local the thread-local
     * @param <T> its value type
     * @return the propagator (register it to use it): it captures the value and hands the thread's
     *     previous value to {@code restore}
     * @throws NullPointerException if {@code local} is null
     */
    public static <T> ContextPropagator<T, T> threadLocal(ThreadLocal<T> local) {
        Objects.requireNonNull(local, "local");
        return new ContextPropagator<>() {
            @Override
            public T capture() {
                return local.get();
            }

            @Override
            public T install(T captured) {
                T previous = local.get();
                set(captured);
                return previous;
            }

            @Override
            public void restore(T previous) {
                set(previous);
            }

            private void set(T value) {
                if (value == null) {
                    local.remove(); // no value: leave nothing behind on a pooled thread
                } else {
                    local.set(value);
                }
            }

            @Override
            public String toString() {
                return "ContextPropagation.threadLocal(" + local + ")";
            }
        };
    }

    /** What a task carries: its propagators and what each captured; null when none is registered. */
    static Carried capture() {
        ContextPropagator<?, ?>[] ps = REGISTERED.get();
        if (ps.length == 0) {
            return null;
        }
        Object[] values = new Object[ps.length];
        for (int i = 0; i < ps.length; i++) {
            values[i] = ps[i].capture();
        }
        return new Carried(ps, values);
    }

    /** The captured contexts of one task, installed around each of its steps. */
    static final class Carried {
        private final ContextPropagator<?, ?>[] propagators;
        private final Object[] values;

        Carried(ContextPropagator<?, ?>[] propagators, Object[] values) {
            this.propagators = propagators;
            this.values = values;
        }

        /** Installs every context on the current thread; returns what the thread had, for {@link #restore}. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        Object[] install() {
            Object[] previous = new Object[propagators.length];
            for (int i = 0; i < propagators.length; i++) {
                previous[i] = ((ContextPropagator) propagators[i]).install(values[i]);
            }
            return previous;
        }

        /** Puts back what {@link #install} found, in reverse order. */
        @SuppressWarnings({"unchecked", "rawtypes"})
        void restore(Object[] previous) {
            for (int i = propagators.length - 1; i >= 0; i--) {
                ((ContextPropagator) propagators[i]).restore(previous[i]);
            }
        }
    }
}
