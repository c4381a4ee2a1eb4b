/*
 * The kotlinx.coroutines peer of the task-loop benchmark (TaskLoop): one plain blocking function
 * that the Java side calls and checks, as in KotlinxPeers.kt.
 */
@file:JvmName("KotlinxLoopPeers")

package dev.coro.bench.peers

import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking

/**
 * Zero, read through a volatile field at every step so that the JIT cannot fold the loop away (a
 * loop of steps that return their argument at once is otherwise `i = n`, no work at all).
 */
@Volatile
private var zero: Int = 0

/**
 * A step that may suspend (so the compiler gives it a state machine, as every real suspending
 * function has) but, as the benchmark's steps do, never does: it returns [i] at once (plus [zero]).
 */
private suspend fun step(i: Int): Int {
    if (i < 0) {
        delay(1)
    }
    return i + zero
}

/**
 * task-loop: one coroutine in `runBlocking` (its event loop on the calling thread, as Coro's
 * `join()` runs a task on the calling thread) runs [n] iterations of `i = step(i) + 1`. Returns the
 * final `i`, which must be [n].
 */
fun kotlinxLoop(n: Int): Int = runBlocking {
    var i = 0
    while (i < n) {
        i = step(i) + 1
    }
    i
}
