package dev.coro.io;

import dev.coro.LincheckSupport;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lincheck checks {@link Inbox} for linearizability against {@link Spec}, a sequential FIFO queue
 * that can be closed: {@link #push} from any thread; {@link #takeAll}, {@link #close} and the
 * consumer's view of emptiness belong to the one consumer (a non-parallel group); {@link #isEmpty}
 * from any thread. takeAll answers the whole batch, oldest first, so a batch out of push order, a
 * lost node, or a push accepted after close is a wrong answer.
 */
@Param(name = "v", gen = IntGen.class, conf = "1:9")
public class InboxLincheckTest {
    private final Inbox inbox = new Inbox();

    /** A fresh inbox per scenario. */
    public InboxLincheckTest() {}

    static final class Item extends Inbox.Node {
        final int value;

        Item(int value) {
            this.value = value;
        }
    }

    /** Pushes {@code v}; false once closed. */
    @Operation
    public boolean push(@Param(name = "v") int v) {
        return inbox.push(new Item(v));
    }

    /** Takes everything, oldest first. */
    @Operation(nonParallelGroup = "consumer")
    public List<Integer> takeAll() {
        return values(inbox.takeAll());
    }

    /** Closes and takes what was left, oldest first. */
    @Operation(nonParallelGroup = "consumer")
    public List<Integer> close() {
        return values(inbox.close());
    }

    /** Whether nothing is waiting. */
    @Operation
    public boolean isEmpty() {
        return inbox.isEmpty();
    }

    private static List<Integer> values(Inbox.Node n) {
        List<Integer> out = new ArrayList<>();
        while (n != null) {
            Inbox.Node next = n.next;
            n.next = null;
            out.add(((Item) n).value);
            n = next;
        }
        return out;
    }

    @Test
    void modelChecking() {
        check().scaledIterations(10).invocations(500)
                .threads(3).actorsPerThread(3).actorsBefore(2).actorsAfter(2)
                .modelCheck();
    }

    @Test
    @Tag(LincheckSupport.STRESS_MODE)
    void stress() {
        check().scaledIterations(10).invocations(1000)
                .threads(3).actorsPerThread(4).actorsBefore(2).actorsAfter(2)
                .stress();
    }

    /** Every run of this test: the sequential specification. */
    private static LincheckSupport.Check check() {
        return LincheckSupport.lincheck(InboxLincheckTest.class)
                .spec(Spec.class);
    }

    /** The sequential specification: a FIFO queue with a one-way close. */
    public static final class Spec {
        private final ArrayDeque<Integer> queue = new ArrayDeque<>();
        private boolean closed;

        /** A fresh, open, empty queue. */
        public Spec() {}

        public boolean push(int v) {
            if (closed) {
                return false;
            }
            queue.addLast(v);
            return true;
        }

        public List<Integer> takeAll() {
            List<Integer> out = new ArrayList<>(queue);
            queue.clear();
            return out;
        }

        public List<Integer> close() {
            closed = true;
            return takeAll();
        }

        public boolean isEmpty() {
            return queue.isEmpty();
        }
    }
}
