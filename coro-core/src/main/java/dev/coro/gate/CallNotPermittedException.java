package dev.coro.gate;

import java.time.Duration;

/**
 * The error a {@link CircuitBreakerGate} completes a call with when it refuses it: the breaker is
 * open, or half-open with all its trial calls admitted. The refused work does not run. Its message
 * names the gate and the state and says when a call may pass again.
 *
 * <p>It is made at the refusal, inside the gate, where a stack trace would show only the gate's
 * own frames, so it carries none (as a refusal is cheap, a breaker may refuse many calls a second);
 * {@link dev.coro.task.Task#join()} still adds the joining caller's stack as a suppressed exception.
 *
 * <p>Immutable apart from suppressed exceptions; thread-safe.
 *
 * {@snippet :
 * try {
 *     return payments.call(() -> client.charge(order));
 * } catch (CallNotPermittedException e) {
 *     return Receipt.later(e.retryAfter());   // the payment service is known to be down
 * }
 * }
 */
public final class CallNotPermittedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The name of the gate that refused. */
    private final String gateName;
    /** The state it refused in: OPEN or HALF_OPEN. */
    private final CircuitBreakerGate.State state;
    /** Nanoseconds until the open breaker lets a trial call through; 0 when half-open. */
    private final long retryAfterNanos;

    CallNotPermittedException(String gateName, CircuitBreakerGate.State state, long retryAfterNanos, String message) {
        super(message, null, true, false); // no stack trace: see the class javadoc
        this.gateName = gateName;
        this.state = state;
        this.retryAfterNanos = retryAfterNanos;
    }

    /**
     * Returns the name of the gate that refused the call.
     *
     * @return the gate's name
     */
    public String gateName() {
        return gateName;
    }

    /**
     * Returns the state the gate refused the call in: {@link CircuitBreakerGate.State#OPEN}, or
     * {@link CircuitBreakerGate.State#HALF_OPEN} when all its trial calls were admitted.
     *
     * @return the state
     */
    public CircuitBreakerGate.State state() {
        return state;
    }

    /**
     * Returns how long after the refusal an open gate lets a trial call through, on the gate's
     * clock; {@link Duration#ZERO} for a half-open refusal, where a trial's end (not time) frees a
     * place.
     *
     * @return the time left in the open state when the call was refused
     */
    public Duration retryAfter() {
        return Duration.ofNanos(retryAfterNanos);
    }
}
