package dev.coro.internal;

/**
 * A timer's action that only posts a request to a lock-free owner (the admission engine's "a
 * deadline or a ready time has come") and takes no lock: a scheduler whose timers wait on a thread of
 * their own may run it on that thread when it comes due, instead of queueing it behind the
 * scheduler's backlog, where it would fire as late as the backlog is long. What the request resumes
 * still goes to each waiter's own scheduler.
 */
public interface TimerRequest extends Runnable {}
