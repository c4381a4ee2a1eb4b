package dev.coro.context;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.task.ContextPropagation;
import dev.coro.task.Task;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanId;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link OpenTelemetryPropagator} with the real OpenTelemetry SDK and its in-memory exporter. */
class OpenTelemetryPropagatorTest {
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final SdkTracerProvider provider =
            SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    private final Tracer tracer = provider.get("coro-context-test");

    @AfterEach
    void shutDown() {
        provider.close();
    }

    private void childSpan(String name) {
        tracer.spanBuilder(name).startSpan().end(); // parent: whatever context is current here
    }

    @Test
    void aSpanCurrentAtTheStartIsTheParentOfSpansStartedAtEveryHop() throws Exception {
        try (Hops hops = new Hops(); ContextPropagation.Registration r = OpenTelemetryPropagator.register()) {
            Span outer = tracer.spanBuilder("outer").startSpan();
            CompletableFuture<Void> chain;
            try (Scope s = outer.makeCurrent()) {
                chain = hops.start(this::childSpan);
            }
            assertSame(Context.root(), Context.current(), "the test thread itself no longer has the span");
            hops.finish(chain);
            outer.end();

            List<SpanData> spans = exporter.getFinishedSpanItems();
            List<SpanData> children = spans.stream().filter(d -> !d.getName().equals("outer")).toList();
            assertEquals(Hops.STEPS, children.stream().map(SpanData::getName).toList());
            for (SpanData child : children) {
                assertEquals(outer.getSpanContext().getSpanId(), child.getParentSpanId(), child.getName());
                assertEquals(outer.getSpanContext().getTraceId(), child.getTraceId(), child.getName());
            }
            for (String step : List.of("first", "after-yield", "after-timer", "in-gate", "back-on-pool")) {
                assertTrue(hops.threads.get(step).startsWith(Hops.POOL), step + " ran off the pool: " + hops.threads);
            }
            assertEquals(Hops.LOOP, hops.threads.get("on-loop"), hops.threads.toString());
            assertEquals(Hops.LOOP, hops.threads.get("resumed-on-loop"), hops.threads.toString());

            List<Boolean> rootEverywhere = hops.probeEveryThread(() -> Context.current() == Context.root());
            assertTrue(rootEverywhere.stream().allMatch(b -> b), "a step left a context current on a thread");
        }
    }

    @Test
    void aTaskStartedWithNoSpanGetsNoParentOnThreadsThatRanATracedTask() throws Exception {
        try (Hops hops = new Hops(); ContextPropagation.Registration r = OpenTelemetryPropagator.register()) {
            Span outer = tracer.spanBuilder("outer").startSpan();
            CompletableFuture<Void> traced;
            try (Scope s = outer.makeCurrent()) {
                traced = hops.start(this::childSpan);
            }
            hops.finish(traced);
            outer.end();
            exporter.reset();

            hops.finish(hops.start(this::childSpan)); // started with the root context
            List<SpanData> spans = exporter.getFinishedSpanItems();
            assertEquals(Hops.STEPS.size(), spans.size());
            for (SpanData d : spans) {
                assertEquals(SpanId.getInvalid(), d.getParentSpanId(), d.getName() + " got a parent");
                assertNotEquals(outer.getSpanContext().getTraceId(), d.getTraceId(), d.getName());
            }
        }
    }

    @Test
    void installMakesTheCapturedContextCurrentAndRestorePutsTheThreadsOwnBack() {
        OpenTelemetryPropagator p = OpenTelemetryPropagator.instance();
        Span a = tracer.spanBuilder("a").startSpan();
        Span b = tracer.spanBuilder("b").startSpan();
        Context captured;
        try (Scope s = a.makeCurrent()) {
            captured = p.capture();
        }
        try (Scope s = b.makeCurrent()) {
            Scope scope = p.install(captured);
            assertEquals(a.getSpanContext(), Span.current().getSpanContext());
            p.restore(scope);
            assertEquals(b.getSpanContext(), Span.current().getSpanContext());
        }
        assertSame(Context.root(), Context.current());
        a.end();
        b.end();
    }

    @Test
    void registeringTwiceIsRefused() {
        try (ContextPropagation.Registration r = OpenTelemetryPropagator.register()) {
            assertThrows(IllegalArgumentException.class, OpenTelemetryPropagator::register);
        }
        assertSame(OpenTelemetryPropagator.instance(), OpenTelemetryPropagator.instance());
        Task.value(1).join(); // still runs with the registration closed
    }
}
