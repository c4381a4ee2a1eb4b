package dev.coro.examples.pool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class PoolDemoTest {
    private static final Pattern PRINT = Pattern.compile("> (\\d)([ab]) print: .* on thread: (\\S+)");
    private static final Pattern RESUME = Pattern.compile("===== (\\d) resume +on thread: (\\S+)");

    private static List<String> run(java.util.function.Consumer<PoolDemo> program) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        program.accept(new PoolDemo(out, Duration.ofMillis(1)));
        return bytes.toString(StandardCharsets.UTF_8).lines().toList();
    }

    /** The seed's rule: after co_await print(...), the caller resumes on the thread that ran print. */
    private static void assertCallerResumesOnTheCalleesThread(List<String> lines, int chains) {
        Map<String, String> lastPrintThread = new HashMap<>();
        int resumes = 0;
        for (String line : lines) {
            Matcher p = PRINT.matcher(line);
            if (p.find()) {
                lastPrintThread.put(p.group(1), p.group(3));
                assertTrue(p.group(3).startsWith("pool-worker-"), "callees run on the pool: " + line);
            }
            Matcher r = RESUME.matcher(line);
            if (r.find()) {
                assertEquals(lastPrintThread.get(r.group(1)), r.group(2), "resumed on the callee's thread: " + line);
                resumes++;
            }
        }
        assertEquals(2 * chains, resumes);
        for (int i = 1; i <= chains; i++) {
            assertTrue(lines.contains("===== " + i + " done"), "chain " + i + " finished");
        }
    }

    @Test
    void oneChainResumesWhereItsCalleeRan() {
        List<String> lines = run(PoolDemo::oneChain);
        assertCallerResumesOnTheCalleesThread(lines, 1);
        assertTrue(lines.indexOf("===== 1 done") < lines.indexOf("**** main() done"), "the scope join waited");
    }

    @Test
    void fourChainsAllFinishBeforeMainDoes() {
        List<String> lines = run(PoolDemo::fourChains);
        assertCallerResumesOnTheCalleesThread(lines, 4);
        int mainDone = lines.indexOf("**** main() done");
        for (int i = 1; i <= 4; i++) {
            assertTrue(lines.indexOf("===== " + i + " done") < mainDone);
        }
    }

    @Test
    void syncWaitBlocksUntilTheTaskIsDone() {
        List<String> lines = run(PoolDemo::syncWait);
        assertCallerResumesOnTheCalleesThread(lines, 1);
        String returned = "**** join() returned on thread " + Thread.currentThread().getName() + ": the task is done";
        assertTrue(lines.contains(returned), "syncWait returned on the thread that called it");
        assertTrue(lines.indexOf("===== 1 done") < lines.indexOf(returned));
    }
}
