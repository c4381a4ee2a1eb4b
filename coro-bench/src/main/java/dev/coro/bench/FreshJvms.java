package dev.coro.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * Runs one round of a plain-main measurement ({@link Timers}, {@link EchoLoopback}) in a JVM of its
 * own, so that each implementation is measured the way a harness outside the project measures it:
 * in a fresh JVM (its own JIT warm-up, heap sizing and class loading), with the implementations'
 * rounds interleaved (A B, B A, A B, ...) so that a drift of the machine's load falls on all of them.
 *
 * <p>The child is the same main with {@code --child} and the implementation's name: it runs its
 * unmeasured warm-up rounds and one measured round, prints its usual lines, and one line
 * {@code RESULT impl v1 v2 ...} with the measured round's figures, which the parent reads back. The
 * child gets the flags {@link Compare#runMain} gives every plain main (a fixed 2 GB heap, two
 * virtual-thread carriers, two kotlinx threads) plus those given with {@code --jvm-arg}.
 */
final class FreshJvms {
    /** The prefix of the line that carries a child's figures. */
    static final String RESULT = "RESULT ";

    private FreshJvms() {}

    /**
     * The options of a measurement that can run its rounds in fresh JVMs, the same in every such main:
     * {@code @Mixin FreshJvms.Options run = new FreshJvms.Options();}.
     */
    static final class Options {
        @Option(names = "--warmup", paramLabel = "W", description = "unmeasured rounds first (default ${DEFAULT-VALUE}; "
                + "with --fresh-jvms: in every JVM)")
        int warmup = 1;

        @Option(names = "--fresh-jvms", description = "every measured round in a JVM of its own, implementations "
                + "interleaved (A B, B A, ...): as a harness outside the project measures")
        boolean freshJvms;

        @Option(names = "--jvm-arg", paramLabel = "FLAG", description = "with --fresh-jvms: one more flag for the "
                + "child JVMs (repeatable), e.g. --jvm-arg=-Xlog:gc")
        List<String> jvmArgs = new ArrayList<>();

        @Option(names = "--child", hidden = true, description = "internal: one --fresh-jvms round")
        boolean child;
    }

    /**
     * The order of the implementations in round {@code round} (from 1): as given in odd rounds,
     * reversed in even ones, so that none always runs first.
     */
    static List<String> order(List<String> impls, int round) {
        List<String> out = new ArrayList<>(impls);
        if (round % 2 == 0) {
            java.util.Collections.reverse(out);
        }
        return out;
    }

    /**
     * Starts {@code main} in a new JVM with {@code args}, copies its output to ours line by line
     * (indented), and returns the numbers of its {@code RESULT} line.
     *
     * @throws IllegalStateException if the child fails or prints no result
     */
    static long[] runChild(Class<?> main, List<String> jvmArgs, List<String> args) throws IOException,
            InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                Pools.HEAP_MIN, Pools.HEAP_MAX, Pools.VT_PARALLELISM, Pools.KOTLINX_POOL_SIZE));
        if (Runtime.version().feature() >= 24) {
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.addAll(jvmArgs);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().remove("JDK_JAVA_OPTIONS");
        Process p = pb.start();
        long[] result = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith(RESULT)) {
                    String[] f = line.substring(RESULT.length()).trim().split("\\s+");
                    result = new long[f.length - 1];
                    for (int i = 1; i < f.length; i++) {
                        result[i - 1] = Long.parseLong(f[i]);
                    }
                } else {
                    System.out.println("  | " + line);
                }
            }
        }
        int rc = p.waitFor();
        if (rc != 0 || result == null) {
            throw new IllegalStateException(main.getSimpleName() + " child " + args + " exited with " + rc
                    + (result == null ? " and printed no result" : ""));
        }
        return result;
    }

    /** Prints the child's result line: {@code RESULT impl v1 v2 ...}. */
    static void printResult(String impl, long... values) {
        StringBuilder sb = new StringBuilder(RESULT).append(impl);
        for (long v : values) {
            sb.append(' ').append(v);
        }
        System.out.println(sb);
        System.out.flush();
    }
}
