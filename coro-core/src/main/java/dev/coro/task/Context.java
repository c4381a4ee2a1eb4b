package dev.coro.task;

import dev.coro.cancel.CancellationToken;
import dev.coro.scheduler.Scheduler;
import java.util.Objects;

/**
 * What a running task carries with it: its {@link Scheduler}, its {@link CancellationToken}, and user
 * values looked up by {@link Key}. A context is immutable; the {@code with...} methods return new
 * contexts. Composition passes the context on: a child task sees its parent's values and is cancelled
 * with it; {@link Task#withValue(Key, Object)}, {@link Task#startOn(Scheduler)} and friends change it for
 * a region of a task, and the previous context is back when that region ends.
 *
 * <p>Lookup is a walk of a short linked list (contexts usually carry a handful of values).
 *
 * {@snippet :
 * Context.Key<String> USER = Context.Key.named("user");
 * Task<String> who = Task.context().map(ctx -> ctx.get(USER));
 * String name = who.withValue(USER, "ada").join();   // "ada"
 * }
 */
public final class Context {
    private static final ThreadLocal<Context> CURRENT = new ThreadLocal<>();

    private final Scheduler scheduler;
    private final CancellationToken token;
    private final Entry values;

    private Context(Scheduler scheduler, CancellationToken token, Entry values) {
        this.scheduler = scheduler;
        this.token = token;
        this.values = values;
    }

    /**
     * Returns a context with no values, the given scheduler, and a token that is never cancelled.
     *
     * @param scheduler where the task runs
     * @return a new root context
     * @throws NullPointerException if {@code scheduler} is null
     */
    public static Context of(Scheduler scheduler) {
        return new Context(Objects.requireNonNull(scheduler, "scheduler"), CancellationToken.NONE, null);
    }

    /**
     * Returns the context of the task body running on this thread: inside a body started by
     * {@link Task#onVirtualThread}, its task's context; otherwise {@code null}. Blocking joins made from
     * such a body inherit its values and cancellation.
     *
     * @return the current context, or {@code null} outside a task body
     */
    public static Context current() {
        return CURRENT.get();
    }

    static void setCurrent(Context context) {
        if (context == null) {
            CURRENT.remove();
        } else {
            CURRENT.set(context);
        }
    }

    /**
     * Returns the scheduler the task runs on and resumes on.
     *
     * @return the scheduler
     */
    public Scheduler scheduler() {
        return scheduler;
    }

    /**
     * Returns the token that cancels the task.
     *
     * @return the token
     */
    public CancellationToken token() {
        return token;
    }

    /**
     * Returns the value bound to {@code key}, or the key's default when none is bound.
     *
     * @param key the key
     * @param <V> the value type
     * @return the bound value or the default (which may be null)
     * @throws NullPointerException if {@code key} is null
     */
    public <V> V get(Key<V> key) {
        Objects.requireNonNull(key, "key");
        for (Entry e = values; e != null; e = e.next) {
            if (e.key == key) {
                return key.type.cast(e.value);
            }
        }
        return key.defaultValue;
    }

    /**
     * Returns a context like this one with {@code key} bound to {@code value}.
     *
     * @param key the key
     * @param value the value (may be null)
     * @param <V> the value type
     * @return the new context
     * @throws NullPointerException if {@code key} is null
     */
    public <V> Context with(Key<V> key, V value) {
        Objects.requireNonNull(key, "key");
        return new Context(scheduler, token, new Entry(key, key.type.cast(value), values));
    }

    /**
     * Returns a context like this one on another scheduler.
     *
     * @param scheduler the scheduler
     * @return the new context
     * @throws NullPointerException if {@code scheduler} is null
     */
    public Context withScheduler(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        return scheduler == this.scheduler ? this : new Context(scheduler, token, values);
    }

    /**
     * Returns a context like this one with another cancellation token.
     *
     * @param token the token
     * @return the new context
     * @throws NullPointerException if {@code token} is null
     */
    public Context withToken(CancellationToken token) {
        Objects.requireNonNull(token, "token");
        return token == this.token ? this : new Context(scheduler, token, values);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("Context[").append(scheduler).append(", ").append(token);
        for (Entry e = values; e != null; e = e.next) {
            sb.append(", ").append(e.key.name).append('=').append(e.value);
        }
        return sb.append(']').toString();
    }

    private record Entry(Key<?> key, Object value, Entry next) {}

    /**
     * A typed key for a context value. Keys compare by identity: two keys with the same name are
     * different keys.
     *
     * @param <V> the value type
     */
    public static final class Key<V> {
        private final String name;
        private final Class<V> type;
        private final V defaultValue;

        private Key(String name, Class<V> type, V defaultValue) {
            this.name = name;
            this.type = type;
            this.defaultValue = defaultValue;
        }

        /**
         * Creates a key whose default value is {@code null}.
         *
         * @param name a name for diagnostics
         * @param <V> the value type
         * @return a new key
         * @throws NullPointerException if {@code name} is null
         */
        @SuppressWarnings("unchecked")
        public static <V> Key<V> named(String name) {
            return new Key<>(Objects.requireNonNull(name, "name"), (Class<V>) Object.class, null);
        }

        /**
         * Creates a key with a default value, returned by {@link Context#get} when the key is unbound.
         *
         * @param name a name for diagnostics
         * @param type the value type, checked on binding
         * @param defaultValue the default (may be null)
         * @param <V> the value type
         * @return a new key
         * @throws NullPointerException if {@code name} or {@code type} is null
         */
        public static <V> Key<V> named(String name, Class<V> type, V defaultValue) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(type, "type");
            return new Key<>(name, type, type.cast(defaultValue));
        }

        /**
         * Returns the key's name.
         *
         * @return the name
         */
        public String name() {
            return name;
        }

        @Override
        public String toString() {
            return "Key[" + name + "]";
        }
    }
}
