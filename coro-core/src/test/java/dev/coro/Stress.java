package dev.coro;

/**
 * Scales stress tests: {@code -Dcoro.stress.scale=N} multiplies iteration counts (1 in the default
 * run, larger in the {@code stress} profile). Tests tagged {@code "stress"} use it.
 */
public final class Stress {
    private Stress() {}

    /** The scale factor, at least 1. */
    public static int scale() {
        return Math.max(1, Integer.getInteger("coro.stress.scale", 1));
    }

    /** Returns {@code base * scale()}. */
    public static int scaled(int base) {
        return Math.multiplyExact(base, scale());
    }
}
