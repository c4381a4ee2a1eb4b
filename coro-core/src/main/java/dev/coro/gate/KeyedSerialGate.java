package dev.coro.gate;

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
 * runs to its end. {@link #closeAndCheck()} (the paper's destruction rule) closes and throws
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
public final class KeyedSerialGate<K> {
    /* Implementation overview.
     *
     * 1. Representation.
     *    lanes (ConcurrentHashMap<K, KeyLane>): the live entry of each key in use.
     *    KeyLane: a serial permit lane (PermitLane(1): the key's FIFO line and hand-off) plus
     *      users (volatile int): the operations that joined the entry and have not left it (queued,
     *        admitted, or between the two); 0 means dead, for ever. A new entry starts at 1.
     *      hasSlot (plain boolean, bounded gates only): the entry holds a slot of keySlots. Written
     *        only by the entry's admitted operation (the lane orders them) and read by the entry's
     *        killer (see T3), after every other user's last write of it.
     *    keySlots (PermitLane(maxConcurrentKeys), or null): the bound on keys holding a slot.
     *    closed (volatile boolean).
     *
     * 2. Transitions (of one operation with key k).
     *    T1 join: e = lanes.get(k); none: putIfAbsent a fresh entry (users 1): placed, done, else e is
     *       the entry another thread placed. Then CAS e.users n -> n + 1 for n >= 1: joined. Seen 0:
     *       e is dead and being removed by its killer; lanes.remove(k, e) (helping; removes only that
     *       entry) and start over.
     *    T2 pass: the lane's door (waiting or trying); then, bounded and without hasSlot, keySlots'
     *       door, holding the lane meanwhile; then the work; then the lane's release. A refusal or
     *       cancellation at the slot releases the lane.
     *    T3 leave (on every path, after T2): CAS e.users n -> n - 1 for n >= 2; or n == 1: CAS 1 -> 0:
     *       this operation is the killer: lanes.remove(k, e) and, if e.hasSlot, keySlots.release(1).
     *    close: closed = true; full fence; close every entry's lane and keySlots.
     *
     * 3. Linearization points. join: the putIfAbsent that placed the entry, or the users CAS. The
     *    entry's death: the CAS 1 -> 0 (after it no CAS n -> n + 1 can succeed, so no operation ever
     *    uses a dead entry's lane, and the map removal that follows only hides it from later
     *    lookups). Admission: the lane's (PermitLane overview).
     *
     * 4. Invariants.
     *    K1 (mutual exclusion per key): at most one operation of key k is admitted. Operations of k
     *       that overlap in time joined the same entry: an entry is removed only once dead, and dead
     *       only when no operation uses it, so an operation that joins while another of k is in its
     *       T2 finds that one's entry (live: users >= 1) in the map. The entry's serial lane admits
     *       one at a time.
     *    K2 (no stranding): nobody waits on a dead entry: joining it fails (users 0), and the killer
     *       is the last user, so no one else is queued on its lane.
     *    K3 (no leak): an entry is in the map iff it is live, up to the killer's removal after its CAS
     *       (and helpers remove it too). So when no operation is in flight, the map is empty.
     *    K4 (slots): an entry holds at most one slot, from the admission that took it to its death.
     *
     * 5. Memory ordering. users is only touched by volatile CAS and reads, totally ordered: the
     *    killer's CAS 1 -> 0 comes after every other user's decrement, each after that user's writes
     *    of hasSlot, so the killer reads the last one. hasSlot between admitted operations: the lane's
     *    hand-off orders them. close: closed is written, then a full fence, then the map is read; a
     *    joiner writes the map (putIfAbsent, or the users CAS on an entry found there) and then reads
     *    closed: by Dekker's argument either the joiner sees closed and closes its own entry's lane,
     *    or close's iteration sees the entry and closes its lane; both are idempotent.
     *
     * 6. Progress. join and leave are lock-free apart from the map's short bin locks: a CAS on users
     *    fails only when another operation's succeeded; a join retries only past a dead entry, which
     *    its killer (or the joiner itself) removes. Waiting is the lane's (and keySlots').
     *
     * 7. Cancellation: the lane's and keySlots' own; leave runs on every path (an andFinally around
     *    the whole pass), so a cancelled waiter always gives up its use of the entry.
     */

    private final ConcurrentHashMap<K, KeyLane<K>> lanes = new ConcurrentHashMap<>();
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
     */
    public <T> T call(K key, Callable<? extends T> body) {
        Objects.requireNonNull(body, "body");
        return within(key, Task.<T>fromCallable(body)).join();
    }

    /**
     * Closes the gate: every queued waiter of every key completes on the cancelled channel, and every
     * later acquisition completes cancelled without running its work. Admitted work runs to its end
     * and leaves as usual. Idempotent; never throws.
     */
    public void close() {
        closed = true;
        VarHandle.fullFence(); // Dekker with a joiner's map write and read of closed (part 5)
        for (KeyLane<K> e : lanes.values()) {
            e.close();
        }
        if (keySlots != null) {
            keySlots.close();
        }
    }

    /**
     * Closes the gate (as {@link #close()}) and then checks the paper's destruction rule: no admitted
     * work may remain when a gate is dropped.
     *
     * @throws IllegalStateException naming the count if admitted work remains
     */
    public void closeAndCheck() {
        close();
        long admitted = 0;
        for (KeyLane<K> e : lanes.values()) {
            admitted += e.closeAndCountAdmitted();
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
            if (closed) {
                return Task.cancelled();
            }
            KeyLane<K> e = join(key);
            Task<Void> enter = waits ? e.enter : e.tryEnter();
            Task<T> admitted = keySlots == null ? work : slot(e, waits).then(work);
            return enter.then(admitted.andFinally(e)).andFinally(() -> leave(e));
        });
    }

    private Task<Admission> admission(K key, boolean waits) {
        Objects.requireNonNull(key, "key");
        return Task.defer(() -> {
            if (closed) {
                return Task.cancelled();
            }
            KeyLane<K> e = join(key);
            Task<Void> enter = waits ? e.enter : e.tryEnter();
            Task<Void> admitted = keySlots == null ? enter
                    : enter.then(slot(e, waits).transform(o -> {
                        if (o instanceof Outcome.Value<Void>) {
                            return Task.value(null);
                        }
                        e.run(); // refused or cancelled at the slot: give the key back
                        return replay(o);
                    }));
            return admitted.transform(o -> {
                if (o instanceof Outcome.Value<Void>) {
                    return Task.value(new Admission(() -> {
                        e.run();
                        leave(e);
                    }));
                }
                leave(e);
                return replay(o);
            });
        });
    }

    /** A bounded gate's slot for entry {@code e}, taken by its first admitted operation (T2). */
    private Task<Void> slot(KeyLane<K> e, boolean waits) {
        return Task.defer(() -> e.hasSlot ? Task.value(null) : (waits ? takeSlot : tryTakeSlot).map(ignored -> {
            e.hasSlot = true;
            return null;
        }));
    }

    private static <T> Task<T> replay(Outcome<?> o) {
        if (o instanceof Outcome.Failure<?> f) {
            return Task.failure(f.error());
        }
        return Task.cancelled();
    }

    /** T1: the live entry of {@code key}, joined. */
    private KeyLane<K> join(K key) {
        KeyLane<K> e;
        for (;;) {
            e = lanes.get(key);
            if (e == null) {
                KeyLane<K> fresh = new KeyLane<>(key);
                e = lanes.putIfAbsent(key, fresh);
                if (e == null) {
                    e = fresh;
                    break;
                }
            }
            if (e.tryJoin()) {
                break;
            }
            lanes.remove(key, e); // dead: its killer removes it too; help, then look again
        }
        if (closed) {
            e.close(); // close's iteration may have missed it (part 5)
        }
        return e;
    }

    /** T3: leaves entry {@code e}; the last user removes it and gives back its slot. */
    private void leave(KeyLane<K> e) {
        for (int n = e.users; ; n = e.users) {
            if (n > 1) {
                if (USERS.compareAndSet(e, n, n - 1)) {
                    return;
                }
            } else if (USERS.compareAndSet(e, 1, 0)) {
                lanes.remove(e.key, e);
                if (e.hasSlot) {
                    keySlots.release(1);
                }
                return;
            }
        }
    }

    /** One key's entry: its serial lane and its users (part 1). */
    private static final class KeyLane<K> extends PermitLane implements Runnable {
        final K key;
        volatile int users = 1;
        boolean hasSlot;
        final Task<Void> enter = Task.create(waitingDoor(null));

        KeyLane(K key) {
            super(1);
            this.key = key;
        }

        /** The trying door, built when a try needs it (most entries never do). */
        Task<Void> tryEnter() {
            return Task.create(tryingDoor(null));
        }

        /** Gives the key back: the exit of this entry's admitted operation. */
        @Override
        public void run() {
            release(1);
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

    private static final VarHandle USERS;

    static {
        try {
            USERS = MethodHandles.lookup().findVarHandle(KeyLane.class, "users", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
