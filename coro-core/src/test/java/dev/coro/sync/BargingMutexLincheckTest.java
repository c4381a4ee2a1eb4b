package dev.coro.sync;

import dev.coro.LincheckSupport;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;

/**
 * {@link MutexLincheck} on {@link AsyncMutex#barging()} (the barging lane on the admission engine),
 * with no order check, which a barging mutex does not promise. A woken waiter competes once, then
 * its next wait ends cancelled, or it holds: each waiter still ends at most once. When the run is
 * over every wake-up, and every competition of a woken waiter, has run (resumptions run inline on the
 * waking thread here), so an unlocked mutex has no waiter left waiting, and nothing is left
 * registered: a try takes the free lock.
 */
public class BargingMutexLincheckTest extends MutexLincheck {
    /** Creates the mutex under test. */
    public BargingMutexLincheckTest() {
        super(AsyncMutex.barging());
    }

    /** Barging: no order is promised. */
    @Override
    void checkOrder(Waiter w) {}

    /** Nothing left registered: a try takes the free lock at once. */
    @Override
    void validateMore(boolean locked) {
        if (!locked) {
            if (!mutex.tryLock()) {
                throw new AssertionError("an unlocked mutex refused a try");
            }
            mutex.unlock();
        }
    }

    @Override
    ExecutionScenario[] moreScenarios() {
        return new ExecutionScenario[] {wokenWaiterRacingBargers(), wokenWaiterLosingToOneBarger()};
    }

    /**
     * Thread 1 holds the lock with a waiter of thread 2; thread 1 unlocks (waking it) and locks
     * again (barging), while thread 3 tries: the woken waiter competes with both and, if it loses,
     * waits again; whoever holds at the end, nobody is left waiting on a free lock.
     */
    static ExecutionScenario wokenWaiterRacingBargers() {
        return LincheckSupport.scenario(MutexLincheck.class,
                "tryLock 1; lock 2",
                "unlock 1; tryLock 1; unlock 1 | unlock 2 | tryLock 3; unlock 3",
                "unlock 2; unlock 3");
    }

    /**
     * Thread 1 holds the lock with a waiter of thread 2; thread 1 unlocks (waking it, and running its
     * competition inline) while thread 3 tries once. Either the woken waiter holds and the try fails,
     * or the try holds and the waiter, having lost, waits again (its lost competition must not enter)
     * until thread 3's unlock wakes it again: the one race this test keeps small enough to explore
     * all of it.
     */
    static ExecutionScenario wokenWaiterLosingToOneBarger() {
        return LincheckSupport.scenario(MutexLincheck.class,
                "tryLock 1; lock 2",
                "unlock 1 | tryLock 3",
                "unlock 3; unlock 2");
    }
}
