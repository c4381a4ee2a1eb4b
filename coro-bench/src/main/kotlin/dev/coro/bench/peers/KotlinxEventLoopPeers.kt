/*
 * The kotlinx.coroutines peers of the EventLoop benchmarks: the timers measurement (Timers) and the
 * one-thread ping-pong (LoopHandoff). As in KotlinxPeers.kt, every suspending workload is one plain
 * blocking function that the Java side calls and checks.
 */
@file:JvmName("KotlinxEventLoopPeers")

package dev.coro.bench.peers

import java.util.concurrent.Executors
import java.util.function.IntConsumer
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.ExecutorCoroutineDispatcher
import kotlinx.coroutines.asCoroutineDispatcher
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

/**
 * A new single-threaded dispatcher: what `newSingleThreadContext(name)` builds (a one-thread
 * `ScheduledThreadPoolExecutor`), written without the delicate-API opt-in. Its `delay` is that
 * executor's `schedule`, so timers and the coroutines they resume share its one thread.
 */
fun kotlinxSingleThreadDispatcher(name: String): ExecutorCoroutineDispatcher =
    Executors.newSingleThreadScheduledExecutor { r -> Thread(r, name) }.asCoroutineDispatcher()

/**
 * timers: under `runBlocking(context)`, one coroutine launches `delaysMillis.size` children, each
 * started UNDISPATCHED so that it runs at once up to its `delay` (which registers the timer on the
 * same thread); its deadline (a `System.nanoTime()` read at most 63 timers earlier, plus its delay)
 * goes to `deadlines[i]` just before the launch, and it calls `fire.accept(i)` when the delay is over. `runBlocking`
 * returns once every child has fired. With an empty [context] the timers are `runBlocking`'s own
 * event loop on the calling thread (kotlinx's delayed-task heap); with [kotlinxSingleThreadDispatcher]
 * they are that executor's.
 *
 * Returns `[t0, t1]`: `System.nanoTime()` before the first launch and after the last one, both read
 * on the thread that schedules.
 */
fun kotlinxTimers(delaysMillis: IntArray, deadlines: LongArray, context: CoroutineContext, fire: IntConsumer): LongArray {
    val span = LongArray(2)
    runBlocking(context) {
        span[0] = System.nanoTime()
        var now = 0L
        for (i in delaysMillis.indices) {
            val d = delaysMillis[i].toLong()
            if (i and 63 == 0) now = System.nanoTime() // as the Java side: one clock read per 64 timers
            deadlines[i] = now + d * 1_000_000L
            launch(start = CoroutineStart.UNDISPATCHED) {
                delay(d) // delay(0) returns at once, without suspending
                fire.accept(i)
            }
        }
        span[1] = System.nanoTime()
    }
    return span
}

/** [kotlinxTimers] on `runBlocking`'s own event loop, on the calling thread. */
fun kotlinxTimersOnEventLoop(delaysMillis: IntArray, deadlines: LongArray, fire: IntConsumer): LongArray =
    kotlinxTimers(delaysMillis, deadlines, EmptyCoroutineContext, fire)

/**
 * loop-ping-pong on one thread: the ping-pong of `kotlinxPingPong` (two coroutines, two rendezvous
 * channels, [rounds] round trips) under `runBlocking` without a dispatcher, so both coroutines run
 * on `runBlocking`'s own event loop on the calling thread: no thread hop. Returns the pinger's last
 * value, `2 * rounds`.
 */
fun kotlinxPingPongOnEventLoop(rounds: Int): Long = runBlocking {
    val ping = Channel<Long>(Channel.RENDEZVOUS)
    val pong = Channel<Long>(Channel.RENDEZVOUS)
    launch {
        repeat(rounds) {
            val v = ping.receive()
            pong.send(v + 1)
        }
    }
    val pinger = async {
        var v = 0L
        repeat(rounds) {
            ping.send(v + 1)
            v = pong.receive()
        }
        v
    }
    pinger.await()
}
