package dev.coro.gate;

import dev.coro.internal.Blocking;
import dev.coro.internal.PermitLane;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A gate that serializes operations with equal keys and runs operations with different keys
 * concurrently (one of P4215's future gates): per-account ledger updates, per-user session writes,
 * per-document edits. Work enters with {@link #within(Object, Task)} and leaves when it completes.
 *
 * <p><b>Admission rule.</b> An operation with key {@code k} is admitted when no admitted operation
 * with a key equal to {@code k} ({@code equals} and {@code hashCode}) has yet to leave and, if the
 * gate has a {@code maxConcurrentKeys} bound, its key holds one of the bound's slots. Keys are exact,
 * never striped: two unequal keys never wait for each other, whatever their hash codes.
 *
 * <p><b>Fairness.</b> FIFO per key: operations with equal keys are admitted in the order they reached
 * the gate, and a newcomer never overtakes a queued one. Across keys nothing is ordered, except with
 * a bound: a key that becomes active while all slots are held waits for a slot, FIFO among such keys;
 * a key keeps its slot while it has admitted or waiting operations, and gives it back when its last
 * one leaves.
 *
 * <p><b>Memory.</b> A key's state exists only while the key has admitted or waiting work: when its
 * last operation leaves, its entry is removed, so a key used once costs nothing afterwards. A key
 * with no contention costs one map operation to enter and one to leave. The map's table keeps the
 * size of the most keys active at once, as any hash map; it does not grow with the number of keys
 * ever used.
 *
 * <p><b>Try.</b> {@link #tryWithin(Object, Task)} and {@link #tryAcquire(Object)} admit only if the
 * key is free now, nobody with that key is queued and (with a bound) the key already holds a slot or
 * one is free now; otherwise they complete on the cancelled channel without queueing and without
 * running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter of every key on the cancelled
 * channel, and every later acquisition completes cancelled without running its work; admitted work
 * runs to its end. {@link #closeAndCheck()} (the destruction rule: a gate must outlive the work it admitted) closes and throws
 * {@link IllegalStateException} if admitted work remains.
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and gives up its place; if the hand-off won the race, the work is admitted and leaves when
 * it ends. Either way the key is never left held by nobody, and its entry is removed once nobody
 * uses it.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread whose work leaves already runs that scheduler, otherwise by submission. An
 * operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> A null key: {@link NullPointerException} (when the door is built, not when it
 * runs); {@code maxConcurrentKeys <= 0}: {@link IllegalArgumentException}; a null task or body:
 * {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Thread-safe; the per-key hand-off is lock-free, and
 * the key map is a {@link ConcurrentHashMap}, whose bin locks are held for a few instructions, never
 * across a wait. Actions of an operation before it leaves happen-before the actions of the next
 * admitted operation with an equal key.
 *
 * {@snippet :
 * KeyedSerialGate<String> accounts = new KeyedSerialGate<>();
 * Task<Void> debit = accounts.within(accountId, Task.fromRunnable(() -> ledger.debit(accountId, amount)));
 * }
 *
 * @param <K> the key type
 */
public final class KeyedSerialGate<K> implements KeyedGate<K> {
    /* Implementation overview.
     *
     * 1. Representation.
     *    lanes (ConcurrentHashMap<K, Entry>): the live entry of each key in use.
     *    Entry:
     *      gate, key (final): as a Runnable, the entry is its holder's exit (T4), so a pass
     *        allocates no exit closure.
     *      users (volatile int): the operations that joined the entry and have not left it (the
     *        holder, and the joiners queued behind it or between the two); 0 means dead, for ever.
     *        A new entry starts at 1: its placer, which holds the key at once.
     *      lane (volatile KeyLane, null until the first joiner): a serial permit lane (PermitLane(1):
     *        the key's FIFO line and hand-off), installed by a joiner with its one unit already taken
     *        on behalf of the holder of that moment. So a key used by one operation at a time costs
     *        an entry and no engine; only a key that someone waits for gets a lane.
     *      hasSlot (plain boolean, bounded gates only): the entry holds a slot of keySlots. Written
     *        only by the holder and read by the entry's killer (T4), after every other user's last
     *        write of it.
     *    keySlots (PermitLane(maxConcurrentKeys), or null): the bound on keys holding a slot.
     *    closed (volatile boolean).
     *
     * 2. Transitions (of one operation with key k).
     *    T1 place: putIfAbsent a fresh entry (users 1): if there was none, placed, and it holds the
     *       key. A try only ever places: it finds a live entry "in use" and completes cancelled.
     *    T2 join: a live entry e: install e.lane if null (CAS null -> a lane with its unit taken),
     *       then CAS e.users n -> n + 1 for n >= 1: joined; it waits in e.lane's door for the key.
     *       Seen 0: e is dead and being removed by its killer: lanes.remove(k, e) (helping; removes
     *       only that entry) and start over at T1.
     *    T3 hold: the holder takes a slot of keySlots if bounded and e has none (holding the key
     *       meanwhile), then runs its work.
     *    T4 exit (the holder, on every path): users == 1 and CAS 1 -> 0: it is the killer:
     *       lanes.remove(k, e) and, if e.hasSlot, keySlots.release(1). Otherwise someone joined:
     *       e.lane.release(1) hands the key on (to the oldest waiter, or to the next joiner to arrive
     *       at the lane), then leave.
     *    T5 leave (a joiner whose wait ended without the key, or the holder after T4's hand-off):
     *       CAS users n -> n - 1 for n >= 2; at n == 1, CAS 1 -> 0 and kill as in T4.
     *    close: closed = true; full fence; close every entry's lane, and keySlots.
     *
     * 3. Linearization points. Placing: the putIfAbsent. Joining: the users CAS. Admission of a
     *    joiner: the lane's (PermitLane overview). The entry's death: the CAS 1 -> 0 (after it no CAS
     *    n -> n + 1 can succeed, so no operation ever uses a dead entry, and the removal that follows
     *    only hides it from later lookups).
     *
     * 4. Invariants.
     *    K1 (mutual exclusion per key): at most one operation of key k holds it. Operations of k that
     *       overlap in time use the same entry: an entry is removed only once dead, and dead only
     *       when no operation uses it, so an operation that arrives while another of k is in its T3
     *       finds that one's entry (live) in the map. Within an entry: while it has no lane it has one
     *       user, the holder (a joiner installs the lane before joining); once it has one, the lane's
     *       one unit is the key, first taken for the holder of that moment, then handed on by T4.
     *    K2 (no stranding): nobody waits on a dead entry: joining it fails (users 0), and the killer
     *       is the last user, so no one else is queued on its lane. A holder that sees another user
     *       releases the lane's unit, which the lane hands to that user when it arrives at the door
     *       (or to a later one, if it leaves first).
     *    K3 (no leak): an entry is in the map iff it is live, up to the killer's removal after its CAS
     *       (and helpers remove it too). So when no operation is in flight, the map is empty.
     *    K4 (slots): an entry holds at most one slot, from the holder that took it to its death.
     *
     * 5. Memory ordering. users and lane are volatile and touched by CAS or volatile reads. A joiner
     *    installs the lane (CAS) before its users CAS, and the holder reads users before lane: a
     *    holder that sees users >= 2 sees the lane. The killer's CAS 1 -> 0 comes after every other
     *    user's decrement, each after that user's writes of hasSlot, so the killer reads the last
     *    one; between holders the lane's hand-off orders them. close: an arrival that read the gate
     *    open comes before close; a placer then holds the key (no one waits for it), but a joiner may
     *    install a lane that close's iteration missed. So closed is written, then a full fence, then
     *    each entry's lane is read; a joiner writes the lane and users and then reads closed again:
     *    by Dekker's argument either it sees closed and closes its lane itself, or close sees the
     *    lane. Lane close is idempotent.
     *
     * 6. Progress. Placing, joining and leaving are lock-free apart from the map's short bin locks: a
     *    CAS on users fails only when another operation's succeeded; an arrival retries only past a
     *    dead entry, which it removes itself. Waiting is the lane's (and keySlots').
     *
     * 7. Cancellation: the lane's and keySlots' own; a joiner whose wait ends without the key leaves
     *    (T5), and the holder exits on every path of its work (an andFinally), so no user is lost.
     */

    private final ConcurrentHashMap<K, Entry<K>> lanes = new ConcurrentHashMap<>();
    private final PermitLane keySlots;
    private final Task<Void> takeSlot;
    private final Task<Void> tryTakeSlot;
    private volatile boolean closed;

    /** Creates an open gate with no bound on the keys admitted at once. */
    public KeyedSerialGate() {
        this.keySlots = null;
        this.takeSlot = null;
        this.tryTakeSlot = null;
    }

    /**
     * Creates an open gate that admits operations of at most {@code maxConcurrentKeys} keys at once.
     *
     * @param maxConcurrentKeys the most keys with admitted or waiting operations holding a slot
     * @throws IllegalArgumentException if {@code maxConcurrentKeys <= 0}
     */
    public KeyedSerialGate(int maxConcurrentKeys) {
        if (maxConcurrentKeys <= 0) {
            throw new IllegalArgumentException("maxConcurrentKeys must be positive, got " + maxConcurrentKeys);
        }
        this.keySlots = new PermitLane(maxConcurrentKeys);
        keySlots.observedAs(KeyedSerialGate.class);
        keySlots.describedAs("GATE", this); // tasks waiting for a key slot are dumped as waiting on this gate
        this.takeSlot = Task.create(keySlots.waitingDoor(null));
        this.tryTakeSlot = Task.create(keySlots.tryingDoor(null));
    }

    /**
     * Returns a task that waits for admission with {@code key}, then runs {@code work}, then leaves
     * when {@code work} completes on any channel. If the wait is cancelled, or the gate is closed, the
     * task completes cancelled and {@code work} does not run. The task ends with {@code work}'s
     * outcome.
     *
     * @param key the key: operations with equal keys run one at a time, in arrival order
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null
     */
    @Override
    public <T> Task<T> within(K key, Task<T> work) {
        return pass(key, work, true);
    }

    /**
     * Returns a task that runs {@code work} with {@code key} only if it is admitted immediately
     * (see the class description's "Try"): otherwise it completes on the cancelled channel, without
     * queueing and without running {@code work}.
     *
     * @param key the key
     * @param work the work to admit
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code key} or {@code work} is null
     */
    @Override
    public <T> Task<T> tryWithin(K key, Task<T> work) {
        return pass(key, work, false);
    }

    /**
     * Returns a task that waits for admission with {@code key} and completes with the
     * {@link Admission}, whose {@link Admission#exit()} leaves. Prefer {@link #within(Object, Task)},
     * which leaves on every completion path by construction. The task may be started any number of
     * times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing; if the admission won the race, it completes with the admission, which must be exited.
     * After {@link #close()} a run completes cancelled.
     *
     * @param key the key
     * @return the acquiring task
     * @throws NullPointerException if {@code key} is null
     */
    public Task<Admission> acquire(K key) {
        return admission(key, true);
    }

    /**
     * Returns a task that completes with an {@link Admission} for {@code key} if it is admitted
     * immediately, and otherwise completes on the cancelled channel without queueing.
     *
     * @param key the key
     * @return the trying task
     * @throws NullPointerException if {@code key} is null
     */
    public Task<Admission> tryAcquire(K key) {
        return admission(key, false);
    }

    /**
     * Blocks the calling thread until it is admitted with {@code key} (parking only the virtual thread
     * on a virtual thread), runs {@code body}, leaves and returns the body's value:
     * {@code within(key, Task.fromCallable(body)).join()}.
     *
     * @param key the key
     * @param body the work to admit
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code key} or {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T call(K key, Callable<? extends T> body) {
        Blocking.checkAllowed(KeyedSerialGate.class, "call");
        Objects.requireNonNull(body, "body");
        return within(key, Task.<T>fromCallable(body)).join();
    }

    /**
     * Closes the gate: every queued waiter of every key completes on the cancelled channel, and every
     * later acquisition completes cancelled without running its work. Admitted work runs to its end
     * and leaves as usual. Idempotent; never throws.
     */
    @Override
    public void close() {
        closed = true;
        VarHandle.fullFence(); // Dekker with a joiner's lane and users writes and its read of closed (part 5)
        for (Entry<K> e : lanes.values()) {
            KeyLane<K> lane = e.lane;
            if (lane != null) {
                lane.close(); // waiters are only in lanes: a lane-less entry has just its holder
            }
        }
        if (keySlots != null) {
            keySlots.close();
        }
    }

    /**
     * Closes the gate (as {@link #close()}) and then checks the destruction rule: no admitted
     * work may remain when a gate is dropped.
     *
     * @throws IllegalStateException naming the count if admitted work remains
     */
    public void closeAndCheck() {
        close();
        long admitted = 0;
        for (Entry<K> e : lanes.values()) {
            KeyLane<K> lane = e.lane;
            admitted += lane != null ? lane.closeAndCountAdmitted() : (e.users > 0 ? 1 : 0);
        }
        if (admitted != 0) {
            throw new IllegalStateException("closeAndCheck: " + admitted
                    + " admitted operation(s) still running; a gate must outlive the work it admitted");
        }
    }

    /**
     * Returns whether the gate is closed.
     *
     * @return whether {@link #close()} or {@link #closeAndCheck()} has been called
     */
    @Override
    public boolean isClosed() {
        return closed;
    }

    /**
     * Returns the number of keys with admitted or waiting operations: a snapshot for monitoring.
     *
     * @return the keys in use
     */
    public int activeKeys() {
        return lanes.size();
    }

    @Override
    public String toString() {
        return "KeyedSerialGate[activeKeys=" + activeKeys()
                + (keySlots != null ? ", maxConcurrentKeys=" + keySlots.permits() : "")
                + (closed ? ", closed]" : "]");
    }

    // ---- the pass (part 2) ----

    private <T> Task<T> pass(K key, Task<T> work, boolean waits) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(work, "work");
        return Task.defer(() -> {
            Object arrival = arrive(key, waits);
            if (arrival == null) { // closed, or a try that found the key in use
                return closed ? Task.cancelled(this + " is closed") : Task.cancelled();
            }
            if (arrival instanceof KeyLane<?> joined) {
                Entry<K> e = entryOf(joined);
                Task<T> admitted = gated(e, work, waits).andFinally(e);
                return joined.enter.transform(o -> o instanceof Outcome.Value<Void> ? admitted : leave(e, o));
            }
            Entry<K> e = placed(arrival);
            return gated(e, work, waits).andFinally(e);
        });
    }

    private Task<Admission> admission(K key, boolean waits) {
        Objects.requireNonNull(key, "key");
        return Task.defer(() -> {
            Object arrival = arrive(key, waits);
            if (arrival == null) {
                return closed ? Task.cancelled(this + " is closed") : Task.cancelled();
            }
            Entry<K> e;
            Task<Void> held;
            if (arrival instanceof KeyLane<?> joined) {
                e = entryOf(joined);
                held = joined.enter.transform(o -> o instanceof Outcome.Value<Void> ? Task.value(null) : leave(e, o));
            } else {
                e = placed(arrival);
                held = Task.value(null);
            }
            Task<Void> slotted = keySlots == null ? held : held.then(slot(e, waits).transform(o -> {
                if (o instanceof Outcome.Value<Void>) {
                    return Task.value(null);
                }
                exit(e); // refused or cancelled at the slot: give the key back
                return replay(o);
            }));
            return slotted.map(ignored -> new Admission(e));
        });
    }

    /** {@code work}, after taking a bounded gate's slot for entry {@code e} if it has none (T2). */
    private <T> Task<T> gated(Entry<K> e, Task<T> work, boolean waits) {
        return keySlots == null ? work : slot(e, waits).then(work);
    }

    /** A bounded gate's slot for entry {@code e}, taken by its first admitted operation (T2). */
    private Task<Void> slot(Entry<K> e, boolean waits) {
        return Task.defer(() -> e.hasSlot ? Task.value(null) : (waits ? takeSlot : tryTakeSlot).map(ignored -> {
            e.hasSlot = true;
            return null;
        }));
    }

    /** A waiter's end that was not an admission, replayed; cancelled while closed says so. */
    private <T> Task<T> replay(Outcome<?> o) {
        if (o instanceof Outcome.Failure<?> f) {
            return Task.failure(f.error());
        }
        return closed ? Task.cancelled(this + " is closed") : Task.cancelled();
    }

    @SuppressWarnings("unchecked")
    private static <K> Entry<K> entryOf(KeyLane<?> lane) {
        return (Entry<K>) lane.entry;
    }

    @SuppressWarnings("unchecked")
    private static <K> Entry<K> placed(Object arrival) {
        return (Entry<K>) arrival;
    }

    /**
     * T1 (and T2's first step): the arrival of an operation with {@code key}: the {@link Entry} it
     * placed (it holds the key now), the {@link KeyLane} of the live entry it joined (it waits there),
     * or null: the gate is closed, or a try found the key in use.
     */
    private Object arrive(K key, boolean waits) {
        if (closed) {
            return null;
        }
        for (;;) {
            Entry<K> fresh = new Entry<>(this, key); // most arrivals place one: one map operation, no lookup first
            Entry<K> e = lanes.putIfAbsent(key, fresh);
            if (e == null) {
                return fresh; // it read the gate open: it comes before close, and holds the key
            }
            if (!waits) { // a try queues on nobody
                if (e.users > 0) {
                    return null;
                }
            } else {
                KeyLane<K> lane = e.laneForJoiners();
                if (e.tryJoin()) {
                    if (closed) {
                        lane.close(); // close's iteration may have missed the lane (part 5)
                    }
                    return lane;
                }
            }
            lanes.remove(key, e); // dead: its killer removes it too; help, then look again
        }
    }

    /** T3, the holder: gives the key to the next user through the lane, or kills the entry if alone. */
    private void exit(Entry<K> e) {
        if (e.users == 1 && USERS.compareAndSet(e, 1, 0)) {
            kill(e);
            return;
        }
        e.lane.release(1); // another user joined: it installed the lane before joining (part 5)
        leave(e);
    }

    /** T3, a user that is not (or no longer) the holder: the last one kills the entry. */
    private void leave(Entry<K> e) {
        for (int n = e.users; ; n = e.users) {
            if (n > 1) {
                if (USERS.compareAndSet(e, n, n - 1)) {
                    return;
                }
            } else if (USERS.compareAndSet(e, 1, 0)) {
                kill(e);
                return;
            }
        }
    }

    private <T> Task<T> leave(Entry<K> e, Outcome<?> notAdmitted) {
        leave(e);
        return replay(notAdmitted);
    }

    /** The entry is dead (users 0): out of the map, and its slot back. */
    private void kill(Entry<K> e) {
        lanes.remove(e.key, e);
        if (e.hasSlot) {
            keySlots.release(1);
        }
    }

    /** One key's entry (part 1); as a Runnable, its holder's exit (T4). */
    private static final class Entry<K> implements Runnable {
        final KeyedSerialGate<K> gate;
        final K key;
        volatile int users = 1;
        /** The lane joiners wait in; null until the first joiner installs it. */
        volatile KeyLane<K> lane;
        boolean hasSlot;

        Entry(KeyedSerialGate<K> gate, K key) {
            this.gate = gate;
            this.key = key;
        }

        @Override
        public void run() {
            gate.exit(this);
        }

        boolean tryJoin() {
            for (int n = users; n > 0; n = users) {
                if (USERS.compareAndSet(this, n, n + 1)) {
                    return true;
                }
            }
            return false;
        }

        /** The entry's lane, installed by the first joiner with its one unit taken by the holder. */
        KeyLane<K> laneForJoiners() {
            KeyLane<K> l = lane;
            if (l == null) {
                KeyLane<K> fresh = new KeyLane<>(this);
                l = (KeyLane<K>) LANE.compareAndExchange(this, (KeyLane<K>) null, fresh);
                if (l == null) {
                    l = fresh;
                }
            }
            return l;
        }
    }

    /** An entry's serial lane, whose one unit the entry's holder has when it is installed. */
    private static final class KeyLane<K> extends PermitLane {
        final Entry<K> entry;
        final Task<Void> enter = Task.create(waitingDoor(null));

        KeyLane(Entry<K> entry) {
            super(1);
            this.entry = entry;
            observedAs(KeyedSerialGate.class);
            boolean taken = tryEnterNow(null); // the holder's unit: not yet shared, so it succeeds
            assert taken;
        }
    }

    private static final VarHandle USERS;
    private static final VarHandle LANE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            USERS = lookup.findVarHandle(Entry.class, "users", int.class);
            LANE = lookup.findVarHandle(Entry.class, "lane", KeyLane.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
