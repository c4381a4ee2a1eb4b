package dev.coro;

import java.lang.reflect.Method;
import kotlin.Unit;
import kotlin.reflect.KFunction;
import kotlin.reflect.jvm.ReflectJvmMapping;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.CustomScenarioDSLKt;
import org.jetbrains.lincheck.datastructures.DSLThreadScenario;

/** What every Lincheck test here needs: operations by name, custom scenarios, and run times. */
public final class LincheckSupport {
    private LincheckSupport() {}

    /** The operation {@code name} of {@code test}, as Lincheck's scenario DSL wants it. */
    public static KFunction<?> op(Class<?> test, String name) {
        for (Method m : test.getMethods()) {
            if (m.getName().equals(name)) {
                return ReflectJvmMapping.getKotlinFunction(m);
            }
        }
        throw new IllegalArgumentException("no operation " + name + " in " + test.getSimpleName());
    }

    /**
     * A custom scenario of {@code test}'s operations, written compactly. An actor is an operation
     * name followed by its integer arguments ({@code "acquire 3"}); a thread is actors separated by
     * {@code ";"}; {@code parallel} is threads separated by {@code "|"}. {@code initial} and
     * {@code post} are one thread each, or null.
     *
     * {@snippet :
     * scenario(MyTest.class, "tryAcquire 1; acquire 3", "release 1 | cancel 3; release 3", null)
     * }
     */
    public static ExecutionScenario scenario(Class<?> test, String initial, String parallel, String post) {
        return CustomScenarioDSLKt.scenario(s -> {
            if (initial != null) {
                s.initial(t -> actors(test, t, initial));
            }
            s.parallel(p -> {
                for (String thread : parallel.split("\\|")) {
                    p.thread(t -> actors(test, t, thread));
                }
                return Unit.INSTANCE;
            });
            if (post != null) {
                s.post(t -> actors(test, t, post));
            }
            return Unit.INSTANCE;
        });
    }

    private static Unit actors(Class<?> test, DSLThreadScenario thread, String actors) {
        for (String actor : actors.split(";")) {
            String[] words = actor.trim().split("\\s+");
            Object[] args = new Object[words.length - 1];
            for (int i = 1; i < words.length; i++) {
                args[i - 1] = Integer.parseInt(words[i]);
            }
            thread.actor(op(test, words[0]), args);
        }
        return Unit.INSTANCE;
    }

    /** Prints how long a check of {@code test} in {@code mode} took (the check throws on failure). */
    public static void report(Class<?> test, String mode, long startNanos) {
        long ms = (System.nanoTime() - startNanos) / 1_000_000;
        System.out.println(test.getSimpleName() + "." + mode + ": " + ms + " ms");
    }
}
