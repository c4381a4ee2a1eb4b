package dev.coro.redis;

import dev.coro.cancel.Cancellable;
import dev.coro.scheduler.Scheduler;
import dev.coro.sync.WaitListener;
import dev.coro.task.Completer;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import io.lettuce.core.ScriptOutputType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * The machinery every Redis gate of this package stands on: leases held in Redis and renewed by one
 * loop per gate object, a FIFO queue of waiters in Redis, release notices by pub/sub with a bounded
 * re-check, fencing tokens, cancellation, close and monitoring. A gate object owns one; the public
 * gate classes state the rule (how many per lane, what a lane is) and their javadoc. Its round trips
 * go through its {@link GateLink}; its settings come from the gate's builder ({@link GateSettings}).
 *
 * <p>A <em>lane</em> is one admission queue with its own capacity in Redis: the whole gate for the
 * capacity and serial gates (lane {@code ""}), one key for the keyed gate. Every lane of a gate
 * object has the same capacity; its state is the four keys of {@link CapacityScripts} (holders,
 * queue, waiters, and the gate-wide fence).
 */
final class LeaseQueue {
    /*
     * Implementation overview.
     *
     * 1. Representation. In Redis, per lane (the braces of {N}, the gate's name, keep every key of a
     *    gate in one cluster slot; the keyed gate's lane keys end in ":" + the encoded key):
     *      coro:gate:{N}:holders  ZSET  lease id -> lease expiry (ms, Redis TIME)
     *      coro:gate:{N}:queue    ZSET  waiter id -> ticket (FIFO order)
     *      coro:gate:{N}:waiters  ZSET  waiter id -> expiry of its place (ms, Redis TIME)
     *    and per gate:
     *      coro:gate:{N}:fence    STRING the sequence: tickets and fencing tokens of every lane,
     *                                    next = max(current + 1, TIME in microseconds)
     *      coro:gate:{N}:released pub/sub channel: the ids of the queued waiters of one lane that its
     *                                    free slots could admit now, told when a slot or place is freed
     *    A waiter's id is its lease id once admitted. Locally, per gate object: live (a LiveWaiters:
     *    id -> Waiter, every acquisition from its first dispatch until it ends); lanes (lane key ->
     *    Lane, while a live waiter uses it: a use count under the map's bin lock); per Lane, queued
     *    (ticket -> Waiter, the waiters with a place in the lane's Redis queue, in FIFO order).
     *    Waiter.state, guarded by the waiter's monitor (held only to read and set it, never across a
     *    round trip):
     *      NEW       its first ACQUIRE is being sent or is in flight
     *      QUEUED    Redis holds its place; it waits for a notice or the re-check
     *      ADMITTED  Redis holds its lease; its work runs (lost: a renewal found it gone)
     *      ENDED     cancelled, refused, failed or released: nothing of it should stay in Redis
     *
     * 2. Transitions (each Redis step is one script, atomic on the server):
     *      NEW -ACQUIRE new/try: admitted-> ADMITTED; enqueued-> QUEUED; refused (try)-> ENDED
     *      QUEUED -ACQUIRE queued (pump): admitted-> ADMITTED; not yet-> QUEUED; place gone-> ENDED
     *      ADMITTED -work ends-> ENDED, RELEASE (publishes the admissible heads of the lane's queue)
     *      NEW/QUEUED/ADMITTED-before-hand-over -cancel, close, failure-> ENDED, CANCEL
     *    ACQUIRE first reaps the lane: holders whose lease has passed, waiters whose place has passed
     *    (publishing the admissible heads if that freed anything). An id is admitted if it is queued
     *    at a rank below the free slots, or, new, if the queue is shorter than the free slots.
     *
     * 3. Decision points. Admission, refusal and queueing are decided inside the ACQUIRE script; the
     *    local state follows the reply. The hand-over to the waiting task is the completer's
     *    complete(): if the waiter was cancelled first, the lease is given back by CANCEL.
     *
     * 4. Invariants.
     *    I1 An id is dispatched to ACQUIRE only in state NEW or QUEUED (checked under its monitor).
     *    I2 A reply that finds its waiter ENDED sends CANCEL for the id: CANCEL removes the id from
     *       every key of its lane, so whatever order the scripts ran in on the server, the id ends
     *       with nothing.
     *    I3 Leases and places that no renewal reaches expire on the server's clock; every key has an
     *       expiry of twice the lease time after its last use, and a lane's sorted sets vanish when
     *       they are empty.
     *    I4 A lane's pump visits its local waiters in ticket order and stops at the first that is not
     *       admitted (a later ticket has a higher rank), or after an admission that took the last free
     *       slot.
     *    I5 A renewal covers every waiter whose first ACQUIRE was sent (NEW and dispatched, QUEUED,
     *       ADMITTED): a place or lease made by an ACQUIRE whose reply is slow to be handled here
     *       (a loaded JVM) is renewed all the same; a NEW waiter that a renewal finds gone is left to
     *       its ACQUIRE's reply.
     *    I7 A waiter is in its lane's queued map only while QUEUED: the enqueued reply puts it there
     *       after writing QUEUED, then reads the state again and takes it out if it has moved on (a
     *       cancel, close or failure whose own unqueue ran before the put found nothing; not an
     *       admission, which needs a pump to have found it in that map); one that moves on after that
     *       read finds it. Found by a cancel landing in that gap (queueLength one too many for good);
     *       LeaseQueueGapTest lands a cancel, a close and a failure there through queuedGapForTest.
     *    I6 A Lane is in lanes while a live waiter uses it (each waiter joins once, in enter, and
     *       leaves once, when forget removes it from live), so an idle key costs nothing locally.
     *
     * 5. Memory effects. Waiter fields are written under its monitor; the work reads the token after
     *    the completer's hand-over, which orders it. Lettuce completes futures on its I/O threads.
     *
     * 6. Progress and fairness. No thread waits: a waiter is a completer in two maps. FIFO by ticket
     *    per lane, across JVMs. Wake-ups: a channel message that names one of this gate object's live
     *    waiters (only the gate objects whose waiters can be admitted ask, so a release costs no
     *    refused round trips) pumps that waiter's lane; the re-check timer pumps every lane with
     *    waiters here (bounded loss); and such a message that raced with a waiter's enqueue (the
     *    lane's counter of messages naming ours is compared after the waiter is registered). A lane's
     *    pump is one pass at a time (a work-in-progress counter), one ACQUIRE in flight per pass.
     *
     * 7. Cancellation races. Cancel against the reply that admits: the state under the monitor decides;
     *    if the completer refuses the hand-over, its cancel action sends CANCEL (I2). Close against
     *    a new acquisition: the acquisition registers in live, then reads closed; close writes closed,
     *    then cancels everything in live; one of them sees the other (LiveWaiters, shared with the
     *    rate gate, does both sides).
     *
     * 8. Round trips. Admission at once: 1 (ACQUIRE). Admission after a wait: 2 (ACQUIRE new, then
     *    ACQUIRE queued after a notice naming it) plus the re-checks while nothing is freed (one per
     *    interval per lane with waiters here, for its first waiter). Release: 1 (RELEASE). Renewal:
     *    1 per third of the lease time for all the leases and places of this gate object together
     *    (up to RENEW_LANES lanes a round trip).
     *
     * 9. References: the local CapacityGate (P4215's capacity_gate); Kleppmann, "How to do
     *    distributed locking" (fencing tokens); Gray and Cheriton, "Leases" (1989).
     */

    /** The waiter's first ACQUIRE is being sent or is in flight. */
    private static final int NEW = 0;
    /** Redis holds the waiter's place in the queue. */
    private static final int QUEUED = 1;
    /** Redis holds the waiter's lease; its work runs. */
    private static final int ADMITTED = 2;
    /** Cancelled, refused, failed or released. */
    private static final int ENDED = 3;

    private static final String MODE_NEW = "new";
    private static final String MODE_TRY = "try";
    private static final String MODE_QUEUED = "queued";

    /** The most lanes one RENEW round trip carries (a keyed gate object may hold thousands). */
    private static final int RENEW_LANES = 256;

    private static final GateLink.Script ACQUIRE = new GateLink.Script(CapacityScripts.ACQUIRE);
    private static final GateLink.Script RELEASE = new GateLink.Script(CapacityScripts.RELEASE);
    private static final GateLink.Script CANCEL = new GateLink.Script(CapacityScripts.CANCEL);
    private static final GateLink.Script RENEW = new GateLink.Script(CapacityScripts.RENEW);

    private final String name;
    private final int capacity;
    private final boolean keyed;
    private final Duration leaseTime;
    private final long leaseMillis;
    private final Duration recheckInterval;
    private final Duration redisTimeout;
    private final Scheduler timers;
    private final String prefix;
    private final String channel;

    private final GateLink link;

    private final LiveWaiters<Waiter> live = new LiveWaiters<>(this::end);
    private final ConcurrentHashMap<String, Lane> lanes = new ConcurrentHashMap<>();
    /** How many waiters of this gate object hold a place in a Redis queue (the sum of the lanes'). */
    private final AtomicInteger queuedCount = new AtomicInteger();
    private final AtomicBoolean shutDown = new AtomicBoolean();
    /** When (System.nanoTime) the last renewal that succeeded was sent. */
    private volatile long lastRenewal = System.nanoTime();
    private volatile Cancellable renewTimer;
    private volatile Cancellable recheckTimer;
    /**
     * Test seam: when not null, run by the enqueued reply in the gap of I7, after it wrote QUEUED and
     * before it puts the waiter into its lane's queued map, on the thread that handles the reply, so
     * that a test can land a cancel, a close or a failure there. Null in production, where it costs
     * one plain read per enqueued reply. A test sets it before starting the waiter it aims at: the
     * dispatch of that waiter's ACQUIRE orders the write before the read.
     */
    Runnable queuedGapForTest;

    /**
     * Connects (a command connection and a pub/sub connection), subscribes to the gate's channel and
     * starts the renewal and re-check timers. Blocks until subscribed.
     *
     * @param keyed whether each key is a lane of its own ({@code false}: the whole gate is lane "")
     * @throws RedisGateException if Redis cannot be reached within the Redis timeout
     */
    LeaseQueue(GateSettings s, int capacity, boolean keyed) {
        this.name = s.name;
        this.capacity = capacity;
        this.keyed = keyed;
        this.leaseTime = s.leaseTime;
        this.leaseMillis = s.leaseTime.toMillis();
        this.recheckInterval = s.recheckInterval;
        this.redisTimeout = s.redisTimeout;
        this.timers = s.timers;
        this.prefix = "coro:gate:{" + name + "}:";
        this.channel = prefix + "released";
        this.link = new GateLink(s, channel, this::onNotice, this::maybeShutDown, ACQUIRE, RELEASE, CANCEL, RENEW);
        this.renewTimer = timers.schedule(this::renewTick, renewPeriod());
        this.recheckTimer = timers.schedule(this::recheckTick, recheckInterval);
    }

    // ---------------------------------------------------------------- doors

    /**
     * Returns the task that acquires a slot of {@code lane} (waiting, or only if free now when
     * {@code trying}); its value is the admitted waiter, whose lease {@link #run} releases.
     */
    Task<Waiter> door(String lane, boolean trying) {
        String mode = trying ? MODE_TRY : MODE_NEW;
        return Task.create(completer -> enter(completer, lane, mode));
    }

    /**
     * Returns the task that runs {@code door}, then the task {@code work} makes of the admission's
     * fencing token, under a scope that the loss of the lease cancels, and releases the lease when
     * that work completes on any channel, waiting (bounded by the Redis timeout) for Redis's answer.
     */
    <T> Task<T> run(Task<Waiter> door, LongFunction<? extends Task<T>> work) {
        return door.flatMap(w -> Scope.<T>scoped(scope -> {
            w.onLost(scope::cancel);
            return Objects.requireNonNull(work.apply(w.token), "withinFenced: the work function returned null");
        }).andFinally(Task.<Void>create(done -> release(w).whenComplete((removed, error) -> done.complete(null)))));
    }

    /** Ends every waiter of this gate object, cancelled; later acquisitions are cancelled; idempotent. */
    void close() {
        if (live.close()) {
            maybeShutDown();
        }
    }

    boolean isClosed() {
        return live.isClosed();
    }

    String name() {
        return name;
    }

    Duration leaseTime() {
        return leaseTime;
    }

    void addListener(WaitListener listener) {
        live.addListener(listener);
    }

    /** The waiters of this gate object with a place in a Redis queue: a snapshot. */
    int queueLength() {
        return queuedCount.get();
    }

    /** The lanes in use by this gate object's live waiters: a snapshot. */
    int activeLanes() {
        return lanes.size();
    }

    // ---------------------------------------------------------------- acquisition

    /** One admission queue in Redis, as this gate object sees it: its keys and its local waiters. */
    private final class Lane {
        final String key;
        /** holders, queue, waiters, fence: the KEYS of every script on this lane. */
        final String[] keys;
        final ConcurrentSkipListMap<Long, Waiter> queued = new ConcurrentSkipListMap<>();
        /** Work-in-progress counter of the pump: requests not yet covered by a pass. */
        final AtomicInteger pumpRequests = new AtomicInteger();
        /** How many notices naming one of this lane's waiters here it has received. */
        final AtomicLong noticeCount = new AtomicLong();
        /** The live waiters using this lane; guarded by the lanes map's bin lock (I6). */
        int users;

        Lane(String key) {
            this.key = key;
            String tail = keyed ? ":" + key : "";
            this.keys = new String[] {prefix + "holders" + tail, prefix + "queue" + tail,
                    prefix + "waiters" + tail, prefix + "fence"};
        }
    }

    /** One acquisition: its id (the lease id once admitted), its lane, its completer and its state. */
    static final class Waiter extends LiveWaiters.Entry<Waiter> {
        private final Lane lane;
        /** Guarded by this. */
        int state = NEW;
        /** Guarded by this: whether its first ACQUIRE was dispatched. */
        boolean dispatched;
        /** Guarded by this: whether a renewal found the lease gone. */
        boolean lost;
        /** Guarded by this: what to run when the lease is lost. */
        Runnable onLost;
        /** The ticket (QUEUED), 0 before. Written under the monitor, read without it. */
        volatile long ticket;
        /** The fencing token, set before the hand-over. */
        long token;
        /** The lane's notice count when its first ACQUIRE was sent. */
        long noticesAtDispatch;

        private Waiter(String id, Lane lane, Completer<Waiter> completer, boolean trying) {
            super(id, completer, trying);
            this.lane = lane;
        }

        synchronized int state() {
            return state;
        }

        /**
         * Whether a renewal is made for it: its lease or place is (or, its first ACQUIRE sent, may be
         * about to be) in Redis. A renewal sent after the first ACQUIRE runs after it on the server
         * (one connection), so it renews the place even while the reply is still on its way here.
         */
        synchronized boolean renewable() {
            return state == QUEUED || state == ADMITTED || (state == NEW && dispatched);
        }

        void onLost(Runnable action) {
            boolean now;
            synchronized (this) {
                onLost = action;
                now = lost;
            }
            if (now) {
                action.run();
            }
        }
    }

    private void enter(Completer<Waiter> completer, String laneKey, String mode) {
        Lane lane = lanes.compute(laneKey, (k, l) -> {
            Lane used = l != null ? l : new Lane(k);
            used.users++; // I6
            return used;
        });
        Waiter w = new Waiter(live.nextId(), lane, completer, MODE_TRY.equals(mode));
        if (!live.register(w)) { // closed: w ended (7)
            return;
        }
        synchronized (w) {
            if (w.state != NEW) {
                return; // cancelled before sending: nothing in Redis
            }
            w.dispatched = true;
            w.noticesAtDispatch = lane.noticeCount.get();
            dispatchAcquire(w, mode); // I1
        }
    }

    private void dispatchAcquire(Waiter w, String mode) {
        link.<List<Object>>eval(ACQUIRE, ScriptOutputType.MULTI, w.lane.keys, w.id, Integer.toString(capacity),
                        Long.toString(leaseMillis), mode, channel)
                .whenComplete((reply, error) -> {
                    boolean admittedOrGone = acquired(w, mode, reply, error);
                    if (MODE_QUEUED.equals(mode)) {
                        pumpContinue(w, admittedOrGone);
                    }
                });
    }

    /**
     * Handles an ACQUIRE reply. Returns whether a pump may go on to the next waiter: this one was
     * admitted and slots are left, or its place has gone; false if it still waits, took the last free
     * slot, or the round trip failed.
     */
    private boolean acquired(Waiter w, String mode, List<Object> reply, Throwable error) {
        if (error != null) {
            fail(w, "acquire", error);
            return false;
        }
        long kind = (Long) reply.get(0);
        if (kind == 1) {
            long token = Long.parseLong((String) reply.get(1));
            boolean slotsLeft = (Long) reply.get(2) > 0;
            boolean handOver;
            synchronized (w) {
                handOver = w.state == NEW || w.state == QUEUED;
                if (handOver) {
                    w.state = ADMITTED;
                    w.token = token;
                }
            }
            if (!handOver) {
                sendCancel(w); // I2
                return slotsLeft;
            }
            long ticket = w.ticket;
            if (ticket != 0) {
                unqueue(w);
            }
            if (w.completer.complete(w)) { // refused only if cancelled first: its cancel action sent CANCEL
                live.admitted(ticket == 0 ? 0 : System.nanoTime() - w.startNanos);
            }
            return slotsLeft;
        }
        if (kind == 0 && reply.size() == 2) { // enqueued
            long ticket = Long.parseLong((String) reply.get(1));
            boolean keep;
            synchronized (w) {
                keep = w.state == NEW;
                if (keep) {
                    w.state = QUEUED;
                    w.ticket = ticket;
                }
            }
            if (!keep) {
                sendCancel(w); // I2
                return false;
            }
            Runnable gap = queuedGapForTest;
            if (gap != null) {
                gap.run(); // a test's cancel, close or failure in the gap of I7
            }
            if (w.lane.queued.put(ticket, w) == null) {
                queuedCount.incrementAndGet();
            }
            if (w.state() != QUEUED) {
                unqueue(w); // I7: it ended after the state write above and before the put: its own unqueue found nothing
            }
            if (w.lane.noticeCount.get() != w.noticesAtDispatch) {
                requestPump(w.lane); // a notice came while the reply was on its way (6)
            }
            return false;
        }
        if (kind == 0) { // refused (try), or not yet (queued)
            if (MODE_TRY.equals(mode) && end(w, false)) {
                w.completer.cancel();
            }
            return false;
        }
        fail(w, "wait", new IllegalStateException("the waiter's place in the Redis queue expired"));
        return true;
    }

    /**
     * Ends {@code w} if it has not ended: forgets it and, if anything of it may be in Redis, sends
     * CANCEL. {@code byToken}: called as the completer's cancel action, which may find the waiter
     * admitted but not handed over. Returns whether this call ended it.
     */
    private boolean end(Waiter w, boolean byToken) {
        boolean send;
        synchronized (w) {
            int s = w.state;
            if (s == ENDED || (s == ADMITTED && !byToken)) {
                return false;
            }
            w.state = ENDED;
            send = w.dispatched;
        }
        if (send) {
            sendCancel(w); // before forget: the connection stays open while the round trip is in flight
        }
        forget(w);
        return true;
    }

    private void fail(Waiter w, String operation, Throwable error) {
        live.fail(w, () -> link.failure(operation, error));
    }

    private void unqueue(Waiter w) {
        if (w.lane.queued.remove(w.ticket, w)) {
            queuedCount.decrementAndGet();
        }
    }

    /** Drops {@code w} from this gate object's maps; the first call for it gives up its lane (I6). */
    private void forget(Waiter w) {
        if (live.remove(w)) {
            if (w.ticket != 0) {
                unqueue(w);
            }
            lanes.computeIfPresent(w.lane.key, (k, l) -> {
                assert l == w.lane : "a lane is replaced only after its last user left it"; // I6
                return --l.users == 0 ? null : l;
            });
        }
        maybeShutDown();
    }

    private void sendCancel(Waiter w) {
        link.eval(CANCEL, ScriptOutputType.INTEGER, w.lane.keys, w.id, channel, Integer.toString(capacity));
    }

    /**
     * Releases {@code w}'s lease: the cleanup of its work, which ends once Redis has answered (or
     * the Redis timeout has passed: the lease then expires by itself, which is all that can be done).
     */
    private CompletableFuture<Long> release(Waiter w) {
        synchronized (w) {
            w.state = ENDED;
        }
        CompletableFuture<Long> released = link.eval(RELEASE, ScriptOutputType.INTEGER, w.lane.keys, w.id, channel,
                Integer.toString(capacity)); // even if lost
        forget(w);
        return released;
    }

    private void leaseLost(Waiter w) {
        Runnable action;
        synchronized (w) {
            if (w.state != ADMITTED || w.lost) {
                return;
            }
            w.lost = true;
            action = w.onLost;
        }
        if (action != null) {
            action.run();
        }
    }

    // ---------------------------------------------------------------- wake-ups

    /**
     * A notice names the waiters of one lane that its free slots could admit: it matters here for
     * those that are this gate object's live waiters, whose lane it pumps (once per notice).
     */
    private void onNotice(String heads) {
        Lane pumped = null;
        String idPrefix = live.idPrefix();
        for (int at = heads.indexOf(idPrefix); at >= 0; at = heads.indexOf(idPrefix, at + 1)) {
            if (at == 0 || heads.charAt(at - 1) == ' ') {
                int end = heads.indexOf(' ', at);
                Waiter w = live.get(heads.substring(at, end < 0 ? heads.length() : end));
                if (w != null && w.lane != pumped) {
                    pumped = w.lane;
                    pumped.noticeCount.incrementAndGet();
                    requestPump(pumped);
                }
            }
        }
    }

    private void requestPump(Lane lane) {
        if (lane.pumpRequests.getAndIncrement() == 0) {
            pumpPass(lane, Long.MIN_VALUE);
        }
    }

    /** Sends ACQUIRE queued for the lane's first waiting waiter after {@code after}, or ends the pass (I4). */
    private void pumpPass(Lane lane, long after) {
        ConcurrentSkipListMap<Long, Waiter> queued = lane.queued;
        for (Map.Entry<Long, Waiter> e = queued.higherEntry(after); e != null; e = queued.higherEntry(e.getKey())) {
            Waiter w = e.getValue();
            synchronized (w) {
                if (w.state == QUEUED) {
                    dispatchAcquire(w, MODE_QUEUED); // I1
                    return;
                }
            }
        }
        pumpEnd(lane);
    }

    private void pumpContinue(Waiter w, boolean next) {
        if (next) {
            pumpPass(w.lane, w.ticket);
        } else {
            pumpEnd(w.lane);
        }
    }

    private void pumpEnd(Lane lane) {
        // every request so far is covered by the pass that ends; one more pass if any came during it
        if (lane.pumpRequests.getAndSet(0) > 1) {
            requestPump(lane);
        }
    }

    private void recheckTick() {
        if (shutDown.get()) {
            return;
        }
        for (Lane lane : lanes.values()) {
            if (!lane.queued.isEmpty()) {
                requestPump(lane);
            }
        }
        recheckTimer = timers.schedule(this::recheckTick, recheckInterval);
    }

    private Duration renewPeriod() {
        return Duration.ofMillis(Math.max(1, leaseMillis / 3));
    }

    /** Sends RENEW for every lease and place of this gate object, RENEW_LANES lanes a round trip. */
    private void renewTick() {
        if (shutDown.get()) {
            return;
        }
        Map<Lane, List<Waiter>> byLane = new LinkedHashMap<>();
        for (Waiter w : live.all()) {
            if (w.renewable()) {
                byLane.computeIfAbsent(w.lane, l -> new ArrayList<>()).add(w);
            }
        }
        long sent = System.nanoTime();
        if (byLane.isEmpty()) {
            lastRenewal = sent;
        }
        List<String> keys = new ArrayList<>();
        List<String> args = new ArrayList<>();
        List<Waiter> batch = new ArrayList<>();
        int lanesInBatch = 0;
        for (Map.Entry<Lane, List<Waiter>> e : byLane.entrySet()) {
            if (lanesInBatch == 0) {
                args.add(Long.toString(leaseMillis));
            }
            keys.addAll(List.of(e.getKey().keys));
            args.add(Integer.toString(e.getValue().size()));
            for (Waiter w : e.getValue()) {
                args.add(w.id);
            }
            batch.addAll(e.getValue());
            if (++lanesInBatch == RENEW_LANES) {
                sendRenew(sent, keys, args, batch);
                keys = new ArrayList<>();
                args = new ArrayList<>();
                batch = new ArrayList<>();
                lanesInBatch = 0;
            }
        }
        if (lanesInBatch > 0) {
            sendRenew(sent, keys, args, batch);
        }
        renewTimer = timers.schedule(this::renewTick, renewPeriod());
    }

    private void sendRenew(long sent, List<String> keys, List<String> args, List<Waiter> batch) {
        link.<List<Object>>eval(RENEW, ScriptOutputType.MULTI, keys.toArray(String[]::new), args.toArray(String[]::new))
                .whenComplete((gone, error) -> renewed(sent, batch, gone, error));
    }

    private void renewed(long sent, List<Waiter> batch, List<Object> gone, Throwable error) {
        if (error == null) {
            if (sent - lastRenewal > 0) {
                lastRenewal = sent;
            }
            for (Object id : gone) {
                Waiter w = live.get((String) id);
                int s = w == null ? ENDED : w.state();
                if (s == ADMITTED) {
                    leaseLost(w);
                } else if (s == QUEUED) {
                    fail(w, "wait", new IllegalStateException("the waiter's place in the Redis queue expired"));
                } // NEW: its ACQUIRE's reply decides (a refused try, or a reply not yet handled); ENDED: done
            }
            return;
        }
        boolean leasesLapsed = System.nanoTime() - lastRenewal >= TimeUnit.MILLISECONDS.toNanos(leaseMillis);
        for (Waiter w : batch) {
            int s = w.state();
            if (s == QUEUED) {
                fail(w, "wait", error); // a wait fails on the first renewal made for it that gets no answer
            } else if (s == ADMITTED && leasesLapsed) {
                leaseLost(w); // no renewal has reached Redis for a whole lease: presume it expired
            }
        }
    }

    // ---------------------------------------------------------------- Redis

    private void maybeShutDown() {
        if (live.closedAndDrained() && link.idle() && shutDown.compareAndSet(false, true)) {
            stop();
            link.closeAsync();
        }
    }

    private void stop() {
        Cancellable t = renewTimer;
        if (t != null) {
            t.cancel();
        }
        t = recheckTimer;
        if (t != null) {
            t.cancel();
        }
    }

    /**
     * Test hook: acts as a JVM that dies. Stops renewing and re-checking and drops both connections
     * at once, without releasing or cancelling anything; leases and places left in Redis expire.
     */
    void crash() {
        shutDown.set(true);
        stop();
        link.closeNow();
    }
}
