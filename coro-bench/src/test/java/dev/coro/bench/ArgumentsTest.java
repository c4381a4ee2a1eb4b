package dev.coro.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** The plain mains' options as picocli reads them: values, the last of a repeated option, bad input. */
class ArgumentsTest {
    @Test
    void timersOptionsAndImplementations() {
        Timers.Settings s = new Timers.Settings();
        assertTrue(Arguments.parse(s, new String[] {"--quick", "--rounds", "2", "--seed", "7", "coro", "stpe"}));
        assertTrue(s.quick);
        assertNull(s.timers, "--quick picks the count only when --timers is not given");
        assertEquals(2, s.rounds);
        assertEquals(7L, s.seed);
        assertEquals(List.of("coro", "stpe"), s.impls.names);
    }

    @Test
    void repeatedOptionTakesItsLastValue() {
        RateLateness.Settings s = new RateLateness.Settings();
        assertTrue(Arguments.parse(s, new String[] {"--rounds", "3", "--rounds", "4"}));
        assertEquals(4, s.rounds);
        assertNull(s.waiters);
    }

    @Test
    void helpIsNotARun() {
        assertFalse(Arguments.parse(new KeyedMemory.Settings(), new String[] {"--help"}));
    }

    @Test
    void unknownImplementationOrOptionIsRejected() {
        ParameterException e = assertThrows(ParameterException.class,
                () -> new CommandLine(new WaiterMemory.Settings()).parseArgs("coro", "nope"));
        assertTrue(e.getMessage().contains("nope (implementations: " + WaiterMemory.IMPLS + ")"), e.getMessage());
        assertThrows(ParameterException.class, () -> new CommandLine(new EchoLoopback.Settings()).parseArgs("--bogus"));
        assertThrows(ParameterException.class, () -> new CommandLine(new KeyedMemory.Settings()).parseArgs("--keys", "x"));
    }
}
