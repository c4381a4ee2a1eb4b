/**
 * Coro test support: a virtual-time scheduler for deterministic tests of code built on Coro.
 */
module dev.coro.test {
    requires transitive dev.coro;

    exports dev.coro.test;
}
