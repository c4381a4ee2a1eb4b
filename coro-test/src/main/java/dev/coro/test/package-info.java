/**
 * Test support for code built on Coro: {@link dev.coro.test.VirtualTimeScheduler}, a scheduler whose
 * clock moves only when the test advances it, so that timeouts, delays and retries are tested
 * deterministically and without sleeping; {@link dev.coro.test.CoroTests}, which runs a task on
 * virtual time that advances by itself ({@code runTest}) and checks a generator's or a channel's
 * values step by step ({@code verify}, through a {@link dev.coro.test.SequenceVerifier}); and the
 * JUnit 5 annotation {@link dev.coro.test.CoroTest}.
 */
package dev.coro.test;
