/**
 * Coroutine-aware synchronization: {@link dev.coro.sync.Event} and
 * {@link dev.coro.sync.AsyncMutex}. Waiting suspends the task, never the thread, and a task resumes on
 * the scheduler it came from. Both also have a blocking door for plain and virtual threads.
 */
package dev.coro.sync;
