package dev.coro;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import kotlin.Unit;
import kotlin.reflect.KFunction;
import kotlin.reflect.jvm.ReflectJvmMapping;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.CustomScenarioDSLKt;
import org.jetbrains.lincheck.datastructures.DSLThreadScenario;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.StressOptions;

/**
 * What every Lincheck test here needs: its runs described once ({@link #lincheck(Class)}),
 * operations by name, custom scenarios, and run times.
 *
 * <p>A test's {@code stress()} run is tagged {@value #STRESS_MODE}: it runs under {@code -Pstress}
 * (and in CI's bounded stress pass), not in the default run, which keeps the model checks.
 */
public final class LincheckSupport {
    /** The tag of the Lincheck stress-mode runs, which the default run excludes. */
    public static final String STRESS_MODE = "lincheck-stress";

    private LincheckSupport() {}

    /**
     * A Lincheck run of {@code test}, with nothing set yet: Lincheck's defaults hold until a setting
     * replaces them.
     *
     * {@snippet :
     * LincheckSupport.lincheck(MyTest.class)
     *         .spec(MyTest.Spec.class)
     *         .scenarios(raceOne(), raceTwo())
     *         .scaledIterations(20).invocations(300)
     *         .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(1)
     *         .modelCheck();
     * }
     */
    public static Check lincheck(Class<?> test) {
        return new Check(test, List.of());
    }

    /**
     * The settings of a Lincheck run of one test class, applied in order to a fresh
     * {@link ModelCheckingOptions} or {@link StressOptions}. Immutable: each setting returns a new
     * check, so a test may share a base (specification, scenarios) between its runs.
     */
    public static final class Check {
        private final Class<?> test;
        private final List<Consumer<Options<?, ?>>> settings;

        private Check(Class<?> test, List<Consumer<Options<?, ?>>> settings) {
            this.test = test;
            this.settings = settings;
        }

        private Check with(Consumer<Options<?, ?>> setting) {
            List<Consumer<Options<?, ?>>> more = new ArrayList<>(settings);
            more.add(setting);
            return new Check(test, List.copyOf(more));
        }

        /** The sequential specification results are checked against. */
        public Check spec(Class<?> spec) {
            return with(o -> o.sequentialSpecification(spec));
        }

        /** Custom scenarios, run before the generated ones. */
        public Check scenarios(ExecutionScenario... scenarios) {
            return with(o -> {
                for (ExecutionScenario scenario : scenarios) {
                    o.addCustomScenario(scenario);
                }
            });
        }

        /** {@code Stress.scaled(base)} generated scenarios: the usual setting. */
        public Check scaledIterations(int base) {
            return iterations(Stress.scaled(base));
        }

        /** Exactly {@code n} generated scenarios (0: the custom scenarios only). */
        public Check iterations(int n) {
            return with(o -> o.iterations(n));
        }

        /**
         * Invocations (interleavings or stress runs) per scenario: {@code n} times the share the run
         * explores ({@code -Dcoro.lincheck.share}, percent: 30 in {@code ./coro modelcheck}, so that it stays
         * well under its time budget; all of it in the stress profile), at least 20.
         */
        public Check invocations(int n) {
            int shared = Math.max(20, (int) ((long) n * share() / 100));
            return with(o -> o.invocationsPerIteration(Math.min(n, shared)));
        }

        private static int share() {
            return Math.min(100, Math.max(1, Integer.getInteger("coro.lincheck.share", 100)));
        }

        /** Threads of the parallel part of generated scenarios. */
        public Check threads(int n) {
            return with(o -> o.threads(n));
        }

        /** Operations per thread in the parallel part. */
        public Check actorsPerThread(int n) {
            return with(o -> o.actorsPerThread(n));
        }

        /** Operations before the parallel part. */
        public Check actorsBefore(int n) {
            return with(o -> o.actorsBefore(n));
        }

        /** Operations after the parallel part. */
        public Check actorsAfter(int n) {
            return with(o -> o.actorsAfter(n));
        }

        /** Model-checks the test and prints the time as {@code Test.modelChecking: N ms}. */
        public void modelCheck() {
            modelCheck("modelChecking");
        }

        /**
         * Model-checks the test and prints the time under {@code mode}.
         *
         * @throws org.jetbrains.lincheck.LincheckAssertionError on a failing interleaving
         */
        public void modelCheck(String mode) {
            run(new ModelCheckingOptions(), mode);
        }

        /** Stress-tests the test and prints the time as {@code Test.stress: N ms}. */
        public void stress() {
            run(new StressOptions(), "stress");
        }

        private void run(Options<?, ?> options, String mode) {
            long start = System.nanoTime();
            for (Consumer<Options<?, ?>> setting : settings) {
                setting.accept(options);
            }
            options.check(test); // throws on a non-linearizable or invalid history
            report(test, mode, start);
        }
    }

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
