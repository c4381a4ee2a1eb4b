package dev.coro.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The admission engine under every waiting primitive that decides by a rule (DESIGN principle 6):
 * the mutex, the gates, and the gates to come. Queueing, the hand-off to admitted waiters, their
 * cancellation and expiry, signals from outside ({@link #signal(int)}), closing, and the doors
 * (the bodies of the waiting and the trying task, {@link #enter}) are written here once. A primitive
 * is a subclass that states only its rule, through the {@code rule*} hooks (part 10), which the engine
 * calls under its ownership, one thread at a time.
 *
 * <p>Every waiter carries a tag (what it asks for: a kind, a weight, a key, a priority, a deadline)
 * that only the rule reads; its weight ({@link #ruleWeight}, 1 by default) is what its admission
 * takes and its exit gives back. The owner offers taken waiters to the rule in a pluggable
 * {@link WaitOrder} (arrival order by default), may expire them on a {@link TimeSource} (one timer
 * for the earliest deadline), and can tell the rule about every arrival ({@link #ruleArrived}) and
 * every departure ({@link #ruleDeparted}).
 *
 * <p>All public methods are thread-safe and lock-free (see part 6 for the one bounded retry loop).
 */
public abstract class AdmissionEngine {
    /* Implementation overview.
     *
     * 1. Representation.
     *    intake (WaitQueue): the lock-free stack of arriving waiters, on one of two sentinels:
     *      OPEN       accepts waiters
     *      CLOSED     refuses waiters; close has been applied (terminal)
     *      WaitNode   newest arrival, older ones below it down to OPEN
     *    owner (volatile int): 0 or 1; whoever CASes it 0 -> 1 owns the decision. Only the owner
     *      touches the plain state below and the rule's own state (the rule hooks).
     *    ownerThread (plain Thread): the owning thread while owned, else null; written only by the
     *      owner (after its CAS, and null before it lets go), read by any thread to ask "do I own?".
     *    ownedReleases (plain long, owner only): weights released by the owner's own thread while
     *      it owns (part 5, the owner's own requests).
     *    order (WaitOrder, owner only): the taken waiters, offered to the rule in turn (arrival
     *      order by default, or by a key of the tag: a heap). Settled waiters stay until met or purged.
     *    admitting (plain WaitNode, owner only): a waiter the rule has admitted whose admit CAS the
     *      same owner makes next, from the trampoline (part 8); null otherwise.
     *    queueLimit (final int): the most waiters the order holds (Integer.MAX_VALUE: no limit). A
     *      rule of "latest only" sets 1: a newer waiter supersedes the oldest queued one.
     *    expiry (owner only, when the rule has a TimeSource): a heap of the taken waiters that have a
     *      deadline, the deadline its one timer is armed for, and that timer's canceller.
     *    Requests left to the owner by threads that could not take ownership, each applied by the
     *    next owner before it decides anything:
     *      pendingReleases (volatile long)    sum of released weights (the rule decodes it)
     *      pendingSignals (volatile int)      signals (readiness, arrivals, updates)
     *      pendingDepartures (volatile long)  sum of the weights of waiters that departed queued
     *      pendingExpiry (volatile int)       the expiry timer fired
     *      closeRequested (volatile boolean)  close() was called, or the rule closed (closeFromRule)
     *    A waiter is the waiting task's own suspension step (or a select's clause): the engine
     *    allocates nothing per wait. Its tag is written on the node before the push publishes it.
     *    Observation (outside the decision): observers (volatile array, copy on write) are told how
     *    every admission and queued wait ended; while one is added or a JFR recording enables
     *    WaitEvent, a queued waiter has a WaitTiming in the side table timings (a ConcurrentHashMap
     *    by node identity, created on the first observed wait: put before the push, taken once with
     *    a remove by whichever path ends the wait: admit, expiry, or its departure), and nothing
     *    otherwise: the node itself has no field for it, so an unobserved waiter pays nothing. The
     *    primitive's class (observedAs) names it in the events.
     *
     * 2. Transitions.
     *    fast path (tryEnterNow): intake empty, CAS owner 0 -> 1, re-check intake, order and close
     *       under ownership, apply the pending requests, ask the rule; then release ownership (part
     *       5's protocol). No allocation. A permit rule overrides it (part 9); a rule that watches
     *       arrivals has none (every arrival is queued, so that the rule is told of each one).
     *    enter (the waiting door, after the fast path failed): arrive (QUEUE by default; part 9),
     *       then push the node on the intake (refused by CLOSED: the node is abandoned), then try
     *       to own and drain. On the owner's own thread, when appendsDirectly, not closing, and the
     *       intake empty: the node goes straight to the order's tail (arrived, as a taken waiter),
     *       with no push and no take; the drain under way decides it (I5's exception).
     *    release(w):      on the owner's own thread: ownedReleases + w (plain), nothing else (the
     *       drain under way applies it). Else CAS owner 0 -> 1 and apply w to the rule directly; else
     *       getAndAdd pendingReleases w, then try to own. Either way an owner then drains.
     *    signal(n), a queued waiter's departure (its hook, through the intake), the expiry timer:
     *       getAndAdd / set its pending word, then try to own and drain.
     *    close():         closeRequested = true, then try to own and drain.
     *    drain (owner), one pass, repeated while it does something:
     *       apply pending releases, signals, departures (getAndSet 0 each, to ruleLeave,
     *         ruleSignal, ruleDeparted);
     *       if close was requested and not applied: exchange the intake for CLOSED, abandon every
     *         waiter of the order and the intake, disarm the timer (I4);
     *       if a deadline has passed (or the rule's ready time has come): reject each expired waiter
         (TimeoutException) and re-arm;
     *       with a queue limit, while the order holds more waiters than the limit: remove the
     *         oldest and abandon it (superseded: it completes cancelled; a settled one is dropped);
     *       take arrivals: exchange the intake for OPEN and move its waiters, in arrival order, into
     *         the order (and the expiry heap; ruleArrived for each), when the rule watches arrivals,
     *         or when the order is empty and the rule has room (I5), or, for a keyed order, before
     *         every decision (an arrival queued before it may rank first);
     *       offer: the order's first waiter: drop it if settled, abandon it if its token fired,
     *         expire it if its deadline has passed by the clock (its timer may be late), else
     *         ruleTryEnter(tag); refused: stop (I2), and with a clock arm the timer for the rule's
         ruleReadyAt(tag) too (a rule of time), or, if that time has passed meanwhile, go on with
         the pass (expiry, then the offer again); admitted: remove it and admit it.
     *       Before a resumption (admit, abandon, reject) on a thread that runs no trampoline item,
     *       the drain moves into the thread's trampoline, still owning, unless the admission leaves
     *       the rule full with one admitted (part 8).
     *    admit(w):        w.admit(null); if it fails (w departed meanwhile), ruleUndo(tag): by default
     *       the weight goes back at once, to the next waiter in the same pass; if it wins,
     *       ruleEntered(tag) (the tag read before the CAS: an admitted waiter may reuse its node).
     *
     * 3. Linearization points. Fast path: its CAS of owner (it decides under ownership), or the
     *    permit rule's RMW (part 9). A queued waiter: its push CAS is its place in line; its admission
     *    is the owner's admit CAS on its node. release: its ownership CAS, or its getAndAdd (then owed
     *    by the owner, applied before it next admits anyone). close: the owner's exchange of the
     *    intake for CLOSED. Expiry: the owner's reject CAS on the node.
     *
     * 4. Invariants (asserted where cheap; tests run with -ea).
     *    I1: the rule's state, the order, admitting and the expiry heap are touched only with
     *        owner == 1, by the thread that set it (asserted on every owner-only path).
     *    I2: no barging: a waiter is admitted only when every live waiter queued before the decision
     *        and ranked before it by the order (in arrival order: every older live waiter) has been
     *        admitted; a refused first waiter blocks the rest. The fast path decides only when the
     *        intake and the order are empty.
     *    I3: every admission is matched by exactly one ruleLeave or ruleUndo of its weight.
     *    I4: once close is applied the intake is CLOSED for ever and the order is empty.
     *    I5: an arrival-order rule that does not watch arrivals takes the intake only when the order
     *        is empty and the rule has room, so waiters it cannot admit stay in the intake, where
     *        departed ones pop themselves or are swept (WaitQueue part 7). One exception: an arrival
     *        on the owner's own thread while the intake is empty (a holder resumed inside the drain
     *        that waits again, part 8) goes to the order's tail directly. It is the newest arrival,
     *        so arrival order holds; if it departs there, it is dropped when met or purged when the
     *        order is crowded (WaitOrder's purging), so departed waiters stay bounded all the same.
     *    I6: with a queue limit, every arrival is taken at once (as when the rule watches arrivals),
     *        and no offer is made while the order holds more than the limit: the waiters offered are
     *        the newest ones. Superseding is a resumption (part 8), so it waits for the trampoline.
     *
     * 5. Memory ordering and the missed-request check. owner is volatile: the CAS 0 -> 1 (acquire)
     *    and the write owner = 0 (release) order successive owners, so the plain state needs no
     *    ordering of its own. Releasing ownership, the owner computes room = "a waiter pushed now
     *    could be decided" (the rule watches arrivals, or the order is empty / keyed and the rule has
     *    room), writes owner = 0, then reads every pending word, closeRequested (and the intake's
     *    CLOSED) and, if room, intake.hasWaiters(); if any is set it CASes owner 0 -> 1 and drains
     *    again. The other side writes first and reads second: a releaser getAndAdds pendingReleases
     *    then CASes owner; a pusher's push CAS then its owner CAS; close writes closeRequested then
     *    CASes owner; signals, departures and the timer likewise. Dekker: these are all volatile
     *    accesses, totally ordered; if the other side's owner CAS failed, it read owner == 1 before
     *    our owner = 0, so its write came before our owner = 0, which comes before our re-check
     *    read, and the re-check sees it. So either the other side owns and drains, or the old owner
     *    re-owns and drains: nothing is left unapplied. When room is false the re-check ignores new
     *    waiters on purpose: they cannot be decided before the rule changes, which only a request
     *    the re-check does see can do. room is a snapshot of owner state, exact at the owner = 0
     *    write. The tag of a node is written before its push (release) and read after the take
     *    (acquire).
     *    The owner's own requests. A thread learns that it owns by reading ownerThread (plain):
     *    only the owner writes it, after its CAS, and it writes null before its owner = 0; so a
     *    thread reads itself there exactly between its own claim and its own clearing (a read sees
     *    its own latest write or another thread's, never an older write of its own), and any other
     *    thread reads null or another thread. Such a thread is the owner, resumed inline inside
     *    its drain (part 8) or running a rule hook: its release goes to ownedReleases and its
     *    arrival to the order (part 2), with no atomic instruction. Both are applied by the pass
     *    that follows: an inline admit is the last step of a pass and every pass starts with
     *    applyRequests, so nothing of them is left when the drain lets go (asserted), and the
     *    re-check never needs to read them.
     *
     * 6. Progress and fairness. enter, release, signal and close are lock-free: the drain runs as
     *    long as there is work applied by it; an owner that re-checks and loses the CAS leaves at
     *    once. Nobody spins waiting for ownership: a thread that cannot own leaves its request (a
     *    pushed node, a pending word, closeRequested) to the owner. The fast path declines when
     *    another thread owns the decision at that instant. Fairness is the order's (I2): FIFO by
     *    default, no barging.
     *
     * 7. Cancellation and expiry races. A queued waiter whose token fires settles its own node (one
     *    CAS) and departs: the intake unlinks it (WaitQueue part 7) or the owner drops it when met,
     *    and its weight reaches the rule as a pending departure (ruleDeparted), so a rule that
     *    reserved something at arrival (part 9) gives it back. An owner's admit that loses that CAS
     *    gets false and calls ruleUndo before it looks at the next waiter: no weight is lost (I3). A
     *    waiter whose token has fired but whose node is not settled yet is abandoned, not admitted.
     *    Expiry is the owner's reject CAS against the same races, and departs like a cancellation. An
     *    admit that wins is an admission: the door then runs the work's exit on every path.
     *    A waiting door refused by CLOSED abandons its node (the task ends cancelled), after the rule's
     *    arrivalRefused. Every abandon that close causes (a refused arrival, the waiters closeNow
     *    takes, a try refused while closing) passes closedReason (describedAs), so the task's
     *    cancellation says which primitive is closed; breakRule's abandons stay plain. A trying door whose admission succeeds but whose node was cancelled meanwhile
     *    releases at once.
     *    A rule hook that throws (a bug: no shipped rule throws, but an assertion can) breaks the
     *    engine (breakRule): closed, every waiter ends cancelled, ownership kept for ever so that no
     *    later operation asks the broken rule again, and the error propagates to the operation that
     *    ran the hook; otherwise the owner would never let go and every later waiter would hang.
     *
     * 8. Resumption. node.admit / abandon / reject resume the waiter on its own scheduler: inline
     *    through the thread's trampoline when the owner's thread already runs that scheduler, else by
     *    submission. Inline with no trampoline item running on the thread, the waiter would run at
     *    once, inside the drain, while its thread owns. That is right when nobody else could be
     *    admitted meanwhile (the admission leaves the rule full with this one admitted: a mutex, a
     *    serial gate, a capacity of 1, a writer): the owner then runs the admitted work and every
     *    later waiter in one loop, their exits are pending releases it applies itself (bounded
     *    stack). Otherwise the owner would keep ownership for the whole run of the admitted work and
     *    the other threads' requests would wait on it. So a drain about to make such an admit CAS
     *    (with the waiter in admitting), or about to abandon or reject a waiter, on a thread that
     *    runs no trampoline item, first re-enters itself as the outermost trampoline item
     *    (InTrampoline; still owning): the waiters it resumes inline then queue behind it and run on
     *    that thread once it has released ownership, before the call that drained returns. On a
     *    thread that already runs a trampoline item they queue behind that item anyway.
     *    The hand-off chain of a mutex under contention is the inline case: the holder admitted
     *    inside the drain runs its critical section, releases (ownedReleases: no atomic), asks
     *    again and is queued at the order's tail (no push), and suspends; the drain's next pass
     *    applies the release and admits the next waiter, on the same thread with no wake-up.
     *
     * 9. The permit lane (PermitLane). A rule that is a count of interchangeable units (the mutex,
     *    the serial and capacity gates; weighted, a budget) overrides the four entry points outside
     *    ownership: tryEnterNow (a CAS on its count), arrive (the waiting door, before the push: one
     *    getAndAdd admits at once or registers the waiter), arrivalRefused (a push refused by
     *    CLOSED: the registration is given back, as a departure) and release (one getAndAdd; only a
     *    release that finds an unserved waiter comes here, as a credit). So while nobody waits,
     *    entering and leaving take one atomic instruction each and never meet the owner. Queueing,
     *    hand-off, departure, expiry, resumption and close stay this engine's; the lane's state
     *    machine is PermitLane's overview. A token bucket (the rate gate) has a lane of time: its
     *    tryEnterNow is a CAS on its theoretical arrival time while no waiter is registered, arrive
     *    registers the waiter, and the count of registered waiters goes down only when a waiter has
     *    departed (ruleDeparted) or is in (ruleEntered); its overview has the rest.
     *
     * 10. The rule (what a subclass states; owner only unless said):
     *    ruleTryEnter(tag)   admit this waiter now? (updates the rule's state if so)
     *    ruleCanEnter()      could some waiter be admitted now? (the engine takes arrivals only then)
     *    ruleLeave(w)        weights given back: exits, undone admissions (sums of ruleWeight)
     *    ruleAdmitted()      admissions outstanding (closeAndCheck)
     *    optional: ruleUndo(tag), ruleEntered(tag), ruleSignal(n), ruleDeparted(w), ruleArrived(tag) (every taken
     *    arrival; it may stamp the waiter with a new tag), ruleReadyAt(tag) (with a TimeSource: when
     *    a refused waiter could be admitted by time alone, for a rule of time), and the pure
     *    functions of a tag, called on any thread: ruleWeight, ruleDeadline (with a TimeSource),
     *    ruleTimeout. Not a hook but a constructor argument: the queue limit (I6).
     *    A departure reaches ruleDeparted a moment after the waiter settled: the owner may meet
     *    (and drop) the settled waiter first. A rule whose decisions count waiters must not let a
     *    later waiter take a departed one's place meanwhile: stamp arrivals (ruleArrived) and decide
     *    by the stamp (the phase gate does), or reserve at arrival and give back at departure (the
     *    permit lane does).
     *
     * 11. References. Paper P4215 (seed 003): gates, within(g.acquire(), snd), try_acquire completing
     *    with set_stopped, Destruction; seed 002's unlocker-owned FIFO list, here the intake reversed
     *    by the owner; tokio's batch_semaphore and kotlinx.coroutines' SemaphoreAndMutexImpl (one
     *    core under many rules); DESIGN principles 4 to 7.
     */

    /** The intake accepts waiters. */
    public static final WaitQueue.Sentinel OPEN = new WaitQueue.Sentinel("OPEN", true);
    /** Closed (terminal): the intake refuses waiters, which complete cancelled. */
    public static final WaitQueue.Sentinel CLOSED = new WaitQueue.Sentinel("CLOSED", false);
    /** {@link #ruleDeadline}'s answer for a waiter that never expires. */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    /** {@link #arrive}'s answer: admitted at once. */
    protected static final int ENTER = 0;
    /** {@link #arrive}'s answer: push the node and let the owner decide. */
    protected static final int QUEUE = 1;
    /** {@link #arrive}'s answer: refused (closed); the node ends cancelled, not queued. */
    protected static final int REFUSE = 2;

    private final WaitQueue intake = new WaitQueue(OPEN, this::waiterDeparted);
    private final WaitOrder order;
    /** The rule is told every arrival (ruleArrived); then there is no fast path. */
    private final boolean watchesArrivals;
    /**
     * The owner takes every arrival at once: the rule watches them, deadlines must be known, or a
     * queue limit supersedes the oldest waiter (I6).
     */
    private final boolean takesEveryArrival;
    /** The most waiters the order holds; a newer one supersedes the oldest (I6). */
    private final int queueLimit;
    /**
     * The owner's own arrivals may go straight to the order (I5's exception): arrival order, and
     * the owner does not take every arrival (no clock, no queue limit, no watching).
     */
    private final boolean appendsDirectly;
    private final Expiry expiry;
    private volatile int owner;
    private volatile long pendingReleases;
    private volatile int pendingSignals;
    private volatile long pendingDepartures;
    private volatile int pendingExpiry;
    private volatile boolean closeRequested;
    /** Owner only: a waiter admitted by the rule whose admit CAS waits for the trampoline (part 8). */
    private WaitNode admitting;
    /**
     * Why a waiter refused by the close ends cancelled ({@link #describedAs}): its toString names the
     * primitive and says it is closed; null: a plain cancellation. Set before sharing.
     */
    private Object closedReason;
    /** The primitive's class, as its waits are recorded ({@link #observedAs}); set before sharing. */
    private Class<?> primitive;
    /**
     * The timings of the queued waits that are observed, by node (part 1): null until a wait is
     * observed. WaitNode does not override equals or hashCode, so the keys compare by identity.
     */
    private volatile ConcurrentHashMap<WaitNode, WaitTiming> timings;
    /** The observers of waits ({@link #addObserver}), or null: copy on write. */
    private volatile WaitObserver[] observers;
    /**
     * The owning thread while owned, null otherwise (written by the owner only, plain): a thread
     * that reads itself here owns the decision (part 5, the owner's own requests).
     */
    private Thread ownerThread;
    /**
     * Owner only: weights released by the owner's own thread while it owns (a holder resumed inline
     * inside the drain, part 8), applied by the next applyRequests with no atomic instruction.
     */
    private long ownedReleases;

    /** Creates an engine that offers waiters in arrival order, with no expiry. */
    protected AdmissionEngine() {
        this(WaitOrder.arrival(), false, null);
    }

    /**
     * Creates an engine.
     *
     * @param order the order in which the owner offers taken waiters to the rule
     * @param watchesArrivals whether the owner takes every arrival at once and tells the rule
     *     ({@link #ruleArrived}), even when it cannot admit anyone; such an engine has no fast path
     *     (every arrival is queued, so that the rule sees each one before any decision)
     * @param clock the clock and timers for waiters with a deadline ({@link #ruleDeadline}), or null
     *     if none ever has one
     */
    protected AdmissionEngine(WaitOrder order, boolean watchesArrivals, TimeSource clock) {
        this(order, watchesArrivals, clock, Integer.MAX_VALUE);
    }

    /**
     * Creates an engine whose order holds at most {@code queueLimit} waiters: when a taken arrival
     * makes it hold more, the oldest queued waiter is superseded (it completes cancelled, I6). The
     * owner then takes every arrival at once.
     *
     * @param order the order in which the owner offers taken waiters to the rule
     * @param watchesArrivals see {@link #AdmissionEngine(WaitOrder, boolean, TimeSource)}
     * @param clock see {@link #AdmissionEngine(WaitOrder, boolean, TimeSource)}
     * @param queueLimit the most queued waiters, at least 1 ({@link Integer#MAX_VALUE}: no limit)
     */
    protected AdmissionEngine(WaitOrder order, boolean watchesArrivals, TimeSource clock, int queueLimit) {
        if (queueLimit < 1) {
            throw new IllegalArgumentException("queueLimit must be positive, got " + queueLimit);
        }
        this.order = order;
        this.expiry = clock == null ? null : new Expiry(clock);
        this.watchesArrivals = watchesArrivals;
        this.queueLimit = queueLimit;
        // deadlines are known only once taken; a limit supersedes only the waiters it has taken (I6)
        this.takesEveryArrival = watchesArrivals || clock != null || queueLimit != Integer.MAX_VALUE;
        this.appendsDirectly = !takesEveryArrival && order.blocksLaterArrivals();
        this.primitive = getClass();
    }

    /**
     * Adds an observer of every admission and queued wait (for metrics; see {@link WaitObserver}).
     * Waits that started before it was added are not reported to it. While no observer is added and
     * no JFR recording enables {@link WaitEvent}, a wait pays one read of each.
     *
     * @param observer the observer
     * @throws NullPointerException if {@code observer} is null
     */
    public final void addObserver(WaitObserver observer) {
        Objects.requireNonNull(observer, "observer");
        for (;;) {
            WaitObserver[] old = observers;
            WaitObserver[] next = old == null ? new WaitObserver[] {observer} : Arrays.copyOf(old, old.length + 1);
            next[next.length - 1] = observer;
            if (OBSERVERS.compareAndSet(this, old, next)) {
                return;
            }
        }
    }

    /**
     * {@link #tryEnterNow}, reported to the observers as an admission that did not wait: the
     * primitives' own try doors (a mutex's {@code tryLock}) enter through it.
     *
     * @param tag the waiter's tag
     * @return whether admitted
     */
    public final boolean tryEnter(Object tag) {
        if (tryEnterNow(tag)) {
            endedAtOnce(WaitObserver.ADMITTED);
            return true;
        }
        return false;
    }

    /** A queued wait starts: its timing, if anyone observes waits. */
    private WaitTiming startTiming(Object tag) {
        WaitEvent event = WaitEvent.startIfEnabled(primitive, ruleWeight(tag));
        return event != null || observers != null ? new WaitTiming(System.nanoTime(), event) : null;
    }

    /** The side table of the observed waits' timings (part 1), created on first use. */
    private ConcurrentHashMap<WaitNode, WaitTiming> timings() {
        ConcurrentHashMap<WaitNode, WaitTiming> m = timings;
        if (m == null) {
            m = new ConcurrentHashMap<>();
            Object witness = TIMINGS.compareAndExchange(this, null, m);
            if (witness != null) {
                @SuppressWarnings("unchecked")
                ConcurrentHashMap<WaitNode, WaitTiming> won = (ConcurrentHashMap<WaitNode, WaitTiming>) witness;
                m = won;
            }
        }
        return m;
    }

    /**
     * Takes the timing of {@code node}'s wait, once: the path that ends the wait reports it. One read
     * of a null field while no wait was ever observed.
     *
     * @return the timing, or null (the wait was not observed, or another path took it)
     */
    private WaitTiming takeTiming(WaitNode node) {
        ConcurrentHashMap<WaitNode, WaitTiming> m = timings;
        return m == null ? null : m.remove(node);
    }

    /** A queued wait ended with {@code outcome} (a WaitObserver code): its JFR event and the observers. */
    private void waitEnded(WaitTiming t, int outcome) {
        if (t.event != null) {
            t.event.finish(outcome == WaitObserver.ADMITTED ? WaitEvent.ADMITTED
                    : outcome == WaitObserver.TIMED_OUT ? WaitEvent.TIMED_OUT : WaitEvent.CANCELLED);
        }
        WaitObserver[] os = observers;
        if (os != null) {
            tell(os, outcome, System.nanoTime() - t.startNanos);
        }
    }

    /** An admission (or a cancellation) that did not wait: the observers, with 0. */
    private void endedAtOnce(int outcome) {
        WaitObserver[] os = observers;
        if (os != null) {
            tell(os, outcome, 0);
        }
    }

    private static void tell(WaitObserver[] os, int outcome, long waited) {
        for (WaitObserver o : os) {
            try {
                o.waitEnded(outcome, waited);
            } catch (Throwable t) { // an observer's bug must not break the rule (part 7)
                Thread th = Thread.currentThread();
                th.getUncaughtExceptionHandler().uncaughtException(th, t);
            }
        }
    }

    /**
     * Names the primitive this engine serves, as its waits are recorded ({@link WaitEvent}): the
     * gate or mutex class, instead of the engine's own. Call it once, while constructing the
     * primitive, before the engine is shared.
     *
     * @param type the primitive's class
     */
    public final void observedAs(Class<?> type) {
        primitive = type;
    }

    /**
     * Names the primitive this engine serves: in the task dump ({@link WaitSubject}), its waiters
     * are listed as waiting on {@code primitive}; and a waiter its close refuses (a queued one when
     * it closes, a later arrival) ends cancelled with the reason {@code primitive + " is closed"}
     * (built from the primitive's {@code toString()} only when a join or future asks for it), so that
     * joining its task throws a {@code CancellationException} naming the primitive. Call it once,
     * while constructing the primitive, before the engine is shared. Without it those waiters end
     * plainly cancelled.
     *
     * @param kind the wait kind's name in the dump ({@code GATE}, {@code MUTEX})
     * @param primitive the gate or other primitive
     */
    public final void describedAs(String kind, Object primitive) {
        Objects.requireNonNull(primitive, "primitive");
        intake.describedAs(kind, primitive);
        closedReason = new Object() {
            @Override
            public String toString() {
                return primitive + " is closed";
            }
        };
    }

    // ---- the rule (part 10): owner only, unless said ----

    /**
     * Admits a waiter with {@code tag} if the rule allows it now, updating the rule's state.
     *
     * @param tag the waiter's tag
     * @return whether admitted
     */
    protected abstract boolean ruleTryEnter(Object tag);

    /**
     * Whether the rule could admit some waiter now (of the least demanding kind): the engine takes
     * arrivals from the intake only then (I5).
     *
     * @return whether some waiter could enter
     */
    protected abstract boolean ruleCanEnter();

    /**
     * Gives back weights: the exits of admitted work and undone admissions, summed.
     *
     * @param released the sum of the weights given back
     */
    protected abstract void ruleLeave(long released);

    /**
     * Returns how many admissions are outstanding by the rule's state (for {@link #closeAndCheck()}).
     *
     * @return the admissions outstanding
     */
    protected abstract long ruleAdmitted();

    /**
     * An admission of a waiter with {@code tag} was undone: its admit CAS lost to its departure. By
     * default its weight goes back, as an exit.
     *
     * @param tag the waiter's tag
     */
    protected void ruleUndo(Object tag) {
        ruleLeave(ruleWeight(tag));
    }

    /**
     * A queued waiter with {@code tag} that the rule admitted is in: its admit CAS won (the
     * counterpart of {@link #ruleUndo}). A rule that lets arrivals in outside ownership while nobody
     * waits (part 9) counts its waiters until this moment, so that no arrival enters between the
     * rule's decision and an undo. By default nothing.
     *
     * @param tag the waiter's tag
     */
    protected void ruleEntered(Object tag) {}

    /**
     * Applies {@code count} signals sent with {@link #signal(int)}.
     *
     * @param count the signals since the last call
     */
    protected void ruleSignal(int count) {
        throw new AssertionError("this rule takes no signals");
    }

    /**
     * Queued waiters departed (cancelled, abandoned, expired, or a select clause that lost) since the
     * last call; they are settled, and unlinked or skipped when met. By default nothing: the drain
     * that follows admits whoever a departed waiter was blocking.
     *
     * @param weight the sum of their weights
     */
    protected void ruleDeparted(long weight) {}

    /**
     * A waiter with {@code tag} has arrived (it is now in the order); called in arrival order, for
     * every arrival the owner takes (at once in an engine that watches arrivals or has a clock;
     * otherwise when the rule has room), before its deadline is read. Returns the tag the waiter keeps from
     * now on: the rule may stamp each arrival (with the boundary it counts toward, its arrival time),
     * so that a later decision about that waiter does not depend on which other waiters are still
     * live. The new tag must have the same {@link #ruleWeight} (a departing thread may read either).
     *
     * @param tag the waiter's tag
     * @return the tag it keeps: {@code tag} by default
     */
    protected Object ruleArrived(Object tag) {
        return tag;
    }

    /**
     * Returns the weight of a waiter with {@code tag}: what its admission takes and its exit gives
     * back, at least 1. A pure function; called on any thread.
     *
     * @param tag the tag
     * @return the weight, 1 by default
     */
    protected long ruleWeight(Object tag) {
        return 1;
    }

    /**
     * Returns when a waiter with {@code tag} expires, on the engine's {@link TimeSource} clock, or
     * {@link #NO_DEADLINE}. A pure function; called on any thread.
     *
     * @param tag the tag
     * @return the deadline in nanoseconds, or {@link #NO_DEADLINE}
     */
    protected long ruleDeadline(Object tag) {
        return NO_DEADLINE;
    }

    /**
     * A rule of time (a rate, a throttle) has just refused a waiter with {@code tag}: returns the
     * earliest time on the engine's {@link TimeSource} clock at which it could admit that waiter if
     * nothing else changes, or {@link #NO_DEADLINE} if only a release, a signal or a departure can
     * change the answer (the default). The engine wakes itself then (its one timer serves this and
     * the waiters' deadlines) and offers the first waiter again; if the clock has passed that time
     * already, it offers it again at once. So the time must be later than the refusal's reading of
     * the clock (then the next offer admits); a time not after it would be offered in a loop. Owner
     * only; used only with a clock.
     *
     * @param tag the refused waiter's tag
     * @return when to offer again, or {@link #NO_DEADLINE}
     */
    protected long ruleReadyAt(Object tag) {
        return NO_DEADLINE;
    }

    /**
     * Returns the error an expired waiter with {@code tag} ends with.
     *
     * @param tag the tag
     * @return the error
     */
    protected Throwable ruleTimeout(Object tag) {
        return new TimeoutException(this + ": the deadline passed before admission");
    }

    /** Closes from inside the rule (a phase that can no longer complete); owner only. */
    protected final void closeFromRule() {
        assert ownedHere() : "I1: closeFromRule outside ownership";
        closeRequested = true; // applied by the drain before it admits anyone else
    }

    // ---- entry points outside ownership: a permit rule overrides them (part 9) ----

    /**
     * An arrival at the waiting door whose fast path failed, before its node is queued: {@link #ENTER}
     * (admitted now), {@link #QUEUE} (push it; the owner decides), or {@link #REFUSE} (closed: the
     * node ends cancelled, not queued). The engine's answer: {@link #QUEUE}.
     *
     * @param tag the waiter's tag
     * @return the answer
     */
    protected int arrive(Object tag) {
        return QUEUE;
    }

    /**
     * An arrival that {@link #arrive} answered {@link #QUEUE} found the intake closed: not queued.
     *
     * @param tag the waiter's tag
     */
    protected void arrivalRefused(Object tag) {}

    /**
     * The fast path: admits a waiter with {@code tag} now if nothing is queued and the rule allows;
     * no allocation. The engine decides under ownership; a permit rule overrides it (part 9).
     *
     * @param tag the waiter's tag
     * @return whether admitted
     */
    public boolean tryEnterNow(Object tag) {
        if (watchesArrivals || closeRequested || intake.hasWaiters() || !tryOwn()) {
            return false;
        }
        boolean entered = false;
        try {
            applyRequests();
            if (!closeRequested && order.isEmpty() && !intake.hasWaiters()) { // I2, under ownership
                entered = ruleTryEnter(tag);
            }
        } catch (Throwable t) {
            breakRule(); // a rule hook threw (part 7)
            throw t;
        }
        drain(false, false); // applies a close or releases that raced us, then the re-check
        return entered;
    }

    /**
     * Gives back {@code weight}: an admission's exit (once per admission), or a rule's own release.
     * The engine applies it to the rule under ownership; a permit rule first counts it on its lane
     * and comes here only when a queued waiter is owed it (part 9).
     *
     * @param weight the weight (a sum of {@link #ruleWeight}s)
     */
    public void release(long weight) {
        if (ownedByCaller()) { // a holder resumed inside this thread's own drain (part 8)
            ownedReleases += weight; // applied by the drain's next pass, before it decides (part 5)
            return;
        }
        if (tryOwn()) {
            try {
                ruleLeave(weight);
            } catch (Throwable t) {
                breakRule(); // a rule hook threw (part 7)
                throw t;
            }
        } else {
            PENDING_RELEASES.getAndAdd(this, weight); // owed by the owner (part 5)
            if (!tryOwn()) {
                return;
            }
        }
        drain(false, false);
    }

    // ---- doors and requests ----

    /**
     * The waiting door's body: queues {@code node} with {@code tag} (or admits it at once), to be
     * admitted by the owner. The run loop has tried {@link #tryEnterNow} first.
     *
     * @param node the waiter: a task's suspension step, or a select clause
     * @param tag what it asks for
     */
    public final void enter(WaitNode node, Object tag) {
        int arrival = arrive(tag);
        if (arrival == ENTER) {
            if (!node.admit(null)) {
                release(ruleWeight(tag)); // departed meanwhile: give the admission back (part 7)
                endedAtOnce(WaitObserver.CANCELLED);
            } else {
                endedAtOnce(WaitObserver.ADMITTED);
            }
            return;
        }
        if (arrival == REFUSE) {
            node.abandon(closedReason);
            endedAtOnce(WaitObserver.CANCELLED);
            return;
        }
        node.tag(tag); // published by the push
        WaitTiming timing = startTiming(tag); // null unless someone observes waits
        if (timing != null) {
            timings().put(node, timing); // before the push that publishes the node
        }
        if (appendsDirectly && ownedByCaller() && !closeRequested && !intake.hasWaiters()) {
            // On the owner's own thread (a holder resumed inside its drain, part 8), with nobody
            // older in the intake: the newest arrival goes straight to the order's tail (I5's
            // exception), with no push and no take.
            node.cancelInto(intake); // its departure is reported as a taken waiter's is
            arrived(node);
            return; // the drain this thread runs decides it, before it lets go of ownership
        }
        if (intake.push(node) != null) {
            arrivalRefused(tag);
            node.abandon(closedReason); // refused: CLOSED
            if (timing != null) {
                WaitTiming t = takeTiming(node);
                if (t != null) {
                    waitEnded(t, WaitObserver.CANCELLED);
                }
            }
            return;
        }
        tryOwnAndDrain(); // the owner admits it (or a later owner, part 5)
    }

    /**
     * Returns the body of a task that waits for admission with {@code tag} (for
     * {@code Task.create}): it tries {@link #tryEnterNow} in the run loop first, then
     * {@link #enter}s its step.
     *
     * @param tag what the waiter asks for
     * @return the body
     */
    public final Consumer<Object> waitingDoor(Object tag) {
        return new Door(tag, true);
    }

    /**
     * Returns the body of a task that is admitted with {@code tag} now or completes cancelled without
     * queueing (for {@code Task.create}).
     *
     * @param tag what the waiter asks for
     * @return the body
     */
    public final Consumer<Object> tryingDoor(Object tag) {
        return new Door(tag, false);
    }

    /**
     * Sends {@code count} signals to the rule (readiness, arrivals, updates): applied by the owner
     * through {@link #ruleSignal(int)} before it next admits anyone.
     *
     * @param count the signals
     */
    public final void signal(int count) {
        PENDING_SIGNALS.getAndAdd(this, count);
        tryOwnAndDrain();
    }

    /**
     * Accounts a waiter with {@code tag} that departed without being queued (a permit rule's refused
     * arrival), as a queued one that departed: its weight reaches {@link #ruleDeparted}.
     *
     * @param tag the waiter's tag
     */
    protected final void departedUnqueued(Object tag) {
        postDeparture(ruleWeight(tag));
    }

    /** The intake's Departures: a queued waiter departed (its node's hook, on the departing thread). */
    private void waiterDeparted(WaitNode node) {
        WaitTiming t = takeTiming(node);
        if (t != null) {
            waitEnded(t, WaitObserver.CANCELLED); // (an expiry takes it before it rejects the node)
        }
        postDeparture(ruleWeight(node.tag()));
    }

    private void postDeparture(long weight) {
        PENDING_DEPARTURES.getAndAdd(this, weight);
        tryOwnAndDrain();
    }

    /** The expiry timer fired (on the timer's thread). */
    private void expiryFired() {
        pendingExpiry = 1;
        tryOwnAndDrain();
    }

    /**
     * Closes: every queued waiter completes on the cancelled channel, and every later arrival
     * completes cancelled without being queued. Admitted work is not interrupted. Idempotent; never
     * throws.
     */
    public final void close() {
        closeRequested = true;
        tryOwnAndDrain();
    }

    /**
     * Closes (as {@link #close()}) and then returns the admissions still outstanding.
     *
     * @return the admissions outstanding by the rule's state
     * @throws IllegalStateException if another thread is admitting or releasing at this instant
     */
    public final long closeAndCountAdmitted() {
        closeRequested = true;
        if (!tryOwn()) {
            throw new IllegalStateException(
                    "closeAndCheck: work is still entering or leaving the gate; complete it first");
        }
        return drain(true, false);
    }

    /**
     * Returns whether closed or closing ({@link #close()} called, or the rule closed).
     *
     * @return whether closed
     */
    public final boolean isClosed() {
        return closeRequested;
    }

    /**
     * Runs {@code action} under this engine's ownership, as a rule hook runs, then drains and
     * releases ownership as every owner does: for white-box tests that drive a rule's hooks by hand.
     * An action that throws breaks the engine, as a rule hook that throws does.
     *
     * @param action the hooks to run
     * @throws IllegalStateException if another thread owns the decision at this instant
     */
    public final void runOwned(Runnable action) {
        if (!tryOwn()) {
            throw new IllegalStateException("runOwned: another thread owns the decision");
        }
        try {
            action.run();
        } catch (Throwable t) {
            breakRule();
            throw t;
        }
        drain(false, false);
    }

    /**
     * Returns the waiter nodes this engine still links, departed or not, in its intake and its
     * order: a racy snapshot, for tests that check departed waiters do not pile up.
     *
     * @return the linked waiter nodes
     */
    public final int linkedWaiters() {
        return intake.linkedCount() + order.size();
    }

    /**
     * A snapshot of the released weights not yet applied by an owner, for monitoring.
     *
     * @return the pending released weights
     */
    protected final long pendingReleasesSnapshot() {
        return pendingReleases;
    }

    // ---- ownership and the drain ----

    private boolean tryOwn() {
        if (owner == 0 && OWNER.compareAndSet(this, 0, 1)) {
            ownerThread = Thread.currentThread();
            return true;
        }
        return false;
    }

    private boolean ownedHere() {
        return owner == 1 && ownerThread == Thread.currentThread();
    }

    /**
     * Whether the calling thread owns the decision: a plain read, exact for the caller (part 5, the
     * owner's own requests): only the owner writes ownerThread, and it clears it before it releases.
     */
    private boolean ownedByCaller() {
        return ownerThread == Thread.currentThread();
    }

    private void tryOwnAndDrain() {
        if (tryOwn()) {
            drain(false, false);
        }
    }

    /** Owner only: applies the requests other threads left (part 5): releases, signals, departures. */
    private void applyRequests() {
        assert ownedHere() : "I1: applyRequests outside ownership";
        if (ownedReleases != 0) { // released on this thread while it owned (part 5)
            long r = ownedReleases;
            ownedReleases = 0;
            ruleLeave(r);
        }
        if (pendingReleases != 0) {
            ruleLeave((long) PENDING_RELEASES.getAndSet(this, 0L));
        }
        if (pendingSignals != 0) {
            ruleSignal((int) PENDING_SIGNALS.getAndSet(this, 0));
        }
        if (pendingDepartures != 0) {
            ruleDeparted((long) PENDING_DEPARTURES.getAndSet(this, 0L));
            order.purgeIfCrowded();
        }
    }

    /**
     * Owner only: drains until nothing is left to do, releases ownership with the re-check of part
     * 5, and returns the admissions outstanding seen under ownership if {@code count}.
     * {@code deferred}: this thread runs a trampoline item, so resumptions queue behind it; if not,
     * the first resumption that must not run inside the drain (part 8) moves the rest of the drain
     * into the trampoline ({@link InTrampoline}), still owning.
     */
    private long drain(boolean count, boolean deferred) {
        try {
            long admitted = 0;
            for (;;) {
                int done = drainOnce(deferred);
                if (done == RESUME) { // not deferred, and about to resume a waiter
                    long inside = InTrampoline.drain(this, count);
                    if (inside != InTrampoline.ALREADY_INSIDE) {
                        return inside; // drained and released inside the trampoline
                    }
                    deferred = true; // a trampoline item runs on this thread: resumptions queue behind it
                    continue;
                }
                if (count) {
                    admitted = ruleAdmitted();
                    count = false;
                }
                assert ownedReleases == 0 : "the owner's own releases are applied before it lets go";
                ownerThread = null; // before the release of owner: a later owner's write is the only one after it
                owner = 0; // release: publishes the plain state to the next owner
                if (pendingReleases == 0 && pendingSignals == 0 && pendingDepartures == 0
                        && pendingExpiry == 0
                        && !(closeRequested && intake.state() != CLOSED)
                        && !(done == ROOM && intake.hasWaiters())) {
                    return admitted;
                }
                if (!tryOwn()) {
                    return admitted; // the thread that owns now does it
                }
            }
        } catch (Throwable t) {
            breakRule(); // a rule hook threw (part 7)
            throw t;
        }
    }

    /** drainOnce's answers: whether a waiter pushed now could be decided (part 5), or see RESUME. */
    private static final int NO_ROOM = 0, ROOM = 1;
    /** drainOnce's answer when a resumption must move into the trampoline first (part 8). */
    private static final int RESUME = 2;

    /**
     * Owner only: one pass; first makes the admit CAS of {@code admitting}, if set. Returns
     * {@link #ROOM} if a waiter pushed now could be decided, {@link #NO_ROOM} otherwise, or, if not
     * {@code deferred}, {@link #RESUME} before it would abandon or reject a waiter (changing nothing),
     * or once the rule has admitted a waiter whose admit CAS must not resume it inside the drain
     * (left in {@code admitting}).
     */
    private int drainOnce(boolean deferred) {
        assert ownedHere() : "I1: drain outside ownership";
        WaitNode a = admitting;
        if (a != null) { // decided by the pass that moved the drain into the trampoline
            admitting = null;
            admit(a);
        }
        for (;;) {
            applyRequests(); // admitted work resumed inline may have released, signalled or arrived
            if (closeRequested && intake.state() != CLOSED) {
                if (!deferred) {
                    return RESUME; // abandoning resumes the waiters
                }
                closeNow();
                return NO_ROOM;
            }
            if (expiry != null && expiry.due()) {
                if (!deferred) {
                    return RESUME; // rejecting resumes the waiters
                }
                expiry.expire();
                continue;
            }
            if (takesEveryArrival && intake.hasWaiters()) {
                takeArrivals(); // every arrival reaches the rule (and the expiry heap) before a decision
                continue;
            }
            if (order.size() > queueLimit) { // I6: a newer waiter supersedes the oldest
                if (!deferred) {
                    return RESUME; // superseding resumes the waiter
                }
                WaitNode oldest = order.first();
                order.removeFirst();
                oldest.abandon(); // completes cancelled; a settled one is only dropped
                continue;
            }
            WaitNode w = order.first();
            if (w == null) {
                boolean room = ruleCanEnter(); // once: a predicate rule evaluates its predicate here
                if (!room || !intake.hasWaiters()) {
                    return room || takesEveryArrival ? ROOM : NO_ROOM; // I5: undecidable waiters stay queued
                }
                takeArrivals();
                continue;
            }
            if (!order.blocksLaterArrivals() && intake.hasWaiters()) {
                takeArrivals(); // a keyed order: an arrival queued before this decision may rank first
                continue;
            }
            if (w.isSettled()) { // departed while in the order
                order.removeFirst();
                continue;
            }
            if (w.isCancelRequested()) {
                if (!deferred) {
                    return RESUME;
                }
                order.removeFirst();
                w.abandon(); // do not admit a task that is being cancelled
                continue;
            }
            if (expiry != null && expiry.passedFor(w)) {
                continue; // its deadline passed before its timer fired: expired, never admitted
            }
            if (!ruleTryEnter(w.tag())) {
                if (expiry != null) {
                    expiry.retryAt(ruleReadyAt(w.tag())); // a rule of time: wake when it could admit w
                    if (expiry.due()) {
                        continue; // that time passed while the rule decided (or the timer fired): again now
                    }
                }
                if (order.blocksLaterArrivals()) {
                    return takesEveryArrival ? ROOM : NO_ROOM; // I2: the first waiter blocks the later ones
                }
                return takesEveryArrival || ruleCanEnter() ? ROOM : NO_ROOM; // a later arrival may rank first
            }
            order.removeFirst();
            if (!deferred && (ruleCanEnter() || ruleAdmitted() != 1)) {
                admitting = w; // others could run meanwhile: admit it from the trampoline (part 8)
                return RESUME;
            }
            admit(w);
        }
    }

    /** Owner only: moves the intake's waiters, in arrival order, into the order (part 2). */
    private void takeArrivals() {
        assert ownedHere() : "I1: takeArrivals outside ownership";
        assert takesEveryArrival || !order.blocksLaterArrivals() || order.isEmpty() : "I5";
        // Not CLOSED: close is applied before arrivals are taken. May take OPEN back if the only
        // waiter departed meanwhile.
        WaitNode w = intake.drain(intake.exchange(OPEN));
        while (w != null) {
            WaitNode next = WaitQueue.next(w);
            arrived(w);
            w = next;
        }
    }

    /** Owner only: puts a taken (or directly appended) arrival in the order, tells the rule. */
    private void arrived(WaitNode w) {
        order.add(w);
        Object tag = w.tag();
        Object stamped = ruleArrived(tag);
        if (stamped != tag) {
            w.tag(stamped); // owner only from here on (a departing thread reads the weight)
        }
        if (expiry != null) {
            long deadline = ruleDeadline(w.tag()); // of the stamped tag: the rule may have judged it
            if (deadline != NO_DEADLINE) {
                expiry.add(w, deadline);
            }
        }
        order.purgeIfCrowded();
    }

    /** Owner only, deferred: applies close (I4). */
    private void closeNow() {
        assert ownedHere() : "I1: close applied outside ownership";
        Object taken = intake.exchange(CLOSED);
        for (WaitNode w; (w = order.first()) != null; ) {
            order.removeFirst();
            w.abandon(closedReason);
        }
        WaitQueue.abandonAll(intake.drain(taken), closedReason);
        if (expiry != null) {
            expiry.disarm();
        }
        assert intake.state() == CLOSED && order.isEmpty() : "I4";
    }

    /**
     * Owner only, when a rule hook has thrown (a bug in the rule; no shipped rule throws): the rule's
     * state can no longer be trusted, so the engine breaks for good. It is closed, every waiter (the
     * one being admitted, the order, the intake) ends cancelled without another rule hook being
     * called, and this thread keeps ownership for ever, so no later operation asks the rule again:
     * later entries are refused (closed), later exits only add to the pending word. The error then
     * propagates to the operation that ran the hook. Idempotent.
     */
    private void breakRule() {
        closeRequested = true;
        WaitNode a = admitting;
        admitting = null;
        if (a != null) {
            a.abandon();
        }
        Object taken = intake.exchange(CLOSED);
        for (WaitNode w; (w = order.first()) != null; ) {
            order.removeFirst();
            w.abandon();
        }
        WaitQueue.abandonAll(intake.drain(taken));
        if (expiry != null) {
            expiry.disarm();
        }
    }

    /** Owner only: admits {@code w}, decided with ruleTryEnter; undoes it if it departed first (I3). */
    private void admit(WaitNode w) {
        Object tag = w.tag(); // read first: once admitted, the waiter may run on and reuse its node
        WaitTiming t = takeTiming(w);
        if (w.admit(null)) {
            ruleEntered(tag);
            if (t != null) {
                waitEnded(t, WaitObserver.ADMITTED);
            }
        } else {
            ruleUndo(tag);
            if (t != null) {
                waitEnded(t, WaitObserver.CANCELLED); // it departed first; its departure found the timing taken
            }
        }
    }

    /**
     * Owner only: the waiters with a deadline, in a heap by deadline, and the one timer, armed for
     * the earliest of those deadlines and the rule's ready time (ruleReadyAt). A waiter stays in the heap when it is admitted or departs, until it surfaces or
     * the heap is purged (WaitOrder's purging).
     */
    private final class Expiry {
        private final TimeSource clock;
        private final WaitOrder.ByKey heap = new WaitOrder.ByKey(null);
        private final TimerRequest fire = AdmissionEngine.this::expiryFired; // the owner protocol: any thread
        /** The deadline the timer is armed for, or NO_DEADLINE. */
        private long armedAt = NO_DEADLINE;
        private Runnable disarmTimer;
        /** A deadline has passed before its timer could fire: expire in this drain, without the timer. */
        private boolean passed;

        Expiry(TimeSource clock) {
            this.clock = clock;
        }

        void add(WaitNode w, long deadline) {
            heap.add(w, deadline);
            heap.purgeIfCrowded();
            if (deadline < armedAt) {
                if (deadline <= clock.nanoTime()) {
                    passed = true; // expire in this drain, without a timer
                } else {
                    arm(deadline);
                }
            }
        }

        boolean due() {
            return passed || pendingExpiry != 0;
        }

        /**
         * The rule refused the first waiter until {@code at}: wake then (part 2's offer). Nothing
         * to remember: every pass that the timer starts offers the first waiter again, and a refusal
         * then arms the timer anew.
         */
        void retryAt(long at) {
            if (at < armedAt) {
                if (at <= clock.nanoTime()) {
                    passed = true; // already there: offer again in this drain
                } else {
                    arm(at);
                }
            }
        }

        /**
         * Whether {@code w}'s deadline has passed by the clock (its timer may not have fired yet):
         * then the next pass expires it instead of admitting it. Read before every hand-off, so that
         * no waiter is admitted at or after its deadline.
         */
        boolean passedFor(WaitNode w) {
            long deadline = ruleDeadline(w.tag());
            if (deadline != NO_DEADLINE && deadline <= clock.nanoTime()) {
                passed = true;
                return true;
            }
            return false;
        }

        /**
         * Rejects every expired waiter, then re-arms for the earliest deadline left. Deadlines are
         * absolute times on the clock, compared as plain longs (a rule saturates them; part 10).
         */
        void expire() {
            passed = false;
            pendingExpiry = 0; // a fire that lands after this write is seen again; one before it is covered by now
            long now = clock.nanoTime();
            if (now >= armedAt) { // the armed timer is due: it fired, or is about to (a stale fire otherwise)
                disarm(); // if it has not fired yet it never will: one timer per engine, even then
            }
            while (heap.size() > 0) {
                WaitNode w = heap.first();
                if (w.isSettled()) {
                    heap.removeFirst();
                    continue;
                }
                if (heap.firstKey() > now) {
                    break;
                }
                heap.removeFirst();
                WaitTiming t = takeTiming(w);
                boolean expired = w.reject(ruleTimeout(w.tag())); // departs: its weight reaches ruleDeparted next pass
                if (t != null) {
                    waitEnded(t, expired ? WaitObserver.TIMED_OUT : WaitObserver.CANCELLED);
                }
            }
            if (heap.size() > 0 && heap.firstKey() < armedAt) {
                arm(heap.firstKey());
            }
        }

        private void arm(long deadline) {
            disarm();
            armedAt = deadline;
            disarmTimer = clock.scheduleAt(fire, deadline); // absolute: a clock that moved meanwhile is fine
            if (clock.nanoTime() >= deadline) {
                passed = true; // it moved past the deadline before the timer was in: expire in this drain
            }
        }

        void disarm() {
            Runnable d = disarmTimer;
            disarmTimer = null;
            armedAt = NO_DEADLINE;
            if (d != null) {
                d.run();
            }
        }
    }

    /**
     * An owner's drain run as the outermost item of its thread's {@link Trampoline} (part 8): the
     * waiters it settles resume inline through that trampoline, so they queue behind the drain and
     * run once it has released ownership, instead of running inside it while it owns. One per
     * thread, reused.
     */
    private static final class InTrampoline implements Runnable {
        /** {@link #drain}'s answer when a trampoline item already runs on this thread. */
        static final long ALREADY_INSIDE = Long.MIN_VALUE;

        private static final ThreadLocal<InTrampoline> CURRENT = ThreadLocal.withInitial(InTrampoline::new);

        /** Whether this thread is inside a {@link Trampoline#run} that {@link #drain} started. */
        private boolean active;
        /** The engine to drain, set only within one call of {@link #drain}; null once taken. */
        private AdmissionEngine engine;
        private boolean count;
        private long admitted;

        /**
         * Owner only: drains {@code engine} as the outermost trampoline item and returns its
         * admitted count (see drain), or {@link #ALREADY_INSIDE}, having done nothing, if this
         * thread already runs a trampoline item: resumptions then queue behind that one anyway.
         */
        static long drain(AdmissionEngine engine, boolean count) {
            InTrampoline d = CURRENT.get();
            if (d.active) {
                return ALREADY_INSIDE; // a waiter resumed behind an earlier drain, now releasing
            }
            d.engine = engine;
            d.count = count;
            d.active = true;
            try {
                Trampoline.run(d, null); // runs d now, then whatever it resumed; or queues d
            } finally {
                d.active = false;
            }
            if (d.engine == null) {
                return d.admitted;
            }
            d.engine = null; // queued behind another trampoline item: the entry will find no engine
            return ALREADY_INSIDE;
        }

        @Override
        public void run() {
            AdmissionEngine e = engine;
            if (e != null) { // null: an entry queued behind another item; its caller drained itself
                boolean c = count;
                engine = null;
                admitted = e.drain(c, true);
            }
        }
    }

    /**
     * The body of a door (for {@code Task.create}): the run loop tries {@link #tryNow} first; then
     * the waiting door enters the step, the trying door admits it now or cancels it.
     */
    private final class Door implements Consumer<Object>, FastPath {
        private final Object tag;
        private final boolean waits;

        Door(Object tag, boolean waits) {
            this.tag = tag;
            this.waits = waits;
        }

        @Override
        public Object tryNow() {
            return tryEnter(tag) ? null : NOT_NOW;
        }

        @Override
        public void accept(Object completer) {
            WaitNode node = (WaitNode) completer; // every Task.create completer is its step (a WaitNode)
            if (waits) {
                enter(node, tag);
            } else if (!tryEnterNow(tag)) {
                node.abandon(closeRequested ? closedReason : null); // a refused try: not a wait, not reported
            } else if (!node.admit(null)) {
                release(ruleWeight(tag)); // cancelled meanwhile: give the admission back (part 7)
                endedAtOnce(WaitObserver.CANCELLED);
            } else {
                endedAtOnce(WaitObserver.ADMITTED);
            }
        }
    }

    private static final VarHandle OBSERVERS;
    private static final VarHandle TIMINGS;
    private static final VarHandle OWNER;
    private static final VarHandle PENDING_RELEASES;
    private static final VarHandle PENDING_SIGNALS;
    private static final VarHandle PENDING_DEPARTURES;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            OWNER = lookup.findVarHandle(AdmissionEngine.class, "owner", int.class);
            OBSERVERS = MethodHandles.lookup().findVarHandle(AdmissionEngine.class, "observers", WaitObserver[].class);
            TIMINGS = lookup.findVarHandle(AdmissionEngine.class, "timings", ConcurrentHashMap.class);
            PENDING_RELEASES = lookup.findVarHandle(AdmissionEngine.class, "pendingReleases", long.class);
            PENDING_SIGNALS = lookup.findVarHandle(AdmissionEngine.class, "pendingSignals", int.class);
            PENDING_DEPARTURES = lookup.findVarHandle(AdmissionEngine.class, "pendingDepartures", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
