package dev.coro.io;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The event loop's inbox: a multi-producer, single-consumer queue. Any thread {@link #push}es a node;
 * only the loop takes them, all at once ({@link #takeAll}), in push order; {@link #close} takes the
 * rest for the last time, after which every push fails.
 *
 * <p>Order: nodes come out in the order their pushes took effect, so each producer's nodes come out
 * in its program order, and a push that happens-before another comes out first.
 *
 * <p>Thread-safety: {@link #push} and {@link #isEmpty} from any thread; {@link #takeAll} and
 * {@link #close} only from the one consumer.
 */
final class Inbox {
    /* Implementation overview.
     *
     * 1. Representation. head (volatile Node):
     *      null      empty, open
     *      CLOSED    closed (terminal); holds nothing
     *      n         open; n is the newest pushed node; n.next the one pushed before it, and so on
     *                down to null (a Treiber stack, newest first)
     *    Node.next (plain): the older neighbour while the node is in the stack; reused by takeAll to
     *    link the batch it returns in push order.
     *
     * 2. Transitions.
     *      h (null or a node) -> n with n.next = h   push: CAS head                 any producer
     *      CLOSED             -> CLOSED              push: fails, answers false      any producer
     *      h (not CLOSED)     -> null                takeAll: getAndSet head         consumer
     *      h                  -> CLOSED              close: getAndSet head           consumer
     *    takeAll and close then reverse the chain they took, privately, into push order.
     *
     * 3. Linearization points. push: its successful CAS (a failing push: its read of CLOSED).
     *    takeAll, close: the getAndSet. isEmpty: its read of head.
     *
     * 4. Invariants.
     *    I1 a node is pushed at most once, so the chain is finite and acyclic (push asserts next is
     *       null, which holds for a fresh node and for a node taken and unlinked by the consumer).
     *    I2 CLOSED is terminal: no CAS expects CLOSED, and only close writes it.
     *    I3 the nodes one takeAll returns are exactly those whose push CAS falls between the
     *       previous getAndSet and this one; as each CAS put its node on top, reversing the chain
     *       gives their push order.
     *
     * 5. Memory ordering. head: volatile for every access (the event loop's wake protocol needs the
     *    push CAS and the isEmpty read to be totally ordered with its own volatile accesses: see
     *    EventLoop's overview, part 5). next and the node's payload are plain: written before the
     *    CAS that publishes the node (release), read by the consumer after its getAndSet (acquire).
     *
     * 6. Progress. push is lock-free: its CAS fails only because another push or a take succeeded.
     *    takeAll and close are wait-free: one getAndSet and a private walk. No spin anywhere. (We
     *    chose this over the exchange-based linked queue, whose consumer must spin while a
     *    preempted producer has swung the tail but not yet linked its node.)
     *
     * 7. Cancellation. None here: the loop removes a cancelled timer by a node of its own.
     *
     * 8. Resumption. Not applicable: the consumer runs what it takes.
     *
     * 9. References. R. K. Treiber, "Systems Programming: Coping with Parallelism" (IBM RJ 5118,
     *    1986) for the stack; taking the whole stack with one exchange and reversing it is the
     *    batch-drain idea of many runtimes' remote-free and submission lists.
     */

    /** A pushed item. Subclasses carry the payload. */
    abstract static class Node {
        /** The older neighbour while pushed; the next node of a taken batch. */
        Node next;
    }

    /** The head of a closed inbox: holds nothing, refuses pushes. */
    private static final Node CLOSED = new Node() {};

    private volatile Node head;

    /**
     * Adds {@code node}; from any thread.
     *
     * @return false if the inbox is closed (the node was not added)
     */
    boolean push(Node node) {
        assert node.next == null; // I1
        Node h = head;
        for (;;) {
            if (h == CLOSED) {
                return false; // I2
            }
            node.next = h; // plain: published by the CAS
            Node witness = (Node) HEAD.compareAndExchange(this, h, node);
            if (witness == h) {
                return true;
            }
            h = witness;
        }
    }

    /**
     * Takes every node pushed so far, oldest first, linked by {@link Node#next} (the last one's next
     * is null); null if there is none or the inbox is closed. Consumer only.
     */
    Node takeAll() {
        Node h = head;
        if (h == null || h == CLOSED) {
            return null; // no atomic write when idle; only the consumer closes, so CLOSED stays (I2)
        }
        return reverse((Node) HEAD.getAndSet(this, (Node) null));
    }

    /** Closes the inbox and returns what it still held, oldest first. Consumer only. */
    Node close() {
        Node h = (Node) HEAD.getAndSet(this, CLOSED);
        return h == CLOSED ? null : reverse(h);
    }

    /** Whether nothing is waiting (true once closed); a volatile read of head. */
    boolean isEmpty() {
        Node h = head;
        return h == null || h == CLOSED;
    }

    /** Whether {@link #close} has run. */
    boolean isClosed() {
        return head == CLOSED;
    }

    private static Node reverse(Node h) { // I3
        Node prev = null;
        while (h != null) {
            Node older = h.next;
            h.next = prev;
            prev = h;
            h = older;
        }
        return prev;
    }

    private static final VarHandle HEAD;

    static {
        try {
            HEAD = MethodHandles.lookup().findVarHandle(Inbox.class, "head", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
