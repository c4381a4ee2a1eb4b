/**
 * Asynchronous I/O on an event loop (seed 004): {@link dev.coro.io.EventLoop}, a scheduler that owns
 * one thread, one {@link java.nio.channels.Selector}, its timers and an inbox for work from other
 * threads; and tasks that read, write, accept and connect on channels bound to it
 * ({@link dev.coro.io.AsyncChannel} for any selectable channel, such as a pipe;
 * {@link dev.coro.io.AsyncSocket} and {@link dev.coro.io.AsyncServerSocket} for TCP).
 *
 * <p>Every operation is tried at once and suspends its task only if the channel would block; the
 * loop resumes it when the selector reports the channel ready. Tasks that run on the loop resume on
 * the loop, whatever they wait for.
 */
package dev.coro.io;
