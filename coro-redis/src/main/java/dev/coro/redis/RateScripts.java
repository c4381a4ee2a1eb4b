package dev.coro.redis;

/**
 * The Lua scripts of {@link RedisRateGate}: each decision is one script, so one round trip and one
 * atomic step on the server. Both take one key, the gate's bucket (a hash): {@code tat}, the
 * theoretical arrival time in microseconds of Redis server time (the bucket is full from then on);
 * {@code last}, the id of the latest reservation; {@code undo}, the {@code tat} before it. The key
 * expires when the bucket is full again, so an absent key is a full bucket. The gate's implementation
 * overview says why each step is there.
 */
final class RateScripts {
    private RateScripts() {}

    /**
     * Shared by both scripts. {@code now_us()}: Redis server time in microseconds. {@code num(s)}:
     * a stored number, 0 if absent. {@code str(n)}: a whole number without an exponent.
     * {@code keep(tat, now)}: the key expires in the milliseconds until {@code tat} (rounded up, at
     * least 1): from then on the bucket is full, which an absent key also means.
     */
    private static final String PRELUDE = """
            local bucket = KEYS[1]
            local function now_us()
              local t = redis.call('TIME')
              return tonumber(t[1]) * 1000000 + tonumber(t[2])
            end
            local function num(s)
              return tonumber(s or '0') or 0
            end
            local function str(n)
              return string.format('%.0f', n)
            end
            local function keep(tat, now)
              redis.call('PEXPIRE', bucket, math.max(1, math.ceil((tat - now) / 1000)))
            end
            """;

    /**
     * Reserve. ARGV: id, interval (microseconds per token), burst, permits, mode ({@code wait}:
     * reserve the first slot at which the permits are there, now or later; {@code try}: only if
     * now). The slot is {@code due = max(now, tat - (burst - permits) * interval)}, the first time at
     * which the bucket holds the permits with every earlier reservation served; the reservation moves
     * {@code tat} to {@code max(tat, due) + permits * interval} (GCRA's update) and remembers itself
     * as the latest. Returns {@code {1, due - now, due}} (reserved: the wait and the slot, in
     * microseconds) or {@code {0, due - now, due}} (a try refused: nothing changed).
     */
    static final String ACQUIRE = PRELUDE + """
            local id, interval, burst, permits, mode = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
            local now = now_us()
            local tat = num(redis.call('HGET', bucket, 'tat'))
            local due = math.max(now, tat - (burst - permits) * interval)
            if due > now and mode == 'try' then
              return {0, due - now, due}
            end
            local after = math.max(tat, due) + permits * interval
            redis.call('HSET', bucket, 'tat', str(after), 'last', id, 'undo', str(tat))
            keep(after, now)
            return {1, due - now, due}
            """;

    /**
     * Give back. ARGV: id. If the id's reservation is still the latest, {@code tat} goes back to what
     * it was before it, as if the reservation had never been made (the key is deleted if that is a
     * full bucket); otherwise nothing changes: later reservations were placed after it, and giving its
     * tokens back would need moving them. Returns 1 if given back, 0 if not.
     */
    static final String CANCEL = PRELUDE + """
            if redis.call('HGET', bucket, 'last') ~= ARGV[1] then
              return 0
            end
            local now = now_us()
            local undo = num(redis.call('HGET', bucket, 'undo'))
            if undo <= now then
              redis.call('DEL', bucket)
            else
              redis.call('HSET', bucket, 'tat', str(undo))
              redis.call('HDEL', bucket, 'last', 'undo')
              keep(undo, now)
            end
            return 1
            """;
}
