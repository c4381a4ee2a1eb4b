package dev.coro.gate;

import dev.coro.internal.AdmissionEngine;

import dev.coro.task.Task;
import java.util.concurrent.Callable;

/**
 * A gate that admits any number of readers together, or one writer alone (P4215's
 * {@code read_write_gate}): a cache that many lookups read at once while an update must run alone,
 * or a configuration that requests read while a reload replaces it. Readers enter with
 * {@link #withinRead(Task)}, writers with {@link #withinWrite(Task)}; each leaves when its work
 * completes, on every path, so the gate cannot be left held.
 *
 * <p><b>Admission rule.</b> At every moment either any number of readers and no writer are admitted,
 * or exactly one writer and no reader. A reader is admitted when no writer is admitted; a writer when
 * nothing is admitted.
 *
 * <p><b>Fairness.</b> Strictly FIFO over both kinds: waiters are admitted in the order their
 * acquisition reached the gate, and a newcomer never overtakes a queued waiter (no barging). FIFO
 * because it needs no policy of its own and bounds every wait: a writer waits only for the work
 * admitted before it, never for readers that come later, and readers are not starved by a stream of
 * writers either. Consequences: a reader that arrives while a writer waits waits too, behind the
 * writer, even though the readers admitted at that moment would let it share; and the readers queued
 * together between two writers are admitted together, as one group, when the writer before them
 * leaves. Every waiter is eventually admitted while admitted work completes and the gate stays open.
 *
 * <p><b>Try.</b> {@link #tryWithinRead(Task)}, {@link #tryAcquireRead()} and their write twins admit
 * only if the rule allows it now, nobody is queued (a waiting writer makes a try-read decline even
 * while readers are admitted) and no other thread is deciding an admission at that instant; otherwise
 * they complete on the cancelled channel without queueing and without running the work.
 *
 * <p><b>Close.</b> {@link #close()} completes every queued waiter of both kinds on the cancelled
 * channel, and every later acquisition of either kind completes cancelled without running its work;
 * admitted work runs to its end. Java has no destructor, so the destruction rule is
 * {@link #closeAndCheck()}: it closes and throws {@link IllegalStateException} if admitted work
 * remains (separate from {@code close()}, which must be safe from any completion path while work
 * still runs).
 *
 * <p><b>Cancellation of a waiter.</b> A waiter whose task is cancelled completes on the cancelled
 * channel and gives up its place; if the hand-off won the race, the work is admitted and leaves the
 * gate when it ends (one CAS decides, so no admission is lost or left held). A cancelled waiting
 * writer stops blocking at once: the readers queued behind it are admitted as soon as the
 * cancellation is seen, alongside the readers already admitted.
 *
 * <p><b>Where admitted work starts.</b> On the waiter's own scheduler: inline (through a trampoline)
 * when the thread whose work leaves the gate already runs that scheduler, otherwise by submission.
 * An operation admitted at once continues on the thread that asked.
 *
 * <p><b>Bad input.</b> A null task or body: {@link NullPointerException}.
 *
 * <p><b>Thread-safety and memory effects.</b> Lock-free. Actions of a writer before it leaves the
 * gate happen-before the actions of every operation admitted after it; actions of a reader before it
 * leaves happen-before the admission of the next writer. Readers admitted together are not ordered
 * with one another.
 *
 * {@snippet :
 * ReadWriteGate cacheGate = new ReadWriteGate();
 * Task<Record> lookup = cacheGate.withinRead(Task.fromCallable(() -> cache.lookup(key))); // many at once
 * Task<Void> insert = cacheGate.withinWrite(Task.fromRunnable(() -> cache.insert(record))); // alone
 * }
 */
public final class ReadWriteGate extends AdmissionGate {
    /* Rule state (Rule, below). readers (admitted readers not yet left) and writing (a writer is
     * admitted), plain fields touched only by the engine's owner (AdmissionEngine I1). Invariant:
     * !writing || readers == 0. A writer is admitted only when readers == 0 and !writing; a reader
     * only when !writing. A waiter's tag is READ or WRITE; its weight is 1 for a reader and 2^32 for a
     * writer, so one released sum counts both kinds (readers in the low 32 bits, writers above). The
     * fairness is the engine's (I2): the oldest refused waiter, reader or writer, blocks the younger
     * ones, so the rule itself never looks at the queue. ruleCanEnter is "a reader could enter" (the
     * least demanding kind): while readers are admitted the engine still takes the intake, so a
     * waiting writer reaches the head of the order and blocks the readers after it there. readers()
     * and isWriting() read the plain fields racily, for monitoring only. */

    /** A reader's tag. */
    static final Object READ = new Object() {
        @Override
        public String toString() {
            return "READ";
        }
    };
    /** A writer's tag. */
    static final Object WRITE = new Object() {
        @Override
        public String toString() {
            return "WRITE";
        }
    };
    /** A writer's weight: writers are counted above bit 32 of a released sum. */
    static final long WRITER = 1L << 32;

    private final Door read = new Door(READ, 1);
    private final Door write = new Door(WRITE, WRITER);

    /** Creates an open gate with nothing admitted. */
    public ReadWriteGate() {
        super(new Rule());
    }

    // ---- read door ----

    /**
     * Returns a task that waits until this gate admits the caller as a reader and completes with the
     * {@link Admission}, whose {@link Admission#exit()} leaves the gate. Prefer
     * {@link #withinRead(Task)}, which exits on every completion path by construction. The task may be
     * started any number of times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing (its place in line is lost); if the admission won the race, it completes with the
     * admission, which must be exited. After {@link #close()} a run completes cancelled.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquireRead() {
        return read.acquire();
    }

    /**
     * Returns a task that completes with a read {@link Admission} if this gate admits the caller as a
     * reader immediately (no writer admitted, nobody queued, no other thread deciding an admission),
     * and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquireRead() {
        return read.tryAcquire();
    }

    /**
     * Returns a task that waits for admission as a reader, then runs {@code work}, then leaves the
     * gate when {@code work} completes on any channel (value, error or cancellation). If the wait is
     * cancelled, or the gate is closed, the task completes cancelled and {@code work} does not run; if
     * the cancellation comes once the admission is handed over, the admission is exited when
     * {@code work} ends (at once if {@code work} ends cancelled at its first step). The task ends with
     * {@code work}'s outcome. A reader queued behind a waiting writer waits for that writer (FIFO).
     *
     * @param work the work to admit as a reader
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> withinRead(Task<T> work) {
        return read.within(work);
    }

    /**
     * Returns a task that runs {@code work} as a reader only if it is admitted immediately: otherwise
     * it completes on the cancelled channel, without queueing and without running {@code work}.
     * "Immediately" means: no writer is admitted, no waiter of either kind is queued, and no other
     * thread is deciding an admission at that instant. An admitted {@code work} leaves the gate on
     * every completion path, as with {@link #withinRead(Task)}.
     *
     * @param work the work to admit as a reader
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithinRead(Task<T> work) {
        return read.tryWithin(work);
    }

    /**
     * Blocks the calling thread until it is admitted as a reader (parking only the virtual thread on a
     * virtual thread), runs {@code body} on it, leaves the gate and returns the body's value:
     * {@code withinRead(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit as a reader
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of the body
     *     (an unchecked one is rethrown as is)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T callRead(Callable<? extends T> body) {
        return read.call("callRead", body);
    }

    // ---- write door ----

    /**
     * Returns a task that waits until this gate admits the caller as the writer and completes with
     * the {@link Admission}, whose {@link Admission#exit()} leaves the gate. Prefer
     * {@link #withinWrite(Task)}, which exits on every completion path by construction. The task may
     * be started any number of times; each run waits for its own admission.
     *
     * <p>Cancellation: a run cancelled while it waits completes on the cancelled channel and holds
     * nothing (its place in line is lost, and the readers queued behind it may enter); if the
     * admission won the race, it completes with the admission, which must be exited. After
     * {@link #close()} a run completes cancelled.
     *
     * @return the acquiring task
     */
    public Task<Admission> acquireWrite() {
        return write.acquire();
    }

    /**
     * Returns a task that completes with a write {@link Admission} if this gate admits the caller as
     * the writer immediately (nothing admitted, nobody queued, no other thread deciding an
     * admission), and otherwise completes on the cancelled channel without queueing.
     *
     * @return the trying task
     */
    public Task<Admission> tryAcquireWrite() {
        return write.tryAcquire();
    }

    /**
     * Returns a task that waits for admission as the writer, then runs {@code work} alone, then
     * leaves the gate when {@code work} completes on any channel (value, error or cancellation). If
     * the wait is cancelled, or the gate is closed, the task completes cancelled and {@code work} does
     * not run; if the cancellation comes once the admission is handed over, the admission is exited
     * when {@code work} ends (at once if {@code work} ends cancelled at its first step). The task ends
     * with {@code work}'s outcome. While it waits, readers that arrive after it wait behind it.
     *
     * @param work the work to admit as the writer
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> withinWrite(Task<T> work) {
        return write.within(work);
    }

    /**
     * Returns a task that runs {@code work} as the writer only if it is admitted immediately:
     * otherwise it completes on the cancelled channel, without queueing and without running
     * {@code work}. "Immediately" means: nothing is admitted, no waiter is queued, and no other thread
     * is deciding an admission at that instant. An admitted {@code work} leaves the gate on every
     * completion path, as with {@link #withinWrite(Task)}.
     *
     * @param work the work to admit as the writer
     * @param <T> the value type
     * @return the task
     * @throws NullPointerException if {@code work} is null
     */
    public <T> Task<T> tryWithinWrite(Task<T> work) {
        return write.tryWithin(work);
    }

    /**
     * Blocks the calling thread until it is admitted as the writer (parking only the virtual thread
     * on a virtual thread), runs {@code body} on it alone, leaves the gate and returns the body's
     * value: {@code withinWrite(Task.fromCallable(body)).join()}.
     *
     * @param body the work to admit as the writer
     * @param <T> the value type
     * @return the body's value
     * @throws NullPointerException if {@code body} is null
     * @throws java.util.concurrent.CancellationException if the gate is closed, or the thread is
     *     interrupted while it waits (the body does not run)
     * @throws java.util.concurrent.CompletionException wrapping a checked exception of the body
     *     (an unchecked one is rethrown as is)
     * @throws IllegalStateException if the calling thread runs a Coro scheduler's work (a pool
     *     worker, an event loop's thread), where blocking could hang it: see {@code Task.join()};
     *     nothing enters the gate then
     */
    public <T> T callWrite(Callable<? extends T> body) {
        return write.call("callWrite", body);
    }

    // ---- monitoring ----

    /**
     * Returns the number of admitted readers: a racy snapshot for monitoring, exact when no operation
     * is entering or leaving the gate; never a basis for a decision.
     *
     * @return admitted readers, at least 0
     */
    public int readers() {
        return (int) Math.max(0, rule().readers - rule().pendingReleased());
    }

    /**
     * Returns whether a writer is admitted: a racy snapshot for monitoring, exact when no operation
     * is entering or leaving the gate; never a basis for a decision.
     *
     * @return whether the writer's work is running
     */
    public boolean isWriting() {
        return rule().writing && rule().pendingReleased() >>> 32 == 0;
    }

    private Rule rule() {
        return (Rule) engine;
    }

    @Override
    public String toString() {
        return "ReadWriteGate[readers=" + readers() + ", writing=" + isWriting()
                + (isClosed() ? ", closed]" : "]");
    }

    /** The rule (owner only; see the note at the top of the class). */
    private static final class Rule extends AdmissionEngine {
        /** Admitted readers; read racily by {@link ReadWriteGate#readers()}. */
        private int readers;
        /** Whether a writer is admitted; read racily by {@link ReadWriteGate#isWriting()}. */
        private boolean writing;

        long pendingReleased() {
            return pendingReleasesSnapshot();
        }

        @Override
        protected long ruleWeight(Object tag) {
            return tag == WRITE ? WRITER : 1;
        }

        @Override
        protected boolean ruleTryEnter(Object tag) {
            if (writing) {
                return false;
            }
            if (tag == READ) {
                readers++;
                return true;
            }
            if (readers > 0) {
                return false;
            }
            writing = true;
            return true;
        }

        @Override
        protected boolean ruleCanEnter() {
            return !writing; // a reader could enter
        }

        @Override
        protected void ruleLeave(long released) {
            int r = (int) released;
            long w = released >>> 32;
            assert w == 0 || (w == 1 && writing && r == 0)
                    : "released " + r + " readers and " + w + " writers while writing=" + writing;
            readers -= r;
            assert readers >= 0 : "more readers left than entered: " + readers;
            if (w != 0) {
                writing = false;
            }
        }

        @Override
        protected long ruleAdmitted() {
            return readers + (writing ? 1 : 0);
        }
    }
}
