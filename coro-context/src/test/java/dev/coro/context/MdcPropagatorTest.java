package dev.coro.context;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.ContextPropagation;
import dev.coro.task.Task;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** {@link MdcPropagator} with the real SLF4J MDC (slf4j-simple's adapter). */
class MdcPropagatorTest {
    @AfterEach
    void clearTestThread() {
        MDC.clear();
    }

    @Test
    void anMdcSetBeforeAChainIsSeenAtEveryHopAndLeftOnNoThread() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        try (Hops hops = new Hops(); ContextPropagation.Registration r = MdcPropagator.register()) {
            MDC.put("request", "r-1");
            CompletableFuture<Void> chain = hops.start(step -> seen.add(step + "=" + MDC.get("request")));
            MDC.clear();
            hops.finish(chain);

            assertEquals(Hops.STEPS.stream().map(s -> s + "=r-1").toList(), seen);
            assertEquals(Hops.LOOP, hops.threads.get("on-loop"), hops.threads.toString());
            List<String> left = hops.probeEveryThread(() -> MDC.get("request"));
            assertTrue(left.stream().allMatch(v -> v == null), "a step left its MDC on a thread: " + left);

            seen.clear(); // an unrelated task on the same threads, started with no MDC: sees none
            hops.finish(hops.start(step -> seen.add(step + "=" + MDC.get("request"))));
            assertEquals(Hops.STEPS.stream().map(s -> s + "=null").toList(), seen);
        }
    }

    @Test
    void aChangeInsideAStepLastsUntilTheStepEnds() {
        List<String> seen = new ArrayList<>();
        try (ContextPropagation.Registration r = MdcPropagator.register()) {
            MDC.put("request", "outer");
            Task.fromRunnable(() -> MDC.put("request", "changed"))
                    .then(Task.yieldNow())
                    .then(Task.fromRunnable(() -> seen.add(MDC.get("request"))))
                    .join();
            assertEquals("outer", MDC.get("request"), "a step's change leaked to the thread that joined");
        }
        assertEquals(List.of("outer"), seen);
    }

    @Test
    void installSetsTheCapturedMapAndRestorePutsTheThreadsOwnBack() {
        MdcPropagator p = MdcPropagator.instance();
        MDC.put("a", "1");
        Map<String, String> previous = p.install(Map.of("b", "2"));
        assertEquals(Map.of("a", "1"), previous);
        assertEquals(Map.of("b", "2"), MDC.getCopyOfContextMap());
        p.restore(previous);
        assertEquals(Map.of("a", "1"), MDC.getCopyOfContextMap());

        Map<String, String> own = p.install(null); // nothing captured: the step runs with no MDC
        assertNull(MDC.get("a"));
        p.restore(own);
        assertEquals("1", MDC.get("a"));
        own = p.install(Map.of()); // an empty map counts as none
        assertNull(MDC.get("a"));
        p.restore(own);
        assertEquals("1", MDC.get("a"));

        MDC.clear(); // a thread with no MDC gets none back
        Map<String, String> nothing = p.install(Map.of("b", "2"));
        p.restore(nothing);
        assertNull(MDC.get("b"));
    }

    @Test
    void registeringTwiceIsRefused() {
        try (ContextPropagation.Registration r = MdcPropagator.register()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, MdcPropagator::register);
            assertTrue(e.getMessage().contains("registered already"), e.getMessage());
        }
        assertSame(MdcPropagator.instance(), MdcPropagator.instance());
    }
}
