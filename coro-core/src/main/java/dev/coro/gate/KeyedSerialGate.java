package dev.coro.gate;

import dev.coro.internal.Blocking;
import dev.coro.internal.KeyTable;
import dev.coro.internal.PermitLane;
import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;
import java.util.concurrent.Callable;

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
 * with no contention costs one atomic instruction on the key table to enter and one to leave. The
 * table keeps the size of the most keys active at once, as any hash table; it does not grow with
 * the number of keys ever used.
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
 * <p><b>Thread-safety and memory effects.</b> Thread-safe and lock-free: the key table and the
 * per-key hand-off take no lock. Actions of an operation before it leaves happen-before the actions
 * of the next admitted operation with an equal key.
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
     *    keys (KeyTable<Key>): the live state of each key in use, one node per key, in one of two
     *    forms (both Key: the key, the gate, hasSlot; as a Runnable each is its holder's exit):
     *      Entry (alone): placed by an operation that found the key free, which holds the key. No
     *        count: while an entry is in the table, its placer is its one user. shared (volatile,
     *        null until a joiner installs it by CAS): the Shared that will take its place. left
     *        (boolean, written once by the placer with release, read with acquire): the placer is
     *        leaving (T4) and no longer holds the key.
     *      Shared (contended): users (volatile int) counts the operations that joined it and have
     *        not left it: the holder and the joiners queued behind it or on their way there; 0
     *        means dead, for ever. lane (final): a serial permit lane (PermitLane(1): the key's
     *        FIFO line and hand-off), made with its one unit already taken for the holder. A new
     *        Shared has users 1: the holder of the entry it replaces.
     *    hasSlot (plain boolean, bounded gates only): the key holds a slot of keySlots. Written only
     *      by the key's holder (the entry's placer, or the Shared's holder), read by the holder
     *      after it, and by whoever kills the node (T4, T5).
     *    keySlots (PermitLane(maxConcurrentKeys), or null): the bound on keys holding a slot.
     *    closed (volatile boolean).
     *
     * 2. Transitions (of one operation with key k).
     *    T1 place: putIfAbsent a fresh entry: if the key had no node, placed: it holds the key. A try
     *       only ever places: it finds a live node "in use" (an entry not left, or a Shared with
     *       users > 0) and completes cancelled. Found an entry e with e.left: its placer is leaving:
     *       keys.remove(e) (helping; its placer's own remove then fails, T4) and start over at T1,
     *       for a try too (the key is free: it must not be refused, nor wait for the placer).
     *    T2 join: an entry e not left: take e.shared (install a new Shared s by CAS if null), then
     *       keys.replace(e, s): e's node is s from now on; if e is no longer in the table (its
     *       placer left alone, T4, or another joiner replaced it already) start over at T1. A
     *       Shared s in the table: CAS s.users n -> n + 1 for n >= 1: joined; it waits in s.lane's
     *       door for the key. Seen 0: s is dead and being removed by its killer: keys.remove(s)
     *       (helping; removes only that node) and start over at T1.
     *    T3 hold: the holder takes a slot of keySlots if bounded and the key has none (holding the
     *       key meanwhile), then runs its work.
     *    T4 exit of an entry's placer (on every path): e.left = true (release), then keys.remove(e):
     *       if that removed e, nobody joined: the key is free (and its slot back, if e.hasSlot).
     *       Otherwise a joiner replaced e by s = e.shared, or a newcomer removed e (T1): if e.shared
     *       is set, s.hasSlot = e.hasSlot (the key's slot goes with it) and T5's exit through s (a
     *       Shared whose replace failed was never in the table: its users is still 1, so that exit
     *       kills it, and kill gives the slot back); else the slot back, if e.hasSlot.
     *    T5 exit of a Shared's holder: users == 1 and CAS 1 -> 0: it is the killer: keys.remove(s)
     *       and, if s.hasSlot, keySlots.release(1). Otherwise someone joined: s.lane.release(1) hands
     *       the key on (to the oldest waiter, or to the next joiner to arrive at the lane), then
     *       leave.
     *    T6 leave (a joiner whose wait ended without the key, or the holder after T5's hand-off):
     *       CAS users n -> n - 1 for n >= 2; at n == 1, CAS 1 -> 0 and kill as in T5.
     *    close: closed = true; full fence; close the lane of every Shared in the table, and keySlots.
     *
     * 3. Linearization points. Placing: the putIfAbsent's CAS. An entry's placer leaving alone: the
     *    remove's CAS (after it e is in no table, so no replace of e succeeds and nobody joins it).
     *    Contention: the replace's CAS. Joining: the users CAS. Admission of a joiner: the lane's
     *    (PermitLane overview). A Shared's death: the CAS 1 -> 0 (after it no CAS n -> n + 1 can
     *    succeed, so no operation ever uses a dead Shared, and the removal that follows only hides it
     *    from later lookups).
     *
     * 4. Invariants.
     *    K1 (mutual exclusion per key): at most one operation of key k holds it. Operations of k that
     *       overlap in time use the same node or its successor: an entry leaves the table only by
     *       its placer's exit (T4) or by becoming a Shared (T2), and a Shared only once dead, when no
     *       operation uses it; so an operation that arrives while another of k is in its T3 finds
     *       that one's node in the table. While the node is an entry, its placer is its only user
     *       (a joiner joins only a Shared that is in the table); a Shared's lane has one unit, the
     *       key, first taken for the entry's placer, then handed on by T5.
     *    K2 (no stranding): nobody waits on a dead Shared: joining it fails (users 0), and the killer
     *       is its last user, so no one else is queued on its lane. A joiner joins only a Shared that
     *       replaced a live entry in the table, whose placer then finds its remove failing (T4) and
     *       exits through that Shared; a holder that sees another user releases the lane's unit,
     *       which the lane hands to that user when it arrives at the door (or to a later one, if it
     *       leaves first).
     *    K3 (no leak): a node is in the table iff its key is in use, up to the killer's removal
     *       after its CAS (and helpers remove it too). So when no operation is in flight, the table
     *       is empty.
     *    K4 (slots): a key holds at most one slot, from the holder that took it to the death of its
     *       last node (an entry's slot passes to the Shared that replaced it, T4).
     *
     * 5. Memory ordering. The table's bins are read with acquire and changed by CAS (KeyTable part
     *    5), so a node's fields written before it is placed or put in place are seen by whoever
     *    finds it. A joiner installs e.shared (CAS) before its replace (CAS of the bin), and the
     *    placer reads e.shared after its remove found e gone (a bin read that saw the replace or a
     *    later write): it sees s. left: release by the placer, acquire by a newcomer; it only tells
     *    the newcomer that removing e is safe (the placer no longer uses the key), and the remove's
     *    CAS decides between that newcomer, the placer and a joiner's replace: exactly one wins. users is touched by CAS and volatile reads. hasSlot: the placer
     *    writes s.hasSlot before it releases s's lane or leaves s; a Shared's killer's CAS 1 -> 0
     *    comes after every other user's decrement, each after that user's writes of hasSlot, so the
     *    killer reads the last one; between holders the lane's hand-off orders them. close: an
     *    arrival that read the gate open comes before close; a placer then holds the key (no one
     *    waits for it), but a joiner may put a Shared in place that close's visit missed. So closed
     *    is written, then a full fence, then the table is visited; a joiner writes the bin and users
     *    and then reads closed again: by Dekker's argument either it sees closed and closes its lane
     *    itself, or close sees the Shared. Lane close is idempotent.
     *
     * 6. Progress. Placing, joining and leaving are lock-free (the table is, KeyTable part 6): a CAS
     *    on users fails only when another operation's succeeded; an arrival starts over only past a
     *    node that left the table or died, which it removes itself. Waiting is the lane's (and
     *    keySlots').
     *
     * 7. Cancellation: the lane's and keySlots' own; a joiner whose wait ends without the key leaves
     *    (T6), and the holder exits on every path of its work (an andFinally), so no user is lost.
     *
     * 8. Resumption: the lane's (and keySlots'): a queued joiner is resumed by the engine on its own
     *    scheduler, inline through the trampoline when the releasing thread runs it.
     *
     * 9. References. Seed 003's keyed serializer (a gate per key, created on demand); an uncontended
     *    key costs an entry and two CASes of the table, as the chaining idiom costs a future per
     *    operation, and the first joiner turns it into a lane on the one engine.
     */

    private final KeyTable<Key<K>> keys;
    private final PermitLane keySlots;
    private final Task<Void> takeSlot;
    private final Task<Void> tryTakeSlot;
    private volatile boolean closed;

    /** Creates an open gate with no bound on the keys admitted at once. */
    public KeyedSerialGate() {
        this(NO_BOUND, INITIAL_BINS);
    }

    /**
     * Creates an open gate that admits operations of at most {@code maxConcurrentKeys} keys at once.
     *
     * @param maxConcurrentKeys the most keys with admitted or waiting operations holding a slot
     * @throws IllegalArgumentException if {@code maxConcurrentKeys <= 0}
     */
    public KeyedSerialGate(int maxConcurrentKeys) {
        this(checkBound(maxConcurrentKeys), INITIAL_BINS);
    }

    /**
     * A gate whose key table starts with {@code bins} bins: the model checker's, whose visits of a
     * small table stay short.
     *
     * @param maxConcurrentKeys the bound, or {@link #NO_BOUND}
     * @param bins the table's first bin count, a power of two
     */
    KeyedSerialGate(int maxConcurrentKeys, int bins) {
        this.keys = new KeyTable<>(bins);
        if (maxConcurrentKeys == NO_BOUND) {
            this.keySlots = null;
            this.takeSlot = null;
            this.tryTakeSlot = null;
            return;
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
        keys.forEach(node -> {
            if (node instanceof Shared<K> s) {
                s.lane.close(); // waiters are only in lanes: an entry has just its placer
            }
        });
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
        long[] admitted = new long[1];
        keys.forEach(node -> admitted[0] += node instanceof Shared<K> s ? s.lane.closeAndCountAdmitted() : 1);
        if (admitted[0] != 0) {
            throw new IllegalStateException("closeAndCheck: " + admitted[0]
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
        return keys.size();
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
        // two lambdas, so that neither captures the flag: 24 bytes a call instead of 32
        return waits ? Task.defer(() -> run(key, work, true)) : Task.defer(() -> run(key, work, false));
    }

    /** One run of a pass: the arrival (T1, T2), then the work, gated, with its holder's exit. */
    private <T> Task<T> run(K key, Task<T> work, boolean waits) {
        Key<K> arrival = arrive(key, waits);
        if (arrival == null) { // closed, or a try that found the key in use
            return closed ? Task.cancelled(this + " is closed") : Task.cancelled();
        }
        if (arrival instanceof Shared<K> joined) {
            Task<T> admitted = gated(joined, work, waits).andFinally(joined);
            return joined.lane.enter.transform(o -> o instanceof Outcome.Value<Void> ? admitted : leave(joined, o));
        }
        return gated(arrival, work, waits).andFinally(arrival);
    }

    private Task<Admission> admission(K key, boolean waits) {
        Objects.requireNonNull(key, "key");
        return Task.defer(() -> {
            Key<K> arrival = arrive(key, waits);
            if (arrival == null) {
                return closed ? Task.cancelled(this + " is closed") : Task.cancelled();
            }
            Task<Void> held;
            if (arrival instanceof Shared<K> joined) {
                held = joined.lane.enter.transform(o -> o instanceof Outcome.Value<Void> ? Task.value(null) : leave(joined, o));
            } else {
                held = Task.value(null);
            }
            Task<Void> slotted = keySlots == null ? held : held.then(slot(arrival, waits).transform(o -> {
                if (o instanceof Outcome.Value<Void>) {
                    return Task.value(null);
                }
                arrival.run(); // refused or cancelled at the slot: give the key back (T4 or T5)
                return replay(o);
            }));
            return slotted.map(ignored -> new Admission(arrival));
        });
    }

    /** {@code work}, after taking a bounded gate's slot for the key of {@code node} if it has none (T3). */
    private <T> Task<T> gated(Key<K> node, Task<T> work, boolean waits) {
        return keySlots == null ? work : slot(node, waits).then(work);
    }

    /** A bounded gate's slot for the key of {@code node}, taken by its first admitted operation (T3). */
    private Task<Void> slot(Key<K> node, boolean waits) {
        return Task.defer(() -> node.hasSlot ? Task.value(null) : (waits ? takeSlot : tryTakeSlot).map(ignored -> {
            node.hasSlot = true;
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

    /**
     * T1 and T2: the arrival of an operation with {@code key}: the {@link Entry} it placed (it holds
     * the key now), the {@link Shared} it joined (it waits in its lane), or null: the gate is closed,
     * or a try found the key in use.
     */
    private Key<K> arrive(K key, boolean waits) {
        if (closed) {
            return null;
        }
        Entry<K> fresh = new Entry<>(this, key); // most arrivals place one: one table operation, no lookup first
        for (;;) {
            Key<K> found = keys.putIfAbsent(fresh);
            if (found == null) {
                return fresh; // it read the gate open: it comes before close, and holds the key
            }
            Shared<K> s;
            if (found instanceof Entry<K> e) {
                if (e.leftAcquire()) {
                    keys.remove(e); // its placer has left and is removing it: help, then look again
                    continue;
                }
                if (!waits) {
                    return null; // a try queues on nobody
                }
                s = e.sharedForJoiners();
                if (!keys.replace(e, s)) {
                    continue; // its placer left alone, or another joiner put s in place: look again
                }
            } else {
                s = (Shared<K>) found;
                if (!waits && s.users > 0) {
                    return null;
                }
            }
            if (waits && s.tryJoin()) {
                if (closed) {
                    s.lane.close(); // close's visit may have missed s (part 5)
                }
                return s;
            }
            keys.remove(s); // dead: its killer removes it too; help, then look again
        }
    }

    /** T4, an entry's placer: leaves alone if nobody joined, else through the Shared that replaced it. */
    private void exit(Entry<K> e) {
        e.setLeftRelease(); // newcomers that see it help remove e (part 5)
        if (!keys.remove(e)) { // a joiner replaced e, or a newcomer removed it
            Shared<K> s = e.shared; // installed before the replace (part 5)
            if (s != null) {
                s.hasSlot = e.hasSlot; // the key's slot goes with it (T4)
                exit(s);
                return;
            }
        }
        if (e.hasSlot) {
            keySlots.release(1);
        }
    }

    /** T5, a Shared's holder: gives the key to the next user through the lane, or kills it if alone. */
    private void exit(Shared<K> s) {
        if (s.users == 1 && USERS.compareAndSet(s, 1, 0)) {
            kill(s);
            return;
        }
        s.lane.release(1); // another user joined
        leave(s);
    }

    /** T6, a user that is not (or no longer) the holder: the last one kills the Shared. */
    private void leave(Shared<K> s) {
        for (int n = s.users; ; n = s.users) {
            if (n > 1) {
                if (USERS.compareAndSet(s, n, n - 1)) {
                    return;
                }
            } else if (USERS.compareAndSet(s, 1, 0)) {
                kill(s);
                return;
            }
        }
    }

    private <T> Task<T> leave(Shared<K> s, Outcome<?> notAdmitted) {
        leave(s);
        return replay(notAdmitted);
    }

    /** The Shared is dead (users 0): out of the table, and its slot back. */
    private void kill(Shared<K> s) {
        keys.remove(s);
        if (s.hasSlot) {
            keySlots.release(1);
        }
    }

    /** A key's node in the table (part 1); as a Runnable, its holder's exit (T4, T5). */
    private abstract static sealed class Key<K> extends KeyTable.Node<K> implements Runnable permits Entry, Shared {
        final KeyedSerialGate<K> gate;
        /** The key holds a slot of the bound (part 1). */
        boolean hasSlot;

        Key(KeyedSerialGate<K> gate, K key) {
            super(key);
            this.gate = gate;
        }
    }

    /** A key used by one operation: its placer (part 1). */
    private static final class Entry<K> extends Key<K> {
        /** The Shared that replaces this entry once someone joins; installed by the first joiner. */
        volatile Shared<K> shared;
        /** Its placer has left (written with release, read with acquire: part 5). */
        boolean left;

        Entry(KeyedSerialGate<K> gate, K key) {
            super(gate, key);
        }

        void setLeftRelease() {
            LEFT.setRelease(this, true);
        }

        boolean leftAcquire() {
            return (boolean) LEFT.getAcquire(this);
        }

        @Override
        public void run() {
            gate.exit(this);
        }

        /** This entry's Shared, made and installed by the first joiner (T2). */
        Shared<K> sharedForJoiners() {
            Shared<K> s = shared;
            if (s == null) {
                Shared<K> fresh = new Shared<>(gate, key);
                s = (Shared<K>) SHARED.compareAndExchange(this, (Shared<K>) null, fresh);
                if (s == null) {
                    s = fresh;
                }
            }
            return s;
        }
    }

    /** A key that someone joined: its users and its lane (part 1). */
    private static final class Shared<K> extends Key<K> {
        final KeyLane lane;
        volatile int users;

        Shared(KeyedSerialGate<K> gate, K key) {
            super(gate, key);
            this.lane = new KeyLane();
            USERS.set(this, 1); // the entry's placer; published by the CAS that installs this Shared
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
    }

    /** A Shared's serial lane, whose one unit the holder of the key has when it is made. */
    private static final class KeyLane extends PermitLane {
        final Task<Void> enter = Task.create(waitingDoor(null));

        KeyLane() {
            super(1);
            observedAs(KeyedSerialGate.class);
            boolean taken = tryEnterNow(null); // the holder's unit: not yet shared, so it succeeds
            assert taken;
        }
    }

    /** What the package-private constructor takes for "no bound on keys". */
    static final int NO_BOUND = 0;

    private static int checkBound(int maxConcurrentKeys) {
        if (maxConcurrentKeys <= 0) {
            throw new IllegalArgumentException("maxConcurrentKeys must be positive, got " + maxConcurrentKeys);
        }
        return maxConcurrentKeys;
    }

    /**
     * The key table's first size, in bins (it grows with the keys in use at once): 256 adjacent
     * bins, 1 KB, as much as 16 bins a cache line apart, but two keys in use at once share a bin
     * 16 times less often, and a shared bin is a bucket (an array copied on each change, and a
     * count that every worker writes). Measured: 4% less time per operation on the keyed benchmark
     * when the two CPUs share no cache, the same when they do. 256 bins a line apart (16 KB) and 1,024
     * adjacent bins were measured too: the gate's time did not change in either state.
     */
    private static final int INITIAL_BINS = 256;

    private static final VarHandle USERS;
    private static final VarHandle SHARED;
    private static final VarHandle LEFT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            USERS = lookup.findVarHandle(Shared.class, "users", int.class);
            SHARED = lookup.findVarHandle(Entry.class, "shared", Shared.class);
            LEFT = lookup.findVarHandle(Entry.class, "left", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
