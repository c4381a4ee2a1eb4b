package dev.coro.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A child JVM on the test's class path, for the fleet tests: its output lines arrive in a queue, and
 * lines can be written to its standard input. Closing it kills it ({@code kill -9}).
 */
final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Writer in;

    private ChildJvm(Process process) {
        this.process = process;
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofVirtual().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("read failed: " + e);
            }
            lines.add("exit");
        });
    }

    /**
     * Starts {@code main} in a new JVM with a small, quickly started configuration.
     *
     * @param main the class whose {@code main} runs
     * @param args its arguments
     * @return the running child
     */
    static ChildJvm start(Class<?> main, Object... args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"),
                "-Djava.util.logging.config.file=" + System.getProperty("java.util.logging.config.file", ""),
                main.getName()));
        for (Object a : args) {
            command.add(String.valueOf(a));
        }
        return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    /**
     * The next line starting with {@code prefix} (others, such as log lines, skipped), within 60 s;
     * a failure quotes the last lines skipped.
     */
    String next(String prefix) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        ArrayDeque<String> skipped = new ArrayDeque<>();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertNotNull(line, "no line starting with '" + prefix + "' within 60 s; the last lines: " + skipped);
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.equals("exit")) {
                throw new AssertionError("the child exited before printing '" + prefix + "'; the last lines: " + skipped);
            }
            if (skipped.size() == 5) {
                skipped.removeFirst();
            }
            skipped.addLast(line);
        }
    }

    /** The next line, whatever it is, within 60 s; fails if the child exits first. */
    String nextLine() throws InterruptedException {
        String line = lines.poll(60, TimeUnit.SECONDS);
        assertNotNull(line, "no line within 60 s");
        if (line.equals("exit")) {
            throw new AssertionError("the child exited before it was done");
        }
        return line;
    }

    /** Writes {@code line} to the child's standard input. */
    void send(String line) throws IOException {
        in.write(line + "\n");
        in.flush();
    }

    /** The child's process. */
    Process process() {
        return process;
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /**
     * The child JVMs of one test, killed after it ({@code kill -9}, as {@link #close()}). A fleet
     * test registers one per test instance:
     *
     * {@snippet :
     * @RegisterExtension
     * final ChildJvm.Fleet children = new ChildJvm.Fleet();
     * }
     */
    static final class Fleet implements AfterEachCallback {
        private final List<ChildJvm> members = new ArrayList<>();

        /** Starts a member, as {@link ChildJvm#start}, to be killed after the test. */
        ChildJvm start(Class<?> main, Object... args) throws IOException {
            ChildJvm c = ChildJvm.start(main, args);
            members.add(c);
            return c;
        }

        /** The members, in the order they started. */
        List<ChildJvm> members() {
            return members;
        }

        /** Waits for every member to exit and checks that each exited with status 0. */
        void assertExitedCleanly() throws InterruptedException {
            for (ChildJvm c : members) {
                assertEquals(0, c.process().waitFor(), "the child's exit status");
            }
        }

        @Override
        public void afterEach(ExtensionContext context) throws InterruptedException {
            for (ChildJvm c : members) {
                c.close();
            }
        }
    }
}
