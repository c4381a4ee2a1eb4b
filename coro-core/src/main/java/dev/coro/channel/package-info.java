/**
 * Channels, {@code select} and generators (seed 004's list): {@code Channel} carries
 * elements between tasks (rendezvous, buffered, unlimited or conflated), a task waits on several
 * channel operations at once with {@code Select}, and a {@code Generator} produces
 * values on demand. Waiting suspends the task, never its thread; every waiting operation also has a
 * blocking door for plain and virtual threads.
 */
package dev.coro.channel;
