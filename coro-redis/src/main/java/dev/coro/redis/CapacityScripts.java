package dev.coro.redis;

/**
 * The Lua scripts of {@link LeaseQueue}, on which {@link RedisCapacityGate}, {@link RedisSerialGate}
 * (capacity 1) and {@link RedisKeyedSerialGate} (capacity 1 per key) stand: each decision is one
 * script, so one round trip and one atomic step on the server. Every script but RENEW takes the four
 * keys of one lane, in this order: {@code holders} (sorted set: lease id scored by its expiry, in
 * milliseconds of Redis server time), {@code queue} (sorted set: waiter id scored by its ticket, the
 * FIFO order), {@code waiters} (sorted set: waiter id scored by the expiry of its place, renewed as a
 * lease is), and {@code fence} (string: the gate's sequence, from which tickets and fencing tokens are
 * drawn, shared by every lane of a gate); RENEW takes any number of such groups of four. The
 * implementation overview of {@link LeaseQueue} says why each step is there.
 */
final class CapacityScripts {
    private CapacityScripts() {}

    /**
     * Shared by every script. {@code clock()}: Redis server time in milliseconds and microseconds.
     * {@code keep(key, ttl)}: the key expires {@code ttl} ms after its last use, unless a longer
     * expiry is already set (another client with a longer lease). {@code next_seq(now_us, ttl)}: the
     * next number of the gate's sequence, at least the server time in microseconds, so that it keeps
     * increasing even after the fence key has expired with an idle gate. {@code tell(channel,
     * capacity)}: publishes the ids of the queued waiters that the free slots could admit now (the
     * queue's head, as many as there are free slots), if any: only their gate objects need to ask.
     */
    private static final String PRELUDE = """
            local holders, queue, waiters, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
            local function clock()
              local t = redis.call('TIME')
              local s, us = tonumber(t[1]), tonumber(t[2])
              return s * 1000 + math.floor(us / 1000), s * 1000000 + us
            end
            local function keep(key, ttl)
              if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
            end
            local function next_seq(now_us, ttl)
              local n = math.max(tonumber(redis.call('GET', fence) or '0') + 1, now_us)
              local s = string.format('%.0f', n)
              redis.call('SET', fence, s, 'KEEPTTL')
              keep(fence, ttl)
              return n, s
            end
            local function tell(channel, capacity)
              local free = capacity - redis.call('ZCARD', holders)
              if free > 0 then
                local heads = redis.call('ZRANGE', queue, 0, free - 1)
                if #heads > 0 then redis.call('PUBLISH', channel, table.concat(heads, ' ')) end
              end
            end
            """;

    /**
     * Acquire or enqueue. ARGV: id, capacity, lease ms, mode, channel. Modes: {@code new} (admit, or
     * enqueue at the tail), {@code try} (admit or refuse, never enqueue), {@code queued} (the id waits
     * in the queue: admit it if its rank is within the free slots). Reaps dead holders and dead
     * waiters first. Returns {@code {1, token, free slots left}} admitted, {@code {0, ticket}} enqueued,
     * {@code {0}} refused or still waiting, {@code {-1}} the id's place is gone (mode queued).
     */
    static final String ACQUIRE = PRELUDE + """
            local id, capacity, lease, mode, channel = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5]
            local ttl = 2 * lease
            local now, now_us = clock()
            local freed = redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
            local dead = redis.call('ZRANGEBYSCORE', waiters, '-inf', now)
            for i = 1, #dead do redis.call('ZREM', queue, dead[i]) end
            if #dead > 0 then redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now) end
            local free = capacity - redis.call('ZCARD', holders)
            local rank = redis.call('ZRANK', queue, id)
            local admit
            if rank then
              admit = rank < free
            elseif mode == 'queued' then
              return {-1}
            else
              admit = redis.call('ZCARD', queue) < free
            end
            local reply
            if admit then
              local _, token = next_seq(now_us, ttl)
              redis.call('ZADD', holders, now + lease, id)
              keep(holders, ttl)
              if rank then
                redis.call('ZREM', queue, id)
                redis.call('ZREM', waiters, id)
              end
              reply = {1, token, free - 1}
            elseif mode == 'new' then
              local n, ticket = next_seq(now_us, ttl)
              redis.call('ZADD', queue, n, id)
              redis.call('ZADD', waiters, now + lease, id)
              keep(queue, ttl)
              keep(waiters, ttl)
              reply = {0, ticket}
            else
              reply = {0}
            end
            if freed > 0 or #dead > 0 then
              tell(channel, capacity)
            end
            return reply
            """;

    /**
     * Release. ARGV: id, channel, capacity. Removes the lease; tells the waiters at the head of the
     * queue. Returns 1 if the lease was held, 0 if it was gone (expired and reaped, or released before).
     */
    static final String RELEASE = PRELUDE + """
            local removed = redis.call('ZREM', holders, ARGV[1])
            if removed == 1 then tell(ARGV[2], tonumber(ARGV[3])) end
            return removed
            """;

    /**
     * Cancel. ARGV: id, channel, capacity. Removes the id wherever it is (queue, waiters, holders):
     * the last word on an id, whatever ran before it. Tells the waiters at the head of the queue if a
     * slot or a place ahead of them was freed. Returns 1 if anything was removed.
     */
    static final String CANCEL = PRELUDE + """
            local id = ARGV[1]
            local queued = redis.call('ZREM', queue, id)
            redis.call('ZREM', waiters, id)
            local held = redis.call('ZREM', holders, id)
            if (queued + held) > 0 then tell(ARGV[2], tonumber(ARGV[3])) end
            return queued + held
            """;

    /**
     * Renew. KEYS: groups of four, one per lane. ARGV: lease ms, then for each group the number of
     * its ids and the ids. Extends the lease of every id that still holds a live lease or a live
     * place in its lane's queue; an id whose lease has passed is removed (as the reaper would) and
     * reported. Refreshes the keys' expiry. Returns the ids that are gone.
     */
    static final String RENEW = PRELUDE + """
            local lease = tonumber(ARGV[1])
            local ttl = 2 * lease
            local now = clock()
            local lost = {}
            local at = 2
            for g = 0, #KEYS / 4 - 1 do
              local held, line, places = KEYS[4 * g + 1], KEYS[4 * g + 2], KEYS[4 * g + 3]
              local n = tonumber(ARGV[at])
              for i = at + 1, at + n do
                local id = ARGV[i]
                local h = redis.call('ZSCORE', held, id)
                if h and tonumber(h) > now then
                  redis.call('ZADD', held, 'XX', now + lease, id)
                else
                  if h then redis.call('ZREM', held, id) end
                  local w = redis.call('ZSCORE', places, id)
                  if w and tonumber(w) > now then
                    redis.call('ZADD', places, 'XX', now + lease, id)
                  else
                    if w then
                      redis.call('ZREM', places, id)
                      redis.call('ZREM', line, id)
                    end
                    lost[#lost + 1] = id
                  end
                end
              end
              at = at + n + 1
              keep(held, ttl)
              keep(line, ttl)
              keep(places, ttl)
            end
            keep(fence, ttl)
            return lost
            """;
}
