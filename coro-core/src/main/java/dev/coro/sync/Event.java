package dev.coro.sync;

import dev.coro.internal.Blocking;
import dev.coro.internal.FastPath;
import dev.coro.internal.WaitNode;
import dev.coro.internal.WaitQueue;
import dev.coro.task.Completer;
import dev.coro.task.Task;
import java.util.function.Consumer;

/**
 * A resettable one-shot signal that carries a value (an asynchronous manual-reset event): tasks wait for it
 * with {@link #await()}, a thread with {@link #awaitBlocking()}; {@link #set(Object)} wakes them all.
 *
 * <p><b>Semantics.</b>
 * <ul>
 *   <li>A wait that starts after {@code set} does not suspend: it completes at once with the value.</li>
 *   <li>Setting twice: the first {@code set} wins; a second {@code set} before a {@link #reset()}
 *       returns {@code false} and changes nothing (waiters never see two values for one set).</li>
 *   <li>{@code reset()} makes a set event unset again, for later waits. Resetting an event that is
 *       not set (for example while waiters wait) does nothing and returns {@code false}: those
 *       waiters keep waiting for the next {@code set}.</li>
 * </ul>
 *
 * <p><b>Where waiters resume.</b> A waiting task resumes on its own scheduler: inline (through a
 * trampoline) when the setting thread already runs that scheduler, otherwise by submission. The
 * blocking door parks only the calling thread (only the virtual thread, on a virtual thread).
 *
 * <p><b>Cancellation.</b> A cancelled wait completes on the cancelled channel and leaves the queue: its
 * node is unlinked at once when it is the newest waiter, otherwise by a sweep that runs once
 * cancelled nodes outnumber live ones (plus a small constant), so an event that is never set keeps no
 * more cancelled waiters than live ones. Cancellation racing {@code set} has one winner: the wait
 * ends either with the value or cancelled.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions before a successful {@code set}
 * happen-before every wait that returns its value.
 *
 * {@snippet :
 * Event<String> ready = new Event<>();
 * Task<Integer> length = ready.await().map(String::length);   // suspends until set
 * ready.set("hello");                                          // wakes every waiter
 * assert ready.isSet() && length.join() == 5;
 * }
 *
 * @param <T> the value type
 */
public final class Event<T> {
    /* Implementation overview.
     *
     * The event is the latch rule on the waiting primitives' shared intake (dev.coro.internal's
     * WaitQueue, whose admission engine is AdmissionEngine): admit every waiter on set, hold them on
     * reset. Its whole state fits the intake's state word, as in the seed's lock-free event
     * (kUnsetNoWaiter / list head / kSet), so the rule needs no owner: set takes exactly the waiters
     * that arrived before it, in one exchange, and the intake admits them (WaitQueue.admitAll, the
     * one admit step every primitive uses). Why not the engine's owner: a set applied later by
     * another thread's drain could not tell a waiter that arrived before the set from one that
     * arrived after a reset that followed it; the exchange can.
     *
     * 1. Representation. The intake's state word:
     *      UNSET          sentinel, accepts waiters: not set, nobody waiting
     *      WaitNode w     not set; w is the newest waiter, older ones below it down to UNSET
     *      Set(v)         sentinel carrying the value, refuses waiters: set
     *    A waiter node is the waiting task's own suspension step: no other allocation per wait.
     *
     * 2. Transitions.
     *    await (fast):   reads Set(v): completes with v, no suspension (the run loop's FastPath)
     *    await (slow):   UNSET | w -> w'                    push CAS            waiter
     *                    (refused by Set(v): completes its own step with v)
     *    set(v):         UNSET | w -> Set(v); then admit every unsettled taken waiter, oldest
     *                    first                              CAS (a take)        setter
     *                    Set(u) -> unchanged, returns false (first set wins)
     *    reset:          Set(v) -> UNSET                    CAS                 resetter
     *                    UNSET | w -> unchanged, returns false (waiters keep waiting)
     *    departure:      the intake unlinks the waiter (newest: pop CAS; else a counted sweep)
     *
     * 3. Linearization points. set: its CAS (or the read of Set, which refuses). reset: its CAS
     *    (or the read of a non-Set state). await: the read of Set (fast path, or the refusal of the
     *    push), else the push CAS; it then returns the value of the set that takes it.
     *    isSet: its read of the state.
     *
     * 4. Invariants. I1: a waiter pushed onto UNSET or a stack is taken by exactly one set, the
     *    next CAS that replaces that stack (reset never takes waiters: it changes Set only).
     *    I2: a wait's value comes from the Set it read or the set that took it: no waiter sees two
     *    values, and none sees a value of a set that happened before a reset it followed.
     *
     * 5. Memory ordering. The state is volatile; the setter's CAS (release) publishes the Set box
     *    and the value (and the setter's earlier writes); a waiter that reads Set (acquire) or is
     *    admitted (the acquire on its result word after the setter's release) sees them.
     *
     * 6. Progress: lock-free. set is wait-free apart from the retry after a racing push or pop,
     *    plus one admit per waiter.
     * 7. Cancellation: the waiter's token cancels its step; cancel and set's admit race on the
     *    step's result CAS, one winner. The intake unlinks departed nodes (WaitQueue part 7), so
     *    they never pile up in an event that is never set.
     * 8. Resumption: the intake's admit resumes each waiter on its own scheduler: inline through
     *    the trampoline when the setter runs that scheduler, otherwise by submission.
     * 9. References: seed 002, lock-free event (kUnsetNoWaiter / list head / kSet).
     */

    /** Not set, nobody waiting; accepts waiters. */
    private static final WaitQueue.Sentinel UNSET = new WaitQueue.Sentinel("UNSET", true);

    /** Set, with its value; refuses waiters (they complete with the value). */
    private static final class Set<T> extends WaitQueue.Sentinel {
        final T value;

        Set(T value) {
            super("SET", false);
            this.value = value;
        }
    }

    private final WaitQueue queue = new WaitQueue(UNSET);
    private final Task<T> await = Task.create(new Await());

    /** Creates an event that is not set. */
    public Event() {
        queue.describedAs("EVENT", this); // its waiters are dumped as waiting on this event
    }

    /**
     * Sets the event and wakes every waiting task with {@code value}, oldest first. Waits that start
     * later complete with {@code value} at once, until {@link #reset()}.
     *
     * @param value the value (may be null)
     * @return {@code true} if this call set the event, {@code false} if it was already set
     */
    public boolean set(T value) {
        Set<T> set = null;
        for (;;) {
            Object s = queue.state();
            if (s instanceof Set) {
                return false; // first set wins
            }
            if (set == null) {
                set = new Set<>(value);
            }
            if (queue.casState(s, set)) {
                queue.admitAll(s, value); // I1: exactly the waiters that arrived before this set
                return true;
            }
        }
    }

    /**
     * Sets the event with a null value; see {@link #set(Object)}.
     *
     * @return {@code true} if this call set the event
     */
    public boolean set() {
        return set(null);
    }

    /**
     * Returns a task that completes with the event's value once it is set (at once if it is set
     * now). The task may be started any number of times.
     *
     * @return the waiting task
     */
    public Task<T> await() {
        return await;
    }

    /** The body of {@link #await()}: the run loop tries {@link #tryNow} first, then queues the step. */
    private final class Await implements Consumer<Completer<T>>, FastPath {
        @Override
        public Object tryNow() {
            return queue.state() instanceof Set<?> set ? set.value : NOT_NOW;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void accept(Completer<T> completer) {
            WaitNode node = (WaitNode) completer; // every Task.create completer is its step (WaitNode)
            WaitQueue.Sentinel refused = queue.push(node);
            if (refused != null) { // set meanwhile
                node.admit(((Set<T>) refused).value);
            }
        }
    }

    /**
     * Blocks the calling thread until the event is set (parking only the virtual thread on a virtual
     * thread) and returns its value. Interrupting the thread cancels the wait.
     *
     * @return the value
     * @throws java.util.concurrent.CancellationException if the thread is interrupted while waiting
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool worker,
     *     an event loop's thread): see {@link Task#join()}; nothing is queued then
     */
    public T awaitBlocking() {
        Blocking.checkAllowed(Event.class, "awaitBlocking");
        return await.join();
    }

    /**
     * Makes a set event unset, for later waits. Does nothing to an event that is not set: tasks that
     * wait keep waiting for the next {@link #set(Object)}.
     *
     * @return {@code true} if this call unset the event
     */
    public boolean reset() {
        Object s = queue.state();
        return s instanceof Set && queue.casState(s, UNSET);
    }

    /**
     * Returns whether the event is set (a snapshot).
     *
     * @return whether set
     */
    public boolean isSet() {
        return queue.state() instanceof Set;
    }

    /**
     * Returns how many tasks wait for the event to be set: a snapshot for monitoring, which may
     * still count a waiter that was cancelled a moment ago (as {@code j.u.c} locks'
     * {@code getQueueLength()}).
     *
     * @return the waiters
     */
    public int queueLength() {
        return queue.linkedCount();
    }

    @Override
    public String toString() {
        return isSet() ? "Event[set]" : "Event[unset]";
    }
}
