/**
 * Coro: coroutine-style asynchronous programming for the JVM.
 *
 * <p>Exported packages:
 * <ul>
 *   <li>{@link dev.coro.cancel}: cancellation sources and tokens;</li>
 *   <li>{@link dev.coro.gate}: the gates of P4215 (serial, read-write, capacity, readiness, completion, phase) on one admission engine;</li>
 *   <li>{@link dev.coro.scheduler}: schedulers (work-stealing pool, inline, executor adapter) with timers;</li>
 *   <li>{@link dev.coro.task}: lazy tasks, their composition, contexts and scopes;</li>
 *   <li>{@link dev.coro.sync}: the seeds' {@code Event} and {@code AsyncMutex};</li>
 *   <li>{@link dev.coro.channel}: channels, {@code select}, generators and {@code Flow} adapters;</li>
 *   <li>{@link dev.coro.io}: the event loop (a scheduler over a NIO selector, with timers) and asynchronous channels.</li>
 * </ul>
 * {@code dev.coro.internal} holds the shared lock-free machinery (the admission engine that every waiting
 * primitive's rule runs on, among it) and is not exported.
 */
module dev.coro {
    requires jdk.jfr; // the JFR events (dev.coro.internal.WaitEvent): part of the JDK
    exports dev.coro.cancel;
    exports dev.coro.gate;
    exports dev.coro.scheduler;
    exports dev.coro.task;
    exports dev.coro.sync;
    exports dev.coro.io;
    exports dev.coro.channel;
}
