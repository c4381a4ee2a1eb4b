/**
 * Schedulers: where work runs and how it waits for time. {@link dev.coro.scheduler.Scheduler} is the
 * one interface; {@link dev.coro.scheduler.WorkStealingPool} multiplexes work on a few threads,
 * {@link dev.coro.scheduler.Scheduler#inline()} runs it on the calling thread, and
 * {@link dev.coro.scheduler.Scheduler#from(java.util.concurrent.Executor)} adapts any executor.
 * Schedulers run {@link java.lang.Runnable}s and know nothing of tasks.
 */
package dev.coro.scheduler;
