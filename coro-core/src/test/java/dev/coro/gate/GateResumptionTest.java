package dev.coro.gate;

import static dev.coro.Latches.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.coro.task.Outcome;
import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Where admitted work runs: a waiter resumed inline on the thread whose exit admitted it runs after
 * that thread has let go of the gate's decision, not inside it (AdmissionEngine overview 8). Inside
 * it, every other thread's fast path would fail and queue while the admitted work ran.
 */
class GateResumptionTest {

    @Test
    void workAdmittedInlineRunsAfterTheOwnerHasLetGo() throws Exception {
        // readers decide under the engine's ownership (serial and capacity gates use the permit lane,
        // whose try needs no owner, so they cannot show where the work ran relative to it)
        ReadWriteGate gate = new ReadWriteGate();
        Admission writer = gate.acquireWrite().join();
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch checked = new CountDownLatch(1);
        // started on this thread (inline scheduler): it queues at once, and when admitted it resumes
        // inline on the admitting thread, which it then blocks until the check below is done
        CompletableFuture<Void> reader = gate.withinRead(Task.fromRunnable(() -> {
            running.countDown();
            await(checked);
        })).toCompletableFuture();
        assertEquals(0, gate.readers());
        Thread exiting = Thread.ofPlatform().start(writer::exit); // admits the reader, which runs there
        running.await();
        Outcome<Admission> now = gate.tryAcquireRead().outcome().join(); // while the admitted work runs
        checked.countDown();
        exiting.join();
        reader.join();
        Outcome.Value<?> admitted = assertInstanceOf(Outcome.Value.class, now,
                "the second reader was declined: the admitted work ran while its thread owned the decision");
        ((Admission) admitted.value()).exit();
        assertEquals(0, gate.readers());
        gate.closeAndCheck();
    }
}
