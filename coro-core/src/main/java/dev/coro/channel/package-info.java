/**
 * Channels, {@code select} and generators: {@link dev.coro.channel.Channel} carries
 * elements between tasks (rendezvous, buffered, unlimited or conflated), a task waits on several
 * channel operations at once with {@link dev.coro.channel.Select}, a {@link dev.coro.channel.Generator}
 * produces values on demand, and {@link dev.coro.channel.Flows} connects channels to
 * {@link java.util.concurrent.Flow}. Waiting suspends the task, never its thread; every waiting
 * operation also has a blocking door for plain and virtual threads.
 */
package dev.coro.channel;
