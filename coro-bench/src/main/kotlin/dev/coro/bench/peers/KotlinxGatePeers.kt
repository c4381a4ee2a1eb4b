/*
 * The kotlinx.coroutines peers of the gate benchmarks (GateCapacity, GateKeyed, GateLatest; GateSerial reuses
 * kotlinxMutexContended from KotlinxMutexPeers.kt). As in KotlinxPeers.kt, every suspending workload
 * is one plain blocking function that the Java side calls and checks.
 */
@file:JvmName("KotlinxGatePeers")

package dev.coro.bench.peers

import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Semaphore
import kotlinx.coroutines.sync.withPermit
import kotlinx.coroutines.flow.collectLatest

/**
 * gate-capacity: a root coroutine on [dispatcher] launches [tasks] coroutines that each run [work]
 * under `semaphore.withPermit { ... }` on one `Semaphore(permits)`; `runBlocking` returns once all
 * of them have completed. Returns the permits available at the end, which must be [permits].
 */
fun kotlinxSemaphoreCapacity(tasks: Int, permits: Int, work: Runnable, dispatcher: CoroutineDispatcher): Int {
    val semaphore = Semaphore(permits)
    runBlocking(dispatcher) {
        repeat(tasks) {
            launch {
                semaphore.withPermit { work.run() }
            }
        }
    }
    return semaphore.availablePermits
}

/**
 * gate-capacity, the work alone on kotlinx: the same [tasks] coroutines running [work] with no
 * semaphore, so that the semaphore's own overhead is kotlinx's time minus this one.
 */
fun kotlinxWorkAlone(tasks: Int, work: Runnable, dispatcher: CoroutineDispatcher) {
    runBlocking(dispatcher) {
        repeat(tasks) {
            launch { work.run() }
        }
    }
}

/**
 * gate-keyed: a root coroutine on [dispatcher] launches one coroutine per entry of [keys], each
 * running [work] under `mutexes.computeIfAbsent(key) { Mutex() }.withLock { ... }`: a kotlinx `Mutex`
 * per key in a `ConcurrentHashMap`, the usual idiom. It never removes a mutex (removing one safely
 * is the hard part), so the map keeps one per key ever used. Returns the mutexes left in the map.
 */
fun kotlinxMutexPerKey(keys: IntArray, work: Runnable, dispatcher: CoroutineDispatcher): Int {
    val mutexes = java.util.concurrent.ConcurrentHashMap<Int, kotlinx.coroutines.sync.Mutex>()
    runBlocking(dispatcher) {
        for (key in keys) {
            launch {
                val mutex = mutexes.computeIfAbsent(key) { kotlinx.coroutines.sync.Mutex() }
                mutex.lock()
                try {
                    work.run()
                } finally {
                    mutex.unlock()
                }
            }
        }
    }
    return mutexes.size
}

/**
 * gate-latest: in `runBlocking` on [dispatcher], a flow emits [n] values one after another and
 * `collectLatest` runs `yield(); work.run()` for each: a newer value cancels the block still running
 * for an older one (the kotlinx form of latest-only).
 */
fun kotlinxCollectLatest(n: Int, work: Runnable, dispatcher: CoroutineDispatcher) {
    runBlocking(dispatcher) {
        kotlinx.coroutines.flow.flow {
            repeat(n) { emit(it) }
        }.collectLatest {
            kotlinx.coroutines.yield()
            work.run()
        }
    }
}
