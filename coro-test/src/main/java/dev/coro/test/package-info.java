/**
 * Test support for code built on Coro: {@link dev.coro.test.VirtualTimeScheduler}, a scheduler whose
 * clock moves only when the test advances it, so that timeouts, delays and retries are tested
 * deterministically and without sleeping.
 */
package dev.coro.test;
