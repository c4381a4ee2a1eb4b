/**
 * Cooperative cancellation: a {@link dev.coro.cancel.CancellationSource} cancels, its
 * {@link dev.coro.cancel.CancellationToken} is observed. Registration of callbacks is lock-free and
 * can be taken back; a token cancels at most once.
 */
package dev.coro.cancel;
