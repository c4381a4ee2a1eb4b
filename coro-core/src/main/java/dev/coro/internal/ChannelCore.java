package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.CancellationException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The hand-off under every channel: elements pass from senders to receivers through a buffer of a
 * capacity kind (rendezvous, buffered, unlimited, conflated), waiting senders and receivers are
 * queued in arrival order, and one owner at a time decides, as in the {@link AdmissionEngine}: the
 * engine admits waiters of one queue against a rule; a channel pairs the waiters of two queues and
 * moves an element with each pairing, so it is the engine's sibling, built from the same parts (the
 * {@link WaitQueue} intakes, the {@link WaitOrder} lists, the ownership protocol, the trampoline).
 *
 * <p>Elements are opaque, non-null objects. All public methods are thread-safe; see part 6 for the
 * one path that may wait for another thread.
 */
public final class ChannelCore implements WaitNode.Departures, WaitSubject {
    /* Implementation overview.
     *
     * 1. Representation.
     *    sendIntake, receiveIntake (WaitQueue, OPEN for ever): lock-free stacks of arriving senders
     *      and receivers that found the decision owned by another thread (a waiter that owns at once,
     *      with nobody queued ahead of it, goes straight into its list: enterOwned). A sender's node carries its element as its tag (written before the push);
     *      a receiver's tag is unused. A TryNode (trySend, tryReceive that met a busy owner) is a
     *      node the owner decides at once, never queues.
     *    owner (volatile int): 0 or 1; whoever CASes it 0 -> 1 owns every decision; the state below is
     *      plain and touched by the owner only.
     *    buffer (ArrayDeque, owner; rendezvous, unlimited, conflated): the elements sent and not yet
     *      received, oldest first. Its size is at most the capacity, plus the elements "held" (part
     *      7): a rendezvous hand-off whose send completed while its receiver was cancelled at the same
     *      instant keeps the element here for the next receiver.
     *    lane (ChannelLane, buffered channels of up to LANE_MAX_CAPACITY only, else null): the buffer
     *      of a buffered channel, a ring of capacity cells allocated whole, and its fast lane (part 10). Its SHUT bit says who may claim cells:
     *      anyone while it is open, the owner only while it is shut.
     *    senders, receivers (WaitOrder.arrival, owner): the taken waiters, oldest first; settled ones
     *      stay until met or purged (WaitOrder's purging).
     *    closeRequest (volatile int): NONE, CLOSE or CANCEL, only ever raised; closeCause (volatile):
     *      close(cause)'s cause, written before closeRequest. applied (owner): the request the owner
     *      has applied. terminal (volatile boolean): published by the owner once a receive can only
     *      end (closed and drained, or cancelled); never reset.
     *    pendingDepartures (volatile int): a queued waiter departed (its node's hook); the owner
     *      purges its lists when they are crowded.
     *    undelivered (owner): elements dropped (cancel, a conflated replacement) to hand to the
     *      callback once ownership is released.
     *
     * 2. Transitions (owner, in one pass: departures, arrivals, close, then match):
     *    take senders: each taken node goes to the senders list; once a close is applied, a taken
     *      sender is rejected (ClosedForSend) instead; a try-send node is set aside (part 6).
     *    take receivers: each goes to the receivers list; a try-receive node is set aside.
     *    apply close: applied = request. CANCEL: the buffer is dropped (to undelivered), every
     *      waiting sender and receiver is abandoned (completes cancelled).
     *    match, while a live receiver r waits (a settled one is dropped; one whose token fired is
     *      abandoned, never handed an element):
     *      buffer not empty: r.admit(first element); if it wins, the element leaves the buffer and
     *        the oldest live waiting sender's element moves in (its send completes: fill); if not,
     *        r departed: drop it, the element stays first.
     *      else a live sender s waits (rendezvous): s.admit() first (the send is done: the element
     *        is delivered to the channel), then r.admit(element); if r lost to its cancellation, the
     *        element is held in the buffer for the next receiver (part 7). If s lost, s is dropped.
     *      else if closed and nothing is left: r ends (admitted with null, or rejected with the close's cause, or
     *        abandoned if cancelled); terminal is published.
     *      With no receiver, fill: while the buffer has room, the oldest live sender's admit CAS moves
     *      its element in (conflated: replaces the element there, which goes to undelivered).
     *    try nodes set aside: decided last in the pass, in arrival order, on the matched state
     *      (concurrent with the waiters taken with them, so deciding after them is linearizable).
     *    The fast paths (trySend, tryReceive, the tasks' run-loop fast path) own, run the pass, then
     *      decide the one operation on the settled state: C1 and C2 below make that decision FIFO.
     *      A buffered channel's fast paths first try the lane (part 10), and own only if it is shut;
     *      the tasks' fast paths own only if the readiness hint says they may succeed (part 11).
     *    shut the lane (buffered): match shuts it before deciding anything while a waiter is listed,
     *      and applying a close shuts it for good; release opens it again when no live waiter is left
     *      and no close is applied (L1).
     *
     * 3. Linearization points. A send or receive decided under ownership: the owner's decision (its
     *    buffer update, or the admit CAS of the waiter it pairs with). A queued waiter: its push is
     *    its place in line; its completion is the admit CAS the owner makes on its node. close and
     *    cancel: the write of closeRequest; a send that read no request before it and pushes is
     *    accepted if the owner takes it before applying the request (it is concurrent with close),
     *    rejected if after; receivers see the end only once the request is applied and every
     *    accepted send is received, so no element follows the end.
     *
     * 4. Invariants (after every pass, under ownership).
     *    C1: a live receiver waits only if the buffer is empty and no live sender waits.
     *    C2: a live sender waits only if the buffer is full (size >= capacity) and no live receiver
     *        waits; unlimited and conflated channels never keep a sender waiting.
     *    C3: every element leaves exactly once: received (an admit CAS that won), or handed to the
     *        undelivered callback (dropped by cancel, replaced in a conflated channel). A send whose
     *        admit CAS lost never put its element in.
     *    C4: FIFO: elements leave the buffer in the order they entered; senders fill it and
     *        receivers are served in arrival order; a try operation decides after every waiter taken
     *        before it.
     *    C5: once terminal, it stays so; after CANCEL is applied, no element is ever delivered.
     *    L1 (buffered): while a live waiter is listed, or a close is applied, the lane is shut: only
     *        the owner claims cells then, so no lane operation overtakes a waiter (FIFO), puts an
     *        element beside a waiting receiver (C1) or takes one that a waiting sender should follow
     *        into the room it leaves (C2).
     *
     * 5. Memory ordering. As the engine's part 5: owner is volatile, the CAS 0 -> 1 acquires and the
     *    write owner = 0 releases, so the plain state needs nothing more. Releasing, the owner writes
     *    owner = 0 and then reads both intakes, pendingDepartures and closeRequest; a requester
     *    writes first (push CAS, getAndAdd, closeRequest write) and CASes owner second. Dekker over
     *    volatile accesses: either the requester owns and drains, or the releasing owner sees the
     *    request and owns again. An element (a sender's tag) is written before its push (release)
     *    and read after the take (acquire); a receiver reads its element from its own result word,
     *    published by the admit CAS (AsyncStep part 5). The lane: its own part 5 (a cell's sequence
     *    publishes its element); the owner's shut CAS and the lane's claim CASes act on the same two
     *    counters, so every claim is ordered before or after the shut, and a claim before it is seen
     *    by the owner (it waits for the claimer's publish, ChannelLane part 6).
     *
     * 6. Progress. send, receive, close and cancel are lock-free: a thread that cannot own leaves its
     *    request (a pushed node, a flag) to the owner and returns (a task suspends). trySend and
     *    tryReceive must answer now: when another thread owns at that instant, they push a TryNode
     *    and wait until an owner (the current one, or themselves once it lets go) decides it. That
     *    wait is a hand-over of the decision (bounded by one owner's pass), never a wait for room or
     *    an element. The lane's one spin (ChannelLane part 6) is the other: a thread that reaches a
     *    cell another thread claimed waits for that thread's next two stores. With these two
     *    exceptions, a thread never waits for another.
     *
     * 7. Cancellation races. A queued waiter whose token fires settles its own node (one CAS) and
     *    departs: the intake unlinks it, or the owner drops it when met. An owner's admit CAS that
     *    loses to the cancellation: a receiver gets nothing (the element stays first: C3), a sender
     *    delivered nothing (its element never entered). A rendezvous pairs two waiters, which two
     *    CASes decide: the sender's first, so a send that completed has delivered; if the receiver
     *    then lost, its element is held for the next receiver, never lost and never doubled. A
     *    select clause is a node whose admit first claims its select (Select): a losing clause is a
     *    departed waiter, so a losing receive clause consumed nothing and a losing send clause
     *    delivered nothing.
     *
     * 8. Resumption. Every owner section runs inside the thread's trampoline (Trampoline.enter /
     *    leave): the waiters it settles resume inline through it only after the section has released
     *    ownership, and a chain of a million hand-offs between two tasks on one thread runs in a loop,
     *    not on the stack. The undelivered callback runs after ownership is released too.
     *    In a channel with a buffer (every kind but rendezvous), a waiter admitted on behalf of
     *    another operation (a receive that freed room resumes the sender it lets in; a send resumes
     *    the receiver it hands its element to) resumes through its scheduler's queue
     *    (WaitNode.admitQueued), not inline: the waker goes on, and the waiter runs after it or on
     *    another worker. Inline, a pool worker that frees one slot would run the producer, which
     *    fills that one slot and waits again: producer and consumer took turns on one thread, one
     *    element and one suspension each. A rendezvous waker waits next anyway (ping-pong), so it
     *    switches to the waiter at once, as before.
     *
     * 9. References. Go's channels (hchan: a buffer, a queue of waiting senders and one of waiting
     *    receivers, one decision at a time) and kotlinx.coroutines' BufferedChannel (Koval, Alistarh
     *    and Elizarov, PPoPP 2023) for the semantics of close, cancel, onUndeliveredElement and
     *    select; the ownership protocol is the admission engine's (its parts 5 and 8).
     *
     * 10. The lane of a buffered channel (as the permit lane is the engine's, AdmissionEngine part 9).
     *    While nobody waits, a send claims a free cell of the ring and a receive a published one,
     *    each with one CAS on its own counter (ChannelLane), with no ownership: the common case of a
     *    producer and a consumer that keep up with each other. Only the transitions to and from
     *    waiting go through the owner, so queueing, hand-off, cancellation, close and cancel stay the
     *    mechanism above.
     *    Transitions. lane send: closeRequest read NONE, then a claim: SENT; no free cell: FULL (the
     *      task then suspends and enters its node, which the owner decides); shut: the owner path.
     *      lane receive: a published cell: the element; none claimed: EMPTY (the task enters its
     *      node); shut: the owner path. The owner shuts the lane (CAS on both counters) in match
     *      whenever a waiter is listed, before it looks at the ring (L1); from then on it alone claims
     *      cells, with the same operations; a claim made before the shut is in the ring, and the
     *      owner waits for its publish when it reaches the cell. Release opens the lane when no live
     *      waiter is left and no close is applied.
     *    Linearization points. A lane send or receive: its claim CAS; FULL or EMPTY: the read that
     *      finds no cell (ChannelLane part 3); a lane receive never meets a waiting sender, nor a lane
     *      send a waiting receiver: while one is listed the lane is shut (L1), and a waiter listed
     *      after a claim was decided after it. A lane send that read no close request before the
     *      close was applied is concurrent with the close and accepted (as a pushed send, part 3):
     *      applying the close shuts the lane and every claim made before is received before the end
     *      (a receiver waits for a claimed cell's publish), or dropped by a cancel.
     *    Why waiters stay correct. A waiter is only ever decided by the owner with the lane shut, on
     *      the ring as the claims before the shut left it: a receiver waits only on an empty ring
     *      (C1), a sender only on a full one (C2); later sends and receives go through the owner in
     *      arrival order (C4) until no waiter is left.
     *
     * 11. The readiness hint (ready: HINT_RECEIVERS, HINT_SENDERS, HINT_ELEMENTS). A waiting send or
     *    receive tries its run-loop fast path (sendNow, receiveNow) before it pays for a suspension;
     *    where the lane cannot answer (no lane, or a shut one), that try used to own the channel only
     *    to learn that the answer is "wait", and the waiting door then owned it again: two owner
     *    sections for one wait, the common case of ping-pong over rendezvous channels. The owner now
     *    leaves a hint at every release (before owner = 0): whether a receiver is listed, a sender
     *    is listed, an element is buffered (a listed node may have departed since: a stale "yes").
     *    sendNow answers FULL without owning when no receiver was listed and the channel has no
     *    buffer (rendezvous) or a sender was listed (full, or FIFO puts this send behind it);
     *    receiveNow answers EMPTY when no sender was listed, no element buffered and no close
     *    requested. Either answer only sends the operation to its waiting door (enterSend,
     *    enterReceive), which decides under ownership as before: a stale hint costs one suspension's
     *    setup (the door then pairs the waiter at once), never a wrong decision, so the hint is not
     *    part of any invariant or linearization point, and trySend and tryReceive (which must
     *    answer) never read it. Memory: opaque writes by the owner, opaque reads by anyone; a reader
     *    needs no ordering with the state it summarizes, because it acts on nothing but the choice
     *    of door.
     *
     * 12. End watchers (endWatchers: a SignalList, made by the first watcher's CAS from null). A
     *    reader that must not take an element (a Flow subscription without demand) still has to
     *    learn that the channel ended, closed and drained or cancelled (Reactive Streams rule 1.5:
     *    onComplete needs no demand). The owner makes terminal true once (becameTerminal), then
     *    fires the list if it exists; watchEnd makes or finds the list, adds the node, then reads
     *    terminal and fires the list itself if it is set. Dekker over volatiles (terminal write,
     *    endWatchers read) against (endWatchers CAS and the node's add, terminal read): one side
     *    sees the other, so a watched end always fires (the list fires once; a second fire does
     *    nothing). The owner ends the channel as soon as a close finds it drained, and when a
     *    receive takes the last element of a closed channel (endIfDrained), so that a watcher
     *    holding no demand learns of the end without asking for more. onFire runs in the owner
     *    section, like an admission: a watcher's wake-up only
     *    resumes its task through its scheduler (or the owner's trampoline), never re-enters here.
     *    Regression: a subscription that had received all it asked for slept through the close
     *    that followed (FlowsTest.aCloseAfterTheDemandIsMetCompletesTheSubscriber). Model-checked by
     *    ChannelEndWatchLincheckTest (a watch racing the end) and FlowSubscriptionLincheckTest.
     *
     * 13. A receive that would wait looks again first (receiveSoon; buffered channels with a lane).
     *    Measured on the 1P1C throughput benchmark (2 workers, buffered(64)): a consumer faster
     *    than its producer empties the buffer, waits, and is woken by the next send through the
     *    scheduler's queue; the idle worker steals it, it takes the few elements sent meanwhile and
     *    waits again (measured: one wait per 15 to 70 elements), and the two workers take turns
     *    idling. A plain re-poll does not cure it: a consumer that keeps up takes one element at a
     *    time from the other core, and every element then crosses between the caches (slower still,
     *    200 to 300 ns an element against 140). So receiveSoon, called by a receive's fast path once
     *    receiveNow answered EMPTY, looks at the open lane up to `polls` times, a pause apart that
     *    doubles from SOON_FIRST_PAUSE to SOON_MAX_PAUSE onSpinWait calls (with 8 looks, 376 calls in
     *    all, some microseconds), and takes an element only once half the buffer is filled,
     *    or at its last look: the producer fills a batch while the consumer waits on its own core,
     *    and the batch crosses at once. The channel layer passes polls > 0 only on a worker of a
     *    pool with other workers, where a sender may be running now; never on one worker, an
     *    event loop or a plain thread, where nothing could send while it spins.
     *    Correctness: each look is a lane poll (part 10's linearization points) or, once the lane
     *    is shut or a close is requested, receiveNow; so it decides exactly as a tryReceive
     *    repeated before the wait would, takes nothing a listed waiter is owed (L1: the lane is
     *    shut while one is listed), and EMPTY still sends the receive to its waiting door, which
     *    decides under ownership. It takes no element it does not return (C3). Progress: bounded
     *    (polls looks); the task's cancellation is seen at the door, at most that bound later.
     *    The cost where it cannot pay (a producer that stopped, or runs on this worker's queue):
     *    the bound, once per SOON_SKIPS_AFTER_MISS + 1 waits: looks that found nothing make the
     *    next SOON_SKIPS_AFTER_MISS waits go to their door at once (soonSkips, a plain hint: a racy
     *    read or write only moves a wait between looking and waiting, both correct). So a channel
     *    whose senders are idle, or many consumers of quiet channels, do not burn a worker's time.
     *    Tested by ChannelCoreTest (receiveSoon*, afterLooksThatFoundNothing...), model-checked by
     *    the receiveSoon operation of ChannelLincheck (BufferedChannelLaneLincheckTest's scenarios).
     */

    /** The capacity of a rendezvous channel: a send waits for its receiver. */
    public static final int RENDEZVOUS = 0;
    /** The capacity of an unlimited channel: a send never waits. */
    public static final int UNLIMITED = Integer.MAX_VALUE;
    /** The capacity of a conflated channel: one element, replaced by each send; a send never waits. */
    public static final int CONFLATED = -1;

    /**
     * {@link #receiveNow()}'s answer once the channel is closed (without a cause) and drained; a
     * queued receiver is admitted with null then (elements are never null).
     */
    public static final Object END = new Marker("END");
    /** {@link #tryReceive()}'s answer when no element can be taken now. */
    public static final Object EMPTY = new Marker("EMPTY");

    /** {@link #trySend}'s answers. */
    public static final int SENT = 0, FULL = 1, CLOSED = 2;

    private static final int NONE = 0, CLOSE = 1, CANCEL = 2;

    /** A {@link #ready} bit: a receiver was listed (it may have departed since). */
    static final int HINT_RECEIVERS = 1;
    /** A {@link #ready} bit: a sender was listed (it may have departed since). */
    static final int HINT_SENDERS = 2;
    /** A {@link #ready} bit: the buffer held an element. */
    static final int HINT_ELEMENTS = 4;

    /**
     * After looks that found nothing, the waits of this channel that skip their looks (part 13): a
     * channel whose senders are idle pays the spin once per this many waits plus one.
     */
    static final int SOON_SKIPS_AFTER_MISS = 15;

    /** {@link #receiveSoon}'s first pause, in {@link Thread#onSpinWait()} calls (part 13). */
    static final int SOON_FIRST_PAUSE = 8;
    /** {@link #receiveSoon}'s longest pause: its pauses double up to it (part 13). */
    static final int SOON_MAX_PAUSE = 64;

    /**
     * The largest buffered channel with a lane (part 10): its ring is allocated whole, 12 bytes a
     * cell, when the channel is made; a larger one keeps its elements in the owner's deque, which
     * grows with what is buffered.
     */
    static final int LANE_MAX_CAPACITY = 4096;

    private final int capacity;
    private final Consumer<Object> onUndelivered;
    private final Function<Throwable, RuntimeException> closedForSend;
    private final WaitQueue sendIntake = new WaitQueue(AdmissionEngine.OPEN, this::waiterDeparted);
    private final WaitQueue receiveIntake = new WaitQueue(AdmissionEngine.OPEN, this::waiterDeparted);
    /** For the task dump only ({@link #describedAs}): the channel this core serves, or null. */
    private Object channel;
    private volatile int owner;
    private volatile int pendingDepartures;
    private volatile int closeRequest;
    private volatile Throwable closeCause;
    /** The cause a send sees once the channel is cancelled; written before the CANCEL request. */
    private volatile Throwable cancelCause;
    private volatile boolean terminal;
    /** Fired once {@link #terminal} is set (part 12); null until the first watcher. */
    private volatile SignalList endWatchers;
    /**
     * The readiness hint (part 11): {@link #HINT_RECEIVERS}, {@link #HINT_SENDERS} and
     * {@link #HINT_ELEMENTS} as the owner left the channel at its last release; written opaque by the
     * owner, read opaque by the waiting operations' fast paths, which trust it only to skip a
     * decision (a stale hint costs a wait's setup, never a wrong answer).
     */
    private int ready;

    /** A buffered channel's buffer and fast lane (part 10), or null (the other kinds use buffer). */
    private final ChannelLane lane;

    // owner only
    private final ArrayDeque<Object> buffer = new ArrayDeque<>();
    private final WaitOrder senders = WaitOrder.arrival();
    private final WaitOrder receivers = WaitOrder.arrival();
    private int applied;
    /** Owner only: the passes run so far (a count for white-box tests of part 11; never reset). */
    private long passes;
    /**
     * Owner only: the elements ever held in a rendezvous channel's buffer after a lost pairing (part
     * 7), the only way one gets there; for {@link #checkQuiescent}'s bound.
     */
    private long held;
    private ArrayList<Object> undelivered;
    private Thread ownerThread; // kept only when assertions are enabled

    /**
     * Creates a channel's core.
     *
     * @param capacity {@link #RENDEZVOUS}, a positive buffer size, {@link #UNLIMITED} or
     *     {@link #CONFLATED}
     * @param onUndelivered receives every element that was sent but will never be received, or null
     * @param closedForSend makes the exception a send to a closed channel fails with, from
     *     {@link #sendFailureCause()}
     * @throws IllegalArgumentException if {@code capacity} is below {@link #CONFLATED}
     */
    public ChannelCore(int capacity, Consumer<Object> onUndelivered,
            Function<Throwable, RuntimeException> closedForSend) {
        if (capacity < CONFLATED) {
            throw new IllegalArgumentException("capacity must be RENDEZVOUS (0), positive, UNLIMITED or CONFLATED, got "
                    + capacity);
        }
        this.capacity = capacity;
        this.lane = capacity > 0 && capacity <= LANE_MAX_CAPACITY ? new ChannelLane(capacity) : null;
        this.onUndelivered = onUndelivered;
        this.closedForSend = closedForSend;
    }

    /**
     * Names the channel this core serves, for the task dump ({@link WaitSubject}): its waiting
     * senders and receivers are listed as waiting on {@code channel}. Call it while constructing the
     * channel, before the core is shared.
     *
     * @param channel the channel
     */
    public void describedAs(Object channel) {
        this.channel = channel;
        sendIntake.describedAs("CHANNEL_SEND", channel);
        receiveIntake.describedAs("CHANNEL_RECEIVE", channel);
    }

    /** A waiting sender carries its element as its tag (never null); a receiver has none. */
    @Override
    public String waitKind(WaitNode node) {
        return node.tag() != null ? "CHANNEL_SEND" : "CHANNEL_RECEIVE";
    }

    @Override
    public String waitDescription(WaitNode node) {
        return WaitSubject.describe(channel == null ? this : channel);
    }

    // ---- operations ----

    /**
     * Sends {@code element} if that needs no wait: hands it to a waiting receiver or puts it in the
     * buffer.
     *
     * @param element the element, not null
     * @return {@link #SENT}, {@link #FULL} (a send would wait) or {@link #CLOSED}
     */
    public int trySend(Object element) {
        if (closeRequest != NONE) {
            return CLOSED;
        }
        if (lane != null) {
            Object r = lane.offer(element, false); // part 10: no ownership while nobody waits
            if (r != ChannelLane.LANE_SHUT) {
                return r == ChannelLane.ROOM ? SENT : FULL;
            }
        }
        if (tryOwn()) {
            return ownedSend(element);
        }
        TryNode node = new TryNode(true);
        node.tag(element);
        sendIntake.push(node);
        return (Integer) node.await(this);
    }

    /**
     * Receives an element if that needs no wait: the oldest buffered one, or a waiting sender's.
     *
     * @return the element, or {@link #EMPTY}
     */
    public Object tryReceive() {
        if (lane != null) {
            Object e = lane.poll(false); // part 10
            if (e != ChannelLane.LANE_SHUT) {
                return e == null ? EMPTY : e;
            }
        }
        if (tryOwn()) {
            return ownedReceive(false);
        }
        TryNode node = new TryNode(false);
        receiveIntake.push(node);
        return node.await(this);
    }

    /**
     * A waiting send's run-loop fast path: as {@link #trySend}, but declines (FULL) instead of
     * waiting when another thread owns at this instant, and without owning when the readiness hint
     * says it would wait (part 11); the caller then {@linkplain #enterSend enters} its node, which
     * decides.
     *
     * @param element the element
     * @return {@link #SENT}, {@link #FULL} or {@link #CLOSED}
     */
    public int sendNow(Object element) {
        if (closeRequest != NONE) {
            return CLOSED;
        }
        if (lane != null) {
            Object r = lane.offer(element, false); // part 10
            if (r != ChannelLane.LANE_SHUT) {
                return r == ChannelLane.ROOM ? SENT : FULL;
            }
        }
        int h = readyOpaque();
        if ((h & HINT_RECEIVERS) == 0 && (capacity == RENDEZVOUS || (h & HINT_SENDERS) != 0)) {
            return FULL; // part 11: nobody to hand it to, and no room (or a sender ahead): the door decides
        }
        if (sendIntake.hasWaiters() || !tryOwn()) {
            return FULL;
        }
        return ownedSend(element);
    }

    /**
     * A waiting receive's run-loop fast path: an element now, {@link #END} if the channel is closed
     * and drained, or {@link #EMPTY} (the caller then {@linkplain #enterReceive enters} its node; also
     * when another thread owns at this instant, when the readiness hint says it would wait (part
     * 11), or the channel ended with a cause or was cancelled).
     *
     * @return the element, {@link #END} or {@link #EMPTY}
     */
    public Object receiveNow() {
        if (terminal) {
            return closeCause == null && closeRequest == CLOSE ? END : EMPTY;
        }
        if (lane != null) {
            Object e = lane.poll(false); // part 10
            if (e != ChannelLane.LANE_SHUT) {
                return e == null ? EMPTY : e;
            }
        }
        if ((readyOpaque() & (HINT_SENDERS | HINT_ELEMENTS)) == 0 && closeRequest == NONE) {
            return EMPTY; // part 11: no element and no sender at the last release: the door decides
        }
        if (receiveIntake.hasWaiters() || !tryOwn()) {
            return EMPTY;
        }
        return ownedReceive(true);
    }

    /**
     * Part 13's hint: how many of the next waits skip their looks, set after looks that found
     * nothing. Plain and racy on purpose: it only chooses between looking and going to the door at
     * once, both correct, so a lost or stale write costs at most a spin or a wake-up.
     */
    private int soonSkips;

    /**
     * Whether this is a buffered channel with a lane (part 10), where {@link #receiveSoon} can wait
     * for a batch.
     *
     * @return whether the channel has a lane
     */
    public boolean hasLane() {
        return lane != null;
    }

    /**
     * A receive that {@link #receiveNow()} found empty, before it waits (part 13): up to
     * {@code polls} looks at the open lane, a growing pause apart ({@link #SOON_FIRST_PAUSE} to
     * {@link #SOON_MAX_PAUSE} {@link Thread#onSpinWait()} calls), each taking an element only once
     * half the buffer is filled (or at the last look), so that senders running on other threads at
     * this instant hand over a batch instead of one element at a time, and the receive needs no
     * suspension and no wake-up. As soon as the lane is shut (a waiter is listed) or a close is
     * requested, it decides as {@link #receiveNow()} does.
     *
     * @param polls the most looks (0: none; the answer is then {@link #EMPTY})
     * @return an element, {@link #END} or {@link #EMPTY} (the caller then enters its node)
     */
    public Object receiveSoon(int polls) {
        ChannelLane l = lane;
        if (l == null || polls <= 0) {
            return EMPTY;
        }
        int skips = soonSkips;
        if (skips > 0) { // the last looks found nothing: this wait goes to its door at once
            soonSkips = skips - 1;
            return EMPTY;
        }
        long batch = Math.max(1, capacity / 2);
        int pause = SOON_FIRST_PAUSE;
        for (int look = 1; look <= polls; look++) {
            for (int k = 0; k < pause; k++) {
                Thread.onSpinWait(); // part 13's bounded spin
            }
            pause = Math.min(pause << 1, SOON_MAX_PAUSE);
            if (l.isShut() || closeRequest != NONE) {
                return receiveNow(); // a waiter is listed (FIFO: L1) or the channel closes: the usual door
            }
            if (look < polls && l.size() < batch) {
                continue; // a batch is still gathering
            }
            Object e = l.poll(false);
            if (e == ChannelLane.LANE_SHUT) {
                return receiveNow();
            }
            if (e != null) {
                return e;
            }
        }
        soonSkips = SOON_SKIPS_AFTER_MISS; // nobody sent while this one looked: spare the next waits
        return EMPTY;
    }

    /**
     * Queues a sender: {@code node} is admitted (with null) once its element is in the channel,
     * rejected if the channel is closed, abandoned if it is cancelled.
     *
     * @param node the waiter (a task's step or a select clause)
     * @param element its element, not null
     */
    public void enterSend(WaitNode node, Object element) {
        if (closeRequest != NONE) {
            node.reject(closedForSend.apply(sendFailureCause()));
            return;
        }
        node.tag(element); // published by the push (or by ownership, below)
        if (!sendIntake.hasWaiters() && tryOwn()) {
            enterOwned(node, senders); // nobody queued ahead: straight into the list, no push
            return;
        }
        sendIntake.push(node);
        tryOwnAndDrain();
    }

    /**
     * Queues a receiver: {@code node} is admitted with an element, or with null once the
     * channel is closed and drained, rejected with the close's cause, or abandoned if the channel is
     * cancelled.
     *
     * @param node the waiter (a task's step or a select clause)
     */
    public void enterReceive(WaitNode node) {
        if (!receiveIntake.hasWaiters() && tryOwn()) {
            enterOwned(node, receivers); // nobody queued ahead: straight into the list, no push
            return;
        }
        receiveIntake.push(node);
        tryOwnAndDrain();
    }

    /**
     * Owner only: queues {@code node} in {@code list} directly (after the pass has taken every
     * request queued before it), matches, and releases. A sender taken once a close is applied is
     * rejected, as from the intake.
     */
    private void enterOwned(WaitNode node, WaitOrder list) {
        Trampoline t = Trampoline.enter();
        ArrayList<Object> dropped;
        try {
            pass();
            if (list == senders && applied != NONE) {
                node.reject(closedForSend.apply(sendFailureCause()));
            } else {
                list.add(node);
                node.cancelInto(this); // its departure reaches departed(node); at once if it has departed
                match();
            }
            dropped = release();
        } finally {
            Trampoline.leave(t);
        }
        deliver(dropped);
    }

    /**
     * A waiter queued directly in a list departed (its node's hook): the owner purges its lists
     * when they are crowded. Called once per node, on the departing thread.
     *
     * @param node the node
     */
    @Override
    public void departed(WaitNode node) {
        waiterDeparted(node);
    }

    /**
     * Closes for sending: later sends fail, receivers take what was sent, then end ({@link #END},
     * or rejected with {@code cause}). Idempotent: a second close (or a close after cancel) does
     * nothing.
     *
     * @param cause what receivers fail with once the channel is drained, or null for a plain end
     * @return whether this call closed the channel
     */
    public boolean close(Throwable cause) {
        for (;;) {
            int r = closeRequest;
            if (r != NONE) {
                return false;
            }
            closeCause = cause; // before the request that publishes it (only the winner's stays)
            if (CLOSE_REQUEST.compareAndSet(this, NONE, CLOSE)) {
                tryOwnAndDrain();
                return true;
            }
        }
    }

    /**
     * Cancels: the buffer is dropped (each element to the undelivered callback), waiting senders and
     * receivers complete cancelled, later sends fail and later receives complete cancelled.
     * Idempotent.
     *
     * @return whether this call cancelled the channel
     */
    public boolean cancel() {
        for (;;) {
            int r = closeRequest;
            if (r == CANCEL) {
                return false;
            }
            if (cancelCause == null) {
                cancelCause = new CancellationException("the channel was cancelled");
            }
            if (CLOSE_REQUEST.compareAndSet(this, r, CANCEL)) {
                tryOwnAndDrain();
                return true;
            }
        }
    }

    /**
     * Returns whether sends fail now (closed or cancelled).
     *
     * @return whether closed for sending
     */
    public boolean isClosedForSend() {
        return closeRequest != NONE;
    }

    /**
     * Returns whether a receive can only end now: closed and drained, or cancelled (a snapshot that
     * may lag a moment behind the request).
     *
     * @return whether closed for receiving
     */
    public boolean isClosedForReceive() {
        return terminal;
    }

    /**
     * Returns whether the channel was cancelled.
     *
     * @return whether cancelled
     */
    public boolean isCancelled() {
        return closeRequest == CANCEL;
    }

    /**
     * Returns what a send fails with now, as the cause of the closed-for-send exception: the
     * cancellation if cancelled, else the close's cause (null for a plain close).
     *
     * @return the cause, or null
     */
    public Throwable sendFailureCause() {
        return closeRequest == CANCEL ? cancelCause : closeCause;
    }

    /**
     * Returns the waiter nodes still linked (intakes and lists, departed or not): a racy snapshot,
     * for monitoring and for tests that check departed waiters do not pile up.
     *
     * @return the linked waiter nodes
     */
    public int linkedWaiters() {
        return sendIntake.linkedCount() + receiveIntake.linkedCount() + senders.size() + receivers.size();
    }

    /**
     * For white-box tests, at quiescence: how many owner passes have run (each owner section runs at
     * least one), so a test can tell whether an operation owned the channel. A racy read otherwise.
     *
     * @return the passes so far
     */
    public long passes() {
        return passes;
    }

    /** For white-box tests in this package: the lane, or null if the channel is not buffered. */
    ChannelLane lane() {
        return lane;
    }

    /**
     * For tests, at quiescence (no operation running): checks that no request was left undecided and
     * that invariants C1, C2 and C5 hold, without changing anything. Returns null if they do, else
     * what is wrong.
     *
     * @return null, or a description of the violation
     * @throws IllegalStateException if another thread owns the decision at this instant
     */
    public String checkQuiescent() {
        if (!tryOwn()) {
            throw new IllegalStateException("checkQuiescent: another thread owns the decision");
        }
        try {
            for (WaitQueue intake : new WaitQueue[] {sendIntake, receiveIntake}) {
                for (Object o = intake.state(); o instanceof WaitNode n; o = n.below) {
                    if (!n.isSettled()) {
                        return "a request left in an intake: " + n;
                    }
                }
            }
            if (pendingDepartures != 0 || closeRequest != applied) {
                return "a request left unapplied: departures " + pendingDepartures + ", close " + closeRequest
                        + " applied " + applied;
            }
            boolean receiverWaits = anyLive(receivers, false);
            boolean senderWaits = anyLive(senders, false);
            long size = bufferSize();
            if (receiverWaits && (size != 0 || senderWaits)) {
                return "C1: a receiver waits beside " + size + " elements, sender waiting " + senderWaits;
            }
            if (senderWaits && capacity != RENDEZVOUS && (capacity == CONFLATED || size < capacity)) {
                return "C2: a sender waits beside room: " + size + " of " + capacity;
            }
            if (lane != null && !lane.isShut() && (receiverWaits || senderWaits || applied != NONE)) {
                return "L1: the lane is open while a waiter waits or the channel is closed";
            }
            // a rendezvous channel's buffer holds only elements of lost pairings (part 7), each
            // waiting for the next receiver
            long bound = capacity == RENDEZVOUS ? held : capacity;
            if (size < 0 || (capacity != CONFLATED && size > bound)) {
                return "the buffer holds " + size + " of " + capacity + " (" + held + " held after lost pairings)";
            }
            if (applied != NONE && receiverWaits) {
                return "a receiver waits on a closed channel";
            }
            if (applied == CANCEL && (size != 0 || senderWaits)) {
                return "C5: a cancelled channel keeps elements or senders";
            }
            if (anyLive(receivers, true) || anyLive(senders, true)) {
                return "a waiter whose cancellation was requested is still queued live";
            }
            return null;
        } finally {
            assert (ownerThread = null) == null;
            owner = 0;
        }
    }

    private static boolean anyLive(WaitOrder list, boolean cancelRequested) {
        for (WaitNode w = list.first(); w != null; w = w.after) {
            if (!w.isSettled() && w.isCancelRequested() == cancelRequested) {
                return true;
            }
        }
        return false;
    }

    // ---- the owner's pass ----

    /**
     * Owner only: departures, arrivals, close, then match; then the try operations that met a busy
     * owner, each decided on the matched state (part 2).
     */
    private void pass() {
        assert ownedHere() : "owner-only state touched outside ownership";
        passes++;
        if (pendingDepartures != 0) {
            PENDING_DEPARTURES.getAndSet(this, 0);
            senders.purgeIfCrowded();
            receivers.purgeIfCrowded();
        }
        ArrayList<TryNode> tries = null; // the contended try operations: decided after the waiters
        if (sendIntake.hasWaiters()) {
            for (WaitNode w = sendIntake.drain(sendIntake.exchange(AdmissionEngine.OPEN)); w != null; ) {
                WaitNode next = WaitQueue.next(w);
                if (w instanceof TryNode t) {
                    tries = add(tries, t);
                } else if (applied != NONE) {
                    w.reject(closedForSend.apply(sendFailureCause())); // pushed after the close was applied
                } else {
                    senders.add(w);
                }
                w = next;
            }
        }
        if (receiveIntake.hasWaiters()) {
            for (WaitNode w = receiveIntake.drain(receiveIntake.exchange(AdmissionEngine.OPEN)); w != null; ) {
                WaitNode next = WaitQueue.next(w);
                if (w instanceof TryNode t) {
                    tries = add(tries, t);
                } else {
                    receivers.add(w);
                }
                w = next;
            }
        }
        int request = closeRequest;
        if (request > applied) {
            applied = request;
            if (lane != null) {
                lane.shut(); // L1: for good; the owner decides every operation from now on
            }
            if (request == CANCEL) {
                for (Object e; (e = bufferPoll()) != null; ) {
                    dropped(e);
                }
                for (WaitNode w; (w = senders.first()) != null; ) {
                    senders.removeFirst();
                    w.abandon();
                }
                for (WaitNode w; (w = receivers.first()) != null; ) {
                    receivers.removeFirst();
                    w.abandon();
                }
            }
        }
        match();
        if (tries != null) { // concurrent with the waiters taken with them: deciding after them is linearizable
            for (TryNode t : tries) {
                t.decide(t.sends() ? (Object) sendOwned(t.tag()) : receiveOwned()); // both keep C1, C2
            }
        }
    }

    private static ArrayList<TryNode> add(ArrayList<TryNode> list, TryNode t) {
        if (list == null) {
            list = new ArrayList<>(2);
        }
        list.add(t);
        return list;
    }

    /** Owner only: pairs waiting receivers with elements, then fills the buffer (part 2). */
    private void match() {
        if (lane != null && (receivers.first() != null || senders.first() != null)) {
            lane.shut(); // L1: before any waiter is decided against the buffer (part 10)
        }
        for (WaitNode r; (r = firstLive(receivers)) != null; ) {
            Object e = lane != null ? lane.peekOwned() : buffer.peekFirst();
            if (e != null) {
                receivers.removeFirst();
                if (admitQueued(r, e)) {
                    bufferPoll();
                    fill();
                }
                continue; // lost: r departed, the element stays first
            }
            if (lane != null && firstLive(senders) != null) {
                fill(); // a buffer that an in-flight receive emptied: the sender's element goes in first
                continue;
            }
            WaitNode s = firstLive(senders);
            if (s != null) { // rendezvous (or a buffer that a cancellation emptied): pair them
                e = s.tag();
                senders.removeFirst();
                if (!s.admit(null)) {
                    continue; // the send lost to its cancellation: it delivered nothing
                }
                receivers.removeFirst();
                if (!r.admit(e)) {
                    buffer.addFirst(e); // the send is done; held for the next receiver (part 7)
                    held++;
                }
                continue;
            }
            if (applied == NONE) {
                return; // r waits (C1)
            }
            receivers.removeFirst();
            end(r);
        }
        fill();
        endIfDrained();
    }

    /** Owner only: a cancelled channel, or a closed one with no element left, ends (part 12). */
    private void endIfDrained() {
        if (applied == CANCEL || (applied == CLOSE && bufferSize() == 0 && firstLive(senders) == null)) {
            becameTerminal();
        }
    }

    /** Owner only: the channel is closed for receiving from now on; its end watchers fire (part 12). */
    private void becameTerminal() {
        if (!terminal) {
            terminal = true; // volatile write, then the read of endWatchers: part 12's Dekker pair
            SignalList w = endWatchers;
            if (w != null) {
                w.fire();
            }
        }
    }

    /**
     * Registers {@code node} to fire once the channel is closed for receiving (closed and drained,
     * or cancelled); it fires at once (on this thread) if the channel already is. A node watches
     * one channel, once. See part 12 of the implementation overview.
     *
     * @param node the node
     */
    public void watchEnd(SignalList.Node node) {
        SignalList w = endWatchers;
        if (w == null) {
            SignalList made = new SignalList();
            w = (SignalList) END_WATCHERS.compareAndExchange(this, null, made);
            if (w == null) {
                w = made;
            }
        }
        if (!w.add(node)) { // the list fired before: the node is refused, and fires here
            node.onFire();
        } else if (terminal) { // the end may have read endWatchers before it was made: fire it here
            w.fire(); // once: whoever comes second does nothing
        }
    }

    /**
     * Takes back a node of {@link #watchEnd}; nothing if it has fired.
     *
     * @param node the node
     */
    public void unwatchEnd(SignalList.Node node) {
        SignalList w = endWatchers;
        if (w != null) {
            w.remove(node);
        }
    }

    /** Owner only: a receiver of a closed, drained (or cancelled) channel ends. */
    private void end(WaitNode r) {
        Throwable cause = closeCause;
        if (applied == CANCEL) {
            r.abandon();
        } else if (cause != null) {
            r.reject(cause);
        } else {
            r.admit(null); // the end: elements are never null
        }
    }

    /** Owner only: moves waiting senders' elements into the buffer while it has room (C2). */
    private void fill() {
        for (WaitNode s; (s = firstLive(senders)) != null; ) {
            if (lane != null ? !lane.hasRoomOwned() : capacity != CONFLATED && buffer.size() >= capacity) {
                return;
            }
            Object e = s.tag();
            senders.removeFirst();
            if (admitQueued(s, null)) {
                put(e);
            }
        }
    }

    /**
     * Owner only: admits a waiter on behalf of another operation that goes on running (a receive
     * that freed room, a send that brought an element): in a channel with a buffer, the waiter
     * resumes through its scheduler's queue, so producer and consumer keep running side by side
     * instead of taking turns on the waker's thread, one element each (part 8).
     */
    private boolean admitQueued(WaitNode w, Object value) {
        return capacity == RENDEZVOUS ? w.admit(value) : w.admitQueued(value);
    }

    /** Owner only: takes the oldest buffered element, or null. */
    private Object bufferPoll() {
        return lane != null ? lane.poll(true) : buffer.pollFirst();
    }

    /** Owner only: the number of buffered elements (the lane's includes claims being published). */
    private long bufferSize() {
        return lane != null ? lane.size() : buffer.size();
    }

    /** Owner only: appends a sent element (conflated: replaces the one there); there is room. */
    private void put(Object e) {
        if (lane != null) {
            Object r = lane.offer(e, true);
            assert r == ChannelLane.ROOM : "put without room: " + r;
            return;
        }
        if (capacity == CONFLATED) {
            Object old = buffer.pollFirst();
            if (old != null) {
                dropped(old);
            }
        }
        buffer.addLast(e);
    }

    /** Owner only, after a pass: one send decided now. */
    private int sendOwned(Object e) {
        if (applied != NONE) {
            return CLOSED;
        }
        for (WaitNode r; (r = firstLive(receivers)) != null; ) { // C1: the buffer is empty
            receivers.removeFirst();
            if (admitQueued(r, e)) {
                return SENT;
            }
        }
        if (lane != null) {
            return lane.offer(e, true) == ChannelLane.ROOM ? SENT : FULL; // C2: no sender waits with room
        }
        if (capacity == CONFLATED || buffer.size() < capacity) { // C2: no sender waits with room
            put(e);
            return SENT;
        }
        return FULL;
    }

    /** Owner only, after a pass: one receive decided now. */
    private Object receiveOwned() {
        Object e = bufferPoll();
        if (e != null) {
            fill();
            if (applied != NONE) {
                endIfDrained(); // the last element of a closed channel: the end is now, not at the next ask
            }
            return e;
        }
        for (WaitNode s; (s = firstLive(senders)) != null; ) { // rendezvous: take a waiting sender's
            e = s.tag();
            senders.removeFirst();
            if (s.admit(null)) {
                if (applied != NONE) {
                    endIfDrained();
                }
                return e;
            }
        }
        if (applied != NONE) {
            becameTerminal();
        }
        return EMPTY;
    }

    /** Owner only: the oldest live waiter of a list; drops settled ones, abandons cancelled ones. */
    private static WaitNode firstLive(WaitOrder list) {
        for (WaitNode w; (w = list.first()) != null; ) {
            if (w.isSettled()) {
                list.removeFirst();
            } else if (w.isCancelRequested()) {
                list.removeFirst();
                w.abandon(); // never hand an element to (or take one from) a task being cancelled
            } else {
                return w;
            }
        }
        return null;
    }

    /** Owner only: an element that will never be received. */
    private void dropped(Object e) {
        if (onUndelivered != null) {
            if (undelivered == null) {
                undelivered = new ArrayList<>();
            }
            undelivered.add(e);
        }
    }

    // ---- ownership ----

    /** A queued waiter departed (its node's hook, on the departing thread). */
    private void waiterDeparted(WaitNode node) {
        PENDING_DEPARTURES.getAndAdd(this, 1);
        tryOwnAndDrain();
    }

    private boolean tryOwn() {
        if (owner == 0 && OWNER.compareAndSet(this, 0, 1)) {
            assert (ownerThread = Thread.currentThread()) != null;
            return true;
        }
        return false;
    }

    private boolean ownedHere() {
        return owner == 1 && ownerThread == Thread.currentThread();
    }

    private void tryOwnAndDrain() {
        if (tryOwn()) {
            Trampoline t = Trampoline.enter();
            ArrayList<Object> dropped;
            try {
                pass();
                dropped = release();
            } finally {
                Trampoline.leave(t); // the waiters settled run now, ownership released (part 8)
            }
            deliver(dropped);
        }
    }

    /** Owner only: a send decided now (after a pass), then released. */
    private int ownedSend(Object element) {
        Trampoline t = Trampoline.enter();
        int r;
        ArrayList<Object> dropped;
        try {
            pass();
            r = sendOwned(element);
            dropped = release();
        } finally {
            Trampoline.leave(t);
        }
        deliver(dropped);
        return r;
    }

    /** Owner only: a receive decided now (after a pass), then released; {@code end}: END if drained. */
    private Object ownedReceive(boolean end) {
        Trampoline t = Trampoline.enter();
        Object r;
        ArrayList<Object> dropped;
        try {
            pass();
            r = receiveOwned();
            if (end && r == EMPTY && applied == CLOSE && terminal && closeCause == null) {
                r = END;
            }
            dropped = release();
        } finally {
            Trampoline.leave(t);
        }
        deliver(dropped);
        return r;
    }

    /**
     * Owner only: releases ownership with the re-check of part 5, passing again while a request
     * arrived meanwhile; returns the elements dropped under ownership (for the callback), or null.
     */
    private ArrayList<Object> release() {
        ArrayList<Object> dropped = null;
        for (;;) {
            if (undelivered != null) {
                if (dropped == null) {
                    dropped = undelivered;
                } else {
                    dropped.addAll(undelivered);
                }
                undelivered = null;
            }
            int done = applied;
            if (lane != null && done == NONE && lane.isShut() && firstLive(senders) == null
                    && firstLive(receivers) == null) {
                lane.open(); // L1: nobody waits any more; the next request shuts it again (part 10)
            }
            int h = (receivers.first() != null ? HINT_RECEIVERS : 0) | (senders.first() != null ? HINT_SENDERS : 0)
                    | (bufferSize() > 0 ? HINT_ELEMENTS : 0);
            if (h != ready) {
                setReadyOpaque(h); // part 11: the hint as this section leaves the channel
            }
            assert (ownerThread = null) == null;
            owner = 0; // release: publishes the plain state to the next owner
            if (!sendIntake.hasWaiters() && !receiveIntake.hasWaiters() && pendingDepartures == 0
                    && closeRequest == done) {
                return dropped;
            }
            if (!tryOwn()) {
                return dropped; // the thread that owns now does it
            }
            pass();
        }
    }

    /** Hands dropped elements to the undelivered callback, outside ownership (part 8). */
    private void deliver(ArrayList<Object> dropped) {
        if (dropped == null) {
            return;
        }
        for (Object e : dropped) {
            try {
                onUndelivered.accept(e);
            } catch (Throwable error) {
                Thread th = Thread.currentThread();
                th.getUncaughtExceptionHandler().uncaughtException(th, error);
            }
        }
    }

    /** A try operation's node, when another thread owned: the owner decides it at once (part 6). */
    private static final class TryNode extends WaitNode {
        private final boolean sends;
        private volatile Object answer;

        TryNode(boolean sends) {
            this.sends = sends;
        }

        boolean sends() {
            return sends;
        }

        /** Owner: records the answer (a boxed send code, an element, or EMPTY). */
        void decide(Object a) {
            answer = a;
        }

        /** The caller: waits for an owner to decide, owning itself once the owner lets go. */
        Object await(ChannelCore core) {
            for (;;) {
                Object a = answer;
                if (a != null) {
                    return a;
                }
                if (core.owner == 0) {
                    core.tryOwnAndDrain(); // takes and decides this node, unless another owner does
                } else {
                    Thread.onSpinWait();
                }
            }
        }

        @Override
        public boolean admit(Object value) {
            throw new AssertionError("a try node is decided, never admitted");
        }

        @Override
        public boolean abandon() {
            throw new AssertionError("a try node is decided, never abandoned");
        }

        @Override
        public boolean reject(Throwable error) {
            throw new AssertionError("a try node is decided, never rejected");
        }

        @Override
        public boolean isSettled() {
            return false; // until taken; never departs
        }

        @Override
        public boolean isCancelRequested() {
            return false;
        }
    }

    private static final class Marker {
        private final String name;

        Marker(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static final VarHandle OWNER;
    private static final VarHandle PENDING_DEPARTURES;
    private static final VarHandle CLOSE_REQUEST;
    private static final VarHandle READY;
    private static final VarHandle END_WATCHERS;

    /** Opaque: a racy hint (part 11); no ordering is needed, only a value written by some owner. */
    private int readyOpaque() {
        return (int) READY.getOpaque(this);
    }

    /** Owner only, opaque: the release's volatile write that follows orders it for the next owner. */
    private void setReadyOpaque(int h) {
        READY.setOpaque(this, h);
    }

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            OWNER = l.findVarHandle(ChannelCore.class, "owner", int.class);
            PENDING_DEPARTURES = l.findVarHandle(ChannelCore.class, "pendingDepartures", int.class);
            CLOSE_REQUEST = l.findVarHandle(ChannelCore.class, "closeRequest", int.class);
            READY = l.findVarHandle(ChannelCore.class, "ready", int.class);
            END_WATCHERS = l.findVarHandle(ChannelCore.class, "endWatchers", SignalList.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
