package dev.coro.examples;

import dev.coro.scheduler.WorkStealingPool;
import dev.coro.task.Scope;
import dev.coro.task.Task;
import java.time.Duration;

/** The README's example. */
public class Hello {
    /** Prints 42. */
    public static void main(String[] args) {
        try (WorkStealingPool pool = WorkStealingPool.create(4)) {
            Task<Integer> fetch = Task.delay(Duration.ofMillis(50)).then(Task.value(21));

            Task<Integer> total = Scope.scoped(scope -> {
                Task<Integer> a = scope.spawn(fetch);         // both run concurrently
                Task<Integer> b = scope.spawn(fetch);
                return Task.whenAll(a, b, Integer::sum);
            }).timeout(Duration.ofSeconds(1)).startOn(pool);

            System.out.println(total.join());                 // 42
        }
    }
}
