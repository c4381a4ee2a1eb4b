/**
 * Lazy, reusable tasks ({@link dev.coro.task.Task}), their three completion channels (value, error,
 * cancelled), the {@link dev.coro.task.Context} every task runs with, and
 * {@link dev.coro.task.Scope}, which spawns tasks and joins them.
 */
package dev.coro.task;
