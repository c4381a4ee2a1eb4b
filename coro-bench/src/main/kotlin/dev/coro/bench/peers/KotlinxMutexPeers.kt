/*
 * The kotlinx.coroutines peers of the mutex benchmarks (MutexContended, MutexUncontended) and of
 * the waiter-memory measurement (WaiterMemory). As in KotlinxPeers.kt, every suspending workload is
 * one plain blocking function (or a small class) that the Java side calls and checks.
 */
@file:JvmName("KotlinxMutexPeers")

package dev.coro.bench.peers

import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock

/** A plain `long` guarded only by the mutex under test (no atomics: lost increments show). */
private class PlainCounter {
    @JvmField var value = 0L
}

/** A new unlocked kotlinx `Mutex`, for the Java side to hold in a benchmark state. */
fun newKotlinxMutex(): Mutex = Mutex()

/**
 * mutex-contended: [tasks] coroutines on [dispatcher] each do [locks] x `mutex.withLock { counter++ }`
 * on one `Mutex`; `runBlocking` returns once all have completed. Returns the counter, which must be
 * `tasks * locks`.
 */
fun kotlinxMutexContended(tasks: Int, locks: Int, dispatcher: CoroutineDispatcher): Long {
    val mutex = Mutex()
    val counter = PlainCounter()
    runBlocking(dispatcher) {
        repeat(tasks) {
            launch {
                repeat(locks) {
                    mutex.withLock { counter.value++ }
                }
            }
        }
    }
    check(!mutex.isLocked) { "the kotlinx mutex is still locked after every coroutine ended" }
    return counter.value
}

/**
 * mutex-uncontended: one coroutine in `runBlocking` (its own event loop on the calling thread) does
 * [ops] x `mutex.withLock { counter++ }`, the counter starting at [start]. Returns the final counter.
 */
fun kotlinxMutexUncontended(ops: Int, mutex: Mutex, start: Long): Long {
    val counter = PlainCounter()
    counter.value = start
    runBlocking {
        repeat(ops) {
            mutex.withLock { counter.value++ }
        }
    }
    return counter.value
}

/**
 * waiter-memory: coroutines suspended in `Mutex.lock()` on a mutex that the caller holds. [park]
 * launches them into a `CoroutineScope(dispatcher + Job())` (kept by nothing but that scope's job);
 * [arrived] counts those that have started and are about to call `lock()`; [release] unlocks, waits
 * for every coroutine, and returns how many acquired the lock.
 */
class KotlinxMutexWaiters(dispatcher: CoroutineDispatcher) {
    private val mutex = Mutex(locked = true)
    private val job = Job()
    private val scope = CoroutineScope(dispatcher + job)
    private val arrivedCount = AtomicInteger()
    private val acquired = PlainCounter() // guarded by mutex

    /** Launches [n] coroutines that each take the mutex once, count, and release it. */
    fun park(n: Int) {
        repeat(n) {
            scope.launch {
                arrivedCount.incrementAndGet()
                mutex.lock()
                try {
                    acquired.value++
                } finally {
                    mutex.unlock()
                }
            }
        }
    }

    /** How many launched coroutines have reached `lock()` (or are just before it). */
    fun arrived(): Int = arrivedCount.get()

    /** Unlocks the mutex the constructor took, waits for every coroutine, returns how many acquired. */
    fun release(): Long {
        mutex.unlock()
        job.complete()
        runBlocking { job.join() }
        check(!mutex.isLocked) { "the kotlinx mutex is still locked after every waiter ended" }
        return acquired.value
    }
}
