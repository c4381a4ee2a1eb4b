/**
 * Lazy, reusable tasks ({@link dev.coro.task.Task}), their three completion channels (value, error,
 * cancelled; {@link dev.coro.task.Outcome} as a value), the {@link dev.coro.task.Context} every task
 * runs with, {@link dev.coro.task.Scope}, which spawns tasks and joins them, and
 * {@link dev.coro.task.TaskHandle}, the handle of one run started by {@code Task.start}. In debug
 * mode ({@code -Dcoro.debug=true}), {@link dev.coro.task.CoroDebug} dumps the suspended tasks and what
 * they wait on, and errors carry an {@link dev.coro.task.AssemblyTrace}.
 */
package dev.coro.task;
