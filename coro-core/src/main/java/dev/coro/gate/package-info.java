/**
 * Gates: shared objects that impose a non-local concurrency constraint on the
 * work that passes through them, all on one admission engine. {@link dev.coro.gate.SerialGate}
 * admits one operation at a time, {@link dev.coro.gate.ReadWriteGate} any number of readers together
 * or one writer alone (strict FIFO: a waiting writer is never bypassed by later readers), and
 * {@link dev.coro.gate.CapacityGate} at most k; these two count their permits with one atomic
 * instruction to enter and one to leave while nobody waits. {@link dev.coro.gate.ReadinessGate} holds work back
 * until {@code setReady()} establishes readiness; {@link dev.coro.gate.PredicateGate} admits while a
 * predicate over shared state is true, re-checked on {@code update()} and evaluated only under the
 * gate's ownership; {@link dev.coro.gate.CompletionGate} admits once {@code n} contributions have
 * arrived ({@code arrive()}, or {@code contribute(task)}). {@link dev.coro.gate.PhaseGate} is a
 * barrier: {@code arriveAndWait(work)} admits a participant's next-phase work once all n
 * participants have arrived and every work of the previous phase has ended; a participant that is
 * cancelled or whose work fails breaks (closes) the gate, so no one waits for ever.
 *
 * <p>Beyond these six (the gates of the C++ proposal P4215, whose names they keep), gates that change who is admitted next and what an admission costs:
 * {@link dev.coro.gate.KeyedSerialGate} serializes operations with equal keys and runs different keys
 * concurrently, {@link dev.coro.gate.BudgetGate} draws each operation's cost from a budget of units (strict FIFO),
 * {@link dev.coro.gate.PriorityGate} hands a freed slot to the highest priority (with optional aging),
 * and {@link dev.coro.gate.DeadlineGate} to the earliest deadline, failing a waiter with
 * {@link java.util.concurrent.TimeoutException} once its deadline passes.
 *
 * <p>Work enters with {@code within(task)} (or a gate's named door) and leaves when it completes, on
 * every completion path; {@code tryWithin(task)} runs it only if admission is immediate, else
 * completes cancelled; {@code call(callable)} is the blocking door for plain and virtual threads;
 * {@code close()} cancels waiters and later acquisitions, and {@code closeAndCheck()} checks the
 * destruction rule: a gate must outlive the work it admitted. The gates whose door is
 * {@code within(task)} share the interface {@link dev.coro.gate.Gate}, and the keyed serial gate
 * {@link dev.coro.gate.KeyedGate}, which their fleet-wide twins on Redis (module {@code coro-redis})
 * implement too: moving a limit from one JVM to many is a constructor change.
 *
 * <p>In other libraries' words: {@link dev.coro.gate.CapacityGate} is an asynchronous semaphore (a
 * bulkhead), {@link dev.coro.gate.SerialGate} a mutex around work, {@link dev.coro.gate.CompletionGate} a
 * latch, {@link dev.coro.gate.PhaseGate} a barrier, {@link dev.coro.gate.ReadWriteGate} a read-write
 * lock, {@link dev.coro.gate.RateGate} a rate limiter, and {@code within(task)} is {@code withPermit}.
 */
package dev.coro.gate;
