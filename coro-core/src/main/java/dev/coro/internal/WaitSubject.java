package dev.coro.internal;

/**
 * What a waiting node waits on, described for the task dump ({@code dev.coro.task.CoroDebug}) and
 * nothing else: the object a suspended waiter's departure hook points at (its queue, a channel core,
 * an I/O operation) implements it, so a waiter costs nothing more while it waits, and the description
 * is built only when a dump asks for it. Called from the dumping thread while the waiter may be
 * settling: an implementation reads only what is safe to read racily and never blocks or throws.
 */
public interface WaitSubject {
    /**
     * Returns the kind of wait, as the name of a {@code CoroDebug.WaitKind} constant ({@code GATE},
     * {@code MUTEX}, {@code EVENT}, {@code CHANNEL_SEND}, {@code CHANNEL_RECEIVE}, {@code IO},
     * {@code OTHER}).
     *
     * @param node the node that waits here
     * @return the kind's name
     */
    String waitKind(WaitNode node);

    /**
     * Returns a one-line description of what {@code node} waits on: the primitive's class simple name
     * and its {@code toString}, or the operation and its channel.
     *
     * @param node the node that waits here
     * @return the description
     */
    String waitDescription(WaitNode node);

    /**
     * Describes an object as the dump names a primitive: its class simple name, then its
     * {@code toString} (or only the name when that is the default {@code Object} form).
     *
     * @param subject the primitive
     * @return the description
     */
    static String describe(Object subject) {
        String name = subject.getClass().getSimpleName();
        String text;
        try {
            text = subject.toString();
        } catch (RuntimeException e) { // a dump must not fail on a primitive's toString
            text = name + " (toString failed: " + e + ")";
        }
        return text.startsWith(name) ? text : name + " " + text;
    }
}
