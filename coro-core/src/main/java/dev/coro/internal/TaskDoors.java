package dev.coro.internal;

import java.util.Objects;
import java.util.function.Function;

/**
 * The task layer's doors for the layers above it that the public {@code Task} API leaves closed
 * (the JDK's {@code SharedSecrets} habit): the task layer installs them once, when its {@code Task}
 * class is initialized, and the layers above read them. This layer cannot name {@code Task}, so a
 * task travels here as an {@code Object}; the caller casts it back.
 *
 * <p>Thread-safety: installed once (a volatile write); a reader that has used {@code Task} (which
 * initializes it) sees the doors.
 */
public abstract class TaskDoors {
    private static volatile TaskDoors installed;

    /** For the task layer's one implementation. */
    protected TaskDoors() {}

    /**
     * Installs the task layer's doors: called by the task layer's class initialization (once per
     * class loader that loads it).
     *
     * @param doors the doors
     * @throws NullPointerException if {@code doors} is null
     */
    public static void install(TaskDoors doors) {
        installed = Objects.requireNonNull(doors, "doors");
    }

    /**
     * Returns the task layer's doors. The caller must have initialized the task layer first (any use
     * of {@code Task} does: read a constant task, say).
     *
     * @return the doors
     * @throws IllegalStateException if the task layer is not initialized yet
     */
    public static TaskDoors get() {
        TaskDoors d = installed;
        if (d == null) {
            throw new IllegalStateException("get: the task layer is not initialized yet (use Task first)");
        }
        return d;
    }

    /**
     * Returns a task (a {@code Task<T>}, as an object) that, each time it runs, runs the task
     * {@code fn} returns for {@code argument}: {@code Task.defer(() -> fn.apply(argument))} in one
     * object, with no lambda to capture the argument. What {@code fn} throws, or a null task, fails
     * the run.
     *
     * @param fn builds the task to run (returns a {@code Task})
     * @param argument what {@code fn} is applied to
     * @param <A> the argument type
     * @return the task
     */
    public abstract <A> Object defer(Function<? super A, ?> fn, A argument);
}
