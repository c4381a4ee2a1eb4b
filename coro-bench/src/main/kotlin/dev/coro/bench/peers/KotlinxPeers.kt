/*
 * The kotlinx.coroutines peers of the Coro benchmarks. Suspend functions (launch, Channel.send and
 * receive) cannot be called from Java in any reasonable way, so each workload is one plain,
 * blocking function here; the JMH classes in dev.coro.bench call them and check their results.
 */
@file:JvmName("KotlinxPeers")

package dev.coro.bench.peers

import java.util.concurrent.atomic.LongAdder
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.filter
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

/**
 * The 2-thread kotlinx dispatcher of the benchmarks: `Dispatchers.Default.limitedParallelism(workers)`.
 * When the JVM runs with `-Dkotlinx.coroutines.scheduler.core.pool.size=workers` (the benchmarks'
 * forks do), this is `Dispatchers.Default` itself, kotlinx's own work-stealing scheduler with exactly
 * `workers` threads and no limiting layer in between; otherwise it is a view that runs at most
 * `workers` coroutines at once on the larger Default pool.
 */
fun kotlinxDispatcher(workers: Int): CoroutineDispatcher = Dispatchers.Default.limitedParallelism(workers)

/** Whether [kotlinxDispatcher] returned the undecorated `Dispatchers.Default` (the limit is its size). */
fun isPlainDefault(dispatcher: CoroutineDispatcher): Boolean = dispatcher === Dispatchers.Default

/**
 * spawn-join: a root coroutine on [dispatcher] launches [n] children that each increment [counter],
 * and `runBlocking` returns once all of them have completed (structured concurrency joins them).
 */
fun kotlinxSpawnJoin(n: Int, dispatcher: CoroutineDispatcher, counter: LongAdder) {
    runBlocking(dispatcher) {
        repeat(n) {
            launch { counter.increment() }
        }
    }
}

/**
 * ping-pong: two coroutines on [dispatcher] pass a counter back and forth over two rendezvous
 * channels, [rounds] round trips (2 * rounds hand-offs). The pinger sends v + 1, the ponger answers
 * with v + 1 again; returns the last value the pinger received, which is `2 * rounds`.
 */
fun kotlinxPingPong(rounds: Int, dispatcher: CoroutineDispatcher): Long = runBlocking(dispatcher) {
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

/**
 * channel-throughput: [producers] coroutines send [perProducer] numbers each into one
 * `Channel(capacity)`, [consumers] coroutines receive until it is closed, on [dispatcher]; returns
 * the sum received (every element once: `producers * perProducer * (perProducer - 1) / 2`).
 */
fun kotlinxProducerConsumer(producers: Int, consumers: Int, perProducer: Int, capacity: Int,
                            dispatcher: CoroutineDispatcher): Long = runBlocking(dispatcher) {
    val channel = Channel<Int>(capacity)
    val sums = List(consumers) {
        async {
            var sum = 0L
            for (v in channel) {
                sum += v
            }
            sum
        }
    }
    val senders = List(producers) {
        launch {
            for (i in 0 until perProducer) {
                channel.send(i)
            }
        }
    }
    senders.forEach { it.join() }
    channel.close()
    sums.sumOf { it.await() }
}

/** generator: `sequence {}` yields 0 until [n], mapped (x * 2) and filtered (x % 3 == 0), summed (synchronous). */
fun kotlinSequenceSum(n: Int): Long =
    sequence { for (i in 0 until n) yield(i) }.map { it * 2 }.filter { it % 3 == 0 }.sumOf { it.toLong() }

/** generator: the same pipeline as [kotlinSequenceSum] over `flow {}` (suspending), collected in `runBlocking`. */
fun kotlinFlowSum(n: Int): Long = kotlinx.coroutines.runBlocking {
    var sum = 0L
    kotlinx.coroutines.flow.flow { for (i in 0 until n) emit(i) }
        .map { it * 2 }
        .filter { it % 3 == 0 }
        .collect { sum += it }
    sum
}

/**
 * select: two coroutines send [n] / 2 numbers each into their own rendezvous channel; a third
 * selects [n] times over both `onReceive` clauses, on [dispatcher]; returns the sum received.
 */
fun kotlinxSelect(n: Int, dispatcher: CoroutineDispatcher): Long = runBlocking(dispatcher) {
    val a = Channel<Int>(Channel.RENDEZVOUS)
    val b = Channel<Int>(Channel.RENDEZVOUS)
    launch { for (i in 0 until n / 2) a.send(i) }
    launch { for (i in 0 until n / 2) b.send(i) }
    var sum = 0L
    repeat(n) {
        sum += kotlinx.coroutines.selects.select<Int> {
            a.onReceive { it }
            b.onReceive { it }
        }
    }
    sum
}
