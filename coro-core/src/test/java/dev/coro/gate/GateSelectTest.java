package dev.coro.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.coro.internal.AdmissionEngine;
import dev.coro.internal.Select;
import dev.coro.internal.WaitNode;
import dev.coro.task.Task;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The engine's select-able waiter across real gates: {@code selectAny(serial.acquire(),
 * capacity.acquire())} in its internal form, one suspension queued in two gates' engines, admitted by
 * exactly one; the other gate gets its slot back. (The engine-level proofs are SelectTest and
 * SelectLincheckTest in dev.coro.internal; dev.coro.channel builds select on the same node.)
 */
class GateSelectTest {

    private static Task<Select.Selected> selectAny(AdmissionGate... gates) {
        return Task.create(completer -> {
            Select select = new Select((WaitNode) completer, gates.length);
            for (int i = 0; i < gates.length && !select.isSettled(); i++) {
                AdmissionEngine engine = gates[i].engine;
                engine.enter(select.clause(i), null);
            }
        });
    }

    @Test
    void aSelectOverTwoGatesIsAdmittedByTheFirstToFreeASlot() {
        SerialGate serial = new SerialGate();
        CapacityGate capacity = new CapacityGate(1);
        Admission s = serial.acquire().join();
        Admission c = capacity.acquire().join();
        CompletableFuture<Select.Selected> both = selectAny(serial, capacity).toCompletableFuture();
        CompletableFuture<Admission> behind = capacity.acquire().toCompletableFuture();
        assertFalse(both.isDone());
        c.exit();
        assertEquals(1, both.join().index(), "the capacity gate admitted it");
        assertFalse(behind.isDone(), "the select holds the capacity gate's slot");
        s.exit();
        assertFalse(serial.isBusy(), "the serial gate's clause departed: its slot is free, owed to nobody");
        capacity.engine.release(1); // the select's admission leaves the capacity gate
        assertTrue(behind.isDone(), "the next capacity waiter got the slot");
        behind.join().exit();
        assertEquals(1, capacity.available());
        serial.closeAndCheck();
        capacity.closeAndCheck();
    }
}
