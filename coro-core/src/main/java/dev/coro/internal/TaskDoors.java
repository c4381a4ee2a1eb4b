package dev.coro.internal;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

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
     * Returns the task layer's doors, initializing the task layer first if nothing has yet (as the
     * JDK's {@code SharedSecrets} does: the class is named, not imported, so this layer stays below).
     *
     * @return the doors
     * @throws IllegalStateException if the task layer cannot be initialized
     */
    public static TaskDoors get() {
        TaskDoors d = installed;
        if (d == null) {
            try {
                Class.forName("dev.coro.task.Task", true, TaskDoors.class.getClassLoader()); // installs them
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("get: the task layer is missing", e);
            }
            d = installed;
            if (d == null) {
                throw new IllegalStateException("get: the task layer did not install its doors");
            }
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

    /**
     * Returns the frame that runs {@code exit} on every completion path of a {@link #guarded} body:
     * made once by the owner of the exit (a mutex, a gate's door) and shared by all its guarded tasks.
     *
     * @param exit the action (a release), run once per admitted run; what it throws fails the run
     * @param entered whether an entry's value means entered, or null (always): called once per value,
     *     right after the entry ends with it, before anything else runs; false runs the guarded task
     *     again from its entry (a barging lock's woken waiter that lost its competition)
     * @return the frame, for {@link #guarded}
     */
    public abstract Object exitFrame(Runnable exit, Predicate<Object> entered);

    /**
     * Returns a task (a {@code Task<T>}, as an object) that runs {@code enter}, and if it ends with
     * a value, {@code body} with the exit of {@code exitFrame} on every completion path of body:
     * {@code enter.then(body.andFinally(exit))} in one node instead of two. An entry that fails or is
     * cancelled passes on its outcome, and the exit does not run.
     *
     * @param enter the entry (a {@code Task}): a lock, an admission
     * @param body the body (a {@code Task<T>})
     * @param exitFrame from {@link #exitFrame}
     * @return the task
     */
    public abstract Object guarded(Object enter, Object body, Object exitFrame);
}
