package dev.coro.channel;

import dev.coro.LincheckSupport;
import dev.coro.task.Outcome;
import dev.coro.task.Promise;
import dev.coro.task.Task;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link GeneratorEmitter}'s guard against {@link Spec}, in model-checking and
 * stress modes: emits from several threads at once (a misuse the guard must refuse, never let
 * through), the consumer's request that frees a waiting emit, and the end of the run.
 *
 * <p><b>The model.</b> One emitter over a {@link ConfinedSink}, a sink that checks its own
 * confinement: it counts the values it holds ({@code inside}, an atomic the model checker can switch
 * threads at), from the start of {@code accept} to the moment the producer may go on: at once for a
 * value it answers with {@link Generator#DONE}, at the consumer's {@link #next()} for one it answers
 * with a wait. A second value while it holds one is the overlap the guard exists to prevent: the
 * sink throws {@link Overlap} and the emit answers {@code "overlap"}, which no sequential history
 * gives. Each emit hands a fresh {@link Token} that the sink marks when it takes it, so an emit
 * answers what really happened to its value: delivered (taken, and the emit did not fail), refused
 * as overlapping a waiting emit or as coming after the end (never taken), or something no
 * specification allows. Emits run synchronously through {@link Task#toCompletableFuture()} (the
 * inline scheduler): an emit whose value waits returns at once, holding the guard, and frees it when
 * a {@code next} ends its wait (on the thread of whichever of the two comes last).
 *
 * <p><b>The specification.</b> An emit is refused {@code "pending"} when an emit still waits for the
 * consumer, else refused {@code "ended"} when the run has ended, else it delivers; {@code next}
 * answers whether it freed a waiting emit. Two emits that both pass the guard (its CAS done as a read
 * then a write) show as an overlap in the sink, or as two waiting emits delivered with no
 * {@code next} between them: either is a wrong answer.
 *
 * <p><b>Holds that no sequential history shows.</b> The guard is also held, briefly, by operations
 * that hold it only while they run: an emit between its CAS and the release at the end of its
 * {@code accept} (or of its refusal after the end), a waiting emit before its wait is set up, a
 * {@code next} between taking the wait and the release that follows. An emit refused during such a
 * hold was refused rightly, but sequentially it would have found the guard free. So each emit and
 * each {@code next} marks the stretch in which it may hold the guard (a section, counted in
 * {@link #sections}); an emit refused {@code "pending"} while no value waits in the sink, when
 * another section ran beside its attempt, waits until no section runs (or a value waits) and tries
 * again, as a sequential history would have it; its answer is its last attempt's. A refusal that no
 * waiting value and no other section explains is answered as it is, and is a wrong answer (a guard
 * never freed). The price: a refusal that comes while another operation runs is not checked itself,
 * only the retry that follows it.
 *
 * <p><b>Mutations</b>, each applied by hand to GeneratorEmitter and seen to fail here: the guard's
 * CAS as a read then an opaque write ({@link #modelCheckingTwoEmitsAtOnce()}: an overlap in the
 * sink; {@link #modelChecking()}: of two waiting emits, the second meets the first's value held);
 * no release after a value answered with DONE (an emit refused {@code "pending"} with nothing
 * pending); no {@code ended} check (an emit after the end delivered); no release after a refusal
 * for the end, and no release when a wait ends (a later emit refused {@code "pending"}). Only the
 * first is caught by nothing else: the other channel tests never emit from two threads at once.
 */
public class GeneratorEmitterLincheckTest {
    /** What an emit refused because another emit holds the guard answers. */
    static final String REFUSED_PENDING = "refused: pending";
    /** What {@link #sections} gains when a section starts: one more started, one more running. */
    private static final long ENTER = (1L << 32) + 1;

    private final ConfinedSink sink = new ConfinedSink();
    private final GeneratorEmitter<Token> emitter = new GeneratorEmitter<>(sink);
    /** The sections started (high 32 bits) and running (low 32 bits), one word so one read sees both. */
    private final AtomicLong sections = new AtomicLong();

    /** An emit whose value the sink answers with {@link Generator#DONE}: the producer goes on at once. */
    @Operation
    public String emit() {
        return run(false);
    }

    /** An emit whose value the sink answers with a wait: the guard stays held until a {@link #next()}. */
    @Operation
    public String emitWaiting() {
        return run(true);
    }

    /**
     * The consumer asks for the next value: frees the waiting emit, if one waits; answers whether. A
     * request that finds no wait while an emit ran beside it tries again once no section runs (or a
     * value waits): that emit may have passed the guard, its linearization point, and not yet set up
     * its wait in the sink, which a sequential history never shows (found by {@link #stress()}:
     * {@code emitWaiting(): delivered | end(); next(): none}).
     */
    @Operation
    public String next() {
        for (;;) {
            long before = sections.addAndGet(ENTER);
            boolean resumed = sink.request();
            long after = sections.get();
            sections.decrementAndGet();
            boolean othersRan = (int) before > 1 || (before >>> 32) != (after >>> 32);
            if (resumed || !othersRan) {
                return resumed ? "resumed" : "none";
            }
            awaitNoSectionOrAWait();
        }
    }

    /** The body's task ends: later emits are refused. */
    @Operation
    public void end() {
        emitter.end();
    }

    /**
     * Runs one emit on this thread, in a section, and answers what happened to its value; a refusal
     * that only another running section explains is tried again once no section runs (class javadoc).
     */
    private String run(boolean waits) {
        for (;;) {
            long before = sections.addAndGet(ENTER);
            String answer = attempt(waits);
            long after = sections.get();
            boolean valueWaits = sink.holdsAWait();
            sections.decrementAndGet();
            boolean othersRan = (int) before > 1 || (before >>> 32) != (after >>> 32);
            if (!answer.equals(REFUSED_PENDING) || valueWaits || !othersRan) {
                return answer;
            }
            awaitNoSectionOrAWait();
        }
    }

    /** Waits until no other operation runs its section, or a value waits in the sink. */
    private void awaitNoSectionOrAWait() {
        while ((int) sections.get() > 0 && !sink.holdsAWait()) {
            Thread.onSpinWait(); // another operation holds the guard (or sets up its wait) only while it runs
        }
    }

    private String attempt(boolean waits) {
        Token token = new Token(waits);
        CompletableFuture<Outcome<Void>> f = emitter.emit(token).outcome().toCompletableFuture();
        if (!f.isDone()) { // waits for a next(): delivered, unless the value was lost on the way
            return token.taken ? "delivered" : "pending, never delivered";
        }
        return switch (f.join()) {
            case Outcome.Value<Void> v -> token.taken ? "delivered" : "ended, never delivered";
            case Outcome.Cancelled<Void> c -> "cancelled";
            case Outcome.Failure<Void> failure -> refusal(failure.error(), token);
        };
    }

    private static String refusal(Throwable error, Token token) {
        if (error instanceof Overlap) {
            return "overlap";
        }
        String why = error instanceof IllegalStateException e && e.getMessage() != null
                ? e.getMessage().startsWith("emit: another emit of this generator run is still pending") ? "pending"
                : e.getMessage().startsWith("emit: this generator run has ended") ? "ended"
                : "other: " + e.getMessage()
                : "failed: " + error;
        return token.taken ? "refused (" + why + ") after the sink took it" : "refused: " + why;
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(300)
                .threads(3).actorsPerThread(2).actorsBefore(1).actorsAfter(1)
                .modelCheck();
    }

    /**
     * {@link #twoEmitsAtOnce()} on its own, explored deeper than the generated runs reach. Two emits
     * whose values need no wait meet in the sink only after two switches (one between the guard's
     * check and its claim, one inside the other emit's {@code accept}): with the guard's CAS done as a
     * read then a write, 600 interleavings did not find the overlap and 650 did, so this runs 3,000
     * (900 in {@code ./coro modelcheck}, which explores 30%).
     */
    @Test
    void modelCheckingTwoEmitsAtOnce() {
        LincheckSupport.lincheck(getClass()).spec(Spec.class).scenarios(twoEmitsAtOnce())
                .iterations(0).invocations(3000)
                .modelCheck("modelCheckingTwoEmitsAtOnce");
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(20).invocations(1000)
                .threads(3).actorsPerThread(3).actorsBefore(1).actorsAfter(1)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(GeneratorEmitterLincheckTest.class)
                .spec(Spec.class)
                .scenarios(twoEmitsAtOnce(), twoWaitingEmitsAtOnce(), anEmitRacesTheRequestThatFreesTheGuard(),
                        anEmitRacesTheEnd());
    }

    /** Two emits on two threads, nothing pending: exactly one may hold the guard at a time. */
    static ExecutionScenario twoEmitsAtOnce() {
        return LincheckSupport.scenario(GeneratorEmitterLincheckTest.class, null, "emit | emit", "emit");
    }

    /** Two emits that wait, on two threads: one delivers and waits, the other is refused. */
    static ExecutionScenario twoWaitingEmitsAtOnce() {
        return LincheckSupport.scenario(GeneratorEmitterLincheckTest.class, null,
                "emitWaiting | emitWaiting", "next; emit");
    }

    /** An emit pending; the request that frees it races a new emit. */
    static ExecutionScenario anEmitRacesTheRequestThatFreesTheGuard() {
        return LincheckSupport.scenario(GeneratorEmitterLincheckTest.class, "emitWaiting",
                "next | emit", "emit");
    }

    /** The run ends while an emit starts; a late emit after it is refused. */
    static ExecutionScenario anEmitRacesTheEnd() {
        return LincheckSupport.scenario(GeneratorEmitterLincheckTest.class, "emit",
                "end | emit", "emit");
    }

    /** The sequential specification: the emitter's guard as a pending flag and an ended flag. */
    public static final class Spec {
        private boolean pending;
        private boolean ended;

        /** Delivers, unless an emit is pending or the run has ended. */
        public String emit() {
            return start(false);
        }

        /** Delivers and stays pending, unless an emit is pending or the run has ended. */
        public String emitWaiting() {
            return start(true);
        }

        private String start(boolean waits) {
            if (pending) {
                return REFUSED_PENDING;
            }
            if (ended) {
                return "refused: ended";
            }
            pending = waits;
            return "delivered";
        }

        /** Frees the pending emit, if one is. */
        public String next() {
            if (!pending) {
                return "none";
            }
            pending = false;
            return "resumed";
        }

        /** Later emits are refused. */
        public void end() {
            ended = true;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Spec s && pending == s.pending && ended == s.ended;
        }

        @Override
        public int hashCode() {
            return Objects.hash(pending, ended);
        }
    }

    /** One emit's value: whether the sink should answer it with a wait, and whether the sink took it. */
    static final class Token {
        final boolean waits;
        /** Written by the sink, on the emitting thread, inside the emit. */
        boolean taken;

        Token(boolean waits) {
            this.waits = waits;
        }
    }

    /** What the sink throws when it is handed a value while it holds another. */
    static final class Overlap extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Overlap() {
            super("the sink was handed a value while it held another", null, false, false);
        }
    }

    /**
     * A sink that checks it holds one value at a time (GeneratorSink's confinement): from the start
     * of {@code accept} to the moment the producer may go on. A value that waits is held until a
     * request ends its wait; the wait is set up inside {@code accept}, so that "a value waits" is one
     * atomic word ({@code waiting}).
     */
    static final class ConfinedSink extends GeneratorSink<Token> {
        /** The values held: 0 or 1 unless the emitter's guard let two through. */
        private final AtomicInteger inside = new AtomicInteger();
        /** The wait of the value held, until a request takes it. */
        private final AtomicReference<Promise<Void>> waiting = new AtomicReference<>();

        ConfinedSink() {
            super(new Run());
        }

        @Override
        Task<Void> accept(Token value) {
            if (inside.getAndIncrement() != 0) {
                inside.decrementAndGet();
                throw new Overlap();
            }
            value.taken = true;
            if (!value.waits) {
                inside.decrementAndGet(); // a switch point inside accept: another accept may start before it
                return Generator.DONE;
            }
            Promise<Void> wait = new Promise<>();
            waiting.set(wait); // held until request()
            return wait.task();
        }

        /** Whether a value waits for a request. */
        boolean holdsAWait() {
            return waiting.get() != null;
        }

        /** Ends the held value's wait, if one waits; the emit then frees the guard. */
        boolean request() {
            Promise<Void> wait = waiting.getAndSet(null);
            if (wait == null) {
                return false;
            }
            inside.decrementAndGet();
            wait.complete(null);
            return true;
        }
    }
}
