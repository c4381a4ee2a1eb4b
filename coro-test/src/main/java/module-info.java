/**
 * Coro test support: a virtual-time scheduler for deterministic tests of code built on Coro,
 * {@code CoroTests.runTest} (virtual time that advances by itself, with deadlock and leak checks),
 * {@code CoroTests.verify} (step-by-step assertions on a generator's or a channel's values),
 * and a JUnit 5 extension ({@code @CoroTest}).
 */
module dev.coro.test {
    requires transitive dev.coro;
    requires static org.junit.jupiter.api; // only for CoroTest and VirtualTimeExtension

    exports dev.coro.test;
}
