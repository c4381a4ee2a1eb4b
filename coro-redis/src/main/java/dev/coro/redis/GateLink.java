package dev.coro.redis;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A gate object's link to Redis: a command connection for its scripts, each call one round trip
 * bounded by the Redis timeout, and, for a gate that is told of releases, a pub/sub connection
 * subscribed to the gate's channel. Counts the round trips in flight, so the gate can close its
 * connections once none is.
 */
final class GateLink {
    /** A script and its SHA-1, for EVALSHA with a fall back to EVAL when the server lacks it. */
    record Script(String body, String sha) {
        Script(String body) {
            this(body, sha1(body));
        }

        private static String sha1(String body) {
            try {
                return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                        .digest(body.getBytes(StandardCharsets.UTF_8)));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-1 is required of every JDK", e);
            }
        }
    }

    private final String name;
    private final Duration redisTimeout;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisAsyncCommands<String, String> redis;
    private final StatefulRedisPubSubConnection<String, String> notices;
    /** Round trips sent and not yet answered (or timed out). */
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Runnable settled;

    /**
     * Connects, loads {@code scripts} (so that the first EVALSHA of each finds it) and, unless
     * {@code channel} is null, subscribes to it, its messages going to {@code onMessage} (on the
     * client's I/O thread); blocks until done. {@code settled} runs after each round trip ends.
     *
     * @throws RedisGateException if Redis cannot be reached within the Redis timeout
     */
    GateLink(GateSettings s, String channel, Consumer<String> onMessage, Runnable settled, Script... scripts) {
        this.name = s.name;
        this.redisTimeout = s.redisTimeout;
        this.settled = settled;
        String failed = "gate '" + s.name + "': open: ";
        StatefulRedisConnection<String, String> c = null;
        StatefulRedisPubSubConnection<String, String> p = null;
        try {
            c = s.client.connect(StringCodec.UTF8);
            List<RedisFuture<String>> loads = new ArrayList<>();
            for (Script script : scripts) {
                loads.add(c.async().scriptLoad(script.body()));
            }
            if (channel != null) {
                p = s.client.connectPubSub(StringCodec.UTF8);
                p.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String from, String message) {
                        if (channel.equals(from)) {
                            onMessage.accept(message);
                        }
                    }
                });
                p.async().subscribe(channel).get(redisTimeout.toNanos(), TimeUnit.NANOSECONDS);
            }
            for (RedisFuture<String> load : loads) {
                load.get(redisTimeout.toNanos(), TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            closeQuietly(c, p);
            Thread.currentThread().interrupt();
            throw new RedisGateException(failed + "interrupted while connecting", e);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            closeQuietly(c, p);
            throw new RedisGateException(failed + "could not connect within " + redisTimeout + ": " + e, e);
        }
        this.connection = c;
        this.redis = c.async();
        this.notices = p;
    }

    private static void closeQuietly(StatefulRedisConnection<?, ?> c, StatefulRedisPubSubConnection<?, ?> p) {
        if (c != null) {
            c.closeAsync();
        }
        if (p != null) {
            p.closeAsync();
        }
    }

    /** One round trip: EVALSHA (EVAL if the server lacks the script), bounded by the Redis timeout. */
    <T> CompletableFuture<T> eval(Script script, ScriptOutputType type, String[] keys, String... args) {
        CompletableFuture<T> result = new CompletableFuture<>();
        inFlight.incrementAndGet();
        result.orTimeout(redisTimeout.toNanos(), TimeUnit.NANOSECONDS).whenComplete((v, e) -> {
            inFlight.decrementAndGet();
            settled.run();
        });
        try {
            redis.<T>evalsha(script.sha(), type, keys, args).whenComplete((v, e) -> {
                if (e instanceof RedisNoScriptException || e != null && e.getCause() instanceof RedisNoScriptException) {
                    redis.<T>eval(script.body(), type, keys, args).whenComplete((v2, e2) -> settle(result, v2, e2));
                } else {
                    settle(result, v, e);
                }
            });
        } catch (RuntimeException e) { // the connection is closed
            result.completeExceptionally(e);
        }
        return result;
    }

    /**
     * The exception a caller gets when {@code operation}'s round trip failed with {@code error}: it
     * names the gate and the operation, and says whether Redis did not answer in time or failed.
     */
    RedisGateException failure(String operation, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        String why = cause instanceof TimeoutException
                ? "Redis did not answer within " + redisTimeout
                : cause instanceof IllegalStateException ? cause.getMessage() : "Redis failed: " + cause;
        return new RedisGateException(describe(operation) + why, cause);
    }

    /** The start of a message about {@code operation} on this gate: {@code gate 'NAME': OPERATION: }. */
    String describe(String operation) {
        return "gate '" + name + "': " + operation + ": ";
    }

    private static <T> void settle(CompletableFuture<T> result, T value, Throwable error) {
        if (error != null) {
            result.completeExceptionally(error);
        } else {
            result.complete(value);
        }
    }

    /** Whether no round trip is in flight. */
    boolean idle() {
        return inFlight.get() == 0;
    }

    /** Closes the connections, without waiting. */
    void closeAsync() {
        closeQuietly(connection, notices);
    }

    /** Closes the connections at once (a test's crash). */
    void closeNow() {
        connection.close();
        if (notices != null) {
            notices.close();
        }
    }
}
