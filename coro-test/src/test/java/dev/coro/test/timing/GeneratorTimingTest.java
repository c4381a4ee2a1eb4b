package dev.coro.test.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.coro.channel.Generator;
import dev.coro.task.Task;
import dev.coro.test.CoroTests;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Generators whose producer waits for time, on virtual time with {@link CoroTests#verify}: each
 * step's instant is exact, and the verifier's leak check proves that ending the consumption leaves
 * no timer behind. (Moved here from coro-core's GeneratorTest, where a hand-driven clock took four
 * times the lines.)
 */
class GeneratorTimingTest {

    private static Generator<Integer> everySecond(int count) {
        return Generator.create(e -> Task.loop(1, i -> i <= count,
                i -> Task.delay(Duration.ofSeconds(1)).then(e.emit(i)).map(ignored -> i + 1)));
    }

    @Test
    void aProducerMayAwaitBetweenValues() {
        assertEquals(Duration.ofSeconds(3), CoroTests.verify(everySecond(3)).expectNext(1, 2, 3).expectComplete());
    }

    @Test
    void closingTheConsumptionEndsTheProducerAndLeavesNoTimer() {
        // thenCancel closes the cursor; the verifier then fails if a timer or a task is left pending
        assertEquals(Duration.ofSeconds(1), CoroTests.verify(everySecond(3)).expectNext(1).thenCancel());
    }

    @Test
    void aProducerThatWaitsLongerIsSeenToBeSilentMeanwhile() {
        CoroTests.verify(everySecond(2))
                .expectNoEvent(Duration.ofMillis(999))
                .expectNext(1)
                .expectNoEvent(Duration.ofMillis(999))
                .expectNext(2)
                .expectComplete();
    }
}
