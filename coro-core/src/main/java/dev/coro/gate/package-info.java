/**
 * The gates of paper P4215: shared objects that impose a non-local concurrency constraint on the
 * work that passes through them, on one admission engine. {@link dev.coro.gate.SerialGate} admits
 * one operation at a time, {@link dev.coro.gate.CapacityGate} at most k. Work enters with
 * {@code within(task)} and leaves when it completes, on every completion path;
 * {@code tryWithin(task)} runs it only if admission is immediate, else completes cancelled;
 * {@code call(callable)} is the blocking door for plain and virtual threads; {@code close()} cancels
 * waiters and later acquisitions, and {@code closeAndCheck()} is the Java form of the paper's
 * destruction rule.
 */
package dev.coro.gate;
