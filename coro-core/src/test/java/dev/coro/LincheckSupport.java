package dev.coro;

import java.lang.reflect.Method;
import kotlin.reflect.KFunction;
import kotlin.reflect.jvm.ReflectJvmMapping;

/** What every Lincheck test here needs: operations by name for custom scenarios, and run times. */
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

    /** Prints how long a check of {@code test} in {@code mode} took (the check throws on failure). */
    public static void report(Class<?> test, String mode, long startNanos) {
        long ms = (System.nanoTime() - startNanos) / 1_000_000;
        System.out.println(test.getSimpleName() + "." + mode + ": " + ms + " ms");
    }
}
