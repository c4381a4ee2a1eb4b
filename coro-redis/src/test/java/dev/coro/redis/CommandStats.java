package dev.coro.redis;

/**
 * Round trips as the server counts them ({@code INFO commandstats}): the calls of EVALSHA and EVAL,
 * the only commands a gate sends once open (the commands its scripts run inside are counted by Redis
 * under their own names, and are not round trips).
 */
final class CommandStats {
    private CommandStats() {}

    /** The EVALSHA and EVAL calls {@code redis} has served so far. */
    static long calls(RedisServer redis) {
        long calls = 0;
        for (String line : redis.admin().info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_eval:")) {
                String field = line.substring(line.indexOf("calls=") + "calls=".length());
                calls += Long.parseLong(field.substring(0, field.indexOf(',')));
            }
        }
        return calls;
    }
}
