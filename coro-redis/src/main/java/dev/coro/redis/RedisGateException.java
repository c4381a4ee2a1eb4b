package dev.coro.redis;

/**
 * A Redis gate could not reach a decision because Redis did not answer in time, answered with an
 * error, or lost the caller's place (its lease lapsed while Redis was out of reach). The message names
 * the gate and the operation; the cause, when there is one, is the client's error.
 *
 * <p>A wait that ends with this exception holds nothing: the gate has asked Redis to forget the
 * waiter, and whatever Redis kept of it expires with its lease in any case.
 */
public final class RedisGateException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, naming the gate and the operation
     * @param cause the client's error, or null
     */
    public RedisGateException(String message, Throwable cause) {
        super(message, cause);
    }
}
