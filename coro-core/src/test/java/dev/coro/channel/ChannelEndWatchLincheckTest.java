package dev.coro.channel;

import dev.coro.LincheckSupport;
import dev.coro.internal.SignalList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks the channel's end watch ({@code ChannelCore} part 12): a watch registered while
 * another thread closes (or cancels) the empty channel fires once the channel is closed for
 * receiving, whichever comes first; the watcher's list is made by the first watcher's CAS, so the
 * race of that CAS with the end is in every run.
 *
 * <p>{@link #validate()}: once the channel is closed for receiving, every registered watch has fired,
 * exactly once. It fails when the watcher does not re-read the end after its add (mutation F4: the
 * end read no list yet, the watcher missed the end).
 */
public class ChannelEndWatchLincheckTest {
    private final Channel<Integer> channel = Channel.buffered(2);
    private final Watch first = new Watch();
    private final Watch second = new Watch();

    static final class Watch extends SignalList.Node {
        final AtomicBoolean registered = new AtomicBoolean(); // a node is watched once
        volatile int fired;

        @Override
        protected void onFire() {
            fired++; // a second firing shows as 2
        }
    }

    /** Registers the first watch. */
    @Operation
    public void watch() {
        watchWith(first);
    }

    /** Registers the second watch. */
    @Operation
    public void watchAgain() {
        watchWith(second);
    }

    private void watchWith(Watch w) {
        if (w.registered.compareAndSet(false, true)) {
            channel.core().watchEnd(w);
        }
    }

    /** Closes the channel (empty: it ends at once). */
    @Operation
    public void close() {
        channel.close();
    }

    /** Cancels the channel (it ends at once). */
    @Operation
    public void cancel() {
        channel.cancel();
    }

    /** Every registered watch of an ended channel fired, once; none fired before the end. */
    @Validate
    public void validate() {
        boolean ended = channel.isClosedForReceive();
        for (Watch w : new Watch[] {first, second}) {
            if (w.fired > 1) {
                throw new AssertionError("a watch fired " + w.fired + " times");
            }
            if (w.registered.get() && ended && w.fired == 0) {
                throw new AssertionError("the channel ended but a registered watch never fired");
            }
            if (!ended && w.fired > 0) {
                throw new AssertionError("a watch fired before the end");
            }
        }
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(2).actorsPerThread(2).actorsBefore(0).actorsAfter(0)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(10).invocations(2000)
                .threads(2).actorsPerThread(2).actorsBefore(0).actorsAfter(0)
                .stress();
    }

    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(ChannelEndWatchLincheckTest.class).scenarios(aWatchRacesTheClose());
    }

    /** The first watcher makes the list while the other thread ends the channel. */
    static ExecutionScenario aWatchRacesTheClose() {
        return LincheckSupport.scenario(ChannelEndWatchLincheckTest.class, null, "watch | close", null);
    }
}
