/*
 * The kotlinx.coroutines peers of the gate benchmarks (GateCapacity; GateSerial reuses
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
