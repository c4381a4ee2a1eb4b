package dev.coro.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A JUnit 5 test on virtual time: {@code @Test} with {@link VirtualTimeExtension}, so the method may
 * take a {@link VirtualTimeScheduler} parameter (a fresh one per test) and fails if work is left
 * pending on it after the test.
 *
 * {@snippet :
 * @CoroTest
 * void aRetryWaitsItsBackoff(VirtualTimeScheduler scheduler) {
 *     int attempts = CoroTests.runTest(flakyCall.retry(policy)); // or drive scheduler by hand
 * }
 * }
 */
@SuppressWarnings("exports") // JUnit is an optional (static) dependency: only JUnit users meet these types
@Documented
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Test
@ExtendWith(VirtualTimeExtension.class)
public @interface CoroTest {}
