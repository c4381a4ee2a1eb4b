package dev.coro.channel;

import dev.coro.internal.Blocking;
import dev.coro.internal.ChannelCore;
import dev.coro.internal.FastPath;
import dev.coro.internal.WaitNode;
import dev.coro.scheduler.Scheduler;
import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Completer;
import dev.coro.task.Task;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A channel: tasks send elements into it and receive them from it, and a task that must wait (for a
 * receiver, for room, for an element) is suspended, never its thread. Go's channels and
 * kotlinx.coroutines' {@code Channel} are the models.
 *
 * <p><b>Capacity kinds.</b> {@linkplain #rendezvous() Rendezvous}: a send waits until a receiver
 * takes its element. {@linkplain #buffered(int) Buffered}: up to {@code capacity} elements wait in
 * the channel; a send waits only when it is full. {@linkplain #unlimited() Unlimited}: a send never
 * waits. {@linkplain #conflated() Conflated}: the channel keeps only the latest element; a send never
 * waits, and replaces the element not yet received.
 *
 * <p><b>Doors.</b> {@link #send} and {@link #receive} are tasks; {@link #trySend} and
 * {@link #tryReceive} never wait for room or an element; {@link #sendBlocking} and
 * {@link #receiveBlocking} are for plain and virtual threads (a virtual thread parks, not its
 * carrier). {@link #onReceive} and {@link #onSend} are {@link Select} clauses. Elements are never
 * null.
 *
 * <p><b>Order.</b> FIFO: elements are received in the order their sends completed; waiting senders
 * and waiting receivers are served in the order they started waiting.
 *
 * <p><b>Closing.</b> {@link #close()} ends sending: later sends fail with
 * {@link ChannelClosedException}; receivers take every element sent before, then see the end:
 * {@code receive()} completes with {@code null}. {@link #close(Throwable)} is the same, except that
 * once the elements are taken, receives fail with the cause (a producer that failed). Sends that
 * were waiting when the channel closed still deliver. {@link #cancel()} ends both sides at once: the
 * elements in the channel are dropped (each handed to the {@code onUndelivered} callback, if any),
 * waiting senders and receivers complete cancelled, later sends fail and later receives complete
 * cancelled.
 *
 * <p><b>Cancellation.</b> A cancelled {@code send} either delivered its element (it completed) or did
 * not (it completed cancelled, and the caller still owns the element): never both. A cancelled
 * {@code receive} took no element: an element offered to it at the same instant goes to the next
 * receiver. A cancelled waiter leaves the channel at once, or within a constant number of later
 * operations.
 *
 * <p><b>Undelivered elements.</b> The callback given to {@link #create(int, Consumer)} receives each
 * element that was sent but will never be received: dropped by {@code cancel()}, or replaced in a
 * conflated channel. It runs on the thread that dropped the element, after the channel's decision,
 * and must not block; what it throws goes to that thread's uncaught-exception handler.
 *
 * <p><b>Thread-safety and memory effects.</b> Thread-safe. Actions before a send happen-before the
 * actions after the receive that takes its element. Sends and receives are lock-free, apart from
 * two brief waits for another thread's next step: the hand-over of {@link #trySend}, and, in a
 * buffered channel, a cell another thread has claimed and is about to fill or free. On a pool with
 * more than one worker, a receive that finds a buffered channel empty spins briefly (a bounded
 * number of looks, some microseconds) before it suspends, so that a sender running on another
 * worker can hand over a batch without a suspension and a wake-up; after looks that found nothing,
 * the channel's next 15 waits suspend at once, so a quiet channel does not spin on every wait.
 *
 * {@snippet :
 * Channel<Integer> numbers = Channel.buffered(16);
 * Task<Void> producer = Task.loop(1, i -> i <= 3, i -> numbers.send(i).map(ignored -> i + 1))
 *         .andFinally(numbers::close);
 * Task<Void> consumer = numbers.forEach(System.out::println);
 * }
 *
 * @param <T> the element type
 */
public final class Channel<T> {
    /* Implementation overview: the channel is dev.coro.internal.ChannelCore, whose overview has the
     * state machine, invariants, linearization points, memory ordering and cancellation races. Here:
     * the doors (tasks through Task.create, with the run loop's fast path), the null end, and the
     * select clauses. */

    /** The capacity of a rendezvous channel (for {@link #create}). */
    public static final int RENDEZVOUS = ChannelCore.RENDEZVOUS;
    /** The capacity of an unlimited channel (for {@link #create}). */
    public static final int UNLIMITED = ChannelCore.UNLIMITED;
    /** The capacity of a conflated channel (for {@link #create}). */
    public static final int CONFLATED = ChannelCore.CONFLATED;

    private final ChannelCore core;
    private final int capacity;
    private final Task<T> receive;

    private Channel(int capacity, Consumer<? super T> onUndelivered) {
        @SuppressWarnings("unchecked")
        Consumer<Object> dropped = (Consumer<Object>) onUndelivered;
        this.capacity = capacity;
        this.core = new ChannelCore(capacity, dropped, Channel::closedForSend);
        core.describedAs(this); // its waiters are dumped as waiting on this channel
        this.receive = Task.create(new ReceiveBody<>(core));
    }

    /**
     * Creates a rendezvous channel: a send waits until a receiver takes its element.
     *
     * @param <T> the element type
     * @return the channel
     */
    public static <T> Channel<T> rendezvous() {
        return new Channel<>(RENDEZVOUS, null);
    }

    /**
     * Creates a channel that holds up to {@code capacity} elements; a send waits when it is full.
     * With a capacity of up to 4,096 the buffer is allocated whole here (about 12 bytes a slot), and
     * a send or receive that needs no wait, while nobody waits, takes one atomic instruction on its
     * own counter; a larger buffer grows with what it holds, and its operations take the channel's
     * decision in turn.
     *
     * @param capacity the buffer size, at least 1
     * @param <T> the element type
     * @return the channel
     * @throws IllegalArgumentException if {@code capacity < 1}
     */
    public static <T> Channel<T> buffered(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity
                    + " (use rendezvous() for 0)");
        }
        return new Channel<>(capacity, null);
    }

    /**
     * Creates a channel whose buffer has no bound: a send never waits.
     *
     * @param <T> the element type
     * @return the channel
     */
    public static <T> Channel<T> unlimited() {
        return new Channel<>(UNLIMITED, null);
    }

    /**
     * Creates a channel that keeps only the latest element: a send never waits, and replaces the
     * element not yet received.
     *
     * @param <T> the element type
     * @return the channel
     */
    public static <T> Channel<T> conflated() {
        return new Channel<>(CONFLATED, null);
    }

    /**
     * Creates a channel of any capacity kind with a callback for undelivered elements (see the class
     * javadoc).
     *
     * @param capacity {@link #RENDEZVOUS}, a buffer size of at least 1, {@link #UNLIMITED} or
     *     {@link #CONFLATED}
     * @param onUndelivered receives each element that was sent but will never be received
     * @param <T> the element type
     * @return the channel
     * @throws IllegalArgumentException if {@code capacity} is below {@link #CONFLATED}
     * @throws NullPointerException if {@code onUndelivered} is null
     */
    public static <T> Channel<T> create(int capacity, Consumer<? super T> onUndelivered) {
        Objects.requireNonNull(onUndelivered, "onUndelivered");
        if (capacity < CONFLATED) {
            throw new IllegalArgumentException("capacity must be RENDEZVOUS (0), at least 1, UNLIMITED or CONFLATED ("
                    + CONFLATED + "), got " + capacity);
        }
        return new Channel<>(capacity, onUndelivered);
    }

    // ---- sending ----

    /**
     * Returns a task that sends {@code element}: it completes once the element is in the channel
     * (taken by a receiver, or buffered), and fails with {@link ChannelClosedException} if the
     * channel is closed for sending. Cancelled while waiting, it completes cancelled and the element
     * was not sent.
     *
     * @param element the element
     * @return the sending task (each run sends once)
     * @throws NullPointerException if {@code element} is null
     */
    public Task<Void> send(T element) {
        return Task.create(new SendBody(core, Objects.requireNonNull(element, "element")));
    }

    /**
     * Sends {@code element} if that needs no wait: to a waiting receiver, or into the buffer's room.
     * Never waits for room; if another thread is deciding for this channel at this instant, waits
     * for that decision to be handed over (a bounded moment, not a wait for room).
     *
     * @param element the element
     * @return whether it was sent (false: the channel is full, or has no waiting receiver)
     * @throws NullPointerException if {@code element} is null
     * @throws ChannelClosedException if the channel is closed for sending
     */
    public boolean trySend(T element) {
        Objects.requireNonNull(element, "element");
        int r = core.trySend(element);
        if (r == ChannelCore.CLOSED) {
            throw closedForSend(core.sendFailureCause());
        }
        return r == ChannelCore.SENT;
    }

    /**
     * Sends {@code element} from a plain or virtual thread, blocking it until the element is in the
     * channel. Interrupting the thread cancels the send (the element is then not sent).
     *
     * @param element the element
     * @throws NullPointerException if {@code element} is null
     * @throws ChannelClosedException if the channel is closed for sending
     * @throws CancellationException if the thread is interrupted while waiting
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool worker,
     *     an event loop's thread): see {@link Task#join()}; nothing is sent then
     */
    public void sendBlocking(T element) {
        Blocking.checkAllowed(Channel.class, "sendBlocking");
        send(element).join();
    }

    // ---- receiving ----

    /**
     * Returns a task that receives the oldest element, waiting for one if the channel is empty. Once
     * the channel is closed and every element sent has been received, it completes with
     * {@code null} (the end; elements are never null), or fails with the cause given to
     * {@link #close(Throwable)}; on a cancelled channel it completes cancelled. Cancelled while
     * waiting, it took no element.
     *
     * @return the receiving task (each run receives once)
     */
    public Task<T> receive() {
        return receive;
    }

    /**
     * Receives the oldest element if there is one now (buffered, or offered by a waiting sender).
     * Never waits for an element (see {@link #trySend} for the brief hand-over).
     *
     * @return the element, or null if none is there now (empty, or closed: see
     *     {@link #isClosedForReceive()})
     */
    @SuppressWarnings("unchecked")
    public T tryReceive() {
        Object r = core.tryReceive();
        return r == ChannelCore.EMPTY ? null : (T) r;
    }

    /**
     * Receives from a plain or virtual thread, blocking it until an element is there.
     *
     * @return the element, or null once the channel is closed and drained
     * @throws CancellationException if the thread is interrupted while waiting, or the channel is
     *     cancelled
     * @throws RuntimeException the close's cause (wrapped by {@code join()}'s rules), once drained
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool worker,
     *     an event loop's thread): see {@link Task#join()}; nothing is received then
     */
    public T receiveBlocking() {
        Blocking.checkAllowed(Channel.class, "receiveBlocking");
        return receive.join();
    }

    /**
     * Returns a task that receives every element until the channel ends, and runs {@code action} on
     * each, in order. It completes when the channel is closed and drained, fails with the close's
     * cause or with what {@code action} throws, and completes cancelled if the channel is cancelled.
     * Stack-safe for any number of elements. The elements already in the channel are handed to
     * {@code action} in batches of up to 64, each without a suspension of its own; the task's
     * cancellation is checked between batches (a cancelled forEach took no element after the batch
     * it was in).
     *
     * @param action what to do with each element
     * @return the task
     * @throws NullPointerException if {@code action} is null
     */
    @SuppressWarnings("unchecked")
    public Task<Void> forEach(Consumer<? super T> action) {
        Objects.requireNonNull(action, "action");
        Task<Object> step = Task.create(new DrainBody(core, (Consumer<Object>) action));
        return Task.loop(Boolean.TRUE, more -> more, ignored -> step.map(e -> {
            if (e == null) {
                return false;
            }
            if (e != DrainBody.MORE) {
                action.accept((T) e); // the element a waiting receive was handed
            }
            return true;
        })).map(ignored -> null);
    }

    /**
     * Returns a task that receives every element until the channel ends and runs the task
     * {@code action} returns for each, one after the other. Ends as {@link #forEach(Consumer)} does.
     *
     * @param action the task to run for each element
     * @return the task
     * @throws NullPointerException if {@code action} is null
     */
    public Task<Void> forEachAsync(Function<? super T, ? extends Task<?>> action) {
        Objects.requireNonNull(action, "action");
        return Task.loop(Boolean.TRUE, more -> more, ignored -> receive.flatMap(e -> e == null
                ? Task.value(false)
                : Objects.requireNonNull(action.apply(e), "forEachAsync: the action returned null").map(x -> true)))
                .map(ignored -> null);
    }

    // ---- select clauses ----

    /**
     * A {@link Select} clause that receives an element; if it wins, the select completes with
     * {@code fn} applied to the element, or to {@code null} if the channel is closed and drained.
     * A losing receive clause takes no element.
     *
     * @param fn what the select completes with
     * @param <R> the select's result type
     * @return the clause
     * @throws NullPointerException if {@code fn} is null
     */
    public <R> SelectClause<R> onReceive(Function<? super T, ? extends R> fn) {
        Objects.requireNonNull(fn, "fn");
        return SelectClause.receive(core, fn);
    }

    /**
     * A {@link Select} clause that sends {@code element}; if it wins, the element is in the channel
     * and the select completes with what {@code fn} supplies. A losing send clause sent nothing. On
     * a channel closed for sending, the clause makes the select fail with
     * {@link ChannelClosedException}.
     *
     * @param element the element
     * @param fn what the select completes with
     * @param <R> the select's result type
     * @return the clause
     * @throws NullPointerException if {@code element} or {@code fn} is null
     */
    public <R> SelectClause<R> onSend(T element, Supplier<? extends R> fn) {
        Objects.requireNonNull(element, "element");
        Objects.requireNonNull(fn, "fn");
        return SelectClause.send(core, element, fn);
    }

    // ---- closing ----

    /**
     * Closes the channel for sending (see the class javadoc). Idempotent.
     *
     * @return whether this call closed it (false: it was closed or cancelled before)
     */
    public boolean close() {
        return core.close(null);
    }

    /**
     * Closes the channel for sending; once drained, receives fail with {@code cause}. Idempotent.
     *
     * @param cause what receivers fail with once the elements are taken
     * @return whether this call closed it
     * @throws NullPointerException if {@code cause} is null
     */
    public boolean close(Throwable cause) {
        return core.close(Objects.requireNonNull(cause, "cause"));
    }

    /**
     * Cancels the channel (see the class javadoc). Idempotent.
     *
     * @return whether this call cancelled it
     */
    public boolean cancel() {
        return core.cancel();
    }

    /**
     * Returns whether sends fail now: closed or cancelled.
     *
     * @return whether closed for sending
     */
    public boolean isClosedForSend() {
        return core.isClosedForSend();
    }

    /**
     * Returns whether a receive can only end now: closed and drained, or cancelled. A snapshot: it
     * may turn true a moment after the receive that took the last element.
     *
     * @return whether closed for receiving
     */
    public boolean isClosedForReceive() {
        return core.isClosedForReceive();
    }

    /**
     * Returns this channel's capacity: {@link #RENDEZVOUS}, the buffer size, {@link #UNLIMITED} or
     * {@link #CONFLATED}.
     *
     * @return the capacity
     */
    public int capacity() {
        return capacity;
    }

    /** The core, for white-box tests and the Flow subscription (its end watch) in this package. */
    ChannelCore core() {
        return core;
    }

    @Override
    public String toString() {
        String kind = switch (capacity) {
            case RENDEZVOUS -> "rendezvous";
            case UNLIMITED -> "unlimited";
            case CONFLATED -> "conflated";
            default -> "buffered(" + capacity + ")";
        };
        String state = core.isCancelled() ? ", cancelled" : core.isClosedForSend() ? ", closed" : "";
        return "Channel[" + kind + state + "]";
    }

    /**
     * The looks a receive that found a buffered channel empty takes before it waits, when its senders
     * may be running on other threads now (ChannelCore part 13).
     */
    static final int SOON_POLLS = 8;

    /**
     * How many looks {@link ChannelCore#receiveSoon} may take on this thread: {@link #SOON_POLLS} on a
     * worker of a pool with other workers (where a sender may be running at this instant); none on
     * one worker, an event loop or any other thread, where the sender cannot run while this one
     * spins.
     */
    static int soonPolls() {
        return Scheduler.nonBlockingOwner() instanceof WorkStealingPool pool && pool.workers() > 1 ? SOON_POLLS : 0;
    }

    /** A receive's fast path found {@code core} empty: part 13's looks, where they can pay off. */
    static Object receiveSoon(ChannelCore core) {
        return core.hasLane() ? core.receiveSoon(soonPolls()) : ChannelCore.EMPTY;
    }

    static ChannelClosedException closedForSend(Throwable cause) {
        if (cause == null) {
            return new ChannelClosedException("send: the channel is closed", null);
        }
        return new ChannelClosedException("send: the channel is "
                + (cause instanceof CancellationException ? "cancelled" : "closed"), cause);
    }

    /** The body of a send: the run loop's fast path, then the waiting door. */
    private static final class SendBody implements Consumer<Completer<Void>>, FastPath {
        private final ChannelCore core;
        private final Object element;

        SendBody(ChannelCore core, Object element) {
            this.core = core;
            this.element = element;
        }

        @Override
        public Object tryNow() {
            return core.sendNow(element) == ChannelCore.SENT ? null : NOT_NOW;
        }

        @Override
        public void accept(Completer<Void> completer) {
            core.enterSend((WaitNode) completer, element); // every Task.create completer is its step
        }
    }

    /**
     * One step of {@link #forEach}: the run loop's fast path hands every element there is now to the
     * action, up to {@link #BATCH} (so a step does not run through one task's turn per element, and
     * the token is checked between batches), and answers {@link #MORE}, or null at the end; with
     * nothing there it waits as a receive does, and the loop hands the element it gets to the action.
     */
    private static final class DrainBody implements Consumer<Completer<Object>>, FastPath {
        /** The step's answer after a batch: the loop goes on. */
        static final Object MORE = new Object();
        /** The most elements one step hands to the action. */
        static final int BATCH = 64;

        private final ChannelCore core;
        private final Consumer<Object> action;

        DrainBody(ChannelCore core, Consumer<Object> action) {
            this.core = core;
            this.action = action;
        }

        @Override
        public Object tryNow() {
            for (int n = 0; n < BATCH; n++) {
                Object r = core.receiveNow();
                if (r == ChannelCore.EMPTY) {
                    if (n > 0) {
                        return MORE;
                    }
                    r = receiveSoon(core);
                    if (r == ChannelCore.EMPTY) {
                        return NOT_NOW;
                    }
                }
                if (r == ChannelCore.END) {
                    return null;
                }
                action.accept(r); // what it throws fails the forEach; the elements after it stay in the channel
            }
            return MORE;
        }

        @Override
        public void accept(Completer<Object> completer) {
            core.enterReceive((WaitNode) completer);
        }
    }

    /** The body of a receive: the run loop's fast path, then the waiting door. */
    private static final class ReceiveBody<T> implements Consumer<Completer<T>>, FastPath {
        private final ChannelCore core;

        ReceiveBody(ChannelCore core) {
            this.core = core;
        }

        @Override
        public Object tryNow() {
            Object r = core.receiveNow();
            if (r == ChannelCore.EMPTY) {
                r = receiveSoon(core);
            }
            return r == ChannelCore.EMPTY ? NOT_NOW : r == ChannelCore.END ? null : r;
        }

        @Override
        public void accept(Completer<T> completer) {
            core.enterReceive((WaitNode) completer);
        }
    }
}
